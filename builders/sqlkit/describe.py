"""What kind of query it is: skeleton, hardness, operation categories, order, safety."""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from answerable.builders.sqlkit.parsing import (
    PATTERN_MATCHES,
    compared_quotes_to_strings,
    dialect_named,
)
from answerable.kernel.errors import SQLError

OPERATIONS = (
    "Select",
    "Distinct",
    "Join",
    "Multi-Filter",
    "Threshold",
    "Calculate",
    "Order-By",
    "Similarity Search",
)
"""BiomedSQL's operation categories, in the order :func:`operations` reports them."""

_ORDERINGS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv)
_MATCHES = (*PATTERN_MATCHES, exp.Levenshtein)
_SIMILARITY_FUNCTIONS = frozenset(
    [
        "similarity",
        "word_similarity",
        "strict_word_similarity",
        "levenshtein",
        "editdist3",
        "edit_distance",
        "damerau_levenshtein",
        "jaro_similarity",
        "jaro_winkler_similarity",
        "jaccard",
        "soundex",
        "difference",
        "match",
        "regexp",
        "regexp_like",
        "regexp_matches",
        "regexp_contains",
        "cosine_similarity",
        "array_cosine_similarity",
        "vec_distance_cosine",
        "vec_distance_l2",
    ]
)
_TIME_FUNCTIONS = (
    exp.Date,
    exp.Datetime,
    exp.StrToDate,
    exp.StrToTime,
    exp.TimeStrToTime,
    exp.CurrentDate,
    exp.CurrentTimestamp,
    exp.CurrentTime,
    exp.DateAdd,
    exp.DateSub,
    exp.TsOrDsToDate,
    exp.TimeToStr,
)
_DATE_TEXT = re.compile(r"\d{4}(-\d{2}(-\d{2})?)?([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?")
_NUMBER_TEXT = re.compile(r"\s*[-+]?\d+(\.\d*)?([eE][-+]?\d+)?\s*")
_WRITES = (
    exp.DML,
    exp.DDL,
    exp.Drop,
    exp.Alter,
    exp.Command,
    exp.Pragma,
    exp.Attach,
    exp.Detach,
    exp.Into,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Set,
    exp.Use,
    exp.Analyze,
    exp.LoadData,
    exp.Grant,
    exp.Revoke,
    exp.TruncateTable,
    exp.Comment,
    exp.Refresh,
    exp.Cache,
    exp.Uncache,
    exp.Declare,
    exp.Execute,
    exp.Kill,
)
_UNSAFE_FUNCTIONS = frozenset({"load_extension", "writefile", "readfile", "edit", "fts3_tokenizer"})


def skeleton(expression: exp.Expr, dialect: str = "sqlite") -> str:
    """The query as written with every value masked: queries that differ only in values match.

    Strings become ``'_'``, numbers (LIMIT too) ``_``, and an IN list of values one
    ``'_'`` or ``_``; keywords and names are printed in one normal form. In SQLite, a
    double-quoted word compared with a column is read as the string it almost always is.

    >>> from answerable.builders.sqlkit import parse
    >>> skeleton(parse('select a from T where b in (1, 2) and c = "x" limit 3'))
    "SELECT a FROM t WHERE b IN (_) AND c = '_' LIMIT _"
    """
    tree = expression.copy()
    if dialect == "sqlite":
        compared_quotes_to_strings(tree)
    return tree.transform(_mask, copy=False).sql(dialect=dialect, normalize=True)


def _mask(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Literal) or (
        isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal)
    ):
        return exp.Literal.string("_") if node.is_string else exp.Literal.number("_")
    values = node.expressions if isinstance(node, exp.In) else ()
    if len(values) > 1 and all(isinstance(v, (exp.Literal, exp.Neg)) for v in values):
        node.set("expressions", [_mask(values[0])])
    return node


