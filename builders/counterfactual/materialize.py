"""Materialization: an edit script stored as a column-level delta over its source database.

A variant is a DELTA, a small SQLite file holding only what the edit changed, column by
column, opened with its source ATTACHed read-only (:mod:`answerable.builders.sqlite_files`).
For each edited table it holds:

- the added or rewritten columns (``add_column``, ``set_value``) in a table of its own,
  ``answerable_delta_<table>``, keyed by the source row's rowid (``base_rowid``); nothing
  at all for a dropped column, nor for the columns the edit leaves alone;
- one row of the metadata table ``answerable_delta``: the merged table's ``CREATE TABLE``
  exactly as a whole edited copy has it (schema introspection reads keys and declared
  types from it) and the ``CREATE TEMP VIEW`` named like the table that shows it: the
  source's kept columns, joined on rowid to the delta's columns.

Why TEMP views: SQLite resolves an unqualified name in ``temp`` first, then ``main``, then
the attached files, so the view shadows the source's table; and only a temp view may read
an attached schema (a view stored in ``main`` may not). Opening a delta therefore creates
the views (our code, before the executor's gate is installed); the gate then lets user
SQL read them and nothing else.

Why whole columns, not just the changed cells: a view column that is a plain column
reference keeps its column's type affinity and collation, so ``WHERE x = '5'`` or
``ORDER BY name`` behave as on a whole copy; ``CASE``/``coalesce`` over a sparse patch
would lose both. A rewritten column costs one value per row of its table; a dropped one
costs nothing. Storage grows with the changed columns, not with the tables they sit in.

Dependents:

- a view of the source that reads an edited table (directly or through other views) is
  evaluated in the source (SQLite binds a view's names in its own database), so the
  delta stores it too, as a TEMP view with the source's own text, which binds to the
  merged table; if the edit breaks such a view, a whole copy would drop it but the delta
  cannot hide the source's, so the edit fails (``materialize-failed``) rather than leak
  the dropped column;
- an index of the whole copy over added or rewritten columns only is made on the delta's
  column table (so a query filtering on them is planned as on a copy); indexes over kept
  columns are the source's own; indexes over a dropped column go, as on a copy;
- triggers are not kept: connections are read-only, so a trigger never fires.

How: the edit is first applied to an empty copy of the edited tables' schema (with the
views reading them and the tables those read) in memory, by the very code that edits a
whole copy; that gives the merged definitions, the surviving indexes and views, and
every schema error a copy would raise. Then the delta is written in a temporary file in
the variants folder: the columns the ops read or write are copied from the source with
their rowids, the ops replayed on them, the columns that only fed them dropped, and the
file renamed to ``<variants>/<variant_id>.sqlite``. A sidecar ``<variant_id>.json``
records the source's sha256 and path, the layout and the ops, so a later run reuses the
file only when all match (a delta is only valid over the very base it was made from, and
a file of another layout is remade, not misread). Within a run each distinct edit is
materialized once, whatever the number of items that share it.

Limits of the merged view, against a whole copy: the same rows for every query (the
executor's hash of an unordered result is a multiset hash), but where SQL leaves the row
order free (no ORDER BY, or ties) the order may differ, because the planner sees the
base's indexes (an index over a dropped or rewritten column still exists there) and a
join; so may the rows a LIMIT without ORDER BY keeps. The build verifies every item on
the delta the release ships, so a release's stored results are the delta's. A view has
no rowid, so ``SELECT rowid FROM <edited table>`` works on a whole copy only.
``add_column`` and ``set_value`` need a rowid table (on a WITHOUT ROWID table they fail,
as they do on a copy); dropping columns works on any table.

Dropping a column on a whole copy uses ``ALTER TABLE ... DROP COLUMN`` when SQLite allows
it (after dropping the indexes over the column and setting views and triggers aside);
when the column sits in a primary key, a UNIQUE or foreign-key constraint, the table is
rebuilt from its own ``CREATE TABLE`` tree without the column, its rows copied with their
rowids, and its other indexes recreated. Views and triggers that still work come back.
"""

from __future__ import annotations

import functools
import json
import random
import re
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from answerable.builders.counterfactual import trees
from answerable.builders.counterfactual.fills import fill_values
from answerable.builders.counterfactual.script import variant_id
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.builders.source_files import source_uri
from answerable.builders.sqlite_files import BASE_SCHEMA as BASE
from answerable.builders.sqlite_files import DELTA_TABLE
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import canonical_json, sha256_file
from answerable.kernel.records import atomic_path, read_json, write_json

