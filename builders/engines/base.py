"""What every execution engine provides, and what engines share.

An engine (SQLite, DuckDB, PostgreSQL ...) opens one source read-only from a
:class:`SourceSpec` and gives a :class:`Database`: it reads its schema from the engine's
own catalog and runs one read-only statement at a time, under a time limit and a row
cap, returning the executor's :class:`~answerable.builders.executor.Result`.

The result hash does not depend on the engine. Every cell is first turned into what
SQLite would hand back for it (:func:`sqlite_cell`: None, int, float, str or bytes), and
then hashed by the executor's own :class:`~answerable.builders.executor.ResultHasher`,
so equal rows give equal hashes on every engine:

==========================  ===========================================================
engine value                hashed as
==========================  ===========================================================
None, int, float, str       itself (an integral float equals the int: 1 == 1.0)
bool                        the int 0 or 1 (SQLite has no boolean)
Decimal                     the int when integral, else the float; refused when the
                            float would not give the same number back (more than 15
                            significant digits, as a numeric(30,20) may hold)
date                        ``YYYY-MM-DD``
datetime                    ``YYYY-MM-DD HH:MM:SS`` with ``.ffffff`` when there are
                            microseconds (SQLite's own text form); one with a time zone
                            is first moved to UTC
time                        ``HH:MM:SS`` (``.ffffff`` likewise)
UUID                        its ``8-4-4-4-12`` text
bytes, bytearray, memoryview  bytes
timedelta (intervals)       refused: no SQLite form; cast to text or to a number
list, tuple (arrays)        refused: no SQLite form; unnest or cast to text
dict (JSON, structs, maps)  refused: key order and spacing differ between engines;
                            cast to text in the query
anything else               refused
==========================  ===========================================================

A refused cell raises :class:`SQLError` with reason ``unhashable-type``, naming the
column and the type: the item is rejected with that reason and the build goes on.

An engine is one module under ``builders/engines/`` and one line in
:data:`answerable.builders.engines.ENGINES`.
"""

from __future__ import annotations

import datetime as dt
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from answerable.builders.executor import Limits, Result
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.kernel.errors import SQLError

READ_ONLY_REASONS = (
    "not-read-only",
    "multiple-statements",
    "function-not-allowed",
)  # the reasons a write attempt is refused with, on every engine


@dataclass(frozen=True)
class SourceSpec:
    """Where one source database lives and which engine reads it.

    ``engine`` is a key of :data:`~answerable.builders.engines.ENGINES` (``sqlite`` when
    the recipe names none). File engines use ``path`` (SQLite: with ``base``, ``path``
    is a delta over that base). Server engines use ``dsn`` (a libpq connection string or
    URL; it may hold a password, so it is never printed: use :meth:`describe`) or
    ``dsn_env``, the environment variable holding it; ``namespace`` is the schema of the
    server database the source's tables live in (PostgreSQL: ``public`` when None);
    ``scratch`` names where counterfactual variants are made on the server (see
    :mod:`.variants`). ``db_id`` names the database in items and reports.
    """

    db_id: str
    engine: str = "sqlite"
    path: Path | None = None
    base: Path | None = None
    dsn: str | None = None
    dsn_env: str | None = None
    namespace: str | None = None
    scratch: str | None = None  # server engines: the prefix of counterfactual variant schemas
    keep_variants: bool = False  # server engines: variant schemas outlive the build

    def describe(self) -> str:
        """A printable name for messages: the engine and the file, never a DSN."""
        if self.path is not None:
            return f"{self.engine}:{self.path}"
        where = f"${self.dsn_env}" if self.dsn_env else "dsn"
        return f"{self.engine}:{where}" + (f" schema {self.namespace}" if self.namespace else "")


