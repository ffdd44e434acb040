"""Leaks: does a column that remains still answer for the one an edit removes?

A question is unanswerable only if nothing left in the database gives its answer. Four
ways a remaining column can still give it, each checked here:

- ``synonym``: its name means the same (:func:`lexicon.is_exact_synonym`), in the
  same table (``date_of_birth`` when ``birth_date`` is dropped);
- ``same-values``: a column of the same table holds the same value on every row;
- ``same-values-via-key``: a column one foreign key away holds it on every joined row
  (``goals.team_id`` is ``players.team_id`` through ``player_id``);
- ``derivable``: the difference, sum, ratio or product of two columns of the table gives
  it (``length_of_stay`` is ``out_time - in_time`` in days, a state's ``density`` is
  ``population / area``, to within rounding);
- ``aggregate``: a count or a sum over the rows of a table whose foreign key points to
  it gives it, on every row (an invoice's ``Total`` is the sum of its lines' ``UnitPrice
  * Quantity``; a match's ``home_score`` counts its goals whose ``team_id`` is the
  match's ``home_team_id``: the condition pairs two keys that point to one table);
- ``age-from-birth-date``: an age, where the table keeps a birth date (by name: an age
  is the birth date's distance from a day the question or the reader supplies).

The data checks run on the source database (read-only), where the column still exists;
a schema-only source gets the name checks alone.
"""

from __future__ import annotations

import fcntl
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp

from answerable.builders.counterfactual import trees
from answerable.builders.counterfactual.lexicon import (
    column_role,
    head_token,
    is_exact_synonym,
    name_tokens,
)
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema, Table
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import content_hash
from answerable.kernel.records import read_json, write_json

_NUMERIC = ("INT", "REAL", "FLOA", "DOUB", "NUM", "DEC")
_MIN_COVERAGE = 0.9


@dataclass(frozen=True)
class Leak:
    """A remaining column (or pair of columns) that still answers for the dropped one."""

    how: str
    columns: tuple[str, ...]
    operation: str = ""  # for ``derivable``: ``difference`` (first - second) or ``sum``

    def describe(self) -> str:
        """One line for a reject's detail."""
        return f"{' and '.join(self.columns)} ({self.how})"


def name_leaks(schema: DatabaseSchema, table: str, column: str, keep=()) -> list[Leak]:
    """Columns of ``table`` (other than ``column`` and ``keep``) named as its synonyms,
    and the birth date an age is worked out from."""
    owner = schema.table(table)
    skip = {column.lower(), *(k.lower() for k in keep)}
    found = [
        Leak("synonym", (f"{owner.name}.{c.name}",))
        for c in owner.columns
        if c.name.lower() not in skip and is_exact_synonym(c.name, column, owner.name)
    ]
    if head_token(column) == "age":
        found += [
            Leak("age-from-birth-date", (f"{owner.name}.{c.name}",))
            for c in owner.columns
            if c.name.lower() not in skip and _is_birth_date(c.name, c.type)
        ]
    return found


def _is_birth_date(name: str, declared: str) -> bool:
    """``date_of_birth``, ``BirthDate``, ``dob``: a date of birth, not a birth year or a
    birthplace (a year gives an age only to within one, and a place none)."""
    tokens = set(name_tokens(name))
    dated = column_role(name, declared) in ("date", "time")
    return ("dob" in tokens) or ("birth" in tokens and dated and "year" not in tokens)


def value_leaks(db: ReadOnlyDatabase, schema: DatabaseSchema, table: str, column: str) -> list:
    """Remaining columns whose values give ``table.column``'s values (see module doc).
    Every check's queries go to the SQL worker in one exchange, each text once."""
    owner = schema.table(table)
    asks = _same_table(owner, column)
    for other, here, there, forward in _neighbours(schema, owner):
        asks += _via_key(owner, column, other, here, there, forward)
    if _is_numeric(owner, column):
        asks += _derivable(owner, column)
        asks += _aggregates(schema, owner, column)
    texts = list(dict.fromkeys(text for ask in asks for text in ask.texts))
    rows = dict(zip(texts, _run_all(db, texts), strict=True))
    return [leak for ask in asks for leak in ask.read(*(rows[text] for text in ask.texts))]


