"""The DuckDB engine: embedded, a ``.duckdb`` file opened read-only.

The locks, each of which alone stops a kind of write:

* the file is opened ``read_only`` (no table, view, sequence or setting of the file can
  change; DuckDB takes no write lock, and writes nothing beside the file);
* ``enable_external_access`` is false: no other file or URL can be read or written
  (``read_csv('/etc/passwd')``, ``COPY``, ``EXPORT``, ``ATTACH``) and no extension can
  be installed or loaded; extension autoloading is off too;
* ``lock_configuration`` is true: ``SET``/``RESET``/``PRAGMA`` cannot undo the above,
  nor the settings pinned before it (:data:`PINNED`: the time zone is UTC, whatever
  the machine's, so the ``+``/``-`` overloads on time-zone-aware timestamps, which DuckDB
  marks consistent within a query only, and their text give the same result on every
  machine);
* DuckDB's own parser splits the text (``extract_statements``): exactly one statement,
  of type SELECT, may run;
* functions whose result is not fixed by their arguments (``random``, ``uuid``,
  ``nextval``, ``now``, ``current_query`` ...: DuckDB's catalog marks every overload of
  them not ``CONSISTENT``) are refused by name after DuckDB's parser lists the calls
  (``json_serialize_sql``), as the SQLite gate refuses them: a gold result must be the
  same on every run.

The time limit counts CPU time, as SQLite's does: one watchdog thread per connection
interrupts a statement once it has used its limit (:class:`Watchdog`; a thread started
per statement cost more than many statements themselves on a busy machine); the row cap and the
hash are the executor's (:func:`~answerable.builders.executor.collect`) over cells
turned into SQLite's kinds (:func:`~answerable.builders.engines.base.sqlite_cell`).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from answerable.builders.engines.base import (
    Engine,
    SourceSpec,
    schema_from_information_schema,
    sqlite_rows,
)
from answerable.builders.engines.edited_tables import (
    EditedTable,
    describe_ops,
    edit_rows,
    ops_by_table,
)
from answerable.builders.engines.exports import EXPORT_BATCH, chosen_tables, write_sqlite
from answerable.builders.engines.types import BLOB, INTEGER, REAL, TEXT, value_kind
from answerable.builders.executor import (
    READ_KEYWORDS,
    WALL_FACTOR,
    Connected,
    Limits,
    Result,
    collect,
    first_keyword,
    has_order_by,
)
from answerable.builders.schema import DatabaseSchema, Table, quote_identifier
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import canonical_json, sha256_file
from answerable.kernel.records import atomic_path, read_json, write_json

_CONFIG = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    # One thread: DuckDB reserves address space for each of its threads, which counts
    # against the SQL worker's per-call address-space cap (builders/isolation.py).
    "threads": 1,
}
# Settings whose default comes from the machine, pinned on every connection. ICU (built
# into the package) registers them only once a connection is open, so they are SET
# before lock_configuration rather than passed in the config.
PINNED = (("TimeZone", "UTC"), ("Calendar", "gregorian"))
_BATCH = 1000  # rows fetched at a time
_CHECKED_MOST = 10_000  # statement verdicts remembered per connection
DUCKDB_HEADER_AT = 8  # a DuckDB file has the magic bytes "DUCK" at offset 8
_MAGIC = b"DUCK"


def duckdb_module():
    """The ``duckdb`` package, imported on first use (it takes a moment to import)."""
    import duckdb

    return duckdb


def connect_read_only(path: Path):
    """A DuckDB connection to ``path`` as the engine opens it: read-only, external access
    and extension loading off, :data:`PINNED` set, then the configuration locked."""
    con = duckdb_module().connect(str(path), read_only=True, config=dict(_CONFIG))
    try:
        # A second connection to a file this process has open shares its database
        # instance, locked by the first; the pins are GLOBAL, so it has them already.
        (locked,) = con.execute("SELECT current_setting('lock_configuration')").fetchone()
        if not locked:
            for name, value in PINNED:
                con.execute(f"SET GLOBAL {name} = '{value}'")  # our constants
            con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def check_duckdb_file(path: Path) -> None:
    """Raise :class:`SQLError` (``not-a-database``) unless ``path`` is a DuckDB file."""
    if not path.is_file():
        raise SQLError("not-a-database", f"{path}: no such file")
    with open(path, "rb") as fh:
        if fh.read(DUCKDB_HEADER_AT + 4)[DUCKDB_HEADER_AT:] != _MAGIC:
            raise SQLError("not-a-database", f"{path}: not a DuckDB database")


def read_only_connection(path: str | Path):
    """A checked DuckDB file opened by :func:`connect_read_only` (read-only, settings
    pinned and locked); a file DuckDB cannot open is a ``not-a-database`` SQLError. The
    engine's statements and our own whole-table reads both open files this way."""
    check_duckdb_file(Path(path))
    duckdb = duckdb_module()
    try:
        return connect_read_only(Path(path))
    except duckdb.Error as error:
        raise SQLError("not-a-database", f"{path}: {error}") from None