@runtime_checkable
class Database(Protocol):
    """One source opened read-only by an engine.

    ``dialect`` is the sqlglot dialect name the statements are written in. Everything
    a build step runs on a source goes through :meth:`execute`.
    """

    dialect: str

    def execute(
        self,
        sql: str,
        params: tuple | dict = (),
        ordered: bool | None = None,
        row_cap: int | None = None,
        byte_cap: int | None = None,
    ) -> Result:
        """Run one read-only statement (SELECT, WITH or VALUES) and return its Result.

        ``params`` are bound by the engine's driver (``?`` placeholders on SQLite and
        DuckDB; a tuple of values). ``ordered``: whether row order is part of the
        result (a top-level ORDER BY); None finds it by parsing ``sql`` in
        :attr:`dialect`. ``row_cap`` replaces the limits' ``row_cap`` (rows kept in
        ``Result.rows``; ``row_count`` and ``hash`` always cover every row);
        ``byte_cap`` replaces ``result_bytes`` for the kept rows. ``Result.dialect`` is
        :attr:`dialect`.

        The statement runs under the time limit ``limits.timeout_s`` and can change
        nothing: writes, DDL, a second statement, attaching or reading other files,
        loading extensions, changing settings and functions with side effects fail.
        Raises :class:`SQLError` with one of the executor's reason codes:
        ``not-read-only``, ``multiple-statements``, ``timeout``, ``unknown-column``,
        ``unknown-table``, ``parse-error``, ``function-not-allowed``, ``too-big``,
        ``result-too-large``, ``sql-error``, plus ``unhashable-type`` (see the module
        docstring).
        """
        ...

    def schema(self, db_id: str) -> DatabaseSchema:
        """The schema read from the engine's catalog: tables and views sorted by name,
        columns in their declared order with the engine's type name, primary keys in
        key order and foreign keys as ``(column, other_table, other_column)``."""
        ...

    def close(self) -> None:
        """Release the connection; the source is left exactly as it was."""
        ...