# Layouts; the sidecar names it, so a file of another layout (or of the earlier delta
# layout, "delta": whole copies of the edited tables) is remade.
DELTA, FULL = "column-delta", "full"
KEY = "base_rowid"  # the column of a delta's column table holding the source row's rowid
COLUMNS_PREFIX = f"{DELTA_TABLE}_"  # answerable_delta_<table>: an edited table's columns
_ROWID_NAMES = ("rowid", "_rowid_", "oid")  # a column of one of these names hides it


class MaterializeError(SQLError):
    """An edit script that cannot be applied to its database (reason ``materialize-failed``)."""

    def __init__(self, message: str):
        super().__init__("materialize-failed", message)


class VariantStore:
    """Edited variants of source databases, made once each and opened read-only: deltas
    over their source, or with ``full=True`` whole edited copies (for consumers whose
    tools cannot attach, and to prove the two give the same results).

    >>> store = VariantStore(workdir / "demo" / "variants")            # doctest: +SKIP
    >>> path = store.ensure("league", league_file, [drop_column("players", "name")])
    ...                                                                 # doctest: +SKIP
    """

    def __init__(self, root: Path, limits: Limits | None = None, full: bool = False):
        self.root = Path(root)
        self.limits = limits or Limits()
        self.layout = FULL if full else DELTA
        self.made = 0
        self._paths: dict[str, Path] = {}
        self._open: dict[str, ReadOnlyDatabase] = {}
        self._schemas: dict[str, DatabaseSchema] = {}
        self._sources: dict[Path, str] = {}

    def ensure(self, db_id: str, source: Path, ops: list[dict]) -> Path:
        """The variant's file, materialized now unless this run or an earlier one did."""
        name = variant_id(db_id, ops)
        if name not in self._paths:
            self._paths[name] = self._reuse_or_make(name, Path(source), ops)
        return self._paths[name]

    def database(self, db_id: str, source: Path, ops: list[dict]) -> ReadOnlyDatabase:
        """A read-only connection to the variant (kept open for the run)."""
        name = variant_id(db_id, ops)
        if name not in self._open:
            path = self.ensure(db_id, source, ops)
            self._open[name] = ReadOnlyDatabase(path, self.limits, base=self._base(source))
        return self._open[name]

    def schema(self, db_id: str, source: Path, ops: list[dict]) -> DatabaseSchema:
        """The variant's schema as SQLite reports it."""
        name = variant_id(db_id, ops)
        if name not in self._schemas:
            path = self.ensure(db_id, source, ops)
            base = self._base(source)
            self._schemas[name] = DatabaseSchema.from_sqlite(path, db_id, base=base)
        return self._schemas[name]

    def _base(self, source: Path) -> Path | None:
        """What a variant's file is opened over: its source for a delta, nothing for a copy."""
        return Path(source) if self.layout == DELTA else None

    def close(self) -> None:
        """Close every connection this store opened."""
        for database in self._open.values():
            database.close()
        self._open.clear()

    def _reuse_or_make(self, name: str, source: Path, ops: list[dict]) -> Path:
        target, sidecar = self.root / f"{name}.sqlite", self.root / f"{name}.json"
        stamp = {"source_sha256": self._sha256(source), "layout": self.layout, "ops": ops}
        where = {"source": str(source.resolve())}  # for opening the file later; not checked
        found = read_sidecar(sidecar) if target.is_file() else None
        if found is not None and {k: found.get(k) for k in stamp} == _plain(stamp):
            if found.get("source") != where["source"]:
                write_json({**stamp, **where}, sidecar)
            return target
        (materialize if self.layout == DELTA else materialize_full)(source, ops, target)
        write_json({**stamp, **where}, sidecar)
        self.made += 1
        return target

    def _sha256(self, source: Path) -> str:
        if source not in self._sources:
            self._sources[source] = sha256_file(source)
        return self._sources[source]


def variant_base(path: Path) -> Path | None:
    """The source a variant file in a variants folder is a delta over, as its sidecar
    records it; None for a whole copy or a file without a sidecar."""
    stamp = read_sidecar(Path(path).with_suffix(".json"))
    if stamp is None or stamp.get("layout") != DELTA or not stamp.get("source"):
        return None
    return Path(stamp["source"])


def read_sidecar(sidecar: Path) -> dict | None:
    """A variant's sidecar, or None when there is none or it is not a JSON object
    (damaged, or not ours): the variant is then made again rather than trusted."""
    if not sidecar.is_file():
        return None
    try:
        found = read_json(sidecar)
    except (ValueError, UnicodeDecodeError):
        return None
    return found if isinstance(found, dict) else None