class DuckDBDatabase(Connected):
    """One DuckDB file opened read-only with external access and settings locked."""

    dialect = "duckdb"

    def __init__(self, path: str | Path, limits: Limits | None = None):
        self.path = Path(path)
        self.limits = limits or Limits()
        self._con = read_only_connection(self.path)
        self._errors = duckdb_module()
        self._watchdog = Watchdog(self._con.interrupt)
        self._unstable_names: frozenset[str] | None = None
        self._checked: dict[str, SQLError | None] = {}

    def execute(
        self,
        sql: str,
        params: tuple | dict = (),
        ordered: bool | None = None,
        row_cap: int | None = None,
        byte_cap: int | None = None,
    ) -> Result:
        """Run one read-only statement (see ``engines.base.Database.execute``)."""
        self._check_statement(sql)
        if ordered is None:
            ordered = has_order_by(sql, self.dialect)
        cap = self.limits.row_cap if row_cap is None else row_cap
        cap_bytes = self.limits.result_bytes if byte_cap is None else byte_cap
        started = time.monotonic()
        self._watchdog.arm(started, self.limits.timeout_s)
        try:
            cursor = self._con.execute(sql, params or None)
            columns = [d[0] for d in cursor.description or ()]
            rows = sqlite_rows(_batches(cursor), columns)
            return collect(
                rows,
                columns,
                ordered,
                cap,
                self.limits,
                cap_bytes,
                started,
                self.dialect,
                settled=True,  # its threads may give an unordered result in any order
            )
        except self._errors.Error as error:
            raise _classify(error, time.monotonic() - started >= self.limits.timeout_s) from None
        finally:
            self._watchdog.disarm()

    def close(self) -> None:
        """Stop the watchdog and close the connection."""
        self._watchdog.close()
        super().close()

    def _check_statement(self, sql: str) -> None:
        if first_keyword(sql) not in READ_KEYWORDS:
            raise SQLError("not-read-only", "only SELECT or WITH statements may run")
        if sql not in self._checked:  # a template's parameterized SQL is checked once
            try:
                self._refusal(sql)
                verdict = None
            except SQLError as error:
                verdict = error
            if len(self._checked) < _CHECKED_MOST:
                self._checked[sql] = verdict
        else:
            verdict = self._checked[sql]
        if verdict is not None:
            raise verdict

    def _refusal(self, sql: str) -> None:
        """Raise the SQLError that refuses ``sql``, if any (see the module docstring)."""
        try:
            statements = self._con.extract_statements(sql)
        except self._errors.Error as error:
            raise _classify(error, False) from None
        if len(statements) != 1:
            raise SQLError("multiple-statements", "only one SQL statement may run")
        if statements[0].type != self._errors.StatementType.SELECT:
            raise SQLError("not-read-only", "only SELECT or WITH statements may run")
        refused = sorted(_called_functions(self._parse_tree(sql)) & self._unstable())
        if refused:
            raise SQLError(
                "function-not-allowed",
                f"{', '.join(refused)}: results differ between runs (only pure functions may run)",
            )

    def _parse_tree(self, sql: str) -> dict:
        text = self._con.execute("SELECT json_serialize_sql(?::VARCHAR)", [sql]).fetchone()[0]
        tree = json.loads(text)
        if tree.get("error"):
            raise SQLError("parse-error", str(tree.get("error_message", "cannot parse")))
        return tree

    def _unstable(self) -> frozenset[str]:
        if self._unstable_names is None:
            self._unstable_names = _unstable_functions(self._con, self.path)
        return self._unstable_names

    def _catalog(self, sql: str, params: tuple) -> list[tuple]:
        return self._con.execute(sql, list(params)).fetchall()

    def schema(self, db_id: str | None = None) -> DatabaseSchema:
        """The schema of the file's ``main`` schema, from ``information_schema``."""
        return schema_from_information_schema(self._catalog, db_id or self.path.stem, "main")


