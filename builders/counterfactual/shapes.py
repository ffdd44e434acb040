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

>>> from answerable.builders.schema import Column, DatabaseSchema, Table
>>> db = DatabaseSchema("shop", [Table("Item", [Column("Name"), Column("Price")])])
>>> shapes = Shapes()
>>> _ = shapes.qualified("SELECT name FROM item WHERE price > 5", db)
>>> shapes.qualified("SELECT name FROM item WHERE price > 7", db)[0].sql()
'SELECT Item.Name AS name FROM Item AS Item WHERE Item.Price > 7'
>>> shapes.reused
1
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from answerable.builders import sqlkit
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sqlkit.binding import qualify_in_place
from answerable.errors import SQLError

VALUE_TOKENS = (TokenType.STRING, TokenType.NUMBER)


@dataclass(frozen=True)
class Template:
    """A qualified tree and, for each of its literals in walk order, the index of the
    value token it holds (None for a literal that is part of the shape)."""

    tree: exp.Expr
    slots: tuple[int | None, ...]


class Shapes:
    """Qualified trees by query shape, per schema (see the module docstring)."""

    def __init__(self) -> None:
        self._templates: dict[tuple, Template | None] = {}
        self.reused = 0

    def qualified(
        self, sql: str, schema: DatabaseSchema, dialect: str = "sqlite"
    ) -> tuple[exp.Expr, tuple]:
        """The query qualified against ``schema``, and its shape (a hashable key).

        Raises :class:`SQLError` as :func:`sqlkit.qualify` does.
        """
        tokens = _tokens(sql, dialect)
        shape = tuple(
            (t.token_type,) if t.token_type in VALUE_TOKENS else (t.token_type, t.text)
            for t in tokens
        )
        key = (id(schema), dialect, shape)
        template = self._templates.get(key)
        if template is not None:
            self.reused += 1
            return _filled(
                template, [t.text for t in tokens if t.token_type in VALUE_TOKENS]
            ), shape
        tree, template = _qualify_and_template(sql, tokens, schema, dialect)
        self._templates[key] = template
        return tree, shape


def _tokens(sql: str, dialect: str) -> list[Token]:
    try:
        return Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError as error:
        raise SQLError("parse-error", sqlkit.parsing.first_line(error)) from None


def _qualify_and_template(
    sql: str, tokens: list[Token], schema: DatabaseSchema, dialect: str
) -> tuple[exp.Expr, Template | None]:
    """Qualify in full; also return the shape's template when reuse would be exact."""
    starts = {t.start: i for i, t in enumerate(t for t in tokens if t.token_type in VALUE_TOKENS)}
    tree = sqlkit.parse(sql, dialect)
    origin = {}
    for node in tree.find_all(exp.Literal):
        index = starts.get(node.meta.get("start"))
        if index is None or index in origin.values():
            return qualify_in_place(tree, schema, dialect), None
        origin[id(node)] = index
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
    if copied or set(slots) - {None} != set(range(len(starts))):
        return tree, None
    return tree, Template(tree.copy(), slots)


def _filled(template: Template, values: list[str]) -> exp.Expr:
    """A copy of the template's tree holding ``values`` in its value slots."""
    tree = template.tree.copy()
    for node, slot in zip(list(tree.find_all(exp.Literal)), template.slots, strict=True):
        if slot is not None:
            node.set("this", values[slot])
    return tree