class Engine(ABC):
    """One kind of database: opens sources read-only.

    ``name`` is the registry key and the recipe's ``engine:`` value; ``dialect`` is the
    sqlglot dialect its SQL is written in (gold SQL is transpiled to it). What the rest of
    the toolkit needs to know of an engine it declares here, so that no other module
    names engines: ``title`` is how messages name it; a file engine gives the
    ``file_suffix`` of its databases (a source's ``<db_id><suffix>`` under
    ``databases:``); a server engine sets ``is_server`` (its sources name a server). An
    engine whose databases are SQLite files sets ``sqlite_files``: a release ships them
    as they are (every other engine's are written by :meth:`export_sqlite`), and the
    counterfactual step proves an edit on them directly (on every other engine it proves
    the edit on a SQLite twin and checks the engine's own variant against it).
    """

    name: ClassVar[str]
    dialect: ClassVar[str]
    title: ClassVar[str]
    file_suffix: ClassVar[str | None] = None
    is_server: ClassVar[bool] = False
    sqlite_files: ClassVar[bool] = False

    def open(self, spec: SourceSpec, limits: Limits | None = None) -> Database:
        """Open ``spec`` read-only under ``limits``, in the worker process that the
        kernel and the parent stop at the limits (see :mod:`answerable.builders.isolation`).

        Raises :class:`SQLError` as :meth:`open_here` does.
        """
        from answerable.builders.isolation import IsolatedDatabase

        return IsolatedDatabase((self.open_here, (spec,)), limits or Limits(), self.dialect)

    @abstractmethod
    def open_here(self, spec: SourceSpec, limits: Limits | None = None) -> Database:
        """Open ``spec`` read-only under ``limits`` in this process (the worker's side of
        :meth:`open`: one long engine step here passes the time limit).

        Raises :class:`SQLError` ``not-a-database`` when the file is missing or of
        another kind, ``unreachable`` when a server cannot be reached or refuses the
        login (the message never holds the password), ``bad-source`` when the spec
        lacks what this engine needs.
        """

    def copy_from_sqlite(self, sqlite_path: Path, target: Path) -> SourceSpec:
        """Load every table of a SQLite file into a new database of this engine and
        return its spec (a file engine writes ``target``; a server engine a scratch
        schema). Used by the cross-check and the tests; raises NotImplementedError
        where the engine cannot."""
        raise NotImplementedError(f"the {self.name} engine cannot load a SQLite copy")

    def copies_unavailable(self) -> tuple[str, str] | None:
        """``(why, fix)`` when :meth:`copy_from_sqlite` cannot be used here (a server
        engine whose server is not named), else None: a release asked to verify its gold
        SQL on this engine is then refused, or the check is skipped."""
        return None

    def export_sqlite(self, ref, path: Path, tables: Iterable[str] | None = None) -> Path:
        """Write the database of ``ref`` (a source's DatabaseRef read by this engine) to
        the SQLite file ``path``, only ``tables`` when given, rows in the order this
        engine reads them, so that a release ships a file any SQLite tool opens. Raises
        NotImplementedError where the engine cannot."""
        raise NotImplementedError(f"the {self.name} engine cannot export to SQLite")

    def materialize_variant(self, ref, ops: list[dict], name: str, store) -> Database:
        """The counterfactual variant ``name`` of the database of ``ref`` (a source's
        DatabaseRef read by this engine): a copy with the edit script ``ops`` applied
        (as :func:`~.edited_tables.edit_rows` applies it to a table's rows), made by
        this engine without writing the source, reused while it is as it was made, and
        opened read-only under ``store.limits``. ``store`` is the run's
        :class:`~.variants.EngineVariants`: files go under ``store.root``, writable
        connections through ``store.writer``. Raises :class:`SQLError`
        ``materialize-failed`` when the ops do not apply, NotImplementedError where the
        engine cannot make variants."""
        raise NotImplementedError(f"the {self.name} engine cannot make edited variants")

    def drop_variants(self, refs: list) -> list[str]:
        """Remove what :meth:`materialize_variant` left for ``refs`` (this engine's
        sources) that is not to be kept, when a build ends; return what was removed.
        Nothing by default: variants written as files stay in the work folder."""
        return []

    def reused_copy(self, db_id: str, target: Path) -> SourceSpec | None:
        """The spec of a copy :meth:`copy_from_sqlite` made earlier at ``target``, or
        None when there is none to reuse. A file engine's copy is the file; a server
        engine reuses none (it cannot tell that a schema is still as it was loaded)."""
        return SourceSpec(db_id, self.name, path=Path(target)) if Path(target).is_file() else None


# --- what engines share -------------------------------------------------------------


def _text_time(value: dt.datetime | dt.time) -> str:
    return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()