_UNSTABLE: dict[tuple, frozenset[str]] = {}  # (file, its identity) -> unstable names


def _unstable_functions(con, path: Path) -> frozenset[str]:
    """The names of the functions the file's catalog marks not ``CONSISTENT``, read once
    per process for each state of the file (its own macros are part of the catalog; the
    read took longer than most statements, and a build opens a file once per template).

    A name is refused when none of its overloads is CONSISTENT: DuckDB 2.0.1 marks a few
    overloads of + and - (time-zone-aware timestamps) as consistent within a query only,
    and refusing the operators for them would refuse arithmetic itself.
    """
    stat = path.stat()
    key = (str(path.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if key not in _UNSTABLE:
        rows = con.execute(
            "SELECT lower(function_name) FROM duckdb_functions() "
            "GROUP BY lower(function_name) "
            "HAVING bool_and(stability IN ('VOLATILE', 'CONSISTENT_WITHIN_QUERY'))"
        ).fetchall()
        if len(_UNSTABLE) >= 64:  # files met by one process: bounded
            _UNSTABLE.clear()
        _UNSTABLE[key] = frozenset(name for (name,) in rows)
    return _UNSTABLE[key]


class Watchdog:
    """Calls ``interrupt`` when a statement has used its time limit, from one thread kept
    for the connection's life (started on first use).

    The limit counts CPU time, as SQLite's does (``executor.Limits``): the process's,
    since DuckDB runs a statement on its own threads. So a loaded machine, which stretches
    a statement's wall time, does not turn it into a timeout, and whether a pair is kept
    does not depend on what else the machine runs (a demo build beside a benchmark lost a
    template's pairs to this). The wall clock still bounds it at ``WALL_FACTOR`` times
    the limit, and is what the thread sleeps on: CPU time grows no faster than the wall
    clock on each thread, so the CPU clock is read only once the limit has passed on the
    wall clock, then again after the wall time the CPU could at least still need.

    Between statements the thread sleeps until the last deadline it knows, finds it
    disarmed or moved on, and sleeps again; it is woken only when it sleeps without a
    deadline, so statements back to back cost a lock each, not a thread switch. An
    interrupt that lands just after a statement ended does no harm: DuckDB clears it
    when the next statement starts.
    """

    def __init__(self, interrupt, cpu_clock=time.process_time):
        self._interrupt, self._cpu_clock = interrupt, cpu_clock
        self._cond = threading.Condition()
        self._statement: tuple[float, float, float] | None = None  # (wall, cpu, limit)
        self._check_at: float | None = None  # wall time of the next look at the clocks
        self._idle = True  # sleeping without a deadline: arm must wake it
        self._closed = False
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    def arm(self, started: float, limit_s: float) -> None:
        """Interrupt the statement begun at ``started`` (``time.monotonic()`` time) once
        it has used ``limit_s`` seconds of CPU time, unless disarmed first."""
        with self._cond:
            self._statement = (started, self._cpu_clock(), limit_s)
            self._check_at = started + limit_s
            if self._thread is None or self._pid != os.getpid():  # none yet, or forked
                self._thread, self._pid = (
                    threading.Thread(target=self._watch, daemon=True),
                    os.getpid(),
                )
                self._thread.start()
            elif self._idle:
                self._cond.notify()

    def disarm(self) -> None:
        """The statement ended: no interrupt for it."""
        with self._cond:
            self._statement = self._check_at = None

    def close(self) -> None:
        """Stop the thread."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        if self._thread is not None and self._pid == os.getpid():
            self._thread.join()

    def _watch(self) -> None:
        with self._cond:
            while not self._closed:
                self._idle = self._check_at is None
                if self._idle:
                    self._cond.wait()
                    continue
                left = self._check_at - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                left = self._cpu_left()
                if left > 0:
                    self._check_at = time.monotonic() + left
                    continue
                self._statement = self._check_at = None
                self._interrupt()

    def _cpu_left(self) -> float:
        """How much of the limit the statement has not used yet (0 once used up, or once
        the wall clock passed ``WALL_FACTOR`` times the limit)."""
        started, cpu_started, limit_s = self._statement
        if time.monotonic() - started >= WALL_FACTOR * limit_s:
            return 0.0
        return max(0.0, limit_s - (self._cpu_clock() - cpu_started))


def _batches(cursor):
    """The rows of ``cursor`` in batches of :data:`_BATCH`, in bounded memory; a batch
    short of it is the last (most results fit one batch: asking again for the empty one
    cost as much as the first)."""
    while True:
        batch = cursor.fetchmany(_BATCH)
        if batch:
            yield batch
        if len(batch) < _BATCH:
            return


def _called_functions(tree) -> set[str]:
    """The lower-cased names of every function a parse tree calls."""
    found, stack = set(), [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("function_name"), str):
                found.add(node["function_name"].lower())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


_KINDS = (
    # (words in DuckDB's message, our reason), first match wins
    (("interrupt",), "timeout"),
    (("read-only", "read only", "readonly"), "not-read-only"),
    (
        ("external access", "disabled by configuration", "lock_configuration", "locked"),
        "not-read-only",
    ),
    (("referenced column", "column with name"), "unknown-column"),
    (("table with name", "referenced table"), "unknown-table"),
    (("syntax error", "parser error"), "parse-error"),
    (("out of memory",), "too-big"),
)


def _classify(error: Exception, timed_out: bool) -> SQLError:
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    if timed_out:
        return SQLError("timeout", "query ran past its time limit")
    low = message.lower()
    for words, reason in _KINDS:
        if any(word in low for word in words):
            return SQLError(reason, message)
    if type(error).__name__ == "PermissionException":
        return SQLError("not-read-only", message)
    return SQLError("sql-error", message)


class DuckDBEngine(Engine):
    """DuckDB files (``.duckdb``), read-only."""

    name = "duckdb"
    dialect = "duckdb"
    title = "DuckDB"
    file_suffix = ".duckdb"

    def open_here(self, spec: SourceSpec, limits: Limits | None = None) -> DuckDBDatabase:
        """A :class:`DuckDBDatabase` on ``spec.path``, in this process."""
        if spec.path is None:
            raise SQLError("bad-source", f"{spec.db_id}: a duckdb source needs a file path")
        return DuckDBDatabase(spec.path, limits)

    def copy_from_sqlite(self, sqlite_path: Path, target: Path) -> SourceSpec:
        """``target`` written as a DuckDB copy of the SQLite file (see
        :func:`copy_sqlite_to_duckdb`)."""
        copy_sqlite_to_duckdb(sqlite_path, target)
        return SourceSpec(Path(target).stem, self.name, path=Path(target))

    def export_sqlite(self, ref, path: Path, tables: Iterable[str] | None = None) -> Path:
        """The DuckDB file's base tables written to ``path`` in rowid order (see
        :func:`export_to_sqlite`)."""
        return export_to_sqlite(ref.path, path, tables)

    def materialize_variant(self, ref, ops: list[dict], name: str, store) -> DuckDBDatabase:
        """A whole edited copy, ``<store.root>/<name>.duckdb`` (see
        :func:`materialize_duckdb`), reused while its sidecar says it was made from the
        same source bytes and ops."""
        target, sidecar = store.root / f"{name}.duckdb", store.root / f"{name}.duckdb.json"
        stamp = {"source_sha256": sha256_file(ref.path), "ops": ops}
        made = target.is_file() and sidecar.is_file()
        if not (made and read_json(sidecar) == json.loads(canonical_json(stamp))):
            store.root.mkdir(parents=True, exist_ok=True)
            materialize_duckdb(ref.path, ops, target)
            write_json(stamp, sidecar)
        return self.open(SourceSpec(ref.db_id, self.name, path=target), store.limits)


# --- a SQLite copy of a DuckDB file (what a release ships) ---------------------------


def export_to_sqlite(source: str | Path, path: str | Path, tables: Iterable[str] | None = None):
    """Write the base tables ``tables`` (every one when None) of the DuckDB file
    ``source`` to the SQLite file ``path``, rows in rowid order. ``source`` is opened
    read-only with external access off."""
    con = read_only_connection(source)
    try:
        schema = base_tables(con, Path(source).stem)
        chosen = chosen_tables(schema, tables, str(source))

        def rows(table: Table):
            names = ", ".join(quote_identifier(c.name) for c in table.columns)
            name = quote_identifier(table.name)
            cursor = con.execute(f"SELECT {names} FROM {name} ORDER BY rowid")
            return iter(lambda: cursor.fetchmany(EXPORT_BATCH), [])

        return write_sqlite(path, chosen, rows)
    finally:
        con.close()


def base_tables(con, db_id: str) -> DatabaseSchema:
    """The base tables (no views: a view has no rowid) of a DuckDB connection's ``main``."""
    schema = schema_from_information_schema(
        lambda sql, params: con.execute(sql, list(params)).fetchall(), db_id, "main"
    )
    views = {
        name.lower()
        for (name,) in con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'main' AND table_type = 'VIEW'"
        ).fetchall()
    }
    return DatabaseSchema(db_id, [t for t in schema.tables if t.name.lower() not in views])


