"""Query shapes: qualification done once for queries that differ only in their values.

Template-made benchmarks hold thousands of queries that share a structure and differ in
their literals (``drug = 'Furosemide'`` / ``drug = 'Heparin'``). Qualifying a query
against a schema costs milliseconds, and its result depends on the structure alone, so
:class:`Shapes` qualifies the first query of each *shape* (its tokens with every string
and number replaced by a placeholder) and, for the next ones, copies that qualified tree
and writes their own values into it.

It is exact or it stands aside: a shape is reused only when every value token became
exactly one literal of the parsed query and qualification neither dropped one nor copied
one (alias expansion can); otherwise each query of that shape is qualified in full.

A reused shape also gives the query's parsed (unqualified) tree, as a filled copy of the
shape's parse, for steps that edit the query as written. :func:`shared` is the one
:class:`Shapes` of a process, which every per-item step of drafting and candidate SQL
asks, so a parent made from a template is qualified once per process, not once per step.

>>> from answerable.builders.schema import Column, DatabaseSchema, Table
>>> db = DatabaseSchema("shop", [Table("Item", [Column("Name"), Column("Price")])])
>>> shapes = Shapes()
>>> _ = shapes.qualified("SELECT name FROM item WHERE price > 5", db)
>>> query = shapes.query("SELECT name FROM item WHERE price > 7", db)
>>> query.tree.sql(), query.refs.literals[0].value, shapes.reused
('SELECT Item.Name AS name FROM Item AS Item WHERE Item.Price > 7', 7, 1)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from answerable.builders import sqlkit
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sqlkit import Refs
from answerable.builders.sqlkit.binding import qualify_in_place
from answerable.builders.sqlkit.refs import value_nodes
from answerable.kernel.errors import SQLError

VALUE_TOKENS = (TokenType.STRING, TokenType.NUMBER)


@dataclass(frozen=True)
class Template:
    """A qualified tree and, for each of its literals in walk order, the index of the
    value token it holds (None for a literal that is part of the shape); its references,
    and for each referenced literal the slot it takes its value from and its sign."""

    tree: exp.Expr
    slots: tuple[int | None, ...]
    refs: Refs
    value_slots: tuple[tuple[int | None, bool], ...]
    parsed: exp.Expr
    parsed_slots: tuple[int, ...]


@dataclass
class Query:
    """One query qualified against a schema: its shape, its references, whether it
    orders its rows, and its qualified tree (copied from the template on first use)."""

    shape: tuple
    refs: Refs
    ordered: bool
    _template: Template | None = None
    _values: tuple[str, ...] = ()
    _tree: exp.Expr | None = field(default=None, repr=False)
    _sql: str = field(default="", repr=False)
    _dialect: str = "sqlite"

    @property
    def templated(self) -> bool:
        """Whether its shape has a template: every query of the shape parses to one tree
        but for its literals' texts."""
        return self._template is not None

    @property
    def tree(self) -> exp.Expr:
        """The qualified tree (the caller must not change it)."""
        if self._tree is None:
            self._tree = _filled(self._template.tree, self._template.slots, self._values)
        return self._tree

    def private_tree(self) -> exp.Expr:
        """A qualified tree of the caller's own, to change: one copy (of the template,
        filled, when the shared tree was never asked for)."""
        if self._tree is None:
            return _filled(self._template.tree, self._template.slots, self._values)
        return self._tree.copy()

    def sql(self, dialect: str = "sqlite") -> str:
        """The qualified tree's SQL text, as ``tree.sql(dialect)`` gives it (one filled
        copy, written without the generator's own copy, when the tree was never asked
        for)."""
        if self._tree is None:
            filled = _filled(self._template.tree, self._template.slots, self._values)
            return filled.sql(dialect, copy=False)
        return self._tree.sql(dialect)

    def parsed(self) -> exp.Expr:
        """The query as written, parsed (not qualified), a tree of the caller's own: a
        filled copy of its shape's parse, or the text parsed anew when the shape is not
        reused."""
        if self._template is None:
            return sqlkit.parse(self._sql, self._dialect)
        template = self._template
        return _filled(template.parsed, template.parsed_slots, self._values)

    def literal_texts(self) -> list[tuple[exp.Literal, str]]:
        """Each literal of the qualified tree, in walk order, with this query's text for
        it, without a copy: the nodes may be the template's (read their place in the
        tree, not their text; change nothing)."""
        if self._tree is not None:
            return [(node, node.this) for node in self._tree.find_all(exp.Literal)]
        nodes = self._template.tree.find_all(exp.Literal)
        return [
            (node, node.this if slot is None else self._values[slot])
            for node, slot in zip(nodes, self._template.slots, strict=True)
        ]


