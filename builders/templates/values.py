"""Where a template's values come from, and drawing them without repeats.

Each placeholder, or group of placeholders, gets a :class:`Domain`: the sorted rows of
a binding query (jointly valid combinations), the distinct values of a column or a
query, a list of allowed values, or a numeric or date range. A template's value sets
are the product of its domains, drawn in a seeded random order without repeats
(:func:`draws`), so the first ``k`` draws are the same whatever ``k`` is.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass
from math import prod
from typing import Any

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.builders.templates.model import RANGE_TYPES, Template, binding_columns
from answerable.builders.templates.problems import TemplateError
from answerable.kernel.errors import SQLError

ALL_ROWS = 10_000_000
ALL_ROWS_BYTES = 64_000_000  # a value list keeps every row, so its byte cap is larger
DEFAULT_DECIMALS = 2


@dataclass(frozen=True)
class Domain:
    """Values for ``names``: ``rows`` (tuples, one value per name), or a range.

    A range has ``kind`` ``integer``, ``number``, ``date`` or ``datetime``, a ``start``
    and ``count`` steps of one unit (1, ``10**-decimals``, a day, a minute).
    """

    names: tuple[str, ...]
    rows: tuple[tuple, ...] | None = None
    kind: str | None = None
    start: Any = None
    count: int = 0
    decimals: int = 0

    @property
    def size(self) -> int:
        """How many value tuples the domain holds."""
        return len(self.rows) if self.rows is not None else self.count

    def at(self, index: int) -> tuple:
        """The ``index``-th value tuple."""
        if self.rows is not None:
            return self.rows[index]
        if self.kind == "integer":
            return (self.start + index,)
        if self.kind == "number":
            return (round(self.start + index / 10**self.decimals, self.decimals),)
        if self.kind == "date":
            return ((self.start + dt.timedelta(days=index)).isoformat(),)
        return ((self.start + dt.timedelta(minutes=index)).strftime("%Y-%m-%d %H:%M:%S"),)


def draws(domains: list[Domain], rng: random.Random) -> Iterator[dict[str, Any]]:
    """Value sets from the product of ``domains`` in random order, each at most once.

    >>> d = [Domain(("a",), rows=((1,), (2,))), Domain(("b",), kind="integer", start=5, count=2)]
    >>> sorted(tuple(v.values()) for v in draws(d, random.Random(0)))
    [(1, 5), (1, 6), (2, 5), (2, 6)]
    """
    for index in shuffled(product_size(domains), rng):
        yield decode(domains, index)


def product_size(domains: list[Domain]) -> int:
    """How many value sets the product of ``domains`` holds."""
    return prod(domain.size for domain in domains)


def shuffled(total: int, rng: random.Random) -> Iterator[int]:
    """``range(total)`` in random order: a lazy Fisher-Yates shuffle, so memory grows
    with the number of indexes taken, not with ``total``, and the first ``k`` are the
    same whatever ``k`` is."""
    moved: dict[int, int] = {}
    for position in range(total):
        chosen = position + rng.randrange(total - position)
        index = moved.get(chosen, chosen)
        moved[chosen] = moved.pop(position, position)
        yield index


def decode(domains: list[Domain], index: int) -> dict[str, Any]:
    """The value set at ``index`` of the product of ``domains`` (mixed radix)."""
    values: dict[str, Any] = {}
    for domain in domains:
        index, digit = divmod(index, domain.size)
        values.update(zip(domain.names, domain.at(digit), strict=True))
    return values


def domains_of(template: Template, db: ReadOnlyDatabase, schema: DatabaseSchema) -> list[Domain]:
    """The domains of every placeholder of ``template``, read from ``db``.

    Raises ``TemplateError`` (``binding-failed``, ``unknown-column``, ``no-values``) or
    the ``SQLError`` of a binding query that does not run.
    """
    domains, bound = [], set()
    for query in template.bindings:
        names = binding_columns(query)
        unknown = [n for n in names if n not in template.names]
        if unknown or len(set(names)) != len(names):
            raise TemplateError(
                "binding-failed", f"binding columns {names} must be distinct placeholders"
            )
        rows = _filtered(_query_rows(db, query), names, template.placeholders)
        domains.append(_rows_domain(tuple(names), rows))
        bound.update(names)
    for name in template.names:
        if name not in bound:  # a name a binding gives has at most filters here
            domains.append(_placeholder_domain(name, template.placeholders[name], db, schema))
    for domain in domains:
        if domain.size == 0:
            raise TemplateError("no-values", f"no values for {', '.join(domain.names)}")
    return domains


def _placeholder_domain(name: str, spec: dict, db: ReadOnlyDatabase, schema) -> Domain:
    if "column" in spec:
        rows = _query_rows(db, column_query(spec["column"], schema))
    elif "query" in spec:
        rows = [row[:1] for row in _query_rows(db, spec["query"])]
    elif "values" in spec:
        return Domain((name,), rows=tuple(dict.fromkeys((value,) for value in spec["values"])))
    else:
        return range_domain(name, spec)
    return _rows_domain((name,), _filtered(rows, [name], {name: spec}))


def column_query(column: str, schema: DatabaseSchema) -> str:
    """``SELECT DISTINCT c FROM t WHERE c IS NOT NULL`` for ``t.c``, names as in the schema."""
    table_name, column_name = column.split(".", 1)
    table = schema.table(table_name)
    found = table.column(column_name) if table else None
    if found is None:
        raise TemplateError("unknown-column", f"{column} is not in database {schema.db_id}")
    node = exp.column(found.name, quoted=True)
    query = exp.select(node).distinct().from_(exp.Table(this=exp.to_identifier(table.name, True)))
    return query.where(node.copy().is_(exp.null()).not_()).sql("sqlite")


def _query_rows(db: ReadOnlyDatabase, query: str) -> list[tuple]:
    """Every row of a value query (written for SQLite, as templates are), run on ``db``
    in its engine's dialect (:func:`in_dialect`)."""
    try:
        result = db.execute(
            in_dialect(query, getattr(db, "dialect", "sqlite")),
            ordered=False,
            row_cap=ALL_ROWS,
            byte_cap=ALL_ROWS_BYTES,
        )
    except SQLError as error:
        raise TemplateError("binding-failed", f"{error} in {query!r}") from None
    return [tuple(row) for row in result.rows]


