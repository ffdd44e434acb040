"""Gold SQL that compares numbers stored as text.

A column declared TEXT whose values are numbers (GeoQuery's ``highlow`` elevations)
is compared as strings: ``MAX('6288')`` beats ``MAX('20320')`` and ``ORDER BY`` puts
``'900'`` after ``'6288'``, so a question about the highest point gets a wrong gold
answer. :func:`text_number_failure` runs the gold SQL a second time with every such
column cast to a number where it is ordered, aggregated or compared; when the two
results differ, the item's gold answer is the strings' and it is rejected
(``text-as-number``), naming the columns.
"""

from __future__ import annotations

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.kernel.errors import SQLError

ORDERING = (exp.Max, exp.Min, exp.Sum, exp.Avg, exp.Ordered, exp.GT, exp.GTE, exp.LT, exp.LTE)
"""The nodes under which a column's values are compared with each other or with a number."""
SAMPLE = 200


def text_number_failure(sql: str, schema, database, result, dialect: str = "sqlite", shapes=None):
    """``(reason, detail)`` when the gold SQL orders, aggregates or compares a TEXT column
    that holds numbers and the numeric reading gives another result than ``result``
    (the gold's executor :class:`Result`); else None.

    With ``shapes`` (a :class:`~answerable.builders.sqlkit.ShapeAnalyses` over the
    same schema), a query whose shape was found to compare no such column is not
    parsed again: which columns it compares does not depend on its values; and a query
    ``shapes`` analyzed is read from the tree it parsed then."""
    if database is None or result is None:
        return None
    shape = shapes.shape(sql) if shapes is not None else None
    if shape is not None and shape in shapes.plain:
        return None
    tree = shapes.written(sql) if shapes is not None else None
    if tree is None:
        try:
            tree = sqlkit.parse(sql, dialect)
        except SQLError:
            return None
    tables = {
        (t.alias_or_name or t.name).lower(): t.name for t in tree.find_all(exp.Table) if t.name
    }
    cast = []
    for column in list(tree.find_all(exp.Column)):
        if not column.find_ancestor(*ORDERING):
            continue
        table = _owner(column, tables, schema)
        if table and _holds_numbers_as_text(database, schema, table, column.name):
            column.replace(exp.Cast(this=column.copy(), to=exp.DataType.build("REAL")))
            cast.append(f"{table}.{column.name}")
    if not cast:
        if shape is not None:
            shapes.plain.add(shape)
        return None
    try:
        numeric = database.execute(tree.sql(dialect), ordered=result.ordered)
    except SQLError:
        return None
    if numeric.hash == result.hash:
        return None
    names = ", ".join(sorted(set(cast)))
    return (
        "text-as-number",
        f"{names} holds numbers as text: the gold SQL compares them as strings, and "
        "compared as numbers the answer differs",
    )


def _owner(column: exp.Column, tables: dict[str, str], schema) -> str | None:
    """The schema table a column reads: by its qualifier, else the one query table that
    has a column of that name."""
    if column.table:
        return tables.get(column.table.lower())
    having = [
        name for name in tables.values() if (t := schema.table(name)) and t.column(column.name)
    ]
    return having[0] if len(set(having)) == 1 else None


_NUMERIC_TEXT: dict[tuple, bool] = {}


def _holds_numbers_as_text(database, schema, table: str, column: str) -> bool:
    """Whether ``table.column`` is declared as text and its values (a sample) are all
    numbers."""
    found = schema.table(table)
    declared = found.column(column) if found else None
    if declared is None or (
        "CHAR" not in declared.type.upper() and "TEXT" not in (declared.type.upper())
    ):
        return False
    key = (id(database), table.lower(), column.lower())
    if key not in _NUMERIC_TEXT:
        query = (
            exp.select(exp.column(column))
            .from_(exp.to_table(table))
            .where(exp.column(column).is_(exp.null()).not_())
            .limit(SAMPLE)
        )
        try:
            rows = database.execute(query.sql("sqlite"), ordered=False).rows
        except SQLError:
            rows = []
        values = [str(row[0]).strip() for row in rows if str(row[0]).strip()]
        _NUMERIC_TEXT[key] = bool(values) and all(_is_number(v) for v in values)
    return _NUMERIC_TEXT[key]


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True