# --- a DuckDB copy of a SQLite file -------------------------------------------------

# SQLite stores each value with its own kind whatever the column's declared type; a
# DuckDB column has one type. The copy gives each column the type of the values it
# holds (see :mod:`.types`), so every value comes back as SQLite gave it (dates stay
# text, as SQLite keeps them; a column mixing kinds becomes text).


COLUMN_TYPES = {INTEGER: "BIGINT", REAL: "DOUBLE", TEXT: "VARCHAR", BLOB: "BLOB"}  # by kind


def _column_type(con, table: str, column: str, declared: str) -> str:
    column, table = quote_identifier(column), quote_identifier(table)
    kinds = {kind for (kind,) in con.execute(f"SELECT DISTINCT typeof({column}) FROM {table}")}
    return COLUMN_TYPES[value_kind(declared, kinds) or TEXT]


def _create_sql(table, types: list[str], keys: bool) -> str:
    parts = [f"{quote_identifier(c.name)} {t}" for c, t in zip(table.columns, types, strict=True)]
    if keys and table.primary_key:
        parts.append(f"PRIMARY KEY ({', '.join(quote_identifier(c) for c in table.primary_key)})")
    if keys:
        for column, other, other_column in table.foreign_keys:
            target = f"{quote_identifier(other)} ({quote_identifier(other_column)})"
            parts.append(f"FOREIGN KEY ({quote_identifier(column)}) REFERENCES {target}")
    return f"CREATE TABLE {quote_identifier(table.name)} ({', '.join(parts)})"


