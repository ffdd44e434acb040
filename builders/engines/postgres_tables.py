"""Copying tables between SQLite files and PostgreSQL schemas, both ways.

:func:`load_sqlite` puts a SQLite file (a demo database, a Spider database, any source)
into a PostgreSQL schema: the tests load the demo this way, and so can a team that moves
a file to a server. :func:`export_sqlite` is the reverse: a release built from a server
source ships the tables its items use as a SQLite file, so consumers need no server.

Types are kept faithful to what the values are, so a query gives back the same values,
and the same result hash, on both sides (the mapping is :mod:`.types`', shared with
DuckDB):

============================  ==================  ===========================
SQLite (storage of values)    PostgreSQL          back to SQLite
============================  ==================  ===========================
integers only                 ``bigint``          ``INTEGER``
integers and reals            ``double precision``  ``REAL``
text only                     ``text``            ``TEXT``
blobs only                    ``bytea``           ``BLOB``
nothing but NULL              from the declared type's affinity
============================  ==================  ===========================

A ``DATE`` or ``DATETIME`` column whose values are ISO text stays ``text``: gold SQL
written for SQLite compares such dates as strings and reads them with ``strftime``, and
a PostgreSQL ``date`` would change what that SQL means. A column mixing text and numbers
(SQLite allows it) is refused by name, since no single PostgreSQL type holds both and
the hash tells ``'1'`` from ``1``. Names are folded to lower case (as ``pgloader``
does): PostgreSQL folds unquoted names, so SQL written for SQLite keeps binding. Primary
and foreign keys are copied; views, triggers and indexes other than the keys are not.

On export, ``numeric`` values go in as their exact text (SQLite's ``NUMERIC`` affinity
stores them as integers or reals), ``date`` and ``timestamp`` as ISO text, ``boolean``
as 0/1; a type with no SQLite counterpart (arrays, JSON, intervals ...) is refused by
name. Rows are written in the table's physical order (:func:`row_order`), so the same
tables give a byte-identical file, and SQLite's rowid order comes back for a file loaded
by :func:`load_sqlite`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from answerable.builders import sqlite_files
from answerable.builders.engines.exports import chosen_tables, write_sqlite
from answerable.builders.engines.types import BLOB, INTEGER, REAL, TEXT, value_kind
from answerable.builders.schema import DatabaseSchema, Table, quote_identifier
from answerable.kernel.errors import SQLError

_COPY_BATCH = 5000


COLUMN_TYPES = {INTEGER: "bigint", REAL: "double precision", TEXT: "text", BLOB: "bytea"}


def postgres_type(declared: str, storage: set[str]) -> str | None:
    """The PostgreSQL type for values of SQLite storage classes ``storage``; None for a
    mix no single type holds (see :mod:`.types`).

    >>> postgres_type("NUMERIC", {"integer", "null"}), postgres_type("", {"integer", "real"})
    ('bigint', 'double precision')
    """
    kind = value_kind(declared, storage)
    return None if kind is None else COLUMN_TYPES[kind]


def load_sqlite(con, path: str | Path, schema: str, replace: bool = True) -> DatabaseSchema:
    """Copy every table of the SQLite file ``path`` into the PostgreSQL schema ``schema``.

    ``con`` is a psycopg 3 connection with the right to create the schema; the copy is
    one transaction (committed here). With ``replace`` an existing schema of that name is
    dropped first. Returns the SQLite schema that was copied. Raises :class:`SQLError`
    (``unsupported-type``) for a column mixing text and numbers.
    """
    from psycopg import sql

    source = DatabaseSchema.from_sqlite(path)
    lite = sqlite_files.connect(path)
    try:
        plans = [(table, _column_types(lite, table)) for table in _tables_only(lite, source)]
        target = sql.Identifier(schema.lower())
        with con.transaction():
            if replace:
                con.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(target))
            con.execute(sql.SQL("CREATE SCHEMA {}").format(target))
            for table, types in plans:
                _create_table(con, schema.lower(), table, types)
                _copy_rows(con, lite, schema.lower(), table)
            for table, _ in plans:
                _add_foreign_keys(con, schema.lower(), table, {t.name.lower() for t, _ in plans})
        _analyze(con, schema.lower(), [table for table, _ in plans])
    finally:
        lite.close()
    return source


def _analyze(con, schema: str, tables: list[Table]) -> None:
    """Give the copy its planner statistics now, from every row (up to 3,000,000 a
    table), so they are the same on every load: a copy without them is planned on
    guesses until the server's autovacuum analyzes it a minute or so later, and the new
    plan may return an unordered result's rows in another order (the kept rows of a
    rebuild would then differ from the first build's)."""
    from psycopg import sql

    with con.transaction():
        con.execute("SET LOCAL default_statistics_target = 10000")
        for table in tables:
            name = sql.Identifier(schema, table.name.lower())
            con.execute(sql.SQL("ANALYZE {}").format(name))


