"""Values a source already holds in two columns: the value-ambiguous readings real data has.

A name can mean two things in one database: on GeoQuery 'new york' and 'washington' are
a state and a city, on Chinook 'AC/DC' is an artist and a credited composer. When a
question compares such a value with one column and the other column is a reading of the
same words, the question reads two ways on the source as it is, with no edit at all.

:func:`second_readings` finds, for a compared value, the text columns of the database
that already hold it (exactly, as the SQL compares) and builds the second reading's SQL:

- a column of a table the query already reads: the compared column is swapped for it
  under that table's alias (``Track.Composer`` for ``Artist.Name`` when the query joins
  the tracks to their artists);
- a table of the same shape: a query over one table whose every other column has a
  namesake in a second table is asked of that table instead (``SELECT population FROM
  state WHERE state_name = 'new york'`` -> ``... FROM city WHERE city_name = ...``).

Columns that hold the same thing by design are not second readings: the columns a
foreign key ties to the compared one, and placeholders (``unknown``). The same name in
another table may be (a customer's and an employee's ``City``); when it is not (a
city's ``state_name`` and the state's), the readings give the same rows and the item is
rejected by execution. Whether the second
column is a reading of the question's words is the gate's call
(:func:`answerable.builders.counterfactual.gate.judge_second_reading`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from sqlglot import exp

from answerable.builders.counterfactual import trees
from answerable.builders.counterfactual.lexicon import column_role

TEXT_TYPES = ("CHAR", "CLOB", "TEXT")
PLACEHOLDERS = frozenset({"unknown", "none", "n/a", "na", "other", "null", "-", ""})


@dataclass(frozen=True)
class SecondReading:
    """A column that holds the compared value too, and the query that reads it so."""

    column: str  # table.column
    sql: str


def second_readings(
    parent, env, first: str, value: str, swap, namesakes: list[tuple[str, str]]
) -> list[SecondReading]:
    """Columns other than ``first`` and its ``namesakes`` that hold ``value`` on the
    source, each with the SQL of the reading that compares it instead; ``swap`` builds
    that SQL for a column of a table the query reads (value_ambiguous_v1's
    ``_swap_compared_column``)."""
    if value.strip().lower() in PLACEHOLDERS:
        return []
    table, column = first.rsplit(".", 1)
    same = {(t.lower(), c.lower()) for t, c in [(table, column), *namesakes]}
    role = _kind(column_role(column))
    asked = [
        (other.name, candidate.name)
        for other in parent.schema.tables
        if other.name.lower() not in parent.views
        for candidate in other.columns
        if (other.name.lower(), candidate.name.lower()) not in same
        and is_text(candidate.type)
        and _kind(column_role(candidate.name)) == role
    ]
    holds_each(env, parent.db_id, asked, value)
    found = []
    for other, candidate in asked:
        if not holds(env, parent.db_id, other, candidate, value):
            continue
        second = f"{other}.{candidate}"
        sql = swap(parent.tree, first, value, second) or table_swapped(
            parent.tree, first, value, second, parent.schema
        )
        if sql:
            found.append(SecondReading(second, sql))
    return sorted(found, key=lambda r: r.column)


def _kind(role: str) -> str:
    """Roles whose values may be the same words: a name and a category (an artist's
    name and a track's composer; a city and a region) are alike here."""
    return "words" if role in ("name", "category") else role


def is_text(declared: str) -> bool:
    """Whether a declared column type holds text (an undeclared type may)."""
    kind = (declared or "").upper()
    return not kind or any(t in kind for t in TEXT_TYPES)


def holds(env, db_id: str, table: str, column: str, value: str) -> bool:
    """Whether a row of the source holds exactly ``value`` in ``table.column``."""

    def probe() -> bool:
        found = env.database(db_id).execute(_holds_sql(table, column), (value,), ordered=False)
        return bool(found.row_count)

    return env.once(_holds_key(db_id, table, column, value), probe)


def holds_each(env, db_id: str, columns: list[tuple[str, str]], value: str) -> None:
    """What :func:`holds` says of each ``(table, column)``, asked of the SQL worker in
    one exchange (for the columns not asked before); a probe that fails is asked
    again, alone, by :func:`holds`, which raises its error."""
    named: dict[tuple, tuple[str, str]] = {}
    for table, column in columns:
        named.setdefault(_holds_key(db_id, table, column, value), (table, column))

    def probe_all(keys: list[tuple]) -> list:
        probes = [(_holds_sql(*named[key]), False, (value,)) for key in keys]
        found = env.database(db_id).execute_many(probes)
        return [f if isinstance(f, Exception) else bool(f.row_count) for f in found]

    env.once_each(list(named), probe_all)


def _holds_key(db_id: str, table: str, column: str, value: str) -> tuple:
    return ("holds", db_id, table.lower(), column.lower(), value)


@functools.lru_cache(maxsize=4096)
def _holds_sql(table: str, column: str) -> str:
    """The probe of :func:`holds`, the value a parameter: built once per column."""
    test = exp.EQ(this=trees.column(column), expression=exp.Placeholder())
    query = exp.select(exp.Literal.number(1)).from_(trees.table(table)).where(test).limit(1)
    return query.sql("sqlite")


def table_swapped(tree: exp.Expr, first: str, value: str, second: str, schema) -> str | None:
    """The one-table query asked of ``second``'s table instead, with ``first`` read as
    ``second``; None unless the query reads ``first``'s table alone, once, and every
    other column it uses has a namesake in ``second``'s table."""
    table, column = first.rsplit(".", 1)
    other_table, other_column = second.rsplit(".", 1)
    tables = list(tree.find_all(exp.Table))
    if len(tables) != 1 or tables[0].name.lower() != table.lower():
        return None
    target = schema.table(other_table)
    if target is None or other_table.lower() == table.lower():
        return None
    names = {c.name.lower(): c.name for c in target.columns}
    copy = tree.copy()
    compared = False
    for node in copy.find_all(exp.Column):
        if node.name.lower() == column.lower():
            compared = True
            node.set("this", trees.ident(other_column))
        elif node.name.lower() in names:
            node.set("this", trees.ident(names[node.name.lower()]))
        else:
            return None
    if not compared:
        return None
    found = next(copy.find_all(exp.Table))
    alias = found.alias_or_name
    found.replace(exp.alias_(trees.table(target.name), alias, table=True))
    return copy.sql("sqlite")