def _plain(value):
    """``value`` as it reads back from JSON (tuples become lists)."""
    return json.loads(canonical_json(value))


def materialize(source: Path, ops: list[dict], target: Path) -> Path:
    """Write the delta of ``ops`` over ``source`` to ``target`` (``source`` is only read)."""
    source = Path(source)
    merged = _merged_schema(source, ops)
    with atomic_path(target) as partial:
        _write_delta(partial, source, ops, merged)
    return target


def materialize_full(source: Path, ops: list[dict], target: Path) -> Path:
    """Write a whole edited copy: ``source``'s bytes with ``ops`` applied, to ``target``."""
    with atomic_path(target) as partial:
        shutil.copyfile(source, partial)
        con = sqlite3.connect(partial, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode = DELETE")
            con.execute("PRAGMA synchronous = OFF")
            con.execute("PRAGMA foreign_keys = OFF")
            _apply(con, ops, [])
        except (sqlite3.Error, SqlglotError, KeyError) as error:
            raise MaterializeError(f"{_describe(ops)}: {error}") from None
        finally:
            con.close()
    return target


def _apply(con: sqlite3.Connection, ops: list[dict], views: list[str]) -> None:
    """Apply ``ops`` in one transaction; ``views`` must still be there after."""
    con.execute("BEGIN")
    for op in ops:
        APPLY[op["op"]](con, op)
    _check_views_kept(con, views)
    con.execute("COMMIT")


def _start_delta(con: sqlite3.Connection, base: Path) -> None:
    """Give an empty database its base's page size and text encoding (an attached file
    must share main's encoding), then attach the base read-only."""
    page_size, encoding = _layout_of(base)
    con.execute(f"PRAGMA page_size = {int(page_size)}")
    con.execute(f"PRAGMA encoding = '{encoding}'")
    con.execute(f"ATTACH DATABASE ? AS {BASE}", (source_uri(base),))


def _layout_of(source: Path) -> tuple[int, str]:
    """The source's page size and text encoding (an attached file must share the encoding)."""
    con = sqlite3.connect(source_uri(source), uri=True)
    try:
        return con.execute("PRAGMA page_size").fetchone()[0], con.execute(
            "PRAGMA encoding"
        ).fetchone()[0]
    finally:
        con.close()


def _describe(ops: list[dict]) -> str:
    return ", ".join(f"{op['op']} {op['table']}.{op['column']}" for op in ops)


# ---- the merged schema: the edit applied to empty copies ------------------------------


@dataclass
class MergedTable:
    """An edited table as a whole edited copy has it."""

    name: str
    definition: str  # its CREATE TABLE
    columns: list[str]  # in order, as SELECT * gives them
    indexes: list[str] = field(default_factory=list)  # its CREATE INDEX statements


@dataclass
class MergedSchema:
    """What an edit makes of the source's schema, for the tables and views it touches."""

    tables: list[MergedTable]
    views: list[tuple[str, str]]  # (name, CREATE VIEW) of the views reading an edited table


def _merged_schema(source: Path, ops: list[dict]) -> MergedSchema:
    """Apply ``ops`` to empty copies of the tables they edit (with the views that read
    them and the tables those views read) and read back what a whole copy would hold."""
    con = sqlite3.connect(":memory:", isolation_level=None)
    try:
        _start_delta(con, source)
        tables, views = _copy_schema(con, sorted({op["table"] for op in ops}))
        _apply(con, ops, views)
        merged = [_merged_table(con, name) for name in tables]
        return MergedSchema(merged, [(view, _sql_of(con, view)) for view in views])
    except (sqlite3.Error, SqlglotError, KeyError) as error:
        raise MaterializeError(f"{_describe(ops)}: {error}") from None
    finally:
        con.close()


def _copy_schema(con: sqlite3.Connection, edited: list[str]) -> tuple[list[str], list[str]]:
    """Create, empty, the edited tables from the base's DDL, with their indexes, the views
    that read them and the tables those views read; return the names of the edited
    tables and of the copied views (as the base spells them)."""
    objects = _base_objects(con)
    wanted = {t.lower() for t in edited}
    tables, views = _closure(objects, wanted)
    for name, (kind, owner, sql) in objects.items():  # the base's order: dependencies first
        copied = name in tables if kind == "table" else name in views
        if copied or (kind == "index" and owner.lower() in tables):
            con.execute(sql)  # the base's own stored DDL; unqualified, so it lands in main
    ordered = [name for name in objects if objects[name][0] == "table" and name in wanted]
    copied_views = [n for n, (kind, _, _) in objects.items() if kind == "view" and n in views]
    return [objects[n][1] for n in ordered], [objects[n][1] for n in copied_views]


def _merged_table(con: sqlite3.Connection, name: str) -> MergedTable:
    columns = [
        c for c, hidden in _pragma(con, "table_xinfo", name, "name", "hidden") if hidden != 1
    ]
    indexes = [sql for (sql,) in con.execute(_indexes_sql(name.lower()))]
    return MergedTable(name, _sql_of(con, name), columns, indexes)


@functools.lru_cache(maxsize=1024)
def _indexes_sql(low: str) -> str:
    """The CREATE INDEX statements of the table whose lower-case name is ``low``."""
    query = (
        exp.select("sql")
        .from_("sqlite_master")
        .where("type = 'index' AND sql IS NOT NULL")
        .where(exp.func("lower", exp.column("tbl_name")).eq(exp.Literal.string(low)))
        .order_by("rowid")
    )
    return query.sql("sqlite")


# ---- SQL trees for the edits ---------------------------------------------------------


def _rowid_values(con: sqlite3.Connection, table: str, column: str) -> list[tuple]:
    query = (
        exp.select(exp.column("rowid"), trees.column(column))
        .from_(trees.table(table))
        .order_by("rowid")
    )
    return con.execute(query.sql("sqlite")).fetchall()


def _update_by_rowid(con: sqlite3.Connection, table: str, column: str, rows: list[tuple]) -> None:
    """``rows`` of ``(value, rowid)``."""
    update = exp.Update(
        this=trees.table(table),
        expressions=[exp.EQ(this=trees.column(column), expression=exp.Placeholder())],
        where=exp.Where(this=exp.column("rowid").eq(exp.Placeholder())),
    )
    con.executemany(update.sql("sqlite"), rows)


def _declared(declared_type: str) -> exp.DataType | None:
    """The type exactly as declared: SQLite's affinity comes from its words."""
    if not declared_type:
        return None
    return exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=declared_type)