def _creation_order(tables: list) -> list:
    """Tables with each one after those its foreign keys point at (a cycle keeps its
    remaining tables in name order)."""
    left = {t.name.lower(): t for t in tables}
    done: list = []
    while left:
        ready = [
            t
            for t in left.values()
            if all(
                o.lower() not in left or o.lower() == t.name.lower()
                for _c, o, _oc in t.foreign_keys
            )
        ] or list(left.values())
        for table in ready:
            done.append(table)
            left.pop(table.name.lower())
    return done


def copy_sqlite_to_duckdb(sqlite_path: Path, target: Path, base: Path | None = None) -> Path:
    """Write ``target``, a DuckDB file holding every table of the SQLite file (with
    ``base``, of the delta over its base) with its rows, primary and foreign keys.

    The SQLite file is read through its read-only opening; ``target`` is replaced. A
    table whose rows break its declared keys (SQLite does not enforce them) is copied
    without them. Views are not copied (their SQL would need transpiling one by one).
    """
    from answerable.builders import sqlite_files

    schema = DatabaseSchema.from_sqlite(sqlite_path, base=base)
    source = sqlite_files.connect(sqlite_path, base)
    views = {
        name.lower()
        for schema_name in (["main", sqlite_files.BASE_SCHEMA] if base else ["main"])
        for (name,) in source.execute(
            f"SELECT name FROM {schema_name}.sqlite_master WHERE type = 'view'"
        )
    }
    target = Path(target)
    target.unlink(missing_ok=True)
    duckdb = duckdb_module()
    out = duckdb.connect(str(target))
    try:
        for table in _creation_order([t for t in schema.tables if t.name.lower() not in views]):
            _copy_table(source, out, table, duckdb)
        out.execute("CHECKPOINT")
    finally:
        out.close()
        source.close()
    return target


