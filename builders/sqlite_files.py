"""Opening a SQLite file read-only, alone or as a delta over its base.

A delta (made by :mod:`answerable.builders.counterfactual.materialize`) holds only what
an edit changed, column by column: for each edited table, the added or rewritten
columns keyed by the base's rowid, and one row of its metadata table
(:data:`DELTA_TABLE`) giving the merged table's ``CREATE TABLE`` (what a whole edited
copy would hold) and the ``CREATE TEMP VIEW`` that shows it. Opening a delta means: open
it as ``main``, ATTACH the base read-only as ``base``, and run the stored view
statements. SQLite looks an unqualified name up in ``temp`` first, then ``main``, then
the attached files, so the views named like the edited tables shadow the base's and
every other name reads through to the base.

Any SQLite tool can do the same by hand (the shell, from a release root)::

    sqlite3 -readonly <delta> "ATTACH 'databases/<db_id>.sqlite' AS base" \\
      "$(sqlite3 <delta> 'SELECT group_concat(view, char(59)) FROM
         (SELECT view FROM answerable_delta ORDER BY seq)')" "<SQL>"

A delta written before this layout (whole copies of the edited tables, no metadata
table) still opens correctly: with no views to create, ``main`` shadows the base.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from answerable.builders.source_files import check_sqlite_file, source_uri
from answerable.kernel.errors import SQLError

BASE_SCHEMA = "base"  # the name the base is attached under
DELTA_TABLE = "answerable_delta"  # a delta's metadata: one row per merged table or view
DELTA_COLUMNS = ("seq", "name", "type", "definition", "columns_table", "view")


@dataclass(frozen=True)
class DeltaEntry:
    """One row of a delta's metadata table.

    ``type`` is ``table`` or ``view``; ``definition`` is the merged table's ``CREATE
    TABLE`` as a whole edited copy has it (or the view's ``CREATE VIEW``);
    ``columns_table`` names the table in the delta that holds the added or rewritten
    columns keyed by ``base_rowid`` (None when the edit only drops columns); ``view`` is
    the ``CREATE TEMP VIEW`` statement that shows it over the attached base.
    """

    seq: int
    name: str
    type: str
    definition: str
    columns_table: str | None
    view: str


def connect(path: str | Path, base: str | Path | None = None) -> sqlite3.Connection:
    """A read-only connection to ``path``; with ``base``, the merged view of the delta
    ``path`` over ``base`` (attached read-only, the delta's views created).

    The caller installs its own locks (``query_only``, an authorizer) after this returns:
    the ATTACH and the views here are our code's, made before any user SQL can run.
    Raises :class:`SQLError` (``not-a-database``) for a delta opened without its base.
    """
    check_sqlite_file(Path(path))
    con = sqlite3.connect(source_uri(path), uri=True, check_same_thread=False)
    try:
        entries = delta_entries(con)
        if base is None:
            if entries:
                raise SQLError(
                    "not-a-database",
                    f"{path}: a delta holds only what an edit changed (fix: open it with "
                    "its base database attached)",
                )
            return con
        check_sqlite_file(Path(base))
        con.execute(f"ATTACH DATABASE ? AS {BASE_SCHEMA}", (source_uri(base),))
        _create_views(con, entries)
    except BaseException:
        con.close()
        raise
    return con


def delta_entries(con: sqlite3.Connection) -> list[DeltaEntry]:
    """The rows of ``main``'s metadata table in creation order (none for a plain file)."""
    found = con.execute(
        "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?", (DELTA_TABLE,)
    ).fetchone()
    if not found:
        return []
    columns = ", ".join(DELTA_COLUMNS)
    rows = con.execute(f"SELECT {columns} FROM main.{DELTA_TABLE} ORDER BY seq").fetchall()
    return [DeltaEntry(*row) for row in rows]


def own_tables(entries: list[DeltaEntry]) -> set[str]:
    """Lower-case names of the tables a delta holds for itself (not the database's)."""
    return {DELTA_TABLE} | {e.columns_table.lower() for e in entries if e.columns_table}


def definitions_database(entries: list[DeltaEntry]) -> sqlite3.Connection:
    """An in-memory database with an empty table made from each stored definition of a
    delta's edited tables: it answers the PRAGMAs a whole edited copy would (the views
    showing the tables have no keys). Close it after use."""
    con = sqlite3.connect(":memory:")
    try:
        tables = [(e.name, e.definition) for e in entries if e.type == "table"]
        # a UNIQUE or PRIMARY KEY clause makes its own index along with the table
        creating = {sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_INDEX}
        _run_stored(con, tables, creating, "main")
    except BaseException:
        con.close()
        raise
    return con


def _create_views(con: sqlite3.Connection, entries: list[DeltaEntry]) -> None:
    views = [(e.name, e.view) for e in entries]
    _run_stored(con, views, {sqlite3.SQLITE_CREATE_TEMP_VIEW}, "temp")


def _run_stored(
    con: sqlite3.Connection, statements: list, creating: set[int], database: str
) -> None:
    """Run a delta's stored ``(name, statement)`` pairs, each allowed to do one thing:
    create objects of the ``creating`` kinds in ``database``. A delta is a file from a
    release, so its statements are not trusted to do anything else (ATTACH, PRAGMA ...)."""
    con.set_authorizer(_creating_only(creating, database))
    try:
        for name, statement in statements:
            try:
                con.execute(statement)
            except sqlite3.Error as error:
                raise SQLError("not-a-database", f"a delta's entry {name!r}: {error}") from None
    finally:
        con.set_authorizer(None)


def _creating_only(creating: set[int], database: str):
    """An authorizer that allows creating objects of the ``creating`` kinds in
    ``database`` (and the reads and catalogue writes that takes), and denies the rest."""
    catalogue = "sqlite_temp_master" if database == "temp" else "sqlite_master"
    allowed = {*creating, sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ}
    writes = {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE}

    def authorize(action: int, arg1, _arg2, where, *_rest) -> int:
        if action in allowed or (action in writes and (arg1, where) == (catalogue, database)):
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY

    return authorize
