"""Qualifying a query against a database schema, the way SQLite binds names."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify as sqlglot_qualify
from sqlglot.optimizer.scope import traverse_scope
from sqlglot.schema import MappingSchema

from answerable.builders.schema import DatabaseSchema
from answerable.builders.sqlkit.parsing import dialect_named, first_line, is_quoted_word
from answerable.kernel.errors import SQLError


@dataclass(frozen=True)
class Names:
    """One schema as sqlglot wants it, and the spelling of each name in the database.

    ``tables`` maps a lower-case table name to its spelling; ``columns`` maps a
    lower-case table name to {lower-case column name: spelling}.
    """

    mapping: MappingSchema
    dialect: Dialect
    tables: dict[str, str]
    columns: dict[str, dict[str, str]]


_NAMES_CACHE: dict[tuple, Names] = {}
_UNRESOLVED = re.compile(
    r"Column '(?P<name>[^']+)' could not be resolved(?: for table: '(?P<table>[^']+)')?"
)


def qualify(expression: exp.Expr, schema: DatabaseSchema, dialect: str = "sqlite") -> exp.Expr:
    """A copy of ``expression`` with every table and column qualified against ``schema``.

    Names match case-insensitively, as SQLite binds them, and come back spelled as in
    the schema; stars are expanded and alias references resolved. A double-quoted word
    that names no column becomes a string, as in SQLite. Raises ``SQLError`` with
    reason ``unknown-table``, ``unknown-column``, ``ambiguous-column`` or
    ``qualify-error``.

    >>> from answerable.builders.schema import Column, Table
    >>> from answerable.builders.sqlkit import parse
    >>> db = DatabaseSchema("music", [Table("Singer", [Column("Singer_ID"), Column("Name")])])
    >>> qualify(parse('select name from singer where name = "Joe"'), db).sql()
    "SELECT Singer.Name AS name FROM Singer AS Singer WHERE Singer.Name = 'Joe'"
    """
    return qualify_in_place(expression.copy(), schema, dialect)


def qualify_in_place(tree: exp.Expr, schema: DatabaseSchema, dialect: str) -> exp.Expr:
    """:func:`qualify` on a tree the caller owns: no copy is made."""
    names = names_of(schema, dialect)
    _check_tables(tree, names, schema.db_id)
    if dialect == "sqlite":
        _unbound_quotes_to_strings(tree, names)
    try:
        tree = sqlglot_qualify(
            tree,
            dialect=names.dialect,
            schema=names.mapping,
            identify=False,
            validate_qualify_columns=True,
        )
    except SqlglotError as error:
        raise _qualify_error(error, tree, names) from None
    _respell(tree, names)
    return tree


def names_of(schema: DatabaseSchema, dialect: str) -> Names:
    """The :class:`Names` of ``schema``, built once per schema content and dialect."""
    key = (dialect, tuple((t.name, tuple(t.columns)) for t in schema.tables))
    names = _NAMES_CACHE.get(key)
    if names is None:
        if len(_NAMES_CACHE) >= 1024:
            _NAMES_CACHE.clear()
        names = _NAMES_CACHE[key] = _build_names(schema, dialect)
    return names


def _build_names(schema: DatabaseSchema, dialect: str) -> Names:
    dialect_named(dialect)
    insensitive = Dialect.get_or_raise(f"{dialect}, normalization_strategy=case_insensitive")
    try:
        mapping = MappingSchema(schema.to_sqlglot(), dialect=insensitive)
    except SqlglotError as error:
        raise SQLError("qualify-error", f"schema of {schema.db_id}: {error}") from None
    tables = {t.name.lower(): t.name for t in schema.tables}
    columns = {t.name.lower(): {c.name.lower(): c.name for c in t.columns} for t in schema.tables}
    return Names(mapping, insensitive, tables, columns)


def _check_tables(tree: exp.Expr, names: Names, db_id: str) -> None:
    ctes = {cte.alias.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        name = table.name.lower()
        if name and name not in ctes and name not in names.tables:
            raise SQLError("unknown-table", f"table {table.name!r} is not in database {db_id}")


def _unbound_quotes_to_strings(tree: exp.Expr, names: Names) -> None:
    quoted = [c for c in tree.find_all(exp.Column) if is_quoted_word(c)]
    if not quoted:
        return
    tables = {t.name.lower() for t in tree.find_all(exp.Table)}
    bound = {c for t in tables for c in names.columns.get(t, ())}
    bound.update(a.alias.lower() for a in tree.find_all(exp.Alias, exp.CTE))
    bound.update(c.name.lower() for a in tree.find_all(exp.TableAlias) for c in a.columns)
    for column in quoted:
        if column.name.lower() not in bound:
            column.replace(exp.Literal.string(column.name))


def _qualify_error(error: Exception, tree: exp.Expr, names: Names) -> SQLError:
    text = first_line(error)
    if match := _UNRESOLVED.match(text):
        column, table = match["name"], match["table"]
        if table:
            return SQLError(
                "unknown-column",
                f"column {table}.{column} does not bind: no such "
                f"column, or no table or alias {table!r} where it is used",
            )
        owners = _tables_having(tree, names, column)
        if len(owners) > 1:
            return SQLError("ambiguous-column", f"column {column!r} is in {', '.join(owners)}")
        return SQLError("unknown-column", f"column {column!r} is in none of the query's tables")
    if text.startswith("Ambiguous column"):
        return SQLError("ambiguous-column", text)
    if text.startswith(("Unknown column", "Unknown output column")):
        return SQLError("unknown-column", text)
    if text.startswith("Unknown table"):
        return SQLError("unknown-table", text)
    return SQLError("qualify-error", text)


def _tables_having(tree: exp.Expr, names: Names, column: str) -> list[str]:
    tables = sorted({t.name.lower() for t in tree.find_all(exp.Table)} & names.columns.keys())
    return [names.tables[t] for t in tables if column.lower() in names.columns[t]]


def _respell(tree: exp.Expr, names: Names) -> None:
    """Spell the database's tables and columns as the schema does (names are lower-case
    after sqlglot's case-insensitive normalization)."""
    for scope in traverse_scope(tree):
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table) and source.name in names.columns:
                _respell_column(column, source.name, names)
    ctes = {cte.alias for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        spelling = names.tables.get(table.name) if table.name not in ctes else None
        if spelling and table.alias == table.name:
            table.args["alias"].set("this", _renamed(table.args["alias"].this, spelling))
        if spelling:
            table.set("this", _renamed(table.this, spelling))


def _respell_column(column: exp.Column, table: str, names: Names) -> None:
    spelling = names.columns[table].get(column.name)
    if spelling:
        column.set("this", _renamed(column.this, spelling))
    if column.table == table:
        column.set("table", _renamed(column.args["table"], names.tables[table]))


def _renamed(identifier: exp.Identifier, name: str) -> exp.Identifier:
    return exp.Identifier(this=name, quoted=identifier.quoted or exp.to_identifier(name).quoted)