class Shapes:
    """Qualified queries by shape, per schema (see the module docstring).

    A schema is known by its identity, so the schemas asked about are held (an id is
    never another schema's while its shapes are kept). At most ``limit`` shapes are kept:
    a full cache starts again empty, which costs one more qualification per shape and
    changes no result (a template gives what the full path gives)."""

    def __init__(self, limit: int | None = None) -> None:
        self._templates: dict[tuple, Template | None] = {}
        self._schemas: dict[int, DatabaseSchema] = {}
        self._texts: dict[tuple, tuple] = {}  # (schema, masked text) -> a template's key
        self.limit = limit
        self.reused = 0

    def query(self, sql: str, schema: DatabaseSchema, dialect: str = "sqlite") -> Query:
        """The query qualified against ``schema``, as a :class:`Query`.

        Raises :class:`SQLError` as :func:`sqlkit.qualify` does.
        """
        tokens = sql_tokens(sql, dialect)
        shape = shape_of(tokens)
        key = (id(schema), dialect, shape)
        template = self._templates.get(key)
        values = tuple(t.text for t in tokens if t.token_type in VALUE_TOKENS)
        if template is None:
            tree, template = _qualify_and_template(sql, tokens, schema, dialect)
            self._keep(key, template, schema)
            refs = sqlkit.references(tree)
            ordered = sqlkit.has_order_by(tree)
            return Query(shape, refs, ordered, template, values, tree, sql, dialect)
        self.reused += 1
        ordered = sqlkit.has_order_by(template.tree)
        return Query(shape, _refs(template, values), ordered, template, values)

    def _keep(self, key: tuple, template: Template | None, schema: DatabaseSchema) -> None:
        if self.limit is not None and len(self._templates) >= self.limit:
            self._templates.clear()
            self._schemas.clear()
            self._texts.clear()
        self._templates.setdefault(key, template)
        self._schemas[id(schema)] = schema

    def remember(self, sql: str, query: Query, schema: DatabaseSchema) -> None:
        """Note ``sql`` (a SQLite text that :meth:`query` gave ``query`` for) by its
        :func:`masked` text, when its shape has a template: then :meth:`binds` vouches
        for every text masked alike."""
        text = masked(sql)
        if text is not None and query.templated:
            key = (id(schema), "sqlite", query.shape)
            if self._templates.get(key) is query._template:
                self._texts[id(schema), text] = key

    def binds(self, sql: str, schema: DatabaseSchema) -> bool:
        """Whether :meth:`query` of the SQLite text ``sql`` is known to succeed, without
        tokenizing it: a text noted by :meth:`remember` was masked alike (it differs from
        this one only in the contents of its string literals and its plain numbers, so its
        tokens have this one's shape), and that shape's template is held (a query of the
        shape is then the template filled, which raises nothing)."""
        text = masked(sql)
        key = None if text is None else self._texts.get((id(schema), text))
        return key is not None and self._templates.get(key) is not None

    def qualified(
        self, sql: str, schema: DatabaseSchema, dialect: str = "sqlite"
    ) -> tuple[exp.Expr, tuple]:
        """The qualified tree of the query and its shape (a hashable key)."""
        query = self.query(sql, schema, dialect)
        return query.tree, query.shape


SHARED_LIMIT = 1024
"""Shapes a process keeps (see :func:`shared`): a build's templates and seed queries make
a few hundred; a larger set of one-off queries would only hold trees no query reuses."""


@functools.cache
def shared() -> Shapes:
    """This process's :class:`Shapes`, made on first use. A forked worker starts from a
    copy of its parent's (a cache: what it holds is what the full path gives)."""
    return Shapes(SHARED_LIMIT)


def sql_tokens(sql: str, dialect: str) -> tuple[Token, ...]:
    """The query's tokens. None are kept between calls: a memo of the last 256 queries'
    made each query of the other steps about 0.04 ms slower (kept tokens outlive the
    young garbage-collector generations), about what it saved in drafting.

    Raises :class:`SQLError` when the query does not tokenize."""
    try:
        return tuple(Dialect.get_or_raise(dialect).tokenize(sql))
    except SqlglotError as error:
        raise SQLError("parse-error", sqlkit.parsing.first_line(error)) from None


_LITERALS = re.compile(
    r"(?P<string>(?<![\w'])'(?:[^'\\]|'')*')"  # no backslash: it ends no string here
    r"|(?P<quoted>\"(?:[^\"]|\"\")*\"|`[^`]*`|\[[^\]]*\])"  # identifiers, as written
    r"|(?P<number>(?<![^\s(,=<>+\-*/%|])\d+(?:\.\d+)?(?![^\s),;=<>!+\-*/%|]))"
    r"|(?P<unsure>--|/\*|\x00)"
)


