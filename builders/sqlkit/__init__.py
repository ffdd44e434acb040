"""The SQL kit: parse, qualify against a schema, read references, describe a query.

Every function works on a sqlglot tree: SQL is parsed once and edited as a tree. The
descriptions (:func:`skeleton`, :func:`hardness`, :func:`operations`) fill an item's
``sql_meta``, and :func:`analyze` computes them all from one SQL text.

- ``parsing``: :func:`parse`, :func:`transpile`
- ``binding``: :func:`qualify`
- :func:`quote_identifier` (from :mod:`answerable.builders.schema`, which sqlkit builds on)
- ``refs``: :func:`references`, :class:`Refs`, :class:`Literal`
- ``describe``: :func:`skeleton`, :func:`hardness`, :func:`operations`,
  :func:`has_order_by`, :func:`folds_rows`, :func:`is_read_only`

>>> analyze("SELECT name FROM singer WHERE age > 30", None)["operations"]
['Select', 'Threshold']
"""

from __future__ import annotations

from functools import lru_cache

from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from answerable.builders.schema import DatabaseSchema, quote_identifier
from answerable.builders.sqlkit.binding import qualify, qualify_in_place
from answerable.builders.sqlkit.describe import (
    OPERATIONS,
    folds_rows,
    hardness,
    has_order_by,
    is_read_only,
    literal_shape,
    operations,
    skeleton,
    unsafe_function,
)
from answerable.builders.sqlkit.parsing import (
    DIALECTS,
    compared_quotes_to_strings,
    parse,
    portable,
    transpile,
)
from answerable.builders.sqlkit.refs import Literal, Refs, references, resolve_all
from answerable.kernel.errors import SQLError

__all__ = [
    "DIALECTS",
    "OPERATIONS",
    "Literal",
    "Refs",
    "ShapeAnalyses",
    "analyze",
    "folds_rows",
    "hardness",
    "has_order_by",
    "is_read_only",
    "literal_shape",
    "operations",
    "parse",
    "portable",
    "qualify",
    "quote_identifier",
    "reads",
    "references",
    "skeleton",
    "transpile",
    "unsafe_function",
]


def analyze(sql: str, schema: DatabaseSchema | None, dialect: str = "sqlite") -> dict:
    """The item's ``sql_meta``: skeleton, hardness, operations, tables and columns.

    Only a read-only query is analyzed (else ``SQLError("not-read-only")``). With a
    schema the SQL is qualified first (an ``SQLError`` if it does not bind) and
    names are spelled as in the schema; without one they come from the SQL as written,
    lower-cased. The skeleton is always that of the SQL as written, so that it does not
    depend on whether a schema was at hand. The SQL is parsed once.

    >>> meta = analyze("SELECT count(*) FROM singer WHERE name LIKE 'A%'", None)
    >>> meta["skeleton"], meta["hardness"], meta["tables"], meta["columns"]
    ("SELECT COUNT(*) FROM singer WHERE name LIKE '_'", 'easy', ['singer'], ['singer.name'])
    """
    return _analysis(_query(sql, dialect), schema, dialect)


def _analysis(tree, schema: DatabaseSchema | None, dialect: str) -> dict:
    """:func:`analyze` of the query's tree, which it qualifies in place."""
    meta = {"skeleton": skeleton(tree, dialect)}
    tree = _named(tree, schema, dialect)
    tables, resolved = resolve_all(tree)
    meta.update(hardness=hardness(tree), operations=operations(tree), tables=sorted(tables))
    meta["columns"] = sorted(set(resolved.values()))
    return meta


