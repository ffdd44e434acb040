"""Near-synonym candidates: columns associated with a target but not equivalent to it.

Two sources, as in the DTE recipe: the curated contrasts of
:mod:`answerable.builders.lexical.contrasts` for the target's words in its kind of table
(``location`` of ``admissions`` -> ``admission_location``, ``discharge_location``; the
``name`` of a table of people -> ``first_name``, ``last_name``), and the names of columns
in other tables that share the target's head noun (``Customer.FirstName``,
``Customer.LastName`` for ``Employee.Name``). The plausibility gate
(:mod:`.gate`) judges every group before an item is emitted. A group is kept only when every name is
new to the table, none is an exact synonym of the target or of another in the group,
and each holds every word of the target (so the question's mention fits all of them).
Groups are ranked by closeness to the target (token overlap) plus fit to the table
(their qualifiers already qualify other columns there, as ``home``/``away`` do in
``matches``); ties keep the lexicon's order of preference.

>>> from answerable.builders.schema import Column, DatabaseSchema, Table
>>> db = DatabaseSchema("clinic", [Table("icu_stays", [Column("stay_id", "INTEGER"),
...                                                    Column("careunit", "TEXT")])])
>>> near_synonym_groups(db, "icu_stays", "careunit", 2)[0]
('first_careunit', 'last_careunit')
"""

from __future__ import annotations

import itertools

from answerable.builders.counterfactual.gate import is_people, owner_word, table_words, words_of
from answerable.builders.counterfactual.lexicon import (
    canonical,
    column_role,
    is_exact_synonym,
    name_tokens,
    spell_like,
)
from answerable.builders.lexical import contrasts
from answerable.builders.lexical.inflection import singular
from answerable.builders.schema import DatabaseSchema, Table

MAX_OTHER_TABLE_NAMES = 6


def near_synonym_groups(
    schema: DatabaseSchema, table: str, column: str, size: int = 2
) -> list[tuple[str, ...]]:
    """Groups of ``size`` new column names for ``table.column``, best first."""
    owner = schema.table(table)
    target = owner.column(column)
    role = column_role(target.name, target.type, target.name in owner.primary_key)
    if role == "identifier" or not canonical(target.name, owner.name):
        return []
    lexicon = [
        tuple(spell_like(target.name, q) for q in group)
        for group in contrast_groups(owner.name, target.name)
        if len(group) == size
    ]
    groups = lexicon + _from_other_tables(schema, owner, target.name, size)
    kept = [g for g in dict.fromkeys(groups) if _acceptable(g, owner, target.name)]
    order = {g: i for i, g in enumerate(kept)}
    return sorted(kept, key=lambda g: (-score(g, owner, target.name), order[g]))


def contrast_groups(table: str, column: str) -> list[tuple[str, ...]]:
    """The curated contrasts for any of the column's words in this table, best first,
    without those that share a word with the column (``home_score`` gets no
    ``home``/``away``)."""
    own, target = table_words(table), set(words_of(column))
    people = is_people({owner_word(table, column)})
    found = []
    for word in words_of(column)[::-1]:  # the head noun (last) first
        for pair in contrasts.contrasts_for(word, own | target, people):
            if not set(pair) & target and pair not in found:
                found.append(pair)
    return found


def _from_other_tables(
    schema: DatabaseSchema, owner: Table, column: str, size: int
) -> list[tuple[str, ...]]:
    wanted = canonical(column, owner.name)
    names = sorted(
        {
            c.name
            for t in schema.tables
            if t.name != owner.name
            for c in t.columns
            if wanted <= canonical(c.name, t.name) and column_role(c.name, c.type) != "identifier"
        }
    )[:MAX_OTHER_TABLE_NAMES]
    return list(itertools.combinations(names, size))


def _acceptable(group: tuple[str, ...], owner: Table, column: str) -> bool:
    wanted = canonical(column, owner.name)
    existing = {c.name.lower() for c in owner.columns}
    if any(name.lower() in existing for name in group):
        return False
    if any(is_exact_synonym(name, column, owner.name) for name in group):
        return False
    if any(is_exact_synonym(a, b, owner.name) for a, b in itertools.combinations(group, 2)):
        return False
    return all(wanted <= canonical(name, owner.name) for name in group)


def closeness(name: str, column: str) -> float:
    """Token overlap (Jaccard) of two names after normalization."""
    a, b = canonical(name), canonical(column)
    return len(a & b) / len(a | b) if a | b else 0.0


def fit(group: tuple[str, ...], owner: Table, column: str) -> float:
    """The share of the group's new words that already qualify other columns of the table."""
    own = {singular(t) for t in name_tokens(column)}
    new = {singular(t) for name in group for t in name_tokens(name)} - own
    used = {singular(t) for c in owner.columns if c.name != column for t in name_tokens(c.name)}
    return len(new & used) / len(new) if new else 0.0


def score(group: tuple[str, ...], owner: Table, column: str) -> float:
    """Closeness to the target (mean over the group) plus fit to the table."""
    near = sum(closeness(name, column) for name in group) / len(group)
    return round(near + fit(group, owner, column), 6)


def proposed_groups(
    schema: DatabaseSchema, table: str, column: str, names: tuple[str, ...], size: int
) -> list[tuple[str, ...]]:
    """Groups of ``size`` proposed names that are new to the table and say something
    other than the column and than each other, in the names' order."""
    owner = schema.table(table)
    existing = {c.name.lower() for c in owner.columns}
    usable = [
        n
        for n in names
        if n.lower() not in existing and not is_exact_synonym(n, column, owner.name)
    ]
    return [
        group
        for group in itertools.combinations(usable, size)
        if not any(is_exact_synonym(a, b, owner.name) for a, b in itertools.combinations(group, 2))
    ]