_VALUE_AFTER = frozenset(
    {
        *(TokenType.EQ, TokenType.NEQ, TokenType.NULLSAFE_EQ),
        *(TokenType.GT, TokenType.GTE, TokenType.LT, TokenType.LTE),
        *(TokenType.BETWEEN, TokenType.AND, TokenType.LIKE, TokenType.ILIKE, TokenType.GLOB),
        *(TokenType.LIMIT, TokenType.OFFSET),
    }
)
"""The tokens after which a literal is a value the query compares or bounds with: what
it is does not change the query's shape (an ordinal of ``ORDER BY 2`` or an argument of
``ROUND(x, 2)`` follows none of them, and stays as written)."""


def literal_shape(sql: str, dialect: str = "sqlite") -> tuple | None:
    """The SQL's tokens with each value it compares or bounds with (a string or number
    after a comparison, ``BETWEEN``, ``AND``, ``LIKE``, ``LIMIT`` or ``OFFSET``) replaced
    by its kind: ``number``, ``quantity`` (text :func:`operations` reads as a number or
    a date) or ``text``. Queries of one shape differ only in such values, so they have
    the same :func:`skeleton`, :func:`hardness`, :func:`operations` and, over one schema,
    the same columns. None when the SQL does not tokenize.

    >>> shape = literal_shape("SELECT a FROM t WHERE b = 'x' ORDER BY 1")
    >>> shape == literal_shape("SELECT a FROM t WHERE b = 'y' ORDER BY 1")
    True
    >>> shape == literal_shape("SELECT a FROM t WHERE b = '1990' ORDER BY 1")  # a quantity
    False
    >>> shape == literal_shape("SELECT a FROM t WHERE b = 'x' ORDER BY 2")
    False
    """
    try:
        tokens = dialect_named(dialect).tokenize(sql or "")
    except (TokenError, SQLError):
        return None
    shape, before = [], None
    for token in tokens:
        kind = token.token_type
        if before in _VALUE_AFTER and kind in (TokenType.STRING, TokenType.NUMBER):
            text = "number" if kind is TokenType.NUMBER else None
            text = text or ("quantity" if _is_number_or_date(token.text) else "text")
            shape.append((kind, text))
        else:
            shape.append((kind, token.text))
        before = kind
    return tuple(shape)


def hardness(expression: exp.Expr) -> str:
    """``easy``, ``medium`` or ``hard`` by the DIN-SQL criteria that TrustSQL uses.

    Easy reads one table without nesting, medium joins tables without nesting, hard
    nests a subquery (in any clause), a CTE or a set operation.

    >>> from answerable.builders.sqlkit import parse
    >>> hardness(parse("SELECT a FROM t JOIN u ON t.id = u.id"))
    'medium'
    """
    if expression.find(exp.SetOperation, exp.With, exp.Subquery):
        return "hard"
    if sum(1 for _ in expression.find_all(exp.Select)) > 1:
        return "hard"
    return "medium" if expression.find(exp.Join) else "easy"


def operations(expression: exp.Expr) -> list[str]:
    """BiomedSQL's operation categories that ``expression`` uses, in :data:`OPERATIONS` order.

    >>> from answerable.builders.sqlkit import parse
    >>> operations(parse("SELECT DISTINCT a FROM t WHERE b LIKE '%x%' ORDER BY a"))
    ['Select', 'Distinct', 'Order-By', 'Similarity Search']
    """
    found = {"Select"}
    for node in expression.walk():
        if isinstance(node, exp.Distinct):
            found.add("Distinct")
        elif isinstance(node, exp.Join):
            found.add("Join")
        elif isinstance(node, exp.Select):
            found.update(_select_operations(node))
        elif isinstance(node, (*_ORDERINGS, exp.EQ, exp.NEQ)) and _is_threshold(node):
            found.add("Threshold")
        elif isinstance(node, exp.Order) and isinstance(node.parent, exp.Query):
            found.add("Order-By")
        elif _is_similarity(node):
            found.add("Similarity Search")
    return [name for name in OPERATIONS if name in found]