# ---- the ops -------------------------------------------------------------------------


def _add_column(con: sqlite3.Connection, op: dict) -> None:
    definition = exp.ColumnDef(this=trees.ident(op["column"]), kind=_declared(op["type"]))
    alter = exp.Alter(this=trees.table(op["table"]), kind="TABLE", actions=[definition])
    con.execute(alter.sql("sqlite"))
    rows = _rowid_values(con, op["table"], op["source"])
    values = fill_values(op["fill"], [value for _, value in rows], op["seed"])
    rowids = [rowid for rowid, _ in rows]
    _update_by_rowid(con, op["table"], op["column"], list(zip(values, rowids, strict=True)))


def _set_value(con: sqlite3.Connection, op: dict) -> None:
    rowids = [rowid for rowid, _ in _rowid_values(con, op["table"], op["column"])]
    chosen = random.Random(op["seed"]).sample(rowids, min(op["rows"], len(rowids)))
    _update_by_rowid(con, op["table"], op["column"], [(op["value"], r) for r in sorted(chosen)])


def _drop_column(con: sqlite3.Connection, op: dict) -> None:
    table, column = op["table"], op["column"]
    set_aside = _set_aside(con, table)
    for name in _indexes_over(con, table, column):
        con.execute(_drop(name, "INDEX").sql("sqlite"))
    alter = exp.Alter(this=trees.table(table), kind="TABLE", actions=[_drop(column, "COLUMN")])
    try:
        con.execute(alter.sql("sqlite"))
    except sqlite3.OperationalError:
        _rebuild_without(con, table, column)
    _restore(con, set_aside, table, column)


def _drop(name: str, kind: str, exists: bool = False) -> exp.Drop:
    target = trees.column(name) if kind == "COLUMN" else trees.table(name)
    return exp.Drop(tables=[target], kind=kind, exists=exists)


APPLY = {"add_column": _add_column, "drop_column": _drop_column, "set_value": _set_value}


# ---- the delta file: changed columns and the metadata that shows them ----------------


