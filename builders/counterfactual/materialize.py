"""Materialization: an edit script stored as a delta over its source database.

A variant is a DELTA: a small SQLite file holding only the tables the edit changed (the
rebuilt table without a dropped column, the table with its added columns and their data,
the table with its set values), opened as ``main`` with the source ATTACHed read-only
(:mod:`answerable.builders.sqlite_files`), so unqualified names resolve to the edited
table first and to the source for everything else. Storage grows with the edit, not with
the database.

The source is never opened for writing: the delta is made in a temporary file in the
variants folder, with the source attached read-only: the changed tables are copied (rows
with their rowids, their CREATE INDEX statements), the edit is applied to the copies in one
transaction, and the finished file is renamed to ``<variants>/<variant_id>.sqlite``. A
sidecar ``<variant_id>.json`` records the source's sha256, the layout and the ops, so a
later run reuses the file only when all match (a delta is only valid over the very base
it was made from). Within a run each distinct edit is materialized once, whatever the
number of items that share it.

Dependents:

- indexes of a copied table are copied with it, so the delta plans queries as a full
  copy would; indexes over a dropped column are dropped, as before;
- a view of the source is evaluated in the source (SQLite binds a view's names in its
  own database), so a view that reads a copied table is copied too, together with every
  table it reads (a view in ``main`` cannot read the attached base); if the edit leaves
  such a view broken, a full copy would drop it but the delta cannot hide the source's,
  so the edit fails (``materialize-failed``) rather than leak the dropped column;
- triggers are not copied: connections are read-only, so a trigger never fires, and the
  source's triggers stay on the source's tables.

Dropping a column uses ``ALTER TABLE ... DROP COLUMN`` when SQLite allows it (after
dropping the indexes over the column and setting views and triggers aside); when the
column sits in a primary key, a UNIQUE or foreign-key constraint, the table is rebuilt
from its own ``CREATE TABLE`` tree without the column, its rows copied with their rowids,
and its other indexes recreated. Views and triggers that still work come back.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sqlite3
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from answerable.builders.counterfactual import trees
from answerable.builders.counterfactual.fills import fill_values
from answerable.builders.counterfactual.script import variant_id
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.opening import source_uri
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sqlite_files import BASE_SCHEMA as BASE
from answerable.errors import SQLError
from answerable.ids import canonical_json, sha256_file
from answerable.records import atomic_path, read_json, write_json

DELTA, FULL = "delta", "full"  # layouts; the sidecar names it, so a file of the other is remade


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
        if target.is_file() and sidecar.is_file() and read_json(sidecar) == _plain(stamp):
            return target
        (materialize if self.layout == DELTA else materialize_full)(source, ops, target)
        write_json(stamp, sidecar)
        self.made += 1
        return target

    def _sha256(self, source: Path) -> str:
        if source not in self._sources:
            self._sources[source] = sha256_file(source)
        return self._sources[source]


def _plain(value):
    """``value`` as it reads back from JSON (tuples become lists)."""
    return json.loads(canonical_json(value))


def materialize(source: Path, ops: list[dict], target: Path) -> Path:
    """Write the delta of ``ops`` over ``source`` to ``target`` (``source`` is only read)."""
    with atomic_path(target) as partial:
        _edit(partial, ops, base=Path(source))
    return target


def materialize_full(source: Path, ops: list[dict], target: Path) -> Path:
    """Write a whole edited copy: ``source``'s bytes with ``ops`` applied, to ``target``."""
    with atomic_path(target) as partial:
        shutil.copyfile(source, partial)
        _edit(partial, ops)
    return target


def _edit(path: Path, ops: list[dict], base: Path | None = None) -> None:
    """Apply ``ops`` to the file at ``path`` in one transaction; with ``base``, the file
    starts empty and receives copies of the base's changed tables first."""
    con = sqlite3.connect(path, isolation_level=None)
    try:
        if base is not None:
            _start_delta(con, base)
        con.execute("PRAGMA journal_mode = DELETE")
        con.execute("PRAGMA synchronous = OFF")
        con.execute("PRAGMA foreign_keys = OFF")
        con.execute("BEGIN")
        views = _copy_changed(con, sorted({op["table"] for op in ops})) if base else []
        for op in ops:
            APPLY[op["op"]](con, op)
        _check_views_kept(con, views)
        con.execute("COMMIT")
        if base is not None:
            con.execute("VACUUM main")  # a dropped column leaves free space in the pages
    except (sqlite3.Error, SqlglotError, KeyError) as error:
        raise MaterializeError(f"{_describe(ops)}: {error}") from None
    finally:
        con.close()


