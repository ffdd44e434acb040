"""What drafting knows about one database: its schema and a few values per column.

The values are read once per database (``SELECT DISTINCT col ... LIMIT 3``, built as a
sqlglot tree and run on the read-only executor); prompts show them beside each column,
and the offline drafter uses them to pick plausible wrong values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from answerable.builders.drafting import lexicon
from answerable.builders.drafting.text import name_words
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.lexical.inflection import singular
from answerable.builders.schema import DatabaseSchema, Table
from answerable.errors import SQLError

EXAMPLES_PER_COLUMN = 3


@dataclass(frozen=True, eq=False)
class DatabaseContext:
    """A database's schema and up to three example values per ``table -> column``.

    Compared and hashed by identity, so that work on one context can be memoized."""

    db_id: str
    schema: DatabaseSchema
    values: dict[str, dict[str, list]] = field(default_factory=dict)

    def column_values(self, table: str, column: str) -> list:
        """The example values of one column (empty when unknown)."""
        return self.values.get(table, {}).get(column, [])


def load_context(
    db_id: str, schema: DatabaseSchema, database: ReadOnlyDatabase | None
) -> DatabaseContext:
    """The context of one database; schema-only databases get no example values."""
    if database is None:
        return DatabaseContext(db_id, schema)
    values = {
        table.name: {
            column.name: column_examples(database, table.name, column.name)
            for column in table.columns
        }
        for table in schema.tables
    }
    return DatabaseContext(db_id, schema, values)


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
    if own & lexicon.PERSON_HINTS or columns & lexicon.PERSON_COLUMN_HINTS:
        return "person"
    if own & lexicon.PLACE_HINTS or columns & lexicon.PLACE_COLUMN_HINTS:
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