def shared_value_leaks(
    folder: Path | None, db: ReadOnlyDatabase, schema: DatabaseSchema, table: str, column: str
) -> list[Leak]:
    """:func:`value_leaks`, found once among the processes that share ``folder`` (the
    shard workers of one step, over one database): the first to ask finds and stores
    them under a lock on the column, the others wait for it and read them. Without a
    folder, or where it cannot be written, each process finds its own."""
    if folder is None:
        return value_leaks(db, schema, table, column)
    name = content_hash([schema.db_id, table, column])[:24]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / f"{name}.lock", "a")  # noqa: SIM115 (held while found)
    except OSError:
        return value_leaks(db, schema, table, column)
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        stored = folder / f"{name}.json"
        if stored.is_file():
            return [
                Leak(how, tuple(columns), operation)
                for how, columns, operation in read_json(stored)
            ]
        found = value_leaks(db, schema, table, column)
        write_json([[leak.how, list(leak.columns), leak.operation] for leak in found], stored)
        return found


@dataclass(frozen=True)
class _Ask:
    """A check's queries (SQLite texts) and what it makes of their first rows."""

    texts: tuple[str, ...]
    read: Callable[..., list[Leak]]


def _ask(read: Callable[..., list[Leak]], *queries: exp.Select) -> list[_Ask]:
    return [_Ask(tuple(query.sql("sqlite", copy=False) for query in queries), read)]


