"""Opening source databases so that nothing is ever written beside them.

A source is somebody else's file: the build reads it and leaves its folder as it was
(no ``-wal``, ``-shm`` or ``-journal`` files, no changed bytes).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from answerable.errors import SQLError
from answerable.ids import content_hash


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