def sqlite_cell(value: Any, column: str = "?") -> Any:
    """``value`` as SQLite would return it (None, int, float, str or bytes).

    Raises :class:`SQLError` ``unhashable-type`` for values with no engine-independent
    form (see the module docstring for each type).

    >>> sqlite_cell(Decimal("2.50")), sqlite_cell(True), sqlite_cell(dt.date(2024, 1, 2))
    (2.5, 1, '2024-01-02')
    """
    kind = type(value)
    if value is None or kind in (str, int, float, bytes):
        return value
    if kind is bool:
        return int(value)
    if isinstance(value, Decimal):
        return _decimal_cell(value, column)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return _text_time(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return _text_time(value.replace(tzinfo=None))
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise SQLError("unhashable-type", f"column {column!r} returned {_type_words(value)}")


def _decimal_cell(value: Decimal, column: str) -> int | float:
    if not value.is_finite():
        return float(value)
    if value == value.to_integral_value():
        return int(value)
    as_float = float(value)
    if Decimal(repr(as_float)) != value.normalize():
        raise SQLError(
            "unhashable-type",
            f"column {column!r} returned the numeric {value}, which a float cannot hold "
            "(cast it to text, or round it to 15 significant digits)",
        )
    return as_float


_REFUSED_WORDS = {
    dt.timedelta: "an interval (cast it to text or to a number of seconds)",
    list: "an array (unnest it or cast it to text)",
    tuple: "an array (unnest it or cast it to text)",
    dict: "a JSON object, struct or map (cast it to text)",
}


def _type_words(value: Any) -> str:
    for kind, words in _REFUSED_WORDS.items():
        if isinstance(value, kind):
            return words
    return f"a value of type {type(value).__name__}, which the result hash does not know"


def sqlite_rows(batches: Iterable[list[tuple]], columns: list[str]) -> Iterable[tuple]:
    """Every row of ``batches`` with each cell turned by :func:`sqlite_cell`."""
    simple = (str, int, float, type(None))
    for batch in batches:
        for row in batch:
            if all(type(v) in simple for v in row):  # the common case, without a call per cell
                yield row
            else:
                yield tuple(sqlite_cell(v, c) for v, c in zip(row, columns, strict=True))


# information_schema is the one catalog both DuckDB and PostgreSQL keep (SQLite keeps
# none: its engine reads PRAGMAs). ``?`` marks the schema name.
_TABLES_SQL = (
    "SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
    "AND table_type IN ('BASE TABLE', 'VIEW')"
)
_COLUMNS_SQL = (
    "SELECT table_name, column_name, data_type FROM information_schema.columns "
    "WHERE table_schema = ? ORDER BY table_name, ordinal_position"
)
_KEYS_SQL = (
    "SELECT k.table_name, k.column_name, c.constraint_type, k.constraint_name, "
    "k.ordinal_position FROM information_schema.table_constraints c "
    "JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name "
    "AND k.constraint_schema = c.constraint_schema AND k.table_name = c.table_name "
    "WHERE c.table_schema = ? AND c.constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') "
    "ORDER BY k.table_name, k.constraint_name, k.ordinal_position"
)
_REFERENCES_SQL = (
    "SELECT r.constraint_name, u.table_name, u.column_name, u.ordinal_position "
    "FROM information_schema.referential_constraints r "
    "JOIN information_schema.key_column_usage u "
    "ON u.constraint_name = r.unique_constraint_name "
    "AND u.constraint_schema = r.unique_constraint_schema "
    "WHERE r.constraint_schema = ? ORDER BY r.constraint_name, u.ordinal_position"
)

Query = Callable[[str, tuple], list[tuple]]  # our own catalog SQL, run outside the gate


def schema_from_information_schema(query: Query, db_id: str, namespace: str) -> DatabaseSchema:
    """The :class:`DatabaseSchema` of ``namespace`` read from ``information_schema``.

    ``query(sql, params)`` runs our catalog SQL (``?`` placeholders; a server engine
    rewrites them to its own) and returns all rows. Foreign keys are paired column by
    column through ``referential_constraints``.
    """
    names = sorted(row[0] for row in query(_TABLES_SQL, (namespace,)))
    tables = {name: Table(name) for name in names}
    for table, column, kind in query(_COLUMNS_SQL, (namespace,)):
        if table in tables:
            tables[table].columns.append(Column(column, str(kind).upper()))
    targets: dict[str, list[tuple[str, str]]] = {}
    for name, table, column, _position in query(_REFERENCES_SQL, (namespace,)):
        targets.setdefault(name, []).append((table, column))
    seen: dict[str, int] = {}
    for table, column, kind, name, _position in query(_KEYS_SQL, (namespace,)):
        if table not in tables:
            continue
        if kind == "PRIMARY KEY":
            tables[table].primary_key.append(column)
            continue
        index = seen[name] = seen.get(name, -1) + 1
        pairs = targets.get(name, [])
        if index < len(pairs):
            tables[table].foreign_keys.append((column, *pairs[index]))
    return DatabaseSchema(db_id, [tables[name] for name in names])