def _differs(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    """1 when ``a`` and ``b`` differ on a row, else 0 (NULL equals NULL)."""
    return exp.Case(
        ifs=[exp.If(this=exp.NullSafeNEQ(this=a, expression=b), true=exp.Literal.number(1))],
        default=exp.Literal.number(0),
    )


def _run_all(db: ReadOnlyDatabase, texts: list[str]) -> list[list]:
    """Each query's first row ([] when it fails or finds none), in one exchange."""
    found = db.execute_many([(text, False) for text in texts])
    return [[] if isinstance(f, SQLError) or not f.rows else f.rows[0] for f in found]


def _others(owner: Table, column: str) -> list[str]:
    return [c.name for c in owner.columns if c.name.lower() != column.lower()]


def _same_table(owner: Table, column: str) -> list[_Ask]:
    others = _others(owner, column)
    if not others:
        return []
    target = trees.column(column, owner.name)
    sums = [
        exp.func("SUM", _differs(target, trees.column(o, owner.name)), copy=False) for o in others
    ]
    query = (
        exp.select(exp.func("COUNT", exp.Star()), *sums)
        .from_(trees.table(owner.name), copy=False)
        .where(trees.not_null(target.copy()), copy=False)
    )

    def read(row: list) -> list[Leak]:
        if not row or not row[0]:
            return []
        return [
            Leak("same-values", (f"{owner.name}.{o}",))
            for o, differ in zip(others, row[1:], strict=True)
            if differ == 0
        ]

    return _ask(read, query)


def _neighbours(schema: DatabaseSchema, owner: Table):
    """``(other table, key here, key there, forward)`` for every foreign key between
    ``owner`` and another table, in either direction."""
    for here, other, there in owner.foreign_keys:
        table = schema.table(other)
        if table is not None and table.name != owner.name:
            yield table, here, there, True
    for table in schema.tables:
        if table.name == owner.name:
            continue
        for here, other, there in table.foreign_keys:
            if other.lower() == owner.name.lower():
                yield table, there, here, False


def _via_key(owner: Table, column: str, other: Table, here: str, there: str, forward: bool):
    candidates = [c.name for c in other.columns if c.name.lower() != there.lower()]
    if not candidates:
        return []
    target = trees.column(column, owner.name)
    sums = [
        exp.func("SUM", _differs(target, trees.column(c, other.name)), copy=False)
        for c in candidates
    ]
    joined = exp.func("COUNT", exp.Distinct(expressions=[trees.column("rowid", owner.name)]))
    query = (
        exp.select(joined, *sums)
        .from_(trees.table(owner.name), copy=False)
        .join(
            trees.table(other.name),
            on=exp.EQ(
                this=trees.column(here, owner.name), expression=trees.column(there, other.name)
            ),
            copy=False,
        )
        .where(trees.not_null(target.copy()), copy=False)
    )

    def read(row: list, total: list) -> list[Leak]:
        if not row or not total or not row[0] or row[0] < _MIN_COVERAGE * total[0]:
            return []
        how = "same-values-via-key" if forward else "same-values-via-key (reverse)"
        return [
            Leak(how, (f"{other.name}.{c}",))
            for c, differ in zip(candidates, row[1:], strict=True)
            if differ == 0
        ]

    return _ask(read, query, _count_present(owner, column))


def _count_present(owner: Table, column: str) -> exp.Select:
    target = trees.column(column, owner.name)
    return (
        exp.select(exp.func("COUNT", exp.Star()))
        .from_(trees.table(owner.name), copy=False)
        .where(trees.not_null(target), copy=False)
    )


def _is_numeric(owner: Table, column: str) -> bool:
    declared = (owner.column(column).type or "").upper()
    return any(t in declared for t in _NUMERIC)


def _operand(owner: Table, name: str, alias: str | None = None) -> exp.Expr | None:
    """A column as a number: numbers as they are, dates and times as Julian days."""
    column = owner.column(name)
    role = column_role(column.name, column.type)
    if role == "identifier":
        return None
    node = trees.column(column.name, alias or owner.name)
    if role in ("date", "time"):
        return exp.func("julianday", node)
    return node if _is_numeric(owner, name) else None


ORDERED = ("difference", "ratio")  # kinds whose operands' order matters
NUMBERS_ONLY = ("ratio", "product")  # kinds that mean nothing of dates


def _derivable(owner: Table, column: str) -> list[_Ask]:
    operands = {n: o for n in _others(owner, column) if (o := _operand(owner, n)) is not None}
    dated = {n for n, o in operands.items() if isinstance(o, exp.Anonymous | exp.Func)}
    pairs = [
        (kind, a, b)
        for a, b in itertools.permutations(sorted(operands), 2)
        for kind in ("difference", "sum", "ratio", "product")
        if (kind in ORDERED or a < b) and not (kind in NUMBERS_ONLY and {a, b} & dated)
    ]
    if not pairs:
        return []
    target = trees.column(column, owner.name)
    sums = [
        exp.func("SUM", _far(target, _combine(kind, operands[a], operands[b])), copy=False)
        for kind, a, b in pairs
    ]
    query = (
        exp.select(exp.func("COUNT", exp.Star()), *sums)
        .from_(trees.table(owner.name), copy=False)
        .where(trees.not_null(target.copy()), copy=False)
    )

    def read(row: list) -> list[Leak]:
        if not row or (row[0] or 0) < 5:
            return []
        return [
            Leak("derivable", (f"{owner.name}.{a}", f"{owner.name}.{b}"), kind)
            for (kind, a, b), far in zip(pairs, row[1:], strict=True)
            if far == 0
        ]

    return _ask(read, query)


def formula(owner: Table, leak: Leak, alias: str | None = None) -> exp.Expr:
    """The expression a ``derivable`` leak stands for, over ``owner``'s columns qualified
    by ``alias`` (default: the table's name): ``julianday(out_time) - julianday(in_time)``.

    >>> from answerable.builders.schema import Column
    >>> stays = Table("stays", [Column("los", "REAL"), Column("a", "REAL"), Column("b", "REAL")])
    >>> formula(stays, Leak("derivable", ("stays.b", "stays.a"), "difference"), "s").sql()
    '("s"."b" - "s"."a")'
    """
    a, b = (_operand(owner, name.rpartition(".")[2], alias) for name in leak.columns)
    return _combine(leak.operation, a, b)


_COMBINED = {"difference": exp.Sub, "sum": exp.Add, "ratio": exp.Div, "product": exp.Mul}


def _combine(kind: str, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    """``a - b``, ``a + b``, ``a / b`` (real division; NULL where b is 0) or ``a * b``."""
    if kind == "ratio":
        real = exp.Mul(this=exp.Literal.number("1.0"), expression=a.copy())
        divisor = exp.func("NULLIF", b.copy(), exp.Literal.number(0))
        return exp.Paren(this=exp.Div(this=real, expression=divisor))
    return exp.Paren(this=_COMBINED[kind](this=a.copy(), expression=b.copy()))


def _aggregates(schema: DatabaseSchema, owner: Table, column: str) -> list[_Ask]:
    """Counts and sums over the rows that point to each row of ``owner`` (see the module
    doc), with or without a condition that pairs two keys pointing to one table."""
    asks = []
    for child, fk, key in _children(schema, owner):
        measures = _measures(child, fk)
        for condition in [None, *_conditions(child, fk, owner)]:
            asks += _aggregate_leaks(owner, column, child, fk, key, condition, measures)
    return asks


def _children(schema: DatabaseSchema, owner: Table):
    """``(table, its key column, owner's key column)`` for every foreign key to ``owner``."""
    for table in schema.tables:
        if table.name.lower() == owner.name.lower():
            continue
        for here, other, there in table.foreign_keys:
            if other.lower() == owner.name.lower():
                yield table, here, there


def _measures(child: Table, fk: str) -> dict[str, tuple[str, exp.Expr]]:
    """``alias -> (description, aggregate)``: the count of rows, the sum of each number
    and of each product of two numbers (price times quantity)."""
    numbers = [
        c.name
        for c in child.columns
        if c.name.lower() != fk.lower()
        and _is_numeric(child, c.name)
        and column_role(c.name, c.type) not in ("identifier", "flag")
    ]
    found = {"m0": ("count", exp.func("COUNT", exp.Star()))}
    for name in numbers:
        found[f"m{len(found)}"] = (f"sum of {name}", exp.func("SUM", trees.column(name)))
    for a, b in itertools.combinations(numbers, 2):
        product = exp.Mul(this=trees.column(a), expression=trees.column(b))
        found[f"m{len(found)}"] = (f"sum of {a} * {b}", exp.func("SUM", product))
    return found


def _conditions(child: Table, fk: str, owner: Table) -> list[tuple[str, str]]:
    """``(child column, owner column)`` pairs whose foreign keys point to one table
    (``goals.team_id`` and ``matches.home_team_id`` both name a team)."""
    owner_refs = {(t.lower(), c.lower()): here for here, t, c in owner.foreign_keys}
    return [
        (here, owner_refs[(t.lower(), c.lower())])
        for here, t, c in child.foreign_keys
        if here.lower() != fk.lower() and (t.lower(), c.lower()) in owner_refs
    ]


def _aggregate_leaks(owner, column, child, fk, key, condition, measures) -> list[_Ask]:
    keys = [trees.column(fk)]
    if condition is not None:
        keys.append(exp.alias_(trees.column(condition[0]), "c"))
    grouped = (
        exp.select(
            exp.alias_(trees.column(fk), "k"),
            *keys[1:],
            *(exp.alias_(agg, alias) for alias, (_, agg) in measures.items()),
        )
        .from_(trees.table(child.name), copy=False)
        .group_by(*(k.this if isinstance(k, exp.Alias) else k for k in keys), copy=False)
    )
    on = exp.EQ(this=trees.column("k", "g"), expression=trees.column(key, owner.name))
    if condition is not None:
        right = trees.column(condition[1], owner.name)
        on = exp.and_(on, exp.EQ(this=trees.column("c", "g"), expression=right))
    target = trees.column(column, owner.name)
    fars = [
        exp.func(
            "SUM",
            _far(target, exp.func("COALESCE", trees.column(alias, "g"), exp.Literal.number(0))),
            copy=False,
        )
        for alias in measures
    ]
    query = (
        exp.select(
            exp.func("COUNT", exp.Star()),
            exp.func("COUNT", exp.Distinct(expressions=[target.copy()])),
            *fars,
        )
        .from_(trees.table(owner.name), copy=False)
        .join(
            exp.alias_(exp.Subquery(this=grouped), "g", table=True),
            on=on,
            join_type="left",
            copy=False,
        )
        .where(trees.not_null(target.copy()), copy=False)
    )
    columns = [f"{child.name}.{fk}"] + ([f"{child.name}.{condition[0]}"] if condition else [])

    def read(row: list) -> list[Leak]:
        if not row or (row[0] or 0) < 5 or (row[1] or 0) < 2:
            return []
        return [
            Leak("aggregate", tuple(columns), measures[alias][0])
            for alias, far in zip(measures, row[2:], strict=True)
            if far == 0
        ]

    return _ask(read, query)


def _far(target: exp.Expr, value: exp.Expr) -> exp.Expr:
    """1 when ``value`` is missing or further from ``target`` than rounding explains:
    one hundredth of the target's size (at least 0.01)."""
    gap = exp.func("ABS", exp.Sub(this=target.copy(), expression=value), copy=False)
    tolerance = exp.Mul(
        this=exp.Literal.number("0.01"),
        expression=exp.func(
            "MAX", exp.Literal.number(1), exp.func("ABS", target.copy(), copy=False), copy=False
        ),
    )
    missing = exp.Is(this=value.copy(), expression=exp.Null())
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.or_(missing, exp.GT(this=gap, expression=tolerance)),
                true=exp.Literal.number(1),
            )
        ],
        default=exp.Literal.number(0),
    )
