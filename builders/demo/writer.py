"""Write one demo database to a SQLite file, atomically and byte-stable.

The rows go into a temporary file next to the target in one transaction; the file is
vacuumed (so its bytes depend only on the rows) and then renamed into place, so a killed
run never leaves a half-written database behind.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PAGE_SIZE = 4096


@dataclass(frozen=True)
class TableRows:
    """The rows of one table, in the order they are inserted."""

    name: str
    columns: tuple[str, ...]
    rows: list[tuple]


def write_database(path: Path, ddl: str, tables: Sequence[TableRows]) -> Path:
    """Create ``path`` from ``ddl`` and ``tables``, replacing any file already there.

    Tables are inserted in the order given, so parents must come before children.
    Raises ``sqlite3.IntegrityError`` if a foreign key points nowhere.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    os.close(fd)
    temp = Path(temp_name)
    try:
        _fill(temp, ddl, tables)
        temp.chmod(0o644)  # mkstemp makes the file private; a database is for reading
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    return path


def _fill(path: Path, ddl: str, tables: Sequence[TableRows]) -> None:
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute(f"PRAGMA page_size={PAGE_SIZE}")
        con.execute("BEGIN")
        for statement in _statements(ddl):
            con.execute(statement)
        for table in tables:
            con.executemany(_insert_sql(table), table.rows)
        _check_foreign_keys(con)
        con.execute("COMMIT")
        con.execute("VACUUM")
    finally:
        con.close()


def _statements(ddl: str) -> list[str]:
    return [part.strip() for part in ddl.split(";") if part.strip()]


def _insert_sql(table: TableRows) -> str:
    names = ", ".join(table.columns)
    marks = ", ".join("?" for _ in table.columns)
    return f"INSERT INTO {table.name} ({names}) VALUES ({marks})"


def _check_foreign_keys(con: sqlite3.Connection) -> None:
    broken = con.execute("PRAGMA foreign_key_check").fetchmany(5)
    if broken:
        raise sqlite3.IntegrityError(f"foreign keys point nowhere: {broken}")