def _select_operations(select: exp.Select) -> list[str]:
    """Multi-Filter and Calculate, judged on one SELECT without its subqueries."""
    filters = [select.args.get("where"), select.args.get("having")]
    predicates = sum(1 + len(_local(f.this, (exp.And, exp.Or))) for f in filters if f)
    parts = [*select.expressions, select.args.get("having"), select.args.get("order")]
    calculates = any(_local(p, (exp.AggFunc, *_ARITHMETIC)) for p in parts if p)
    return ["Multi-Filter"] * (predicates > 1) + ["Calculate"] * calculates


def _local(node: exp.Expr, kinds: tuple) -> list[exp.Expr]:
    """Nodes of ``kinds`` under ``node`` that belong to its query, not to a subquery."""
    return [n for n in node.walk(prune=_is_query) if isinstance(n, kinds)]


def _is_query(node: exp.Expr) -> bool:
    return isinstance(node, exp.Query)


def _is_threshold(comparison: exp.Expr) -> bool:
    if isinstance(comparison.find_ancestor(exp.Having, exp.Query), exp.Having):
        return True
    if isinstance(comparison, exp.Between):
        return _is_quantity(comparison.args["low"]) or _is_quantity(comparison.args["high"])
    if isinstance(comparison, _ORDERINGS):
        return _is_quantity(comparison.this) or _is_quantity(comparison.expression)
    return False


def _is_quantity(node: exp.Expr) -> bool:
    """A number, a date or time, or a scalar subquery: something to hold a value against."""
    node = node.unnest()
    node = node.this if isinstance(node, exp.Neg) else node
    if isinstance(node, exp.Literal):
        text = node.this
        return not node.is_string or _is_number_or_date(text)
    if isinstance(node, exp.Cast):
        return node.to.is_type(*exp.DataType.TEMPORAL_TYPES, *exp.DataType.NUMERIC_TYPES)
    return isinstance(node, (*_TIME_FUNCTIONS, exp.Subquery, exp.Query))


def _is_number_or_date(text: str) -> bool:
    return bool(_DATE_TEXT.fullmatch(text) or _NUMBER_TEXT.fullmatch(text))


def _is_similarity(node: exp.Expr) -> bool:
    if isinstance(node, _MATCHES):
        return True
    return isinstance(node, exp.Anonymous) and node.name.lower() in _SIMILARITY_FUNCTIONS


def has_order_by(expression: exp.Expr) -> bool:
    """Whether the query's outermost level orders its rows.

    >>> from answerable.builders.sqlkit import parse
    >>> has_order_by(parse("SELECT a FROM (SELECT a FROM t ORDER BY a)"))
    False
    """
    while isinstance(expression, exp.Subquery) and not expression.args.get("order"):
        expression = expression.this
    return expression.args.get("order") is not None


def folds_rows(select: exp.Select) -> bool:
    """Whether the outer SELECT folds its rows into groups or one row (a GROUP BY, or an
    aggregate of its own, not one inside a subquery).

    >>> from answerable.builders.sqlkit import parse
    >>> folds_rows(parse("SELECT a FROM t WHERE a > (SELECT AVG(a) FROM t)"))
    False
    """
    if select.args.get("group"):
        return True
    return any(
        node.find_ancestor(exp.Select) is select
        for e in select.expressions
        for node in e.find_all(exp.AggFunc)
    )


def is_read_only(expression: exp.Expr) -> bool:
    """True only for a query (SELECT, set operation, WITH ... SELECT) that writes nothing.

    >>> from answerable.builders.sqlkit import parse
    >>> is_read_only(parse("SELECT a FROM t")), is_read_only(parse("DELETE FROM t"))
    (True, False)
    """
    if not isinstance(expression, (exp.Select, exp.SetOperation, exp.Subquery)):
        return False
    if unsafe_function(expression) is not None:
        return False
    return not any(isinstance(node, _WRITES) for node in expression.walk())


def unsafe_function(expression: exp.Expr) -> str | None:
    """The name of a function that reads files, loads code or plants pointers, if any."""
    for node in expression.walk():
        if isinstance(node, exp.Anonymous) and node.name.lower() in _UNSAFE_FUNCTIONS:
            return node.name.lower()
    return None
