"""Drafts whose problem the question itself settles: two checks.

**Vague word** (:func:`vague_word_settled`). A vague word leaves one thing open, by its
kind in :data:`lexicon.VAGUE_BY_KIND`: an *event* word (``recent``, ``early``, ``late``)
leaves the time open, a *person* word (``young``, ``elderly``) the age, an *amount* word
(``large``, ``small``, ``high``) the threshold. The draft is rejected (``vague-word-
settled``) when the rest of the question already fixes that: a time word is settled by a
day-level date or a window (``in the last 30 days``, ``since``, ``between ... and``); a
year or a season is not (``recent matches of the 2021-22 season`` still leaves open how
recent), and ``early``/``late`` need a closed window (``early stays after 2021-12-02``
still asks for the start of an open span); a person word by an age (``aged 70``,
``older than 65``, ``under 30``, ``born after 1994-08-02``); an amount word by a number
after a comparison (``above 40``, ``at least 3``, ``more than 10``). Other vague words (``typical``,
``notable``) are never settled this way.

**Ambiguous reference** (:func:`reference_determined`). "That team" is ambiguous only if
nothing says which team. The draft is rejected (``reference-determined``) when its parent
determines the referent and the draft still shows it: the parent's SQL compares a value
with what the reference stands for (the draft's ``concept``: that column when it names
one, any column of that table when it names a table; else the table named by the
reference's noun), and that value's text is still in the draft question outside the
reference (``How many goals did Arsenal score for that team?``), or compares a value
with the primary key of a table that points to the referent's table by a foreign key
(``Prescription 300954 ... in that admission``: a prescription belongs to one admission).
An admission number does not say which route a drug was given by, nor which of its
prescriptions is meant.

Both are plain functions of the draft (kept apart from the near-duplicate check, which
another change rewrites).
"""

from __future__ import annotations

import re

from answerable.builders.counterfactual import query_shapes
from answerable.builders.drafting import lexicon
from answerable.builders.drafting.text import find_phrase, name_words, words
from answerable.builders.lexical.inflection import singular
from answerable.kernel.errors import SQLError

_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")
_SPAN = re.compile(
    r"\b(in|within|during|over) the (last|past|previous|first) ((\d+|[a-z]+) )?"
    r"(days?|weeks?|months?|years?|hours?|seasons?)\b|\bsince\b|\bbetween\b.+\band\b"
)
_NUMBER = r"(\d+(\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twenty|hundred)"
_AGE = re.compile(
    rf"\b(aged?|age of|older than|younger than) {_NUMBER}\b"
    rf"|\b(over|under|above|below) {_NUMBER}( years|\s*[,.?!]|$)"
    rf"|\b{_NUMBER}[- ]years?[- ]old\b"
    r"|\bborn (before|after|since|in|on|between) "
)
"""An age: ``over 174 centimetres`` is a height, so a bare ``over N`` counts only at the
end of a clause or before ``years``; a bound on the birth date (``born after 1994-08-02``)
is an age bound too."""
_THRESHOLD = re.compile(
    rf"\b(above|over|below|under|more than|less than|fewer than|at least|at most|"
    rf"greater than|higher than|lower than|exceeding|exceeds|between|>|<|>=|<=) "
    rf"\$?{_NUMBER}"
)
_CLOSED = re.compile(
    r"\bbetween\b.+\band\b|\b(in|within|during) the (first|last) ((\d+|[a-z]+) )?"
    r"(days?|weeks?|months?|years?|hours?)\b|\b\d{4}-\d{2}-\d{2}\b.+\b\d{4}-\d{2}-\d{2}\b"
)
ONE_END_OPEN = frozenset({"early", "late"})
"""Words about a part of a span: only a closed window settles them."""
_KIND = {word: kind for kind, group in lexicon.VAGUE_BY_KIND.items() for word in group}