def _start_delta(con: sqlite3.Connection, base: Path) -> None:
    """Give the empty delta its base's page size and text encoding (an attached file
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


# ---- the delta: copies of the changed tables -----------------------------------------


def _copy_changed(con: sqlite3.Connection, edited: list[str]) -> list[str]:
    """Copy the edited tables from the base into ``main``, with the views that read them
    and the tables those views read; return the names of the copied views."""
    objects = _base_objects(con)
    tables, views = _closure(objects, {t.lower() for t in edited})
    for name, (kind, _, sql) in objects.items():  # the base's order: dependencies first
        if kind == "table" and name in tables:
            _copy_table(con, objects[name][1], sql)
    for kind, owner, sql in objects.values():
        if kind == "index" and owner.lower() in tables:
            con.execute(sql)  # the base's own stored DDL; unqualified, so it lands in main
    copied_views = [n for n, (kind, _, _) in objects.items() if kind == "view" and n in views]
    for name in copied_views:
        con.execute(objects[name][2])
    return [objects[name][1] for name in copied_views]


def _base_objects(con: sqlite3.Connection) -> dict[str, tuple[str, str, str]]:
    """``{lower name: (type, name or owner table, sql)}`` of the base's tables, views and
    CREATE INDEX statements, in creation order."""
    query = (
        exp.select("type", "name", "tbl_name", "sql")
        .from_(exp.Table(this=exp.to_identifier("sqlite_master"), db=exp.to_identifier(BASE)))
        .where("sql IS NOT NULL AND type IN ('table', 'view', 'index')")
        .where(exp.column("name").like(exp.Literal.string("sqlite_%")).not_())
        .order_by("rowid")
    )
    found = {}
    for kind, name, owner, sql in con.execute(query.sql("sqlite")).fetchall():
        found[name.lower()] = (kind, owner if kind == "index" else name, sql)
    return found


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


def _copy_table(con: sqlite3.Connection, name: str, sql: str) -> None:
    """Create the table in ``main`` from the base's DDL and copy its rows with their rowids."""
    con.execute(sql)
    columns = [c for (c,) in _pragma(con, "table_info", name, "name")]
    source = exp.Table(this=trees.ident(name), db=exp.to_identifier(BASE))
    select = exp.select(exp.column("rowid"), *(trees.column(c) for c in columns)).from_(source)
    target = exp.Schema(
        this=exp.Table(this=trees.ident(name), db=exp.to_identifier("main")),
        expressions=[exp.to_identifier("rowid"), *(trees.ident(c) for c in columns)],
    )
    con.execute(exp.insert(select.order_by("rowid"), target).sql("sqlite"))


def _check_views_kept(con: sqlite3.Connection, views: list[str]) -> None:
    present = {n.lower() for (n,) in con.execute("SELECT name FROM main.sqlite_master")}
    broken = [view for view in views if view.lower() not in present]
    if broken:
        raise MaterializeError(
            f"the edit breaks view(s) {', '.join(broken)}: a delta cannot hide the source's "
            "copy, which would still show the edited data"
        )


# ---- dependents: indexes, views, triggers --------------------------------------------


def _pragma(con: sqlite3.Connection, pragma: str, argument: str, *columns: str) -> list[tuple]:
    """Rows of a table-valued pragma (``pragma_index_list('t')``)."""
    function = exp.Anonymous(this=f"pragma_{pragma}", expressions=[exp.Placeholder()])
    return con.execute(exp.select(*columns).from_(function).sql("sqlite"), (argument,)).fetchall()


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
    query = exp.select("sql").from_("sqlite_master").where(exp.column("name").eq(exp.Placeholder()))
    row = con.execute(query.sql("sqlite"), (name,)).fetchone()
    return (row[0] if row else "") or ""


def _mentions(sql: str, column: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(column)}(?![\w])", sql, re.IGNORECASE) is not None


def _set_aside(con: sqlite3.Connection, table: str) -> list[tuple[str, str, str, str]]:
    """Drop every view and every trigger (they may read the table); return them, with
    the table's CREATE INDEX statements, to restore after the edit."""
    query = (
        exp.select("type", "name", "tbl_name", "sql")
        .from_("sqlite_master")
        .where("sql IS NOT NULL AND type IN ('view', 'trigger', 'index')")
        .order_by("rowid")
    )
    saved = []
    for kind, name, owner, sql in con.execute(query.sql("sqlite")).fetchall():
        if kind == "index" and owner.lower() != table.lower():
            continue
        saved.append((kind, name, owner, sql))
        if kind != "index":
            con.execute(_drop(name, kind.upper()).sql("sqlite"))
    return saved


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
        exp.Schema(
            this=trees.table(temporary),
            expressions=[exp.to_identifier("rowid"), *(trees.ident(c) for c in kept)],
        ),
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
