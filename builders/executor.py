"""Read-only, time-limited, row-capped execution of one SQL statement on SQLite.

Untrusted SQL (seeds, templates, LLM drafts, a scorer's predictions) runs here, and
every path goes through one gate, :func:`install_gate`: ``PRAGMA query_only``; an
authorizer that allows reads and an allow-list of pure SQL functions only (no
``fts3_tokenizer``, ``load_extension``, ``random`` ...); connection limits
(``setlimit``) so that strings, SQL text and compound selects that grow without bound
fail at once; and ``sqlite3`` itself refuses a second statement. The file is opened
so that nothing is written beside it (see :mod:`answerable.builders.source_files`). A
progress handler enforces the time limit, only the first ``row_cap`` rows are kept
(each cell and the kept rows as a whole under a byte cap) while the true row count and
the result hash cover every row.

:class:`ReadOnlyDatabase` runs all of that in a worker process
(:mod:`answerable.builders.isolation`) that the kernel and the parent stop from outside
at the limit (plus at most one second of CPU) and under a memory cap: one engine step
the progress handler cannot interrupt costs no more than that.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import re
import sqlite3
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from answerable.builders import sqlite_files
from answerable.builders.isolation import DEFAULT_MEMORY_BYTES, WALL_FACTOR, IsolatedDatabase
from answerable.kernel.errors import SQLError

DEFAULT_TIMEOUT_S = 2.0
DEFAULT_ROW_CAP = 100
_PROGRESS_EVERY = 2000  # SQLite VM steps between clock checks
_ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}
# Functions known to be pure: their result depends on their arguments only. Anything
# else (fts3_tokenizer leaks and plants pointers, load_extension runs code, random and
# the connection counters make results differ between runs, sqlite_* tell the build
# machine's set-up) is refused by name.
_PURE_NAMES = """
    abs acos acosh asin asinh atan atan2 atanh ceil ceiling char coalesce cos cosh
    degrees exp floor format glob hex ifnull iif instr length like likelihood likely ln
    log log10 log2 lower ltrim max min mod nullif pi pow power printf quote radians
    replace round rtrim sign sin sinh soundex sqrt substr substring tan tanh trim trunc
    typeof unicode unlikely upper zeroblob
    date time datetime julianday strftime unixepoch
    avg count group_concat sum total
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value
    last_value nth_value
    json json_array json_array_length json_extract json_insert json_object json_patch
    json_quote json_remove json_replace json_set json_type json_valid json_group_array
    json_group_object -> ->>