def _write_delta(path: Path, source: Path, ops: list[dict], merged: MergedSchema) -> None:
    """Write the delta: per edited table its changed columns and a metadata row, per
    view reading an edited table a metadata row; then compact the file."""
    con = sqlite3.connect(path, isolation_level=None)
    try:
        _start_delta(con, source)
        con.execute("PRAGMA journal_mode = DELETE")
        con.execute("PRAGMA synchronous = OFF")
        con.execute("BEGIN")
        _check_free_names(con, merged)
        con.execute(_metadata_table_sql())
        for table in merged.tables:
            mine = [op for op in ops if op["table"].lower() == table.name.lower()]
            columns_table, stored = _write_columns(con, table, mine)
            view = _table_view(con, table, columns_table, stored)
            _record(con, table.name, "table", table.definition, columns_table, view)
        for name, sql in merged.views:
            _record(con, name, "view", sql, None, _temporary(sql))
        con.execute("COMMIT")
        con.execute("VACUUM main")  # dropped helper columns leave free pages
    except (sqlite3.Error, SqlglotError, KeyError) as error:
        raise MaterializeError(f"{_describe(ops)}: {error}") from None
    finally:
        con.close()


@functools.cache
def _metadata_table_sql() -> str:
    """``answerable_delta``: see :class:`answerable.builders.sqlite_files.DeltaEntry`."""
    columns = [
        exp.ColumnDef(
            this=exp.to_identifier("seq"),
            kind=exp.DataType.build("INTEGER"),
            constraints=[exp.ColumnConstraint(kind=exp.PrimaryKeyColumnConstraint())],
        ),
        *(
            exp.ColumnDef(this=exp.to_identifier(name), kind=exp.DataType.build("TEXT"))
            for name in ("name", "type", "definition", "columns_table", "view")
        ),
    ]
    schema = exp.Schema(this=exp.to_table(DELTA_TABLE), expressions=columns)
    return exp.Create(this=schema, kind="TABLE").sql("sqlite")


def _record(con: sqlite3.Connection, *values: str | None) -> None:
    con.execute(_record_sql(), values)


@functools.cache
def _record_sql() -> str:
    names = ("name", "type", "definition", "columns_table", "view")
    values_row = exp.values([tuple(exp.Placeholder() for _ in names)])
    return exp.insert(values_row, exp.to_table(DELTA_TABLE), columns=names).sql("sqlite")


def _check_free_names(con: sqlite3.Connection, merged: MergedSchema) -> None:
    """The delta's own tables must not shadow one of the base's (main comes first)."""
    ours = {DELTA_TABLE} | {(COLUMNS_PREFIX + t.name).lower() for t in merged.tables}
    query = exp.select("name").from_(
        exp.Table(this=exp.to_identifier("sqlite_master"), db=exp.to_identifier(BASE))
    )
    taken = sorted(n for (n,) in con.execute(query.sql("sqlite")) if n.lower() in ours)
    if taken:
        raise MaterializeError(
            f"the source has a table named {', '.join(taken)}, a name a delta uses for itself"
        )


def _write_columns(
    con: sqlite3.Connection, table: MergedTable, ops: list[dict]
) -> tuple[str | None, list[str]]:
    """Store the columns the ops add or rewrite, keyed by the base's rowid, in the table
    ``answerable_delta_<table>``; return its name and the stored columns (None and none
    when the ops only drop columns)."""
    if all(op["op"] == "drop_column" for op in ops):
        return None, []
    name = COLUMNS_PREFIX + table.name
    held = _copy_read_columns(con, table.name, name, ops)
    written: set[str] = set()
    for op in ops:
        column = op["column"].lower()
        if op["op"] == "drop_column":
            if column in held:
                _drop_held(con, name, held.pop(column))
            written.discard(column)
            continue
        APPLY[op["op"]](con, {**op, "table": name})
        held[column] = op["column"]
        written.add(column)
    stored = [c for c in table.columns if c.lower() in written]
    for column in [c for c in held.values() if c.lower() not in written]:
        _drop_held(con, name, column)  # read by an op, not changed: the base has it
    if not stored:
        con.execute(_drop(name, "TABLE").sql("sqlite"))
        return None, []
    _index_stored(con, table, name, stored)
    return name, stored


def _copy_read_columns(con: sqlite3.Connection, table: str, name: str, ops: list[dict]) -> dict:
    """Create the column table with the base columns the ops read or rewrite, each with
    its declared type and collation, filled with their values and rowids; return
    ``{lower name: name}`` of the columns it holds."""
    declared = {c.lower(): (c, kind) for c, kind in _base_columns(con, table)}
    read = [
        op["source"] if op["op"] == "add_column" else op["column"]
        for op in ops
        if op["op"] != "drop_column"
    ]
    copied = list(dict.fromkeys(declared[c.lower()][0] for c in read if c.lower() in declared))
    if KEY in {c.lower() for c in copied}:
        raise MaterializeError(f"{table}.{KEY}: a column name a delta uses for itself")
    definitions = _column_definitions(con, table, {c: declared[c.lower()][1] for c in copied})
    key = exp.ColumnDef(
        this=trees.ident(KEY),
        kind=exp.DataType.build("INTEGER"),
        constraints=[exp.ColumnConstraint(kind=exp.PrimaryKeyColumnConstraint())],
    )
    create = exp.Create(
        this=exp.Schema(this=_in("main", name), expressions=[key, *definitions]), kind="TABLE"
    )
    con.execute(create.sql("sqlite"))
    rowid = exp.column(_rowid_name(con, table), table="b", quoted=True)
    select = (
        exp.select(rowid, *(trees.column(c, "b") for c in copied))
        .from_(_in(BASE, table, "b"))
        .order_by(rowid)
    )
    columns = [trees.ident(c) for c in (KEY, *copied)]
    con.execute(exp.insert(select, _in("main", name), columns=columns).sql("sqlite"))
    return {c.lower(): c for c in copied}