def in_dialect(query: str, dialect: str) -> str:
    """A value query written for SQLite, as the engine of ``dialect`` must read it: as it
    is on SQLite, else rewritten where sqlglot alone would change its meaning
    (:func:`sqlkit.portable`: day shifts, LIKE's case) and written by sqlglot, as a
    template's own SQL is (a value query run as written read SQLite's functions and
    LIKE on another engine: an error, or other values than SQLite draws).

    >>> in_dialect("SELECT DISTINCT date(t, '-1 days') FROM a", "duckdb")
    "SELECT DISTINCT STRFTIME(CAST(t AS DATE) + INTERVAL (-1) DAY, '%Y-%m-%d') FROM a"
    """
    if dialect == "sqlite":
        return query
    tree = sqlkit.portable(sqlkit.parse(query, "sqlite"), "sqlite", dialect)
    return tree.sql(dialect=dialect)


def _filtered(rows: list[tuple], names: list[str], specs: dict[str, dict]) -> list[tuple]:
    """Rows without NULLs whose every value meets its placeholder's min, max and values."""
    checks = [(i, specs[n]) for i, n in enumerate(names) if n in specs]
    return [row for row in rows if None not in row and all(_allowed(row[i], s) for i, s in checks)]


def _allowed(value: Any, spec: dict) -> bool:
    if "values" in spec and value not in spec["values"]:
        return False
    try:
        return ("min" not in spec or value >= spec["min"]) and (
            "max" not in spec or value <= spec["max"]
        )
    except TypeError:
        return False


def _rows_domain(names: tuple[str, ...], rows: list[tuple]) -> Domain:
    unique = set(rows)
    key = None if _sorts_as_is(unique) else _row_key
    return Domain(names, rows=tuple(sorted(unique, key=key)))


_NUMBERS = frozenset((int, float, bool))
_TEXT = frozenset((str,))


def _sorts_as_is(rows: set[tuple]) -> bool:
    """Whether ``rows`` sort by their own values exactly as by :func:`_row_key`: every
    column all numbers or all text (then each key only wraps the value in a constant
    class, which changes no comparison), so the sort needs no key per row (a key per
    row was most of the time a large domain took to read).

    >>> _sorts_as_is({(1, "a"), (2.5, "b")}), _sorts_as_is({(1,), ("a",)})
    (True, False)
    """
    for column in zip(*rows, strict=True):
        kinds = set(map(type, column))
        if not (kinds <= _NUMBERS or kinds <= _TEXT):
            return False
    return True


def _row_key(row: tuple) -> tuple:
    return tuple(_value_key(value) for value in row)


def _value_key(value: Any) -> tuple:
    if value is None:
        return (0, 0)
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    return (3, repr(value))


def range_domain(name: str, spec: dict) -> Domain:
    """A range placeholder: every step from ``min`` to ``max`` (inclusive).

    >>> range_domain("x", {"type": "number", "min": 1, "max": 2, "decimals": 1}).size
    11
    """
    kind, low, high = spec.get("type"), spec["min"], spec["max"]
    if kind not in RANGE_TYPES:
        raise TemplateError("bad-placeholder", f"{name}: a range needs a type")
    try:
        start, stop, decimals = _range_ends(kind, low, high, spec)
    except (TypeError, ValueError) as error:
        raise TemplateError("bad-placeholder", f"{name}: bad min or max: {error}") from None
    if stop < 0:
        raise TemplateError("bad-placeholder", f"{name}: min is above max")
    return Domain((name,), kind=kind, start=start, count=stop + 1, decimals=decimals)


def _range_ends(kind: str, low: Any, high: Any, spec: dict) -> tuple[Any, int, int]:
    """``(start, number of steps from min to max, decimals)``."""
    if kind == "integer":
        return int(low), int(high) - int(low), 0
    if kind == "number":
        decimals = spec.get("decimals", DEFAULT_DECIMALS)
        return float(low), round((float(high) - float(low)) * 10**decimals), decimals
    if kind == "date":
        start = dt.date.fromisoformat(str(low))
        return start, (dt.date.fromisoformat(str(high)) - start).days, 0
    start = dt.datetime.fromisoformat(str(low))
    return start, int((dt.datetime.fromisoformat(str(high)) - start).total_seconds() // 60), 0
