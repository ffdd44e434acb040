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

from answerable.builders.opening import check_sqlite_file, source_uri

BASE_SCHEMA = "base"  # the name the base is attached under


def connect(path: str | Path, base: str | Path | None = None) -> sqlite3.Connection:
    """A read-only connection to ``path``, with ``base`` attached read-only when given.

    The caller installs its own locks (``query_only``, an authorizer) after this returns:
    the ATTACH here is our code's, made before any user SQL can run.
    """
    check_sqlite_file(Path(path))
    con = sqlite3.connect(source_uri(path), uri=True, check_same_thread=False)
    if base is not None:
        check_sqlite_file(Path(base))
        con.execute(f"ATTACH DATABASE ? AS {BASE_SCHEMA}", (source_uri(base),))
    return con