class ShapeAnalyses:
    """:func:`analyze` of many SQL texts over one schema, worked out once per
    :func:`literal_shape` (queries that differ only in the values they compare with have
    the same ``sql_meta``): each text is tokenized, and only a shape met for the first
    time is parsed and qualified. A text that fails its analysis is not remembered (its
    error's message may quote its values), nor one that does not tokenize.

    ``plain`` holds the shapes other checks found true of every query of the shape (see
    :func:`answerable.builders.numeric_text.text_number_failure`), and the tree of each
    text parsed here is kept as written until a check takes it (:meth:`written`) or the
    batch is over (:meth:`forget_written`), so that the check does not parse it again."""

    RECENT = 4096  # texts whose shape is remembered: a batch's, analyzed then checked

    def __init__(self, schema: DatabaseSchema | None, dialect: str = "sqlite"):
        self.schema, self.dialect = schema, dialect
        self.plain: set[tuple] = set()
        self._metas: dict[tuple, dict] = {}
        self._ordered: dict[tuple, bool] = {}  # a shape -> whether it orders its rows
        self._recent: dict[str, tuple | None] = {}
        self._written: dict[str, object] = {}  # text -> its tree as written, not taken yet

    def shape(self, sql: str) -> tuple | None:
        """:func:`literal_shape` of ``sql``, remembered (up to :attr:`RECENT` texts, then
        forgotten at once): a batch's texts are each analyzed, then executed, then
        checked for numbers compared as text (see
        :func:`answerable.builders.seeds.verified_many`), and each is tokenized once."""
        if sql not in self._recent:
            if len(self._recent) >= self.RECENT:
                self._recent.clear()
            self._recent[sql] = literal_shape(sql, self.dialect)
        return self._recent[sql]

    def analyze(self, sql: str) -> dict:
        """:func:`analyze` of ``sql``: a new dict, its lists copied."""
        shape = self.shape(sql)
        meta = self._metas.get(shape) if shape is not None else None
        if meta is None:
            tree = _query(sql, self.dialect)
            written = tree.copy()  # the analysis qualifies its tree in place
            meta = _analysis(tree, self.schema, self.dialect)
            self._written[sql] = written
            if shape is not None:
                self._metas[shape] = meta
                self._ordered[shape] = has_order_by(written)
        return {name: list(v) if isinstance(v, list) else v for name, v in meta.items()}

    def ordered(self, sql: str) -> bool | None:
        """:func:`has_order_by` of ``sql``, analyzed here, known by its shape (a value
        orders nothing): what an engine would otherwise parse the text again to learn;
        None when not known."""
        shape = self.shape(sql)
        return None if shape is None else self._ordered.get(shape)

    def written(self, sql: str):
        """The tree of ``sql`` as written, when :meth:`analyze` parsed it since
        :meth:`forget_written` (else None); taken: the caller may edit it."""
        return self._written.pop(sql, None)

    def forget_written(self) -> None:
        """Drop the trees no check took (a batch is over)."""
        self._written.clear()


@lru_cache(maxsize=4096)
def reads(sql: str, dialect: str = "sqlite") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(tables, columns)`` a query reads, as :func:`analyze` names them without a
    schema, and the same errors; cached by text, since a review queue shows the same
    SQL (a parent's, a reading's) on many items.

    >>> reads("SELECT Name FROM singer WHERE age > 30")
    (('singer',), ('singer.age', 'singer.name'))
    """
    tables, resolved = resolve_all(_named(_query(sql, dialect), None, dialect))
    return tuple(sorted(tables)), tuple(sorted(set(resolved.values())))


def _query(sql: str, dialect: str):
    """The tree of a read-only query of pure SQL functions, or an :class:`SQLError`."""
    tree = parse(sql, dialect)
    unsafe = unsafe_function(tree)
    if unsafe is not None:
        raise SQLError("function-not-allowed", f"{unsafe} may not run (only pure SQL functions)")
    if not is_read_only(tree):
        raise SQLError("not-read-only", "only a query (SELECT, set operation, WITH) has sql_meta")
    return tree


def _named(tree, schema: DatabaseSchema | None, dialect: str):
    """The tree qualified against ``schema``, or its names normalized without one."""
    if schema is not None:
        return qualify_in_place(tree, schema, dialect)
    tree = normalize_identifiers(tree, dialect=dialect)
    if dialect == "sqlite":
        compared_quotes_to_strings(tree)
    return tree
