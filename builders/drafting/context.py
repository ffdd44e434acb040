"""What drafting knows about one database: its schema and a few values per column.

The values are read once per database (``SELECT DISTINCT col ... LIMIT 3``, built as a
sqlglot tree and run on the read-only executor); prompts show them beside each column,
and the offline drafter uses them to pick plausible wrong values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from answerable.builders.drafting.text import name_words
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.lexical.inflection import singular
from answerable.builders.lexical.lexicon import (
    GENERIC_WORDS,
    PERSON_COLUMN_HINTS,
    PERSON_HINTS,
    PLACE_COLUMN_HINTS,
    PLACE_HINTS,
)
from answerable.builders.schema import DatabaseSchema, Table
from answerable.kernel.errors import SQLError

EXAMPLES_PER_COLUMN = 3


@dataclass(frozen=True)
class ForeignQuestion:
    """A verified answerable question of another database of the build: its item, its
    database, its words, and its topic (the noun of the table its SQL reads first)."""

    item_id: str
    db_id: str
    question: str
    topic: str


@dataclass(frozen=True, eq=False)
class DatabaseContext:
    """A database's schema and up to three example values per ``table -> column``, and
    the column names of the other databases this one lacks (humanized), for questions
    about a column sampled from another database (TrustSQL's column-unrelated), and the
    verified answerable questions of the build's other databases (:class:`ForeignQuestion`),
    which asked of this one are out of domain when none of their words links to it, with
    the ids of this database's parents they are dealt out to.

    Compared and hashed by identity, so that work on one context can be memoized."""

    db_id: str
    schema: DatabaseSchema
    values: dict[str, dict[str, list]] = field(default_factory=dict)
    other_columns: tuple[str, ...] = ()
    foreign_questions: tuple[ForeignQuestion, ...] = ()
    drafted_parents: tuple[str, ...] = ()  # ids of the parents drafted from, sorted
    surface_any_kind: bool = False  # drafting.surface_from: any-table

    def column_values(self, table: str, column: str) -> list:
        """The example values of one column (empty when unknown)."""
        return self.values.get(table, {}).get(column, [])


def load_context(
    db_id: str,
    schema: DatabaseSchema,
    database: ReadOnlyDatabase | None,
    others: tuple[str, ...] = (),
    questions: tuple[ForeignQuestion, ...] = (),
    parents: tuple[str, ...] = (),
    surface_any_kind: bool = False,
) -> DatabaseContext:
    """The context of one database; schema-only databases get no example values.
    ``others`` are column names of other databases (see :func:`foreign_columns`),
    ``questions`` the other databases' answerable questions, ``parents`` the sorted
    ids of this database's parents drafted from, and ``surface_any_kind`` whether a
    column-surface attribute may come from a table of any kind."""
    if database is None:
        return DatabaseContext(db_id, schema, {}, others, questions, parents, surface_any_kind)
    values = {
        table.name: {
            column.name: column_examples(database, table.name, column.name)
            for column in table.columns
        }
        for table in schema.tables
    }
    return DatabaseContext(db_id, schema, values, others, questions, parents, surface_any_kind)


def foreign_columns(db_id: str, schemas: dict[str, DatabaseSchema]) -> tuple[str, ...]:
    """The column names (humanized) of every schema but ``db_id``'s that could name an
    attribute: no keys, no names made of generic words only (``name``, ``type``).

    >>> from answerable.builders.schema import Column
    >>> battles = DatabaseSchema("battle", [Table("battle", [Column("id"), Column("result")])])
    >>> shop = DatabaseSchema("shop", [Table("product", [Column("product_category")])])
    >>> foreign_columns("battle", {"battle": battles, "shop": shop})
    ('product category',)
    """
    found = set()
    for other, schema in schemas.items():
        if other == db_id:
            continue
        for table in schema.tables:
            for column in table.columns:
                words = name_words(column.name)
                if is_key(column.name) or not words or set(words) <= GENERIC_WORDS:
                    continue
                found.add(" ".join(words))
    return tuple(sorted(found))


def column_examples(database: ReadOnlyDatabase, table: str, column: str) -> list:
    """Up to three distinct non-null values of ``table.column``, in storage order."""
    target = exp.column(column, quoted=True)
    query = (
        exp.select(target)
        .distinct()
        .from_(exp.to_table(table, quoted=True))
        .where(target.copy().is_(exp.null()).not_())
        .limit(EXAMPLES_PER_COLUMN)
    )
    try:
        result = database.execute(query.sql("sqlite"), row_cap=EXAMPLES_PER_COLUMN)
    except SQLError:
        return []
    return [row[0] for row in result.rows]


def table_kind(table: Table) -> str:
    """What a table holds, for the lexicons: ``person``, ``place``, ``event`` or ``other``.

    >>> from answerable.builders.schema import Column
    >>> table_kind(Table("players", [Column("name"), Column("birth_date")]))
    'person'
    """
    own = {singular(w) for w in name_words(table.name)}
    columns = {singular(w) for c in table.columns for w in name_words(c.name)}
    if own & PERSON_HINTS or columns & PERSON_COLUMN_HINTS:
        return "person"
    if own & PLACE_HINTS or columns & PLACE_COLUMN_HINTS:
        return "place"
    if any(is_temporal(c.name, c.type) for c in table.columns):
        return "event"
    return "other"


def is_temporal(name: str, kind: str = "") -> bool:
    """A column that holds a date or a time, judged by its type or its name."""
    words = set(name_words(name))
    return any(t in kind.upper() for t in ("DATE", "TIME")) or bool(
        words & {"date", "time", "timestamp", "year", "day", "month"}
    )


def is_numeric(kind: str) -> bool:
    """A declared SQL type that holds numbers."""
    kind = kind.upper()
    return any(t in kind for t in ("INT", "REAL", "FLOA", "DOUB", "NUM", "DEC"))


def is_key(name: str) -> bool:
    """An identifier column (``id``, ``subject_id``, ``hadm_id`` ...)."""
    words = name_words(name)
    return bool(words) and words[-1] in {"id", "code", "key", "num"}
