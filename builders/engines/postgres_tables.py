"""Copying tables between SQLite files and PostgreSQL schemas, both ways.

:func:`load_sqlite` puts a SQLite file (a demo database, a Spider database, any source)
into a PostgreSQL schema: the tests load the demo this way, and so can a team that moves
a file to a server. :func:`export_sqlite` is the reverse: a release built from a server
source ships the tables its items use as a SQLite file, so consumers need no server.

Types are kept faithful to what the values are, so a query gives back the same values,
and the same result hash, on both sides:

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
name. Rows are written in primary-key order (else in the order of all columns), so the
same tables give a byte-identical file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from answerable.builders import sqlite_files
from answerable.builders.schema import DatabaseSchema, Table
from answerable.errors import SQLError

_INTEGER, _REAL, _TEXT, _BLOB = "bigint", "double precision", "text", "bytea"
# PostgreSQL data types (information_schema.columns.data_type) -> SQLite declared types.
_SQLITE_TYPES = {
    "smallint": "INTEGER",
    "integer": "INTEGER",
    "bigint": "INTEGER",
    "real": "REAL",
    "double precision": "REAL",
    "numeric": "NUMERIC",
    "text": "TEXT",
    "character varying": "TEXT",
    "character": "TEXT",
    "bytea": "BLOB",
    "boolean": "BOOLEAN",
    "date": "DATE",
    "timestamp without time zone": "TIMESTAMP",
}
_COPY_BATCH = 5000


def affinity_type(declared: str) -> str:
    """The PostgreSQL type for a column of NULLs, by SQLite's affinity rules.

    >>> affinity_type("VARCHAR(20)"), affinity_type("INT"), affinity_type("FLOAT")
    ('text', 'bigint', 'double precision')
    """
    low = declared.lower()
    if "int" in low:
        return _INTEGER
    if any(word in low for word in ("char", "clob", "text")):
        return _TEXT
    if "blob" in low or not low:
        return _BLOB if "blob" in low else _TEXT
    if any(word in low for word in ("real", "floa", "doub")):
        return _REAL
    return _REAL if any(word in low for word in ("numeric", "decimal")) else _TEXT


def postgres_type(declared: str, storage: set[str]) -> str | None:
    """The PostgreSQL type for values of SQLite storage classes ``storage``; None for a
    mix no single type holds.

    >>> postgres_type("NUMERIC", {"integer", "null"}), postgres_type("", {"integer", "real"})
    ('bigint', 'double precision')
    """
    kinds = storage - {"null"}
    if not kinds:
        return affinity_type(declared)
    if kinds == {"integer"}:
        return _INTEGER
    if kinds <= {"integer", "real"}:
        return _REAL
    if kinds == {"text"}:
        return _TEXT
    return _BLOB if kinds == {"blob"} else None


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
    finally:
        lite.close()
    return source


def _tables_only(lite: sqlite3.Connection, source: DatabaseSchema) -> list[Table]:
    views = {
        name.lower()
        for (name,) in lite.execute("SELECT name FROM sqlite_master WHERE type = 'view'")
    }
    return [t for t in source.tables if t.name.lower() not in views]


def _quote_lite(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _column_types(lite: sqlite3.Connection, table: Table) -> list[str]:
    types = []
    for column in table.columns:
        storage = {
            kind
            for (kind,) in lite.execute(
                f"SELECT DISTINCT typeof({_quote_lite(column.name)}) FROM {_quote_lite(table.name)}"
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
    read = ", ".join(_quote_lite(c.name) for c in table.columns)
    cursor = lite.execute(f"SELECT {read} FROM {_quote_lite(table.name)}")
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
    ``path`` (a new file, written to a temporary name and renamed into place).

    ``con`` is a psycopg 3 connection with SELECT on the tables. Keys among the exported
    tables are kept. Raises :class:`SQLError`: ``unknown-table`` for a table the schema
    lacks, ``unsupported-type`` for a column type SQLite has no counterpart for.
    """
    from answerable.builders.engines.postgres_catalog import read_schema

    wanted = sorted({t.lower() for t in tables})
    catalog = read_schema(con, schema)
    found = {t.name.lower(): t for t in catalog.tables}
    missing = [t for t in wanted if t not in found]
    if missing:
        raise SQLError("unknown-table", f"schema {schema} has no table {', '.join(missing)}")
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    out = sqlite3.connect(partial)
    try:
        for name in wanted:
            _write_table(con, out, schema, found[name], set(wanted))
        out.commit()
    except BaseException:
        out.close()
        partial.unlink(missing_ok=True)
        raise
    out.close()
    partial.replace(path)
    return path


def _sqlite_type(table: Table, column) -> str:
    kind = _SQLITE_TYPES.get(column.type.lower())
    if kind is None:
        raise SQLError(
            "unsupported-type",
            f"{table.name}.{column.name} is of type {column.type}, which SQLite files "
            "cannot hold faithfully (fix: leave the table out or cast it in a view)",
        )
    return kind