def _tables_only(lite: sqlite3.Connection, source: DatabaseSchema) -> list[Table]:
    views = {
        name.lower()
        for (name,) in lite.execute("SELECT name FROM sqlite_master WHERE type = 'view'")
    }
    return [t for t in source.tables if t.name.lower() not in views]


def _column_types(lite: sqlite3.Connection, table: Table) -> list[str]:
    types = []
    for column in table.columns:
        storage = {
            kind
            for (kind,) in lite.execute(
                f"SELECT DISTINCT typeof({quote_identifier(column.name)}) "
                f"FROM {quote_identifier(table.name)}"
            )
        }
        kind = postgres_type(column.type, storage)
        if kind is None:
            raise SQLError(
                "unsupported-type",
                f"{table.name}.{column.name} holds {' and '.join(sorted(storage))} values: "
                "no single PostgreSQL type keeps them (fix: cast the column to one type)",
            )
        types.append(kind)
    return types


def _create_table(con, schema: str, table: Table, types: list[str]) -> None:
    from psycopg import sql

    parts = [
        sql.SQL("{} {}").format(sql.Identifier(c.name.lower()), sql.SQL(kind))
        for c, kind in zip(table.columns, types, strict=True)
    ]
    if table.primary_key:
        keys = sql.SQL(", ").join(sql.Identifier(k.lower()) for k in table.primary_key)
        parts.append(sql.SQL("PRIMARY KEY ({})").format(keys))
    con.execute(
        sql.SQL("CREATE TABLE {}.{} ({})").format(
            sql.Identifier(schema), sql.Identifier(table.name.lower()), sql.SQL(", ").join(parts)
        )
    )


def _copy_rows(con, lite: sqlite3.Connection, schema: str, table: Table) -> None:
    from psycopg import sql

    names = [c.name.lower() for c in table.columns]
    copy_sql = sql.SQL("COPY {}.{} ({}) FROM STDIN").format(
        sql.Identifier(schema),
        sql.Identifier(table.name.lower()),
        sql.SQL(", ").join(map(sql.Identifier, names)),
    )
    read = ", ".join(quote_identifier(c.name) for c in table.columns)
    cursor = lite.execute(f"SELECT {read} FROM {quote_identifier(table.name)}")
    with con.cursor() as cur, cur.copy(copy_sql) as copy:
        while batch := cursor.fetchmany(_COPY_BATCH):
            for row in batch:
                copy.write_row(row)


def _add_foreign_keys(con, schema: str, table: Table, loaded: set[str]) -> None:
    """Foreign keys whose target table was loaded; each as its own constraint."""
    from psycopg import sql

    for column, other, other_column in table.foreign_keys:
        if other.lower() not in loaded:
            continue
        con.execute(
            sql.SQL(
                "ALTER TABLE {s}.{t} ADD FOREIGN KEY ({c}) REFERENCES {s}.{o} ({oc}) NOT VALID"
            ).format(
                s=sql.Identifier(schema),
                t=sql.Identifier(table.name.lower()),
                c=sql.Identifier(column.lower()),
                o=sql.Identifier(other.lower()),
                oc=sql.Identifier(other_column.lower()),
            )
        )


def export_sqlite(con, schema: str, tables: Iterable[str], path: str | Path) -> Path:
    """Write the tables ``tables`` of PostgreSQL schema ``schema`` to the SQLite file
    ``path`` (a new file, written to a temporary name and renamed into place; see
    :func:`.exports.write_sqlite`), rows in :func:`row_order`.

    ``con`` is a psycopg 3 connection with SELECT on the tables. Keys among the exported
    tables are kept. Raises :class:`SQLError`: ``unknown-table`` for a table the schema
    lacks, ``unsupported-type`` for a column type SQLite has no counterpart for.
    """
    from psycopg import sql

    from answerable.builders.engines.postgres_catalog import read_schema

    chosen = chosen_tables(read_schema(con, schema), tables, f"schema {schema}")

    def rows(table: Table):
        query = sql.SQL("SELECT * FROM {}.{} ORDER BY {}").format(
            sql.Identifier(schema), sql.Identifier(table.name), row_order(con, schema, table)
        )
        with con.cursor() as cur:
            cur.execute(query)
            while batch := cur.fetchmany(_COPY_BATCH):
                yield batch

    return write_sqlite(path, chosen, rows)


def row_order(con, schema: str, table: Table):
    """What a table's rows are ordered by when they are read whole (an export, the
    counterfactual step's twin and variants): ``ctid`` for a base table, else its
    primary key, else all its columns.

    PostgreSQL has no rowid; the physical order stands for it. It is the order a table
    was loaded in (:func:`load_sqlite` copies SQLite's rows in rowid order, so a fill
    over the rows sees SQLite's order) and changes only when the table is rewritten
    (UPDATE, CLUSTER). A view has no ctid.
    """
    from psycopg import sql

    kind = con.execute(
        "SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s",
        (schema, table.name),
    ).fetchone()
    if kind and kind[0] == "r":
        return sql.SQL("ctid")
    order = table.primary_key or [c.name for c in table.columns]
    return sql.SQL(", ").join(map(sql.Identifier, order))
