"""One error root for the whole tool, split by what the caller should do.

The CLI turns :class:`AnswerableError` subclasses into a one-line message and an
exit code; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class AnswerableError(Exception):
    """Root of every error this tool raises on purpose."""

    exit_code = 1

    def __reduce__(self):
        # Rebuilt from its message and fields, not by calling __init__ with the message
        # alone (the subclasses take their own arguments): an error raised in a shard's
        # worker process reaches the build whole.
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(kind: type, args: tuple, fields: dict) -> AnswerableError:
    error = kind.__new__(kind, *args)
    error.args = args
    error.__dict__.update(fields)
    return error


class ConfigError(AnswerableError):
    """A recipe or input file is wrong: names the file, the key and the fix.

    >>> str(ConfigError("recipe.yaml", "seed", "must be an integer", fix="write seed: 13"))
    'recipe.yaml: seed: must be an integer (fix: write seed: 13)'
    """

    def __init__(self, file: str, key: str | None, problem: str, fix: str | None = None):
        self.file, self.key, self.problem, self.fix = str(file), key, problem, fix
        where = f"{self.file}: {key}: " if key else f"{self.file}: "
        super().__init__(where + problem + (f" (fix: {fix})" if fix else ""))


class RecordError(AnswerableError):
    """One record is invalid: names the record id and the JSON pointer of the fault."""

    def __init__(self, record_id: str | None, pointer: str, problem: str):
        self.record_id, self.pointer, self.problem = record_id, pointer, problem
        super().__init__(f"record {record_id or '<no id>'} at {pointer or '/'}: {problem}")


class SQLError(AnswerableError):
    """A SQL text cannot be parsed, qualified or executed.

    ``reason`` is a short stable code used in rejects reports (``parse-error``,
    ``unknown-column``, ``timeout``, ``not-read-only`` ...); the message is for people.
    """

    def __init__(self, reason: str, message: str):
        self.reason = reason
        super().__init__(f"{reason}: {message}")


def reject(record_id: str | None, step: str, reason: str, detail: str = "", **extra) -> dict:
    """One line of the rejects report: which record, which step, why (``reason`` a short
    stable code, as :class:`SQLError`'s)."""
    return {"id": record_id, "step": step, "reason": reason, "detail": detail, **extra}


_OS_FIXES = {
    errno.EACCES: "give yourself write access there, or point workdir/out elsewhere",
    errno.EPERM: "give yourself write access there, or point workdir/out elsewhere",
    errno.EROFS: "the file system is read-only: point workdir/out at a writable folder",
    errno.ENOSPC: "free some disk space and run again; finished steps are reused",
    errno.EDQUOT: "free some of your disk quota and run again; finished steps are reused",
    errno.EISDIR: "that path is a folder: give a file path",
    errno.ENOTDIR: "a part of that path is a file, not a folder: fix the path",
    errno.ENOENT: "check the path",
    errno.ENAMETOOLONG: "use a shorter path",
}


def os_error_line(error: OSError) -> str:
    """One line for an error from the operating system: the path, what, and the fix.

    >>> os_error_line(OSError(errno.EISDIR, "Is a directory", "out/items.jsonl"))
    'out/items.jsonl: Is a directory (fix: that path is a folder: give a file path)'
    """
    where = error.filename if error.filename is not None else "a file"
    if getattr(error, "filename2", None):
        where = f"{where} -> {error.filename2}"
    what = error.strerror or type(error).__name__
    fix = _OS_FIXES.get(error.errno, "check the path and the disk, then run again")
    return f"{where}: {what} (fix: {fix})"


_SQLITE_OS_ERRORS = {
    "unable to open database file": errno.EACCES,
    "attempt to write a readonly database": errno.EROFS,
    "database or disk is full": errno.ENOSPC,
    "disk i/o error": errno.EIO,
}


@contextmanager
def sqlite_os_errors(path: str | Path) -> Iterator[None]:
    """Turn what SQLite says of a read-only folder or a full disk while opening a work
    file (``path``) into the :class:`OSError` it is, so that it prints as one line."""
    try:
        yield
    except sqlite3.OperationalError as error:
        code = _SQLITE_OS_ERRORS.get(str(error).lower())
        if code is None:
            raise
        raise OSError(code, f"{error} ({os.strerror(code).lower()}?)", str(path)) from None