def vague_word_settled(question: str, trigger: str) -> str | None:
    """What in the question already fixes what the vague ``trigger`` leaves open, or None.

    >>> vague_word_settled("Which recent admissions were in the last 30 days?", "recent")
    'in the last 30 days'
    >>> vague_word_settled("Which recent admissions were urgent?", "recent") is None
    True
    >>> vague_word_settled("How many elderly patients are older than 65?", "elderly")
    'older than 65'
    """
    word = trigger.lower().strip()
    kind = _KIND.get(word)
    rest = _without(question, trigger).lower()
    patterns = {"event": (_DATE, _SPAN), "person": (_AGE,), "amount": (_THRESHOLD,)}
    if word in ONE_END_OPEN:  # "early" after a date still asks for the start of the span
        patterns["event"] = (_CLOSED,)
    for pattern in patterns.get(kind, ()):
        found = pattern.search(rest)
        if found:
            return found.group().strip()
    return None


def reference_determined(
    draft_question: str, trigger: str, parent: dict, schema, concept: str | None = None
) -> str | None:
    """The value that still says which thing the reference means, or None.

    ``concept`` is what the reference stands for (``table.column`` or a table name);
    without it, the table whose name is the reference's noun.
    """
    table = _referent_table(trigger, schema, concept)
    if table is None or not parent.get("sql"):
        return None
    try:
        refs = _parent_refs(parent["sql"], schema, parent.get("dialect", "sqlite"))
    except SQLError:
        return None
    rest = _without(draft_question, trigger)
    column = concept.lower() if concept and "." in concept else None
    for literal in refs.literals:
        owner = (literal.column or "").lower()
        text = str(literal.value).strip("%").strip()
        same = owner == column if column else owner.rpartition(".")[0] == table.lower()
        if (same or _pins_a_row_of(schema, owner, table)) and text and find_phrase(rest, text):
            return text
    return None


_REFS: dict[tuple[str, str], tuple] = {}  # (sql, dialect) -> (schema, its references)
_REFS_KEPT = 256


def _parent_refs(sql: str, schema, dialect: str):
    """The references of a parent's SQL qualified against ``schema`` (see
    :mod:`answerable.builders.counterfactual.query_shapes`), kept for the parent's other drafts,
    which are checked in a row: a kept entry holds its schema, so it answers only for
    that same schema object. Raises :class:`SQLError` when the SQL does not qualify."""
    kept = _REFS.get((sql, dialect))
    if kept is not None and kept[0] is schema:
        return kept[1]
    refs = query_shapes.shared().query(sql, schema, dialect).refs
    if len(_REFS) >= _REFS_KEPT:
        _REFS.clear()
    _REFS[(sql, dialect)] = (schema, refs)
    return refs


def _pins_a_row_of(schema, owner: str, table: str) -> bool:
    """Whether comparing ``owner`` (``table.column``) with a value picks one row that
    determines one row of ``table``: the column is its table's primary key, and that
    table is ``table`` or points to it by a foreign key (prescription 300954 was given in
    one admission; an admission number does not pick one prescription)."""
    name, _, column = owner.rpartition(".")
    found = schema.table(name) if name else None
    if found is None or column not in {k.lower() for k in found.primary_key}:
        return False
    if found.name.lower() == table.lower():
        return True
    return any(other.lower() == table.lower() for _, other, _ in found.foreign_keys)


def _referent_table(trigger: str, schema, concept: str | None) -> str | None:
    if concept:
        name = concept.rpartition(".")[0] if "." in concept else concept
        if schema.table(name) is not None:
            return schema.table(name).name
    nouns = [singular(w) for w in words(trigger) if w not in lexicon.REFERENCE_WORDS]
    for table in schema.tables:
        if nouns and singular(name_words(table.name)[-1]) == nouns[-1]:
            return table.name
    return None


def _without(question: str, phrase: str) -> str:
    """The question with one occurrence of ``phrase`` taken out."""
    span = find_phrase(question, phrase)
    return question if span is None else question[: span[0]] + " " + question[span[1] :]
