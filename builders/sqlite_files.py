"""Opening a SQLite file read-only, alone or as a delta over its base.

A delta is a small SQLite file holding only the tables an edit changed. It is opened as
``main`` with its base ATTACHed read-only under the name ``base``: SQLite resolves an
unqualified name in ``main`` first, then in ``base``, so the delta's tables shadow the
base's and everything else reads through. Any SQLite tool that can ATTACH sees the same
merged view.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from answerable.errors import SQLError

BASE_SCHEMA = "base"  # the name the base is attached under
_HEADER = b"SQLite format 3\x00"


def read_only_uri(path: str | Path) -> str:
    """The ``file:`` URI that opens ``path`` read-only."""
    return f"{Path(path).resolve().as_uri()}?mode=ro"


def check_sqlite(path: str | Path) -> Path:
    """``path`` when it is a SQLite file; :class:`SQLError` (``not-a-database``) if not."""
    path = Path(path)
    if not path.is_file():
        raise SQLError("not-a-database", f"{path}: no such file")
    with open(path, "rb") as fh:
        if fh.read(16) != _HEADER:
            raise SQLError("not-a-database", f"{path}: not a SQLite database")
    return path


def connect(path: str | Path, base: str | Path | None = None) -> sqlite3.Connection:
    """A read-only connection to ``path``, with ``base`` attached read-only when given.

    The caller installs its own locks (``query_only``, an authorizer) after this returns:
    the ATTACH here is our code's, made before any user SQL can run.
    """
    con = sqlite3.connect(read_only_uri(check_sqlite(path)), uri=True, check_same_thread=False)
    if base is not None:
        attach = f"ATTACH DATABASE ? AS {BASE_SCHEMA}"
        con.execute(attach, (read_only_uri(check_sqlite(base)),))
    return con
