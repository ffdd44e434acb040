"""Read-only, time-limited, row-capped execution of one SQL statement on SQLite.

Untrusted SQL (seeds, templates, LLM drafts) runs here. Four locks keep source files
safe: the file is opened with ``mode=ro``; ``PRAGMA query_only`` is on; an authorizer
allows reads and functions only; and ``sqlite3`` itself refuses a second statement.
A progress handler enforces the time limit, and only the first ``row_cap`` rows are
kept while the true row count and the result hash cover every row.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from answerable.builders import sqlite_files, sqlkit
from answerable.errors import SQLError

DEFAULT_TIMEOUT_S = 2.0
DEFAULT_ROW_CAP = 100
_PROGRESS_EVERY = 2000  # SQLite VM steps between clock checks
_ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}
_MODULUS = 1 << 256


@dataclass(frozen=True)
class Limits:
    """How long one query may run and how many rows of its result are kept."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    row_cap: int = DEFAULT_ROW_CAP


@dataclass
class Result:
    """What one query returned: capped rows, the true row count and a result hash."""

    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    hash: str
    ordered: bool
    truncated: bool = False
    dialect: str = "sqlite"
    seconds: float = field(default=0.0, compare=False)

    def to_record(self) -> dict:
        """The item's ``result`` field."""
        return {
            "row_count": self.row_count,
            "columns": self.columns,
            "rows": self.rows,
            "truncated": self.truncated,
            "ordered": self.ordered,
            "hash": self.hash,
            "dialect": self.dialect,
        }


