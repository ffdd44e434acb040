"""Opening source databases so that nothing is ever written beside them.

A source is somebody else's file: the build reads it and leaves its folder as it was
(no ``-wal``, ``-shm`` or ``-journal`` files, no changed bytes).
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

from answerable.kernel.errors import SQLError
from answerable.kernel.ids import content_hash


def _pending_log(path: Path) -> Path | None:
    """The ``-wal`` or hot ``-journal`` file beside ``path`` holding unmerged changes."""
    for suffix in ("-wal", "-journal"):
        log = path.with_name(path.name + suffix)
        if log.is_file() and log.stat().st_size > 0:
            return log
    return None


_COPIES: list[tempfile.TemporaryDirectory] = []


def _private_copy(path: Path, log: Path) -> Path:
    """A copy of ``path`` and its pending log in a folder of our own, for this process."""
    if not _COPIES:
        _COPIES.append(tempfile.TemporaryDirectory(prefix="answerable-source-"))
    folder = Path(_COPIES[0].name) / content_hash(str(path.resolve()))
    folder.mkdir(exist_ok=True)
    copy = folder / path.name
    if not copy.exists():
        shutil.copyfile(log, folder / (path.name + log.name[len(path.name) :]))
        shutil.copyfile(path, copy)
    return copy


def source_uri(path: str | Path) -> str:
    """The URI that opens a source database without writing anything beside it.

    ``mode=ro`` alone still makes ``-wal``/``-shm`` files beside a WAL-mode database, so
    a source is opened ``immutable=1`` (no locks, no side files: sources do not change
    during a build). When a ``-wal`` or hot ``-journal`` file holds changes not yet in the
    main file, ``immutable`` would miss them: a private copy of both is opened instead.
    """
    path = Path(path)
    log = _pending_log(path)
    if log is not None:
        return f"{_private_copy(path, log).resolve().as_uri()}?mode=ro"
    return f"{path.resolve().as_uri()}?mode=ro&immutable=1"


def check_sqlite_file(path: Path) -> None:
    """Raise :class:`SQLError` (``not-a-database``) unless ``path`` is a SQLite file."""
    if not path.is_file():
        raise SQLError("not-a-database", f"{path}: no such file")
    with open(path, "rb") as fh:
        if fh.read(16) != b"SQLite format 3\x00":
            raise SQLError("not-a-database", f"{path}: not a SQLite database")


WAL_FORMAT = 2  # file format read/write version bytes (offsets 18, 19) of a WAL-mode file


def source_problem(path: Path) -> tuple[str, str] | None:
    """``(problem, fix)`` when a source database cannot be used as it is, else None.

    Two things make a file unfit to verify gold on and to ship: changes still in a
    ``-wal`` or hot ``-journal`` file beside it (the main file alone, which a release
    ships, is not the state the gold would be verified on), and pages that fail
    ``PRAGMA integrity_check`` (a corrupt file gives ``malformed`` errors for some
    queries and would be published as it is). Nothing is written beside the file.
    """
    path = Path(path)
    log = _pending_log(path)
    if log is not None:
        return (
            f"{log.name} beside it holds changes not yet in the database file",
            f"merge them first: sqlite3 {path} 'PRAGMA wal_checkpoint(TRUNCATE)' "
            "(or give a copy made with the sqlite3 .backup command)",
        )
    first = _integrity(path)
    if first is not None:
        return (
            f"fails PRAGMA integrity_check: {first}",
            "restore the database from a good copy (or sqlite3 .recover it into a new file)",
        )
    return None


def _integrity(path: Path) -> str | None:
    """The first line of ``PRAGMA integrity_check`` when it is not ``ok``, else None."""
    try:
        con = sqlite3.connect(source_uri(path), uri=True)
    except sqlite3.Error as error:
        return str(error)
    try:
        row = con.execute("PRAGMA integrity_check(1)").fetchone()
    except sqlite3.DatabaseError as error:
        return str(error)
    finally:
        con.close()
    if row and row[0] == "ok":
        return None
    text = str(row[0]) if row else "no answer"
    return " ".join(text.replace("*** in database main ***", "").split())


def ship_copy(source: Path, target: Path) -> None:
    """Copy a source database to ``target`` (a file of our own) in rollback-journal mode.

    A byte copy, except that a WAL-mode file is switched to rollback-journal mode: a
    consumer opening a WAL-mode file even with ``mode=ro`` creates ``-wal``/``-shm``
    files beside it, inside the release. (A source with pending changes in its log is
    refused before this, see :func:`source_problem`.)
    """
    shutil.copyfile(source, target)
    with open(target, "rb") as fh:
        header = fh.read(20)
    if len(header) == 20 and WAL_FORMAT in (header[18], header[19]):
        con = sqlite3.connect(target, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode = DELETE").fetchone()
        finally:
            con.close()
