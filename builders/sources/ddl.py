"""A database schema read from a DDL file (``CREATE TABLE`` statements), parsed by sqlglot.

For question-only sources whose database is not public (OncoMX, MIMIC-IV): the schema is
enough to bind SQL and to draft against, and nothing is executed. Statements other than
``CREATE TABLE`` (``DROP``, ``INSERT``, indexes) are skipped.
"""

from __future__ import annotations

from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.builders.sources.common import read_text
from answerable.kernel.errors import ConfigError


def ddl_schema(path: Path, db_id: str, dialect: str = "sqlite") -> DatabaseSchema:
    """The schema the ``CREATE TABLE`` statements of ``path`` declare.

    A file that does not parse, or declares no table, is a ConfigError naming the file.
    """
    path = Path(path)
    try:
        statements = sqlglot.parse(read_text(path), read=dialect)
    except SqlglotError as error:
        raise ConfigError(
            path,
            None,
            f"the DDL does not parse ({_first_line(error)})",
            fix=f"give CREATE TABLE statements in the {dialect} dialect",
        ) from None
    tables = [_table(s) for s in statements if _creates_table(s)]
    if not tables:
        raise ConfigError(
            path, None, "no CREATE TABLE statement", fix="point schema: at the database's DDL"
        )
    return DatabaseSchema(db_id, tables)


def _first_line(error: SqlglotError) -> str:
    return str(error).splitlines()[0][:200]


def _creates_table(statement: exp.Expr | None) -> bool:
    return (
        isinstance(statement, exp.Create)
        and str(statement.args.get("kind") or "").upper() == "TABLE"
        and isinstance(statement.this, exp.Schema)
    )


def _table(create: exp.Create) -> Table:
    schema = create.this
    table = Table(schema.this.name)
    for part in schema.expressions:
        if isinstance(part, exp.ColumnDef):
            kind = part.args.get("kind")
            table.columns.append(Column(part.name, kind.sql() if kind else ""))
            if any(
                isinstance(c.args.get("kind"), exp.PrimaryKeyColumnConstraint)
                for c in part.args.get("constraints") or []
            ):
                table.primary_key.append(part.name)
        elif isinstance(part, exp.PrimaryKey):
            table.primary_key.extend(_names(part.expressions))
        elif isinstance(part, exp.ForeignKey):
            table.foreign_keys.extend(_foreign_keys(part))
    return table


def _names(nodes: list) -> list[str]:
    return [node.name for node in nodes]


def _foreign_keys(key: exp.ForeignKey) -> list[tuple[str, str, str]]:
    reference = key.args.get("reference")
    target = reference.this if reference is not None else None
    if not isinstance(target, exp.Schema):
        return []
    return list(
        zip(
            _names(key.expressions),
            [target.this.name] * len(key.expressions),
            _names(target.expressions),
            strict=False,
        )
    )