def _copy_table(source, out, table, duckdb) -> None:
    import pyarrow as pa

    types = [_column_type(source, table.name, c.name, c.type) for c in table.columns]
    names = ", ".join(quote_identifier(c.name) for c in table.columns)
    rows = source.execute(f"SELECT {names} FROM {quote_identifier(table.name)}").fetchall()
    arrow = _arrow_types()
    arrays = {
        f"c{i}": pa.array([_as(kind, row[i]) for row in rows], type=arrow[kind]())
        for i, kind in enumerate(types)
    }
    frame = pa.table(arrays) if arrays else None
    for keys in (True, False):
        try:
            out.execute(_create_sql(table, types, keys))
            if frame is not None and rows:
                out.register("_answerable_rows", frame)
                name = quote_identifier(table.name)
                out.execute(f"INSERT INTO {name} SELECT * FROM _answerable_rows")
                out.unregister("_answerable_rows")
            return
        except duckdb.ConstraintException:
            out.execute(f"DROP TABLE IF EXISTS {quote_identifier(table.name)}")


def _as(kind: str, value):
    if value is None:
        return None
    if kind == "VARCHAR" and not isinstance(value, str):
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    if kind == "DOUBLE":
        return float(value)
    return value


def _arrow_types():
    import pyarrow as pa

    return {"BIGINT": pa.int64, "DOUBLE": pa.float64, "VARCHAR": pa.string, "BLOB": pa.binary}


# --- an edited copy of a DuckDB file (a counterfactual variant) ---------------------


def materialize_duckdb(source: Path, ops: list[dict], target: Path) -> Path:
    """Write ``target``, a DuckDB file holding every base table of ``source`` with
    ``ops`` applied (``source`` is only read).

    When no other table references an edited one (and the source has no write-ahead
    log), the source's bytes are copied and only the edited tables are made again; else
    every table is written anew (DuckDB refuses to drop or alter a referenced table)."""
    edits = ops_by_table(ops)
    con = read_only_connection(source)
    try:
        schema = base_tables(con, Path(source).stem)
        missing = set(edits) - {t.name.lower() for t in schema.tables}
        if missing:
            raise SQLError("materialize-failed", f"no such table: {', '.join(sorted(missing))}")
        referenced = {
            other.lower()
            for t in schema.tables
            for _c, other, _oc in t.foreign_keys
            if other.lower() != t.name.lower()
        }
        copy = not (set(edits) & referenced) and not Path(f"{source}.wal").exists()
        tables = [
            _read_table(con, table, edits.get(table.name.lower()))
            for table in _creation_order(schema.tables)
        ]
    finally:
        con.close()
    kept = _kept_columns(tables)
    if copy:
        edited = [t for t in tables if isinstance(t.rows, list)]
        return _write_file(edited, kept, ops, target, copied_from=source)
    return _write_file(tables, kept, ops, target)