"""
PURE_FUNCTIONS = frozenset(_PURE_NAMES.split())
_MODULUS = 1 << 256


DEFAULT_VALUE_BYTES = 1_000_000  # longest string or blob a query may make or read
DEFAULT_SQL_BYTES = 100_000
DEFAULT_CELL_BYTES = 100_000  # longest cell kept in an item's result
DEFAULT_RESULT_BYTES = 1_000_000  # all kept cells of one result together


@dataclass(frozen=True)
class Limits:
    """How long one query may run, how many rows are kept and how big things may grow.

    On SQLite ``timeout_s`` is CPU time of the executing thread (wall time at most
    ``WALL_FACTOR`` times it), so whether a query times out does not depend on what else
    the machine is doing; DuckDB counts the CPU time of the process (its threads run the
    query) under the same wall bound; a server engine measures wall time. The worker
    that runs the query is stopped from outside one second of CPU past ``timeout_s`` at
    the latest, and its address space may grow by ``memory_bytes``.
    """

    timeout_s: float = DEFAULT_TIMEOUT_S
    row_cap: int = DEFAULT_ROW_CAP
    value_bytes: int = DEFAULT_VALUE_BYTES
    sql_bytes: int = DEFAULT_SQL_BYTES
    cell_bytes: int = DEFAULT_CELL_BYTES
    result_bytes: int = DEFAULT_RESULT_BYTES
    memory_bytes: int = DEFAULT_MEMORY_BYTES

    def connection_limits(self) -> dict[int, int]:
        """The ``sqlite3`` limits (``Connection.setlimit``) a gated connection gets."""
        return {
            sqlite3.SQLITE_LIMIT_LENGTH: self.value_bytes,
            sqlite3.SQLITE_LIMIT_SQL_LENGTH: self.sql_bytes,
            sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 64,
            sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 200,
            sqlite3.SQLITE_LIMIT_FUNCTION_ARG: 100,
            sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 10_000,
            sqlite3.SQLITE_LIMIT_VDBE_OP: 1_000_000,
            sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 0,
            sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
        }


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
    # The three commonest cells are tokenized inline (the same tokens as _cell_token
    # gives): a function call per cell was a third of the scorer's time on large results.
    tokens = [
        "s" + v
        if type(v) is str
        else f"n{v}"
        if type(v) is int
        else (f"n{int(v)}" if v.is_integer() else f"n{v:.12g}")
        if type(v) is float
        else _cell_token(v)
        for v in row
    ]
    return hashlib.sha256("\x1f".join(tokens).encode()).digest()


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

    def add_all(self, rows: Iterable[tuple]) -> None:
        """Take every row of ``rows`` into the hash, as :meth:`add` one at a time would
        (a tight loop: most rows of a large result are hashed and nothing else)."""
        count = 0
        if self.ordered:
            update = self._running.update
            for row in rows:
                update(row_digest(row))
                count += 1
        else:
            total, to_int = self._sum, int.from_bytes
            for row in rows:
                total += to_int(row_digest(row), "big")
                count += 1
            self._sum = total % _MODULUS
        self.count += count

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


def _authorize(action: int, _arg1, arg2, *_rest) -> int:
    if action == sqlite3.SQLITE_FUNCTION:
        allowed = (arg2 or "").lower() in PURE_FUNCTIONS
    else:
        allowed = action in _ALLOWED_ACTIONS
    return sqlite3.SQLITE_OK if allowed else sqlite3.SQLITE_DENY


def install_gate(con: sqlite3.Connection, limits: Limits | None = None) -> sqlite3.Connection:
    """Make ``con`` safe for untrusted SQL and return it.

    Sets ``query_only``, the connection limits of ``limits`` and the authorizer (reads
    and :data:`PURE_FUNCTIONS` only; ATTACH, PRAGMA and writes are denied). Whatever a
    connection needs from our own code (an ATTACHed base, say) is done before this.
    """
    limits = limits or Limits()
    con.execute("PRAGMA query_only = ON")
    for category, value in limits.connection_limits().items():
        con.setlimit(category, value)
    checked = _checked_printf(limits.value_bytes)
    for name in ("printf", "format"):
        con.create_function(name, -1, checked, deterministic=True)
    con.set_authorizer(_authorize)
    return con


_PRINTF_SPEC = re.compile(r"%[-+ 0#,!]*(\*|\d+)?(?:\.(\*|\d+))?(%|[a-zA-Z])")


def _checked_printf(most: int):
    """SQLite's own ``printf`` behind a check of every width and precision.

    A width of two billion makes SQLite's printf loop for seconds inside one step, where
    neither the progress handler nor the length limit can stop it; so a width or
    precision past the value limit is refused before SQLite sees it.
    """
    helper = sqlite3.connect(":memory:", check_same_thread=False)
    helper.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, most)

    def printf(pattern, *args):
        if not isinstance(pattern, str):
            return helper.execute("SELECT printf(?)", (pattern,)).fetchone()[0]
        used = 0
        for match in _PRINTF_SPEC.finditer(pattern):
            for size in match.group(1, 2):
                if size == "*":
                    size, used = (args[used] if used < len(args) else 0), used + 1
                if _too_wide(size, most):
                    raise ValueError("printf width or precision over the value limit")
            used += match.group(3) != "%"
        marks = ", ".join("?" * (len(args) + 1))
        return helper.execute(f"SELECT printf({marks})", (pattern, *args)).fetchone()[0]

    return printf


def _too_wide(size: Any, most: int) -> bool:
    try:
        return size is not None and abs(float(size)) > most
    except (TypeError, ValueError):
        return False


_TOO_BIG = ("too big", "too large", "too many", "too complex", "too deep", "out of memory")


def _classify(error: sqlite3.Error, timed_out: bool) -> SQLError:
    message = str(error)
    low = message.lower()
    if timed_out or "interrupted" in low:
        return SQLError("timeout", "query ran past its time limit")
    if "one statement at a time" in low:
        return SQLError("multiple-statements", "only one SQL statement may run")
    if "not authorized to use function" in low:
        return SQLError("function-not-allowed", f"{message} (only pure SQL functions may run)")
    if "not authorized" in low or "readonly" in low or "read-only" in low:
        return SQLError("not-read-only", message)
    if "user-defined function raised exception" in low:  # only our checked printf
        return SQLError("too-big", "a printf width or precision is over the value limit")
    if any(word in low for word in _TOO_BIG):
        return SQLError("too-big", f"{message} (a limit of the SQL gate)")
    if "no such column" in low or "ambiguous column" in low:
        return SQLError("unknown-column", message)
    if "no such table" in low:
        return SQLError("unknown-table", message)
    if "syntax error" in low or "incomplete input" in low:
        return SQLError("parse-error", message)
    return SQLError("sql-error", message)


def open_read_only(
    path: str | Path, limits: Limits | None = None, base: str | Path | None = None
) -> sqlite3.Connection:
    """A gated connection to ``path`` (see :func:`install_gate`) that writes nothing.

    With ``base``, ``path`` is a delta opened over its base (see
    :mod:`answerable.builders.sqlite_files`); the base is attached before the authorizer
    is installed, so user SQL still cannot ATTACH anything. Raises :class:`SQLError`
    (``not-a-database``) when a file is missing or not SQLite.
    """
    return install_gate(sqlite_files.connect(path, base), limits)


class Connected:
    """What every engine's database shares: ``close`` and use in a ``with`` block
    (closing ``self._con``)."""

    _con: Any

    def close(self) -> None:
        """Close the connection."""
        self._con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ReadOnlyDatabase(IsolatedDatabase):
    """One SQLite file opened read-only, executing one statement at a time; with ``base``,
    a delta over its base (the merged view). The SQLite engine's ``Database`` (see
    :mod:`answerable.builders.engines.base`): a :class:`GatedDatabase` held by the
    worker process, stopped from outside at its limits.

    >>> db = ReadOnlyDatabase(path)                       # doctest: +SKIP
    >>> db.execute("SELECT count(*) FROM patients").rows  # doctest: +SKIP
    [[1200]]
    """

    def __init__(
        self, path: str | Path, limits: Limits | None = None, base: str | Path | None = None
    ):
        self.path = Path(path)
        self.base = None if base is None else Path(base)
        opener = (_open_gated, (self.path, self.base))
        super().__init__(opener, limits or Limits(), "sqlite")


def _open_gated(path: Path, base: Path | None, limits: Limits) -> GatedDatabase:
    """:class:`ReadOnlyDatabase`'s opener: the worker's :class:`GatedDatabase`."""
    return GatedDatabase(path, limits, base=base)


class GatedDatabase(Connected):
    """:class:`ReadOnlyDatabase`'s work, in the process that calls it: the gated
    connection, the progress handler's time limit, the caps. Only the worker runs it;
    one long engine step passes its time limit here."""

    def __init__(
        self, path: str | Path, limits: Limits | None = None, base: str | Path | None = None
    ):
        self.path = Path(path)
        self.base = None if base is None else Path(base)
        self.limits = limits or Limits()
        self.dialect = "sqlite"
        self._con = open_read_only(self.path, self.limits, self.base)
        self._cpu_deadline = self._wall_deadline = self._cpu_check_from = float("inf")
        self._byte_cap = self.limits.result_bytes
        self._con.set_progress_handler(self._past_deadline, _PROGRESS_EVERY)

    def _timed_out(self) -> bool:
        now = time.monotonic()
        # A thread's CPU time grows no faster than the wall clock, so the CPU clock (a
        # system call, up to a tenth of a millisecond on a busy machine, where the wall
        # clock is a memory read) is read only once the limit has passed on the wall
        # clock: the same answer, without a CPU clock read every few thousand steps.
        if now > self._wall_deadline:
            return True
        return now > self._cpu_check_from and time.thread_time() > self._cpu_deadline

    def _past_deadline(self) -> int:
        return 1 if self._timed_out() else 0

    def execute(
        self,
        sql: str,
        params: tuple | dict = (),
        ordered: bool | None = None,
        row_cap: int | None = None,
        byte_cap: int | None = None,
    ) -> Result:
        """Run one SELECT/WITH statement and return its :class:`Result`.

        ``ordered`` says whether row order is part of the result (a top-level ORDER BY);
        when None it is found by parsing the SQL. ``byte_cap`` replaces the limits'
        ``result_bytes`` for the kept rows (value lists keep every row). Raises
        :class:`SQLError` with a reason code: ``not-read-only``, ``multiple-statements``,
        ``timeout``, ``unknown-column``, ``unknown-table``, ``parse-error``,
        ``function-not-allowed``, ``too-big``, ``result-too-large`` or ``sql-error``.
        """
        if first_keyword(sql) not in READ_KEYWORDS:
            raise SQLError("not-read-only", "only SELECT or WITH statements may run")
        if ordered is None:
            ordered = has_order_by(sql)
        cap = self.limits.row_cap if row_cap is None else row_cap
        self._byte_cap = self.limits.result_bytes if byte_cap is None else byte_cap
        started = time.monotonic()
        self._cpu_deadline = time.thread_time() + self.limits.timeout_s
        self._cpu_check_from = started + self.limits.timeout_s  # see _timed_out
        self._wall_deadline = started + WALL_FACTOR * self.limits.timeout_s
        try:
            return self._run(sql, params, ordered, cap, started)
        except sqlite3.Error as error:
            raise _classify(error, self._timed_out()) from None
        finally:
            self._cpu_deadline = self._wall_deadline = self._cpu_check_from = float("inf")

    def _run(self, sql, params, ordered, cap, started) -> Result:
        cursor = self._con.execute(sql, params)
        columns = [d[0] for d in cursor.description or ()]
        return collect(cursor, columns, ordered, cap, self.limits, self._byte_cap, started)

    def schema(self, db_id: str | None = None):
        """The :class:`~answerable.builders.schema.DatabaseSchema` of this file (of the
        merged view for a delta), read through PRAGMAs (the engine interface's
        ``schema``)."""
        from answerable.builders.schema import DatabaseSchema  # schema imports sqlite_files

        return DatabaseSchema.from_sqlite(self.path, db_id, self.base)


def collect(
    rows: Iterable[tuple],
    columns: list[str],
    ordered: bool,
    cap: int,
    limits: Limits,
    byte_cap: int,
    started: float,
    dialect: str = "sqlite",
    settled: bool = False,
) -> Result:
    """The :class:`Result` of a stream of rows: every row hashed and counted, the first
    ``cap`` kept (JSON-safe, under ``limits.cell_bytes`` each and ``byte_cap`` together).

    Every engine ends here, so kept rows and hashes are made one way; rows hold SQLite's
    kinds of values (other engines convert theirs first: ``engines.base.sqlite_cell``).
    ``settled``: the engine may give an unordered result's rows in another order on
    another run (DuckDB's threads, PostgreSQL's parallel plans), so such a result keeps
    its ``cap`` first rows in value order (:func:`value_key`), not in the order read, and
    the same query keeps the same rows in the same order every time.
    Raises :class:`SQLError` ``result-too-large`` past a byte cap.
    """
    hasher, kept, kept_bytes = ResultHasher(ordered), [], 0
    add, cell_cap = hasher.add, limits.cell_bytes
    if settled and not ordered:  # every row hashed as it is read, the first kept by value
        rows, add = first_by_value(_hashed(rows, add), cap), _counted_already
    # Row by row: a batch of rows near the value limit each would take gigabytes.
    rows = iter(rows)
    for row in islice(rows, max(cap, 0)):
        add(row)
        cells, size = _kept_row(row, cell_cap)
        if kept_bytes + size > byte_cap:
            raise SQLError("result-too-large", f"the kept rows pass the cap of {byte_cap} bytes")
        kept.append(cells)
        kept_bytes += size
    hasher.add_all(rows)  # the rows past the cap (none left when settled): hashed only
    return Result(
        columns,
        kept,
        hasher.count,
        hasher.hexdigest(len(columns)),
        ordered,
        truncated=hasher.count > cap,
        dialect=dialect,
        seconds=time.monotonic() - started,
    )


def _hashed(rows: Iterable[tuple], add) -> Iterator[tuple]:
    """The rows, each given to ``add`` (a :class:`ResultHasher`'s) as it goes by."""
    for row in rows:
        add(row)
        yield row


def first_by_value(rows: Iterable[tuple], cap: int) -> list[tuple]:
    """The first ``cap`` of ``rows`` in value order (:func:`value_key`); every row is
    read, also when ``cap`` is 0 (``heapq.nsmallest`` would read none)."""
    if cap > 0:
        return heapq.nsmallest(cap, rows, key=value_key)
    deque(rows, maxlen=0)
    return []


def _counted_already(row: tuple) -> None:
    """Nothing: the row was hashed when it was read (see :func:`collect`'s ``settled``)."""


def value_key(row: tuple) -> tuple:
    """A row's place in value order, one total order over SQLite's kinds of values: NULL,
    then numbers (1 before 1.0, NaN last), then text, then blobs; no two rows that print
    differently share a place.

    >>> sorted([("b",), (None,), (2.0,), (2,), ("a",), (float("nan"),)], key=value_key)
    [(None,), (2,), (2.0,), (nan,), ('a',), ('b',)]
    """
    return tuple(_cell_key(value) for value in row)


def _cell_key(value: Any) -> tuple:
    if value is None:
        return (0, 0.0, "")
    if isinstance(value, int | float):
        return (1, value if value == value else math.inf, repr(value))
    if isinstance(value, str):
        return (2, 0.0, value)
    return (3, 0.0, repr(value))


def _kept_row(row: tuple, cell_cap: int) -> tuple[list, int]:
    """One kept row JSON-safe (:func:`normalize_value`) and its bytes (:func:`_cell_size`
    of each cell); raises ``result-too-large`` for a cell over ``cell_cap``. Text and
    integers, most cells, are taken inline: a call per cell was most of the time a
    result took to collect."""
    cells, size = [], 0
    for value in row:
        kind = type(value)
        if kind is str:
            cell = len(value) if value.isascii() else _cell_size(value)
        elif kind is int or value is None:
            cell = 8
        else:
            cell, value = _cell_size(value), normalize_value(value)
        if cell > cell_cap:
            raise SQLError(
                "result-too-large", f"a cell of {cell} bytes is over the cap of {cell_cap}"
            )
        cells.append(value)
        size += cell
    return cells, size


def has_order_by(sql: str, dialect: str = "sqlite") -> bool:
    """Whether ``sql`` orders its rows at the top level (False when it does not parse)."""
    from answerable.builders import sqlkit  # sqlglot: only where a text is parsed

    try:
        return sqlkit.has_order_by(sqlkit.parse(sql, dialect))
    except SQLError:
        return False


def first_keyword(sql: str) -> str:
    """The statement's first keyword, upper-cased (a leading parenthesis skipped)."""
    text = sql.lstrip().lstrip("(").lstrip()
    return text.split(None, 1)[0].upper() if text else ""


READ_KEYWORDS = ("SELECT", "WITH", "VALUES")  # the statements any engine may run


def _cell_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    return len(value) if isinstance(value, bytes) else 8