def _write_table(con, out: sqlite3.Connection, schema: str, table: Table, kept: set[str]):
    from psycopg import sql

    kinds = [_sqlite_type(table, c) for c in table.columns]
    parts = [f"{_quote_lite(c.name)} {k}" for c, k in zip(table.columns, kinds, strict=True)]
    if table.primary_key:
        parts.append(f"PRIMARY KEY ({', '.join(map(_quote_lite, table.primary_key))})")
    # SQLite lists foreign keys last declared first: declare them reversed so the file
    # reads back in the server's order.
    parts += [
        f"FOREIGN KEY ({_quote_lite(c)}) REFERENCES {_quote_lite(o)} ({_quote_lite(oc)})"
        for c, o, oc in reversed(table.foreign_keys)
        if o.lower() in kept
    ]
    out.execute(f"CREATE TABLE {_quote_lite(table.name)} ({', '.join(parts)})")
    order = table.primary_key or [c.name for c in table.columns]
    query = sql.SQL("SELECT * FROM {}.{} ORDER BY {}").format(
        sql.Identifier(schema),
        sql.Identifier(table.name),
        sql.SQL(", ").join(map(sql.Identifier, order)),
    )
    marks = ", ".join("?" * len(table.columns))
    insert = f"INSERT INTO {_quote_lite(table.name)} VALUES ({marks})"
    with con.cursor() as cur:
        cur.execute(query)
        while batch := cur.fetchmany(_COPY_BATCH):
            out.executemany(insert, [_sqlite_row(row) for row in batch])


def _sqlite_row(row: tuple) -> tuple:
    return tuple(_sqlite_value(v) for v in row)


def _sqlite_value(value):
    """A value SQLite stores as SQLite would have it (see the module docstring)."""
    from datetime import date, datetime
    from decimal import Decimal

    if value is None or isinstance(value, int | float | str | bytes):
        return value  # bool is an int: stored 0/1
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, memoryview):
        return bytes(value)
    raise SQLError("unsupported-type", f"a value of type {type(value).__name__}")


def tables_used(items: Iterable[dict]) -> set[str]:
    """The tables the gold SQL (and the readings' SQL) of ``items`` read, lower-cased."""
    from sqlglot import exp

    from answerable.builders import sqlkit

    used: set[str] = set()
    for item in items:
        texts = [item.get("sql")] + [r.get("sql") for r in item.get("readings") or []]
        for text in filter(None, texts):
            try:
                tree = sqlkit.parse(text, item.get("dialect") or "sqlite")
            except SQLError:
                continue
            ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
            used |= {t.name.lower() for t in tree.find_all(exp.Table)} - ctes
    return used


def export_server_sources(items: list[dict], databases: dict, folder: Path) -> dict[str, Path]:
    """``{db_id: SQLite file}`` for every server database the items use: the tables
    their SQL reads (every table when none does), exported to ``folder/<db_id>.sqlite``
    so a release ships files, as it does for file sources."""
    from answerable.builders.engines.postgres import _connect, resolve_dsn

    made = {}
    for db_id in sorted({i["db_id"] for i in items}):
        ref = databases.get(db_id)
        if ref is None or ref.server is None:
            continue
        known = {t.name.lower() for t in ref.schema.tables}
        wanted = tables_used(i for i in items if i["db_id"] == db_id) & known or known
        folder.mkdir(parents=True, exist_ok=True)
        with _connect(resolve_dsn(ref.server)) as con:
            con.read_only = True
            made[db_id] = export_sqlite(
                con, ref.server.namespace, wanted, folder / f"{db_id}.sqlite"
            )
    return made


def portable_to_sqlite(items: list[dict], files: dict[str, Path]) -> tuple[list[dict], list]:
    """``(kept, rejects)``: items of the databases in ``files`` (exported from a server)
    are kept when their gold SQL, written for SQLite by sqlglot, gives their stored
    result on the exported file (what ``answerable verify --execute`` and consumers
    run); the others are ``not-portable`` rejects saying why. Other items are kept."""
    from answerable.builders.executor import ReadOnlyDatabase
    from answerable.pipeline import reject

    kept, rejects, opened = [], [], {}
    try:
        for item in items:
            path = files.get(item["db_id"])
            if path is None or not item.get("sql") or not item.get("result"):
                kept.append(item)
                continue
            if item["db_id"] not in opened:
                opened[item["db_id"]] = ReadOnlyDatabase(path)
            problem = _sqlite_problem(item, opened[item["db_id"]])
            if problem is None:
                kept.append(item)
            else:
                rejects.append(reject(item["id"], "release", "not-portable", problem))
    finally:
        for database in opened.values():
            database.close()
    return kept, rejects


def _sqlite_problem(item: dict, database) -> str | None:
    from answerable.builders import sqlkit

    dialect = item["result"].get("dialect") or "sqlite"
    try:
        sql = (
            sqlkit.transpile(item["sql"], dialect, "sqlite") if dialect != "sqlite" else item["sql"]
        )
        found = database.execute(sql, ordered=item["result"].get("ordered"))
    except SQLError as error:
        return f"the gold SQL written for SQLite does not run on the exported file ({error})"
    if found.hash != item["result"]["hash"]:
        return "the gold SQL written for SQLite gives another result on the exported file"
    return None
