"""What a query reads: its tables, its columns and the values it compares them with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.scope import Scope, traverse_scope

from answerable.builders.sqlkit.parsing import compared_with


@dataclass(frozen=True)
class Literal:
    """One value written in a query.

    ``column`` is the ``table.column`` the value is directly compared with (``=``,
    ``<``, ``LIKE``, ``IN``, ``BETWEEN`` ...), else None; ``operator`` is that
    comparison's sqlglot key (``eq``, ``gt``, ``like``, ``in``, ``between`` ...).
    """

    value: Any
    is_string: bool
    column: str | None = None
    operator: str | None = None


@dataclass(frozen=True)
class Refs:
    """The tables, ``table.column`` names and literals of a query, sorted by name."""

    tables: tuple[str, ...]
    columns: tuple[str, ...]
    literals: tuple[Literal, ...]


def references(qualified: exp.Expr) -> Refs:
    """The tables, ``table.column`` names and literals of a query, best qualified first.

    Aliases, derived tables and CTEs are resolved to the tables they read. On a tree
    that is not qualified, a column that no single table owns is listed by its name.
    LIMIT, OFFSET and positional ORDER BY / GROUP BY numbers are not values.

    >>> from answerable.builders.sqlkit import parse
    >>> refs = references(parse("SELECT T1.a FROM t AS T1 WHERE T1.b IN ('x', 'y')"))
    >>> refs.columns, refs.literals[0]
    (('t.a', 't.b'), Literal(value='x', is_string=True, column='t.b', operator='in'))
    """
    tables, resolved = resolve_all(qualified)
    literals = tuple(_literal(node, resolved) for node in value_nodes(qualified))
    return Refs(tuple(sorted(tables)), tuple(sorted(set(resolved.values()))), literals)


def value_nodes(tree: exp.Expr) -> list[exp.Literal]:
    """The literal nodes that are values, in the order :func:`references` lists them."""
    return [
        node
        for node in tree.find_all(exp.Literal, bfs=False)
        if not isinstance(node.parent, (exp.Limit, exp.Offset, exp.Fetch, exp.Ordered, exp.Group))
    ]


def resolve_all(tree: exp.Expr) -> tuple[set[str], dict[int, str]]:
    """The real tables a query reads, and ``id(column) -> 'table.column'`` for its columns."""
    tables, resolved = set(), {}
    for scope in traverse_scope(tree):
        tables.update(s.name for s in scope.sources.values() if isinstance(s, exp.Table))
        for column in scope.columns:
            name = _resolve(column, scope)
            if name:
                resolved[id(column)] = name
    return tables, resolved


def _resolve(column: exp.Column, scope: Scope) -> str | None:
    if column.table:
        source = scope.sources.get(column.table)
    elif column.name in _output_names(scope):
        return None
    else:
        source = _only_source(scope) or column.name
    if isinstance(source, exp.Table):
        return f"{source.name}.{column.name}"
    if isinstance(source, Scope):
        return _resolve_output(source, column.name)
    return source


def _only_source(scope: Scope) -> exp.Table | Scope | None:
    try:
        selected = scope.selected_sources
    except OptimizeError:
        return None
    return next(iter(selected.values()))[1] if len(selected) == 1 else None


def _output_names(scope: Scope) -> set[str]:
    """Names an unqualified column may use for the scope's own outputs (ORDER BY x)."""
    query = scope.expression
    if isinstance(query, exp.SetOperation):
        return set(query.named_selects)
    if isinstance(query, exp.Select):
        return {e.alias for e in query.expressions if e.alias}
    return set()


def _resolve_output(scope: Scope, name: str) -> str | None:
    """The real column behind output ``name`` of a derived table or CTE, if it is one
    (the output of a set operation is several columns, so none)."""
    if not isinstance(scope.expression, exp.Select):
        return None
    for projection in scope.expression.expressions:
        inner = projection.unalias()
        if projection.alias_or_name == name and isinstance(inner, exp.Column):
            return _resolve(inner, scope)
    return None


def _literal(node: exp.Literal, resolved: dict[int, str]) -> Literal:
    value: Any = node.this
    if not node.is_string:
        value = int(value) if value.isdigit() else float(value)
        value = -value if isinstance(node.parent, exp.Neg) else value
    operator, other = compared_with(node)
    column = resolved.get(id(other)) if isinstance(other, exp.Column) else None
    return Literal(value, node.is_string, column, operator)