def _base_columns(con: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    """``(name, declared type)`` of the base table's columns as ``SELECT *`` gives them."""
    found = _pragma(con, "table_xinfo", table, "name", "type", "hidden", schema=BASE)
    return [(name, kind) for name, kind, hidden in found if hidden != 1]


def _rowid_name(con: sqlite3.Connection, table: str) -> str:
    """The first of rowid, _rowid_, oid that no column of the base table hides."""
    names = {c.lower() for c, _ in _base_columns(con, table)}
    for candidate in _ROWID_NAMES:
        if candidate not in names:
            return candidate
    raise MaterializeError(f"{table}: columns named rowid, _rowid_ and oid hide its rowid")


def _column_definitions(con: sqlite3.Connection, table: str, kinds: dict[str, str]) -> list:
    """Column definitions with each column's declared type and its COLLATE clause from
    the base's CREATE TABLE (affinity and collation decide comparisons)."""
    collations: dict[str, exp.Expr] = {}
    try:
        create = sqlglot.parse_one(_base_sql_of(con, table), read="sqlite")
        for node in create.find_all(exp.ColumnDef):
            for constraint in node.args.get("constraints") or []:
                if isinstance(constraint.args.get("kind"), exp.CollateColumnConstraint):
                    collations[node.name.lower()] = constraint.copy()
    except SqlglotError:
        pass  # no collation known: SQLite's default, BINARY
    return [
        exp.ColumnDef(
            this=trees.ident(c),
            kind=_declared(kind),
            constraints=[collations[c.lower()]] if c.lower() in collations else [],
        )
        for c, kind in kinds.items()
    ]


def _base_sql_of(con: sqlite3.Connection, name: str) -> str:
    row = con.execute(_base_sql_of_sql(), (name,)).fetchone()
    return (row[0] if row else "") or ""


@functools.cache
def _base_sql_of_sql() -> str:
    query = (
        exp.select("sql")
        .from_(exp.Table(this=exp.to_identifier("sqlite_master"), db=exp.to_identifier(BASE)))
        .where(exp.column("name").eq(exp.Placeholder()))
    )
    return query.sql("sqlite")


def _drop_held(con: sqlite3.Connection, name: str, column: str) -> None:
    alter = exp.Alter(this=_in("main", name), kind="TABLE", actions=[_drop(column, "COLUMN")])
    con.execute(alter.sql("sqlite"))


def _index_stored(
    con: sqlite3.Connection, table: MergedTable, name: str, stored: list[str]
) -> None:
    """Make, on the column table, each index of the whole copy whose columns are all
    stored there (its name prefixed like the table's)."""
    wanted = {c.lower() for c in stored}
    for sql in table.indexes:
        index = sqlglot.parse_one(sql, read="sqlite")
        reads = {c.name.lower() for c in index.find_all(exp.Column)}
        if not reads or not reads <= wanted:
            continue
        index.this.set("this", trees.ident(COLUMNS_PREFIX + index.this.name))
        index.this.set("table", trees.table(name))
        con.execute(index.sql("sqlite"))


def _table_view(
    con: sqlite3.Connection, table: MergedTable, columns_table: str | None, stored: list[str]
) -> str:
    """``CREATE TEMP VIEW <table>``: the base's kept columns and the delta's stored ones,
    in the merged table's order, joined on the base's rowid."""
    mine = {c.lower() for c in stored}
    shown = [
        exp.alias_(trees.column(c, "d" if c.lower() in mine else "b"), trees.ident(c))
        for c in table.columns
    ]
    select = exp.select(*shown).from_(_in(BASE, table.name, "b"))
    if columns_table:
        rowid = exp.column(_rowid_name(con, table.name), table="b", quoted=True)
        on = trees.column(KEY, "d").eq(rowid)
        select = select.join(_in("main", columns_table, "d"), on=on)
    temporary = exp.Properties(expressions=[exp.TemporaryProperty()])
    create = exp.Create(
        this=trees.table(table.name), kind="VIEW", expression=select, properties=temporary
    )
    return create.sql("sqlite")


def _temporary(view_sql: str) -> str:
    """A source view's stored ``CREATE VIEW`` as ``CREATE TEMP VIEW``, its text kept.

    SQLite stores every CREATE statement normalized so that it begins with exactly
    ``CREATE VIEW `` (keywords upper-cased, TEMP and the schema name removed, one space),
    so the keyword goes in there; the body is the source's own text, verbatim, because a
    round trip through a parser could change what the view means.
    """
    prefix = "CREATE VIEW "
    if not view_sql.startswith(prefix):
        raise MaterializeError(f"a view's stored SQL does not start with {prefix!r}")
    return "CREATE TEMP VIEW " + view_sql[len(prefix) :]


def _in(schema: str, name: str, alias: str | None = None) -> exp.Table:
    """``schema."name" [AS alias]``."""
    table = exp.Table(this=trees.ident(name), db=exp.to_identifier(schema))
    if alias:
        table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return table


# ---- dependents: what an edit touches beyond its table ----------------------------


def _base_objects(con: sqlite3.Connection) -> dict[str, tuple[str, str, str]]:
    """``{lower name: (type, name or owner table, sql)}`` of the base's tables, views and
    CREATE INDEX statements, in creation order."""
    found = {}
    for kind, name, owner, sql in con.execute(_base_objects_sql()).fetchall():
        found[name.lower()] = (kind, owner if kind == "index" else name, sql)
    return found


@functools.cache
def _base_objects_sql() -> str:
    query = (
        exp.select("type", "name", "tbl_name", "sql")
        .from_(exp.Table(this=exp.to_identifier("sqlite_master"), db=exp.to_identifier(BASE)))
        .where("sql IS NOT NULL AND type IN ('table', 'view', 'index')")
        .where(exp.column("name").like(exp.Literal.string("sqlite_%")).not_())
        .order_by("rowid")
    )
    return query.sql("sqlite")


def _closure(objects: dict, edited: set[str]) -> tuple[set[str], set[str]]:
    """The tables to copy and the views that must come with them (lower-case names)."""
    missing = edited - {n for n, (kind, _, _) in objects.items() if kind == "table"}
    if missing:
        raise MaterializeError(f"no such table in the source: {', '.join(sorted(missing))}")
    reads = {
        name: _names_read(sql, objects)
        for name, (kind, _, sql) in objects.items()
        if kind == "view"
    }
    tables, views = set(edited), set()
    grew = True
    while grew:
        grew = False
        for view, names in reads.items():
            if view not in views and names & (tables | views):
                views.add(view)
                tables |= {n for n in names if objects.get(n, ("",))[0] == "table"}
                grew = True
    return tables, views


def _names_read(sql: str, objects: dict) -> set[str]:
    """Lower-case names of the tables and views a view's SQL reads; when sqlglot cannot
    parse it, every name it mentions (copying a table too many only costs bytes)."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except SqlglotError:
        return {name for name in objects if _mentions(sql, name)}
    return {t.name.lower() for t in tree.find_all(exp.Table)}


def _check_views_kept(con: sqlite3.Connection, views: list[str]) -> None:
    present = {n.lower() for (n,) in con.execute("SELECT name FROM main.sqlite_master")}
    broken = [view for view in views if view.lower() not in present]
    if broken:
        raise MaterializeError(
            f"the edit breaks view(s) {', '.join(broken)}: a delta cannot hide the source's "
            "copy, which would still show the edited data"
        )


# ---- dependents: indexes, views, triggers --------------------------------------------


def _pragma(
    con: sqlite3.Connection, pragma: str, argument: str, *columns: str, schema: str | None = None
) -> list[tuple]:
    """Rows of a table-valued pragma (``pragma_index_list('t')``), of one ``schema``'s
    object when given."""
    arguments = (argument,) if schema is None else (argument, schema)
    return con.execute(_pragma_sql(pragma, len(arguments), columns), arguments).fetchall()


@functools.lru_cache(maxsize=64)
def _pragma_sql(pragma: str, arguments: int, columns: tuple[str, ...]) -> str:
    function = exp.Anonymous(
        this=f"pragma_{pragma}", expressions=[exp.Placeholder() for _ in range(arguments)]
    )
    return exp.select(*columns).from_(function).sql("sqlite")


def _indexes_over(con: sqlite3.Connection, table: str, column: str) -> list[str]:
    """Indexes made by CREATE INDEX that read the column (by name or in an expression)."""
    found = []
    for name, origin in _pragma(con, "index_list", table, "name", "origin"):
        if origin != "c":
            continue
        keys = [key for (key,) in _pragma(con, "index_xinfo", name, "name")]
        by_name = column.lower() in {(key or "").lower() for key in keys}
        by_expression = None in keys and _mentions(_sql_of(con, name), column)
        if by_name or by_expression:
            found.append(name)
    return found


def _sql_of(con: sqlite3.Connection, name: str) -> str:
    row = con.execute(_sql_of_sql(), (name,)).fetchone()
    return (row[0] if row else "") or ""


@functools.cache
def _sql_of_sql() -> str:
    query = exp.select("sql").from_("sqlite_master").where(exp.column("name").eq(exp.Placeholder()))
    return query.sql("sqlite")


def _mentions(sql: str, column: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(column)}(?![\w])", sql, re.IGNORECASE) is not None


def _set_aside(con: sqlite3.Connection, table: str) -> list[tuple[str, str, str, str]]:
    """Drop every view and every trigger (they may read the table); return them, with
    the table's CREATE INDEX statements, to restore after the edit."""
    saved = []
    for kind, name, owner, sql in con.execute(_set_aside_sql()).fetchall():
        if kind == "index" and owner.lower() != table.lower():
            continue
        saved.append((kind, name, owner, sql))
        if kind != "index":
            con.execute(_drop(name, kind.upper()).sql("sqlite"))
    return saved


@functools.cache
def _set_aside_sql() -> str:
    query = (
        exp.select("type", "name", "tbl_name", "sql")
        .from_("sqlite_master")
        .where("sql IS NOT NULL AND type IN ('view', 'trigger', 'index')")
        .order_by("rowid")
    )
    return query.sql("sqlite")


def _restore(con: sqlite3.Connection, saved: list[tuple], table: str, column: str) -> None:
    """Recreate what was set aside and still makes sense without the column."""
    present = {n for (n,) in con.execute("SELECT name FROM sqlite_master")}
    for kind, name, owner, sql in saved:
        if name in present:
            continue
        if (
            kind in ("index", "trigger")
            and owner.lower() == table.lower()
            and _mentions(sql, column)
        ):
            continue
        try:
            con.execute(sql)  # the database's own stored DDL, re-run verbatim
            if kind == "view":
                con.execute(exp.select("*").from_(trees.table(name)).limit(0).sql("sqlite"))
        except sqlite3.Error:
            if kind == "view":
                con.execute(_drop(name, "VIEW", exists=True).sql("sqlite"))
            continue


def _rebuild_without(con: sqlite3.Connection, table: str, column: str) -> None:
    """Rebuild ``table`` without ``column`` from its own CREATE TABLE tree."""
    info = _pragma(con, "table_info", table, "name", "type")
    kept = [name for name, _ in info if name.lower() != column.lower()]
    create = sqlglot.parse_one(_sql_of(con, table), read="sqlite")
    temporary = f"{table}__rebuild"
    _strip_column(create, column, dict(info))
    create.this.set("this", trees.table(temporary))
    con.execute(create.sql("sqlite"))
    columns = [exp.column("rowid"), *(trees.column(c) for c in kept)]
    insert = exp.insert(
        exp.select(*columns).from_(trees.table(table)),
        trees.table(temporary),
        columns=[exp.to_identifier("rowid"), *(trees.ident(c) for c in kept)],
    )
    con.execute(insert.sql("sqlite"))
    con.execute(_drop(table, "TABLE").sql("sqlite"))
    rename = exp.Alter(
        this=trees.table(temporary),
        kind="TABLE",
        actions=[exp.AlterRename(this=trees.table(table))],
    )
    con.execute(rename.sql("sqlite"))


def _strip_column(create: exp.Create, column: str, types: dict[str, str]) -> None:
    """Remove the column's definition and every constraint that names it; keep each other
    column's declared type word for word."""
    low = column.lower()
    for node in list(create.this.expressions):
        if isinstance(node, exp.ColumnDef):
            if node.name.lower() == low:
                node.pop()
                continue
            node.set("kind", _declared(types.get(node.name, "")))
            for constraint in list(node.args.get("constraints") or []):
                if _names_column(constraint, low):
                    constraint.pop()
        elif _names_column(node, low):
            node.pop()


def _names_column(node: exp.Expr, low: str) -> bool:
    return any(i.name.lower() == low for i in node.find_all(exp.Identifier))
