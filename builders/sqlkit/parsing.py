"""Reading SQL text into one tree, and writing a tree in another dialect."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError

from answerable.builders.isolation import cpu_bounded
from answerable.kernel.errors import SQLError

DIALECTS = ("sqlite", "postgres", "bigquery", "duckdb")
"""The dialects :func:`transpile` reads and writes."""

PATTERN_MATCHES = (
    exp.Like,
    exp.ILike,
    exp.Glob,
    exp.RegexpLike,
    exp.RegexpILike,
    exp.Match,
    exp.SimilarTo,
)
"""Pattern and similarity predicates (BiomedSQL's "Similarity Search")."""

COMPARISONS = (
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.NullSafeEQ,
    exp.Is,
    *PATTERN_MATCHES,
)
"""Binary predicates whose two sides are compared: a value on one side is 'about' the other."""


PARSE_LIMIT_S = 2.0
"""CPU seconds one parse may take: sqlglot's parse of some texts grows exponentially
(a chain of bare JOINs doubles its time with each join), so a parse past this is
refused with ``too-complex`` (see :func:`answerable.builders.isolation.cpu_bounded`)."""


MANY_JOINS = 12
"""Times ``JOIN`` appears in a text from which its parse is first tried in the SQL
worker. sqlglot's parse of a chain of bare JOINs doubles its time with each join (about
0.1 s of CPU at 12, past :data:`PARSE_LIMIT_S` near 18), and its compiled build runs on
to the end of a parse before the CPU timer is heard; in the worker the kernel stops it."""


def parse(sql: str, dialect: str = "sqlite") -> exp.Expr:
    """The tree of the one SQL statement in ``sql``.

    Raises :class:`SQLError` ``parse-error``, ``multiple-statements``, ``too-complex``
    (past :data:`PARSE_LIMIT_S`) or ``too-deep`` (nesting past Python's recursion limit).

    >>> parse("select a from t;").sql()
    'SELECT a FROM t'
    """
    text = sql or ""
    return _parsed(text, dialect, probe_first=text.upper().count("JOIN") >= MANY_JOINS)


def _parsed(text: str, dialect: str, probe_first: bool) -> exp.Expr:
    """:func:`parse`, first in the worker when ``probe_first``."""
    read = dialect_named(dialect)
    try:
        statements = cpu_bounded(
            lambda: [s for s in sqlglot.parse(text, read=read) if s],
            PARSE_LIMIT_S,
            "parsing the SQL",
            (_probe_parse, (text, dialect)),
            probe_first,
        )
    except (ParseError, TokenError) as error:
        raise SQLError("parse-error", first_line(error)) from None
    except RecursionError:
        raise SQLError("too-deep", "the SQL nests deeper than the parser follows") from None
    if not statements:
        raise SQLError("parse-error", "the SQL text holds no statement")
    if len(statements) > 1:
        raise SQLError("multiple-statements", f"expected one statement, got {len(statements)}")
    return statements[0]


_DAY_SHIFT = re.compile(r"^\s*([+-]?\d+)\s+days?\s*$", re.IGNORECASE)


def portable(tree: exp.Expr, read: str, write: str) -> exp.Expr:
    """``tree`` (read in ``read``) rewritten in place where sqlglot alone would write SQL
    that means something else in ``write``, and returned.

    From SQLite: a double-quoted word compared with a column is a string; and
    ``date(x, '+N days')`` (day shifts only: month arithmetic differs between engines)
    becomes the date text of ``CAST(x AS DATE) + N days``, as SQLite returns it; and
    ``LIKE``, which ignores the case of ASCII letters on SQLite and on no other engine,
    becomes ``ILIKE`` (which ignores case on PostgreSQL and DuckDB; beyond ASCII it
    ignores more than SQLite does, a difference the README names); and for PostgreSQL,
    ``round(x, n)`` rounds ``CAST(x AS NUMERIC)`` (PostgreSQL has no ``round`` of a double
    to ``n`` decimals; the result, a computed numeric, is hashed as a float).

    >>> portable(parse("SELECT date(d, '+30 days') FROM t"), "sqlite", "duckdb").sql("duckdb")
    "SELECT STRFTIME(CAST(d AS DATE) + INTERVAL 30 DAY, '%Y-%m-%d') FROM t"
    >>> portable(parse("SELECT a FROM t WHERE b NOT LIKE 'x%'"), "sqlite", "duckdb").sql("duckdb")
    "SELECT a FROM t WHERE b NOT ILIKE 'x%'"
    >>> portable(parse("SELECT round(round(a, 1) * 3, 2) FROM t"), "sqlite", "postgres").sql(
    ...     "postgres")
    'SELECT ROUND(CAST(ROUND(CAST(a AS DECIMAL), 1) * 3 AS DECIMAL), 2) FROM t'
    """
    if read != "sqlite":
        return tree
    compared_quotes_to_strings(tree)
    if write == "sqlite":
        return tree
    for node in list(tree.find_all(exp.Anonymous)):
        shift = _day_shift(node)
        if shift is not None:
            node.replace(shift)
    if write in CASE_SENSITIVE_LIKE:
        for like in list(tree.find_all(exp.Like)):
            like.replace(exp.ILike(**like.args))
    if write == "postgres":  # PostgreSQL rounds to decimals only a numeric, not a double
        for rounded in reversed(list(tree.find_all(exp.Round))):  # inner ones first
            if rounded.args.get("decimals") is not None:
                rounded.set("this", exp.cast(rounded.this, "numeric"))
    return tree


CASE_SENSITIVE_LIKE = ("postgres", "duckdb")  # dialects whose LIKE minds the case


def _day_shift(node: exp.Anonymous) -> exp.Expr | None:
    """The portable tree of SQLite's ``date(x, '+N days')``, or None for any other call."""
    args = node.expressions
    if str(node.this).lower() != "date" or len(args) != 2 or not args[1].is_string:
        return None
    days = _DAY_SHIFT.match(args[1].name)
    if days is None:
        return None
    shifted = exp.DateAdd(
        this=exp.cast(args[0].copy(), "date"),
        expression=exp.Literal.number(int(days.group(1))),
        unit=exp.Var(this="DAY"),
    )
    return exp.TimeToStr(this=shifted, format=exp.Literal.string("%Y-%m-%d"))


def transpile(sql: str, read: str = "sqlite", write: str = "postgres") -> str:
    """``sql`` written in dialect ``write``; raises on SQL the target cannot express.

    SQLite reads a double-quoted word that names no column as a string; one compared
    with a column is written as a string so that the other dialects read it the same.

    >>> transpile('SELECT name FROM singer WHERE country = "France" LIMIT 3', write="bigquery")
    "SELECT name FROM singer WHERE country = 'France' LIMIT 3"
    """
    for name in (read, write):
        if name not in DIALECTS:
            raise SQLError("unsupported-dialect", f"{name!r} is not one of {', '.join(DIALECTS)}")
    tree = portable(parse(sql, read), read, write)
    try:
        return tree.sql(dialect=write, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as error:
        raise SQLError("unsupported-sql", f"cannot write in {write}: {first_line(error)}") from None


def dialect_named(name: str) -> Dialect:
    """The sqlglot dialect called ``name``, or ``SQLError("unsupported-dialect")``."""
    try:
        return Dialect.get_or_raise(name)
    except ValueError as error:
        raise SQLError("unsupported-dialect", first_line(error)) from None


def first_line(error: Exception) -> str:
    """The first line of an error's message (sqlglot adds highlighted context below)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def is_quoted_word(column: exp.Column) -> bool:
    """An unqualified quoted name: SQLite reads it as a string when no column has it."""
    return not column.table and isinstance(column.this, exp.Identifier) and column.this.quoted


def compared_quotes_to_strings(tree: exp.Expr) -> None:
    """Without a schema: a quoted word compared with a column is taken as a string.

    When both sides are quoted words (``"Home Town" = "Paris"``), the right one is.
    """
    for column in list(tree.find_all(exp.Column)):
        other = compared_with(column)[1] if is_quoted_word(column) else None
        if isinstance(other, exp.Column) and not (
            is_quoted_word(other) and other.arg_key == "expression"
        ):
            column.replace(exp.Literal.string(column.name))


def compared_with(node: exp.Expr) -> tuple[str | None, exp.Expr | None]:
    """The operator key and the other side of the comparison that ``node`` is a value of.

    >>> tree = parse("SELECT a FROM t WHERE b BETWEEN 1 AND 5")
    >>> compared_with(tree.find(exp.Literal))
    ('between', Column(
      this=Identifier(this=b, quoted=False)))
    """
    while isinstance(node.parent, exp.Paren):
        node = node.parent
    parent = node.parent
    if isinstance(parent, exp.Neg):
        node, parent = parent, parent.parent
    if isinstance(parent, COMPARISONS):
        other = parent.expression if node is parent.this else parent.this
        return parent.key, other.unnest()
    if isinstance(parent, (exp.In, exp.Between)) and node is not parent.this:
        return parent.key, parent.this.unnest()
    return None, None


def _probe_parse(sql: str, dialect: str) -> None:
    """:func:`parse`, run in the SQL worker to bound it (in a thread other than the main,
    or for a text of :data:`MANY_JOINS`): there, in its main thread, under the timer."""
    _parsed(sql, dialect, probe_first=False)