def normalize_value(value: Any) -> Any:
    """A JSON-safe form of one cell: bytes as hex, integral floats as ints."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _cell_token(value: Any) -> str:
    kind = type(value)  # SQLite gives str, int, float, bytes or None: test those first
    if kind is str:
        return "s" + value
    if kind is int:
        return f"n{value}"
    if value is None:
        return "\x00"
    if isinstance(value, float):
        return f"n{int(value)}" if value.is_integer() else f"n{value:.12g}"
    if isinstance(value, bool | int):
        return f"n{int(value)}"
    if isinstance(value, bytes):
        return "b" + value.hex()
    return "s" + str(value)


def row_digest(row: tuple) -> bytes:
    """sha256 of one row, with numbers compared by value (1 equals 1.0)."""
    return hashlib.sha256("\x1f".join(_cell_token(v) for v in row).encode()).digest()


class ResultHasher:
    """Hashes rows as they stream by: in order, or as a multiset when order is free."""

    def __init__(self, ordered: bool):
        self.ordered = ordered
        self._running = hashlib.sha256(b"ordered" if ordered else b"unordered")
        self._sum = 0
        self.count = 0

    def add(self, row: tuple) -> None:
        """Take one row into the hash."""
        digest = row_digest(row)
        self.count += 1
        if self.ordered:
            self._running.update(digest)
        else:
            self._sum = (self._sum + int.from_bytes(digest, "big")) % _MODULUS

    def hexdigest(self, columns: int) -> str:
        """The final hash; the number of columns and rows are part of it."""
        final = self._running.copy()
        final.update(f"{columns}:{self.count}".encode())
        if not self.ordered:
            final.update(self._sum.to_bytes(32, "big"))
        return final.hexdigest()


def result_hash(rows: list[tuple], ordered: bool, columns: int | None = None) -> str:
    """The hash of a whole result; equal results give equal hashes.

    >>> rows = [(1, "a"), (2, "b")]
    >>> result_hash(rows, ordered=False) == result_hash([(2, "b"), (1.0, "a")], ordered=False)
    True
    """
    hasher = ResultHasher(ordered)
    for row in rows:
        hasher.add(tuple(row))
    width = columns if columns is not None else (len(rows[0]) if rows else 0)
    return hasher.hexdigest(width)


def _authorize(action: int, *_args) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED_ACTIONS else sqlite3.SQLITE_DENY


def _first_keyword(sql: str) -> str:
    text = sql.lstrip().lstrip("(").lstrip()
    return text.split(None, 1)[0].upper() if text else ""


def _classify(error: sqlite3.Error, timed_out: bool) -> SQLError:
    message = str(error)
    low = message.lower()
    if timed_out or "interrupted" in low:
        return SQLError("timeout", "query ran past its time limit")
    if "one statement at a time" in low:
        return SQLError("multiple-statements", "only one SQL statement may run")
    if "not authorized" in low or "readonly" in low or "read-only" in low:
        return SQLError("not-read-only", message)
    if "no such column" in low or "ambiguous column" in low:
        return SQLError("unknown-column", message)
    if "no such table" in low:
        return SQLError("unknown-table", message)
    if "syntax error" in low or "incomplete input" in low:
        return SQLError("parse-error", message)
    return SQLError("sql-error", message)


def open_read_only(path: str | Path, base: str | Path | None = None) -> sqlite3.Connection:
    """A connection to ``path`` that cannot write: read-only URI and ``query_only``.

    With ``base``, ``path`` is a delta opened over its base (see
    :mod:`answerable.builders.sqlite_files`); the base is attached before the authorizer
    is installed, so user SQL still cannot ATTACH anything. Raises :class:`SQLError`
    (``not-a-database``) when a file is missing or not SQLite.
    """
    con = sqlite_files.connect(path, base)
    con.execute("PRAGMA query_only = ON")
    con.set_authorizer(_authorize)
    return con


class ReadOnlyDatabase:
    """One SQLite file opened read-only, executing one statement at a time; with ``base``,
    a delta over its base (the merged view).

    >>> db = ReadOnlyDatabase(path)                       # doctest: +SKIP
    >>> db.execute("SELECT count(*) FROM patients").rows  # doctest: +SKIP
    [[1200]]
    """

    def __init__(
        self, path: str | Path, limits: Limits | None = None, base: str | Path | None = None
    ):
        self.path = Path(path)
        self.base = None if base is None else Path(base)
        self.limits = limits or Limits()
        self._con = open_read_only(self.path, self.base)
        self._deadline = float("inf")
        self._con.set_progress_handler(self._past_deadline, _PROGRESS_EVERY)

    def _past_deadline(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def execute(
        self,
        sql: str,
        params: tuple | dict = (),
        ordered: bool | None = None,
        row_cap: int | None = None,
    ) -> Result:
        """Run one SELECT/WITH statement and return its :class:`Result`.

        ``ordered`` says whether row order is part of the result (a top-level ORDER BY);
        when None it is found by parsing the SQL. Raises :class:`SQLError` with a reason
        code: ``not-read-only``, ``multiple-statements``, ``timeout``, ``unknown-column``,
        ``unknown-table``, ``parse-error`` or ``sql-error``.
        """
        if _first_keyword(sql) not in ("SELECT", "WITH", "VALUES"):
            raise SQLError("not-read-only", "only SELECT or WITH statements may run")
        if ordered is None:
            ordered = _has_order_by(sql)
        cap = self.limits.row_cap if row_cap is None else row_cap
        started = time.monotonic()
        self._deadline = started + self.limits.timeout_s
        try:
            return self._run(sql, params, ordered, cap, started)
        except sqlite3.Error as error:
            raise _classify(error, time.monotonic() > self._deadline) from None
        finally:
            self._deadline = float("inf")

    def _run(self, sql, params, ordered, cap, started) -> Result:
        cursor = self._con.execute(sql, params)
        columns = [d[0] for d in cursor.description or ()]
        hasher, kept = ResultHasher(ordered), []
        while batch := cursor.fetchmany(512):
            for row in batch:
                hasher.add(row)
                if len(kept) < cap:
                    kept.append([normalize_value(v) for v in row])
        return Result(
            columns,
            kept,
            hasher.count,
            hasher.hexdigest(len(columns)),
            ordered,
            truncated=hasher.count > cap,
            seconds=time.monotonic() - started,
        )

    def close(self) -> None:
        """Close the connection."""
        self._con.close()

    def __enter__(self) -> ReadOnlyDatabase:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _has_order_by(sql: str) -> bool:
    try:
        return sqlkit.has_order_by(sqlkit.parse(sql))
    except SQLError:
        return False