def _read_table(con, table: Table, ops: list[dict] | None) -> EditedTable:
    """A table in rowid order: edited by ``ops`` when given, else as Arrow."""
    names = ", ".join(quote_identifier(c.name) for c in table.columns)
    name = quote_identifier(table.name)
    arrow = con.sql(f"SELECT {names} FROM {name} ORDER BY rowid").to_arrow_table()
    if not ops:
        return EditedTable(table, [(c.name, c.type) for c in table.columns], arrow)
    rows = [list(row) for row in zip(*(c.to_pylist() for c in arrow.columns), strict=True)]
    return edit_rows(table, rows, ops)


def _write_file(tables, kept, ops, target: Path, copied_from: Path | None = None) -> Path:
    """Write ``tables`` into the DuckDB file ``target``: a new file, or a copy of
    ``copied_from``'s bytes whose tables of the same names are dropped first (those
    made last first, as they may reference the others). A DuckDB error is
    ``materialize-failed``."""
    duckdb = duckdb_module()
    with atomic_path(target) as partial:
        if copied_from is not None:
            shutil.copyfile(copied_from, partial)
        out = duckdb.connect(str(partial))
        try:
            for edited in reversed(tables) if copied_from is not None else ():
                out.execute(f"DROP TABLE {quote_identifier(edited.table.name)}")
            for edited in tables:
                _write_duckdb_table(out, edited, kept)
            out.execute("CHECKPOINT")
        except duckdb.Error as error:
            raise SQLError("materialize-failed", f"{describe_ops(ops)}: {error}") from None
        finally:
            out.close()
    return target


def _kept_columns(tables: list[EditedTable]) -> set[tuple[str, str]]:
    return {(t.table.name.lower(), name.lower()) for t in tables for name, _ in t.columns}


def _write_duckdb_table(out, edited: EditedTable, kept: set[tuple[str, str]]) -> None:
    import pyarrow as pa

    table = edited.table
    parts = [f"{quote_identifier(name)} {kind}" for name, kind in edited.columns]
    if edited.primary_key():
        parts.append(f"PRIMARY KEY ({', '.join(map(quote_identifier, edited.primary_key()))})")
    for column, other, other_column in table.foreign_keys:
        target_kept = (other.lower(), other_column.lower()) in kept
        if column.lower() not in edited.dropped and target_kept:
            parts.append(
                "FOREIGN KEY ({}) REFERENCES {} ({})".format(
                    *map(quote_identifier, (column, other, other_column))
                )
            )
    out.execute(f"CREATE TABLE {quote_identifier(table.name)} ({', '.join(parts)})")
    if isinstance(edited.rows, pa.Table):  # an unedited table, as DuckDB gave it
        rows = edited.rows.rename_columns([f"c{i}" for i in range(edited.rows.num_columns)])
    elif edited.rows:
        rows = pa.table(
            {
                f"c{i}": _arrow_array(pa, [row[i] for row in edited.rows])
                for i in range(len(edited.columns))
            }
        )
    else:
        return
    out.register("_answerable_rows", rows)
    try:
        cast = ", ".join(f"CAST(c{i} AS {kind})" for i, (_, kind) in enumerate(edited.columns))
        name = quote_identifier(table.name)
        out.execute(f"INSERT INTO {name} SELECT {cast} FROM _answerable_rows")
    finally:
        out.unregister("_answerable_rows")


def _arrow_array(pa, values: list):
    """Values as an Arrow array; a column an edit left of mixed kinds (a text value
    written into numbers) goes as text, and the engine casts it to the column's type."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())