def masked(sql: str) -> str | None:
    """The SQLite text with each string literal and each plain number (digits, maybe a
    decimal part, between spaces, brackets, commas or operators) masked; None when the
    text holds anything the mask cannot vouch for (a comment, a quote it did not pair,
    a backslash in a string). Two texts masked alike differ only in what sqlglot reads
    as ``STRING`` and ``NUMBER`` tokens, so they have one shape (:func:`shape_of`).

    >>> masked("SELECT name FROM t WHERE city = 'O''Hare' AND t.n2 > -3.5")
    'SELECT name FROM t WHERE city = \\x00s AND t.n2 > -\\x00n'
    >>> masked("SELECT x'AB' FROM t") is None, masked("SELECT 1 -- one") is None
    (True, True)
    """
    unsure = False

    def mask(found: re.Match) -> str:
        nonlocal unsure
        kind = found.lastgroup
        if kind == "unsure":
            unsure = True
        return {"string": "\x00s", "number": "\x00n"}.get(kind, found.group())

    text = _LITERALS.sub(mask, sql)
    return None if unsure or "'" in text else text


def shape_of(tokens: tuple[Token, ...]) -> tuple:
    """The query's shape: its tokens, each value (string, number) as its type alone."""
    return tuple(
        (t.token_type,) if t.token_type in VALUE_TOKENS else (t.token_type, t.text) for t in tokens
    )


def value_literals(tree: exp.Expr, tokens: tuple[Token, ...]) -> dict[int, int] | None:
    """For each literal of ``tree`` (parsed from ``tokens``), in walk order, by its
    ``id``: the index of the value token it holds; None when a literal holds no value
    token or two hold the same one (the shape then stands aside)."""
    starts = {t.start: i for i, t in enumerate(t for t in tokens if t.token_type in VALUE_TOKENS)}
    origin: dict[int, int] = {}
    for node in tree.find_all(exp.Literal):
        index = starts.get(node.meta.get("start"))
        if index is None or index in origin.values():
            return None
        origin[id(node)] = index
    return origin


def values_only_in_literals(tree: exp.Expr, tokens: tuple[Token, ...]) -> bool:
    """Whether every value token of the query became exactly one literal of ``tree``:
    then the rest of the tree comes from the shape's other tokens, and any query of the
    shape parses to the same tree but for its literals' texts."""
    origin = value_literals(tree, tokens)
    return origin is not None and len(origin) == _value_count(tokens)


def _value_count(tokens: tuple[Token, ...]) -> int:
    return sum(t.token_type in VALUE_TOKENS for t in tokens)


def _qualify_and_template(
    sql: str, tokens: tuple[Token, ...], schema: DatabaseSchema, dialect: str
) -> tuple[exp.Expr, Template | None]:
    """Qualify in full; also return the shape's template when reuse would be exact."""
    tree = sqlkit.parse(sql, dialect)
    origin = value_literals(tree, tokens)
    if origin is None:
        return qualify_in_place(tree, schema, dialect), None
    parsed = _without_positions(tree.copy())
    parsed_slots = tuple(origin.values())  # in walk order, as the copy's literals
    tree = qualify_in_place(tree, schema, dialect)
    literals = list(tree.find_all(exp.Literal))
    slots = tuple(origin.get(id(node)) for node in literals)
    values = {
        (t.token_type == TokenType.STRING, t.text) for t in tokens if t.token_type in VALUE_TOKENS
    }
    copied = any(
        slot is None and (node.is_string, node.this) in values
        for node, slot in zip(literals, slots, strict=True)
    )
    if copied or set(slots) - {None} != set(range(_value_count(tokens))):
        return tree, None
    value_slots = tuple(
        (origin.get(id(node)), isinstance(node.parent, exp.Neg)) for node in value_nodes(tree)
    )
    refs = sqlkit.references(tree)
    template = _without_positions(tree.copy())
    return tree, Template(template, slots, refs, value_slots, parsed, parsed_slots)


POSITIONS = ("line", "col", "start", "end")
"""What the parser notes in a node's ``meta``: where its token was in the text."""


def _without_positions(tree: exp.Expr) -> exp.Expr:
    """``tree`` without its tokens' positions: a template is filled for other texts, in
    which they would be wrong, and copying them was most of the cost of filling it."""
    for node in tree.walk():
        meta = node._meta
        if meta:
            for key in POSITIONS:
                meta.pop(key, None)
            if not meta:
                node._meta = None
    return tree


def _filled(tree: exp.Expr, slots: tuple[int | None, ...], values: tuple[str, ...]) -> exp.Expr:
    """A copy of a template's ``tree`` holding ``values`` in its value ``slots``."""
    tree = tree.copy()
    for node, slot in zip(list(tree.find_all(exp.Literal)), slots, strict=True):
        if slot is not None:
            node.set("this", values[slot])
    return tree


def _refs(template: Template, values: tuple[str, ...]) -> Refs:
    """The template's references with this query's values."""
    literals = tuple(
        literal if slot is None else replace(literal, value=_value(literal, values[slot], neg))
        for literal, (slot, neg) in zip(template.refs.literals, template.value_slots, strict=True)
    )
    return Refs(template.refs.tables, template.refs.columns, literals)


def _value(literal, text: str, negative: bool):
    """A literal's value as :func:`sqlkit.references` gives it."""
    if literal.is_string:
        return text
    number = int(text) if text.isdigit() else float(text)
    return -number if negative else number
