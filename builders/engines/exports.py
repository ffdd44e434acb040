"""SQLite files written from another engine's tables: what a release ships for a DuckDB
or server source (so consumers need no DuckDB and no server), and the SQLite twin the
counterfactual step makes its proposals on (:mod:`.variants`).

Why SQLite files and not DuckDB files: every consumer tool of the release (``answerable
verify --execute``, ``evaluate``, the variants' deltas opened with
``sqlite_files.connect``) reads SQLite, a delta needs SQLite's ATTACH and TEMP views, and
Python ships SQLite. A DuckDB release would need a second format for each of them.

A file is written by :func:`write_sqlite`: each column gets the SQLite declared type of
its engine type (:func:`.types.sqlite_declared`; a type with no faithful SQLite form is an
``unsupported-type`` error naming the column), the primary key and the foreign keys among
the written tables are kept, and rows go in the order the engine's reader gives them:
DuckDB's rowid order (its insertion order: a DuckDB copy of a SQLite file keeps SQLite's
rowid order), PostgreSQL's physical order (``postgres_tables.row_order``). The same data
thus gives a byte-identical file, and an edit's fills, made in rowid order on the file,
see the rows in the order the engine's own variant sees them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from answerable.builders.engines.types import sqlite_declared, sqlite_value
from answerable.builders.schema import DatabaseSchema, Table, quote_identifier
from answerable.kernel.errors import SQLError, reject

Rows = Callable[[Table], Iterable[list[tuple]]]  # a table's rows, in batches
EXPORT_BATCH = 5000  # rows read and written at once


def write_sqlite(path: str | Path, tables: list[Table], rows: Rows) -> Path:
    """Write ``tables`` (columns carrying their engine's type names) with the rows
    ``rows(table)`` gives to the new SQLite file ``path`` (written to a temporary name
    and renamed into place)."""
    path = Path(path)
    kept = {t.name.lower() for t in tables}
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    out = sqlite3.connect(partial)
    try:
        for table in sorted(tables, key=lambda t: t.name.lower()):
            _write_table(out, table, kept, rows)
        out.commit()
    except BaseException:
        out.close()
        partial.unlink(missing_ok=True)
        raise
    out.close()
    partial.replace(path)
    return path


def _declared(table: Table, column) -> str:
    kind = sqlite_declared(column.type)
    if kind is None:
        raise SQLError(
            "unsupported-type",
            f"{table.name}.{column.name} is of type {column.type}, which SQLite files "
            "cannot hold faithfully (fix: leave the table out or cast it in a view)",
        )
    return kind


def _write_table(out: sqlite3.Connection, table: Table, kept: set[str], rows: Rows) -> None:
    kinds = [_declared(table, c) for c in table.columns]
    parts = [f"{quote_identifier(c.name)} {k}" for c, k in zip(table.columns, kinds, strict=True)]
    if table.primary_key:
        parts.append(f"PRIMARY KEY ({', '.join(map(quote_identifier, table.primary_key))})")
    # SQLite lists foreign keys last declared first: declare them reversed so the file
    # reads back in the engine's order.
    parts += [
        "FOREIGN KEY ({}) REFERENCES {} ({})".format(*map(quote_identifier, (c, o, oc)))
        for c, o, oc in reversed(table.foreign_keys)
        if o.lower() in kept
    ]
    out.execute(f"CREATE TABLE {quote_identifier(table.name)} ({', '.join(parts)})")
    marks = ", ".join("?" * len(table.columns))
    insert = f"INSERT INTO {quote_identifier(table.name)} VALUES ({marks})"
    for batch in rows(table):
        out.executemany(insert, [tuple(map(sqlite_value, row)) for row in batch])


def chosen_tables(schema: DatabaseSchema, wanted: Iterable[str] | None, where: str) -> list:
    """The tables of ``schema`` named in ``wanted`` (every one when None); an
    ``unknown-table`` error names those ``schema`` lacks."""
    found = {t.name.lower(): t for t in schema.tables}
    if wanted is None:
        return list(found.values())
    names = sorted({t.lower() for t in wanted})
    missing = [t for t in names if t not in found]
    if missing:
        raise SQLError("unknown-table", f"{where} has no table {', '.join(missing)}")
    return [found[t] for t in names]


def tables_used(items: Iterable[dict]) -> set[str]:
    """The tables the gold SQL, the readings' SQL and the edits of ``items`` read,
    lower-cased."""
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
        used |= {op["table"].lower() for op in (item.get("edit") or {}).get("ops") or []}
    return used


def portable_to_sqlite(items: list[dict], files: dict[str, Path]) -> tuple[list[dict], list]:
    """``(kept, rejects)``: items of the databases in ``files`` (exported from another
    engine) are kept when their gold SQL, written for SQLite by sqlglot, gives their
    stored result on the exported file (what ``answerable verify --execute`` and
    consumers run; an edited item's control keeps its parent's result, so the base file
    decides); the others are ``not-portable`` rejects saying why. Other items are kept."""
    from answerable.builders.executor import ReadOnlyDatabase

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
