"""Counterfactual edits of DuckDB and PostgreSQL sources: the same edit scripts, the
same labels and readings as on SQLite, proved by execution on the engine's own variant.

The counterfactual step's proposals and checks read SQLite (rowids, ``sqlite_master``,
readings written in SQLite's dialect, deltas over a SQLite base). For a source on another
engine they therefore run on its **SQLite twin**: every table of the source exported by
the engine (:func:`answerable.builders.engines.export_source`, rows in the order the
engine's variant reads them), under ``<workdir>/<dataset>/twins/``, with each parent's
gold SQL written for SQLite by sqlglot. Every item the step makes there is then **proved
on the engine** (:func:`prove`): the edit script is applied by the engine
(:class:`EngineVariants`) and

- the parent's gold SQL, in the engine's dialect, must fail on the engine's variant
  exactly when it fails on the twin's, and give the same result hash when it runs (an
  answerable control carries the engine's result);
- each reading, written in the engine's dialect by sqlglot, must give the hash the
  twin's reading gave (the item stores the engine's SQL and rows).

An item that fails a proof is an ``engine-disagrees`` reject naming what differed. The
item then carries the engine's dialect and SQL, and its id hashes that SQL (as the
engine's seed and template items do).

Variants on each engine:

- **DuckDB**: a whole edited copy, ``<workdir>/<dataset>/variants/<variant>.duckdb``,
  written fresh from the source's tables (DuckDB refuses ``ALTER TABLE`` on a table
  others reference, so each table is created with its edited columns, the keys that
  still hold and its rows in rowid order), reused while a sidecar says it was made from
  the same source bytes and ops. The source file is only read.
- **PostgreSQL**: the edited tables only, copied into the scratch schema the source
  names (``scratch_schema``; never the source schema) as ``v<hash of the variant id>_
  <table>``, in one transaction (a worker racing another for the same variant waits and
  reuses its copies), each marked by a comment. A variant is read through a connection
  whose session holds ``CREATE TEMP VIEW <table> AS SELECT * FROM <scratch>.<copy>`` for
  each edited table: PostgreSQL looks names up in the session's temporary schema before
  the search path (the source schema), so the edited tables hide the source's and the
  others are the source's, as a SQLite delta's TEMP views do. So the role needs CREATE
  on the scratch schema only (a schema per variant would need CREATE on the database)
  and TEMP (PostgreSQL grants it to everyone by default). The copies are dropped when
  the build ends unless the source says ``keep_variants: true``. The source schema is
  only read.

Fills and seeded row choices see the rows in rowid order on DuckDB and in physical
(``ctid``) order on PostgreSQL (:func:`.postgres_tables.row_order`): the twin and a
release's exported file hold them in that same order, so the values equal the twin's,
and a SQLite build's for data copied from SQLite (both keep SQLite's rowid order).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from answerable.builders import sqlkit
from answerable.builders.engines import export_source
from answerable.builders.engines.base import sqlite_cell
from answerable.builders.executor import Limits, Result
from answerable.builders.schema import DatabaseSchema, Table, quote_identifier
from answerable.errors import SQLError
from answerable.ids import content_hash, item_id, sha256_file
from answerable.records import atomic_path, read_json, write_json

TWINS = "twins"  # the folder of the SQLite twins, under <workdir>/<dataset>/
DISAGREES = "engine-disagrees"  # the reject reason of an item its engine does not prove
VARIANT_COMMENT = "answerable counterfactual variant"  # marks the schemas we may drop
READING_ROWS = 20  # rows kept per reading, as the step keeps them


def on_engine(ref) -> bool:
    """Whether ``ref``'s database is read by an engine other than SQLite and can be
    edited there (a server source names its scratch schema)."""
    if ref is None or not ref.runs or ref.engine == "sqlite":
        return False
    return ref.server is None or bool(ref.server.scratch)


def unedited(ref) -> str | None:
    """Why edits of ``ref``'s database cannot be made, or None."""
    if ref is not None and ref.server is not None and not ref.server.scratch:
        return (
            f"{ref.db_id} is on a {ref.engine} server whose source names no scratch schema "
            "for its variants (fix: add scratch_schema: <schema> to the source; see the README)"
        )
    return None


# ---- the SQLite twin -------------------------------------------------------------------


def twin_databases(databases: dict, root: Path, used: set[str]) -> dict:
    """``databases`` with each DuckDB or server database in ``used`` (the parents' db_ids) replaced
    by its SQLite twin (a SQLite DatabaseRef). A DuckDB twin is reused while its sidecar
    records the source's sha256; a server's is exported anew (nothing tells that the
    server's data is as it was). Call it before workers fork: each twin is written once."""
    from answerable.builders.sources.common import DatabaseRef

    twins = dict(databases)
    for db_id, ref in sorted(databases.items()):
        if db_id not in used or not on_engine(ref):
            continue
        path = Path(root) / TWINS / f"{db_id}.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = {"source_sha256": sha256_file(ref.path)} if ref.server is None else None
        sidecar = path.with_suffix(".json")
        fresh = stamp is not None and path.is_file() and sidecar.is_file()
        if not (fresh and read_json(sidecar) == stamp):
            export_source(ref, path)
            write_json(stamp or {"server": ref.key}, sidecar)
        twins[db_id] = DatabaseRef(db_id, path, DatabaseSchema.from_sqlite(path, db_id))
    return twins


def sqlite_parent(item: dict) -> dict:
    """``item`` as the counterfactual step sees it on the SQLite twin: its gold SQL as
    the source wrote it for SQLite (``provenance.params.as_written``: a seed's SQL, a
    template's SQL written for SQLite) and the id that SQL gives, so the step's seeded
    draws (keyed by the parent's id) are those of a SQLite build; else its SQL written
    for SQLite by sqlglot, its id kept."""
    dialect = item.get("dialect") or "sqlite"
    if dialect == "sqlite":
        return item
    written = ((item.get("provenance") or {}).get("params") or {}).get("as_written") or {}
    if written.get("dialect") == "sqlite":
        sql = written["sql"]
        return {
            **item,
            "id": item_id(item["db_id"], item["question"], sql),
            "sql": sql,
            "dialect": "sqlite",
        }
    return {**item, "sql": sqlkit.transpile(item["sql"], dialect, "sqlite"), "dialect": "sqlite"}


def as_on_twins(items: list[dict], databases: dict) -> list[dict]:
    """``items`` with those on a DuckDB or server database as :func:`sqlite_parent`
    gives them (one whose SQL cannot be written for SQLite is left out)."""
    found = []
    for item in items:
        if not (item.get("sql") and on_engine(databases.get(item["db_id"]))):
            found.append(item)
            continue
        try:
            found.append(sqlite_parent(item))
        except SQLError:
            continue
    return found


# ---- the edit script applied to rows ----------------------------------------------------


@dataclass
class EditedTable:
    """One table after the ops: its columns (name, engine type), its rows in the
    engine's order (an Arrow table for a table no op edits), and whether its keys
    survive."""

    table: Table
    columns: list[tuple[str, str]]
    rows: list[list] | Any
    dropped: set[str] = field(default_factory=set)  # lower-case names of dropped columns

    def primary_key(self) -> list[str]:
        """The table's primary key, or none when an op dropped one of its columns."""
        keys = self.table.primary_key
        return [] if any(k.lower() in self.dropped for k in keys) else list(keys)


def edit_rows(table: Table, rows: list[list], ops: list[dict]) -> EditedTable:
    """Apply ``ops`` (those of ``table``) to its ``rows`` (in the engine's order), as
    :mod:`answerable.builders.counterfactual.materialize` applies them on SQLite: an
    added column is filled from its source column's values (as SQLite holds them) in
    row order; ``set_value`` writes into the rows a ``random.Random(seed).sample`` of
    the row positions picks (the same positions SQLite's sample of its rowids picks)."""
    from answerable.builders.counterfactual.fills import fill_values

    edited = EditedTable(table, [(c.name, c.type) for c in table.columns], [list(r) for r in rows])
    for op in ops:
        names = [name.lower() for name, _ in edited.columns]
        if op["op"] == "drop_column":
            at = _position(names, op, "column")
            del edited.columns[at]
            for row in edited.rows:
                del row[at]
            edited.dropped.add(op["column"].lower())
        elif op["op"] == "add_column":
            at = _position(names, op, "source")
            values = [sqlite_cell(row[at]) for row in edited.rows]
            filled = fill_values(op["fill"], values, op["seed"])
            edited.columns.append((op["column"], edited.columns[at][1]))
            for row, value in zip(edited.rows, filled, strict=True):
                row.append(value)
        elif op["op"] == "set_value":
            at = _position(names, op, "column")
            count = len(edited.rows)
            for index in random.Random(op["seed"]).sample(range(count), min(op["rows"], count)):
                edited.rows[index][at] = op["value"]
        else:
            raise SQLError("materialize-failed", f"unknown op {op['op']!r}")
    return edited


def _position(names: list[str], op: dict, key: str) -> int:
    try:
        return names.index(op[key].lower())
    except ValueError:
        raise SQLError(
            "materialize-failed", f"{op['op']}: {op['table']} has no column {op[key]}"
        ) from None


def _ops_by_table(ops: list[dict]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for op in ops:
        found.setdefault(op["table"].lower(), []).append(op)
    return found


# ---- DuckDB: a whole edited copy ----------------------------------------------------------


def materialize_duckdb(source: Path, ops: list[dict], target: Path) -> Path:
    """Write ``target``, a DuckDB file holding every base table of ``source`` with
    ``ops`` applied (``source`` is only read).

    When no other table references an edited one (and the source has no write-ahead
    log), the source's bytes are copied and only the edited tables are made again; else
    every table is written anew (DuckDB refuses to drop or alter a referenced table)."""
    from answerable.builders.engines.duckdb import (
        _creation_order,
        base_tables,
        read_only_connection,
    )

    edits = _ops_by_table(ops)
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
    import shutil

    from answerable.builders.engines.duckdb import duckdb_module

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
            raise SQLError("materialize-failed", f"{_describe(ops)}: {error}") from None
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


# ---- PostgreSQL: the edited tables in the scratch schema, shown by TEMP views -----------


def variant_prefix(name: str) -> str:
    """The prefix of variant ``name``'s tables in the scratch schema: a hash of the
    variant id (PostgreSQL names are at most 63 bytes)."""
    return f"v{content_hash(name)[:15]}_"


def materialize_postgres(con, spec, schema: DatabaseSchema, ops: list[dict], name: str) -> dict:
    """Create the edited tables of variant ``name`` in ``spec.scratch`` on ``con`` (a
    writable psycopg connection), in one transaction; return ``{table: its copy's
    name}``. Copies made earlier (by this build, a worker, a kept run) are reused."""
    import psycopg
    from psycopg import sql

    edits = _ops_by_table(ops)
    found = {t.name.lower(): t for t in schema.tables}
    missing = sorted(set(edits) - set(found))
    if missing:
        raise SQLError("materialize-failed", f"no such table: {', '.join(missing)}")
    copies = {found[t].name: variant_prefix(name) + t for t in sorted(edits)}
    if _tables_exist(con, spec.scratch, list(copies.values())):
        return copies
    try:
        with con.transaction():
            for table, copy in copies.items():
                target = sql.SQL("{}.{}").format(sql.Identifier(spec.scratch), sql.Identifier(copy))
                source = spec.namespace or "public"
                _write_postgres_table(
                    con, source, target, found[table.lower()], edits[table.lower()]
                )
                con.execute(
                    sql.SQL("COMMENT ON TABLE {} IS {}").format(
                        target, sql.Literal(f"{VARIANT_COMMENT} {name}")
                    )
                )
    except psycopg.errors.DuplicateTable:
        return copies  # another worker made them meanwhile
    except psycopg.Error as error:
        raise SQLError("materialize-failed", f"{_describe(ops)}: {error}") from None
    return copies


def _tables_exist(con, scratch: str, names: list[str]) -> bool:
    row = con.execute(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = ANY(%s)",
        (scratch, names),
    ).fetchone()
    return row[0] == len(names)


def _write_postgres_table(con, source: str, target, table: Table, ops: list[dict]) -> None:
    from psycopg import sql

    from answerable.builders.engines.postgres_tables import row_order

    query = sql.SQL("SELECT {} FROM {}.{} ORDER BY {}").format(
        sql.SQL(", ").join(sql.Identifier(c.name) for c in table.columns),
        sql.Identifier(source),
        sql.Identifier(table.name),
        row_order(con, source, table),
    )
    rows = con.execute(query).fetchall()
    edited = edit_rows(table, rows, ops)
    parts = [sql.SQL("{} {}").format(sql.Identifier(n), sql.SQL(k)) for n, k in edited.columns]
    if edited.primary_key():
        keys = sql.SQL(", ").join(map(sql.Identifier, edited.primary_key()))
        parts.append(sql.SQL("PRIMARY KEY ({})").format(keys))
    con.execute(sql.SQL("CREATE TABLE {} ({})").format(target, sql.SQL(", ").join(parts)))
    columns = sql.SQL(", ").join(sql.Identifier(n) for n, _ in edited.columns)
    copy_sql = sql.SQL("COPY {} ({}) FROM STDIN").format(target, columns)
    with con.cursor() as cur, cur.copy(copy_sql) as copy:
        for row in edited.rows:
            copy.write_row(row)


def shadowing_views(scratch: str, copies: dict) -> list:
    """``CREATE TEMP VIEW <table> AS SELECT * FROM <scratch>.<copy>`` for each edited
    table: PostgreSQL looks a name up in the session's temporary schema before the
    search path, so the view hides the source's table, as a SQLite delta's TEMP view
    does (and goes with the session)."""
    from psycopg import sql

    return [
        sql.SQL("CREATE TEMP VIEW {} AS SELECT * FROM {}.{}").format(
            sql.Identifier(table), sql.Identifier(scratch), sql.Identifier(copy)
        )
        for table, copy in sorted(copies.items())
    ]


def drop_variants(databases: dict) -> list[str]:
    """Drop every variant table (marked by :data:`VARIANT_COMMENT`) in the scratch
    schema of each server source that does not keep its variants; return their names."""
    dropped, seen = [], set()
    for ref in databases.values():
        spec = getattr(ref, "server", None)
        if spec is None or not spec.scratch or spec.keep_variants:
            continue
        from answerable.builders.engines.postgres import _connect, resolve_dsn

        dsn = resolve_dsn(spec)
        if (dsn, spec.scratch) in seen:
            continue
        seen.add((dsn, spec.scratch))
        dropped += _drop_marked(_connect(dsn, autocommit=True), spec.scratch)
    return dropped


def _drop_marked(con, scratch: str) -> list[str]:
    from psycopg import sql

    with con:
        names = [
            name
            for (name,) in con.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind = 'r' "
                "AND obj_description(c.oid, 'pg_class') LIKE %s ORDER BY c.relname",
                (scratch, VARIANT_COMMENT + "%"),
            )
        ]
        # CASCADE: the TEMP views that read a variant (see EngineVariants) live in the
        # sessions that opened it, and a forked worker's session may outlive the build's
        # end for a moment (the pool is terminated; the server notices the closed socket
        # later); nothing but those views depends on our marked tables.
        for name in names:
            con.execute(
                sql.SQL("DROP TABLE {}.{} CASCADE").format(
                    sql.Identifier(scratch), sql.Identifier(name)
                )
            )
    return names


# ---- the variants of one run, on their engines ----------------------------------------------


class EngineVariants:
    """Edited variants of DuckDB and PostgreSQL sources, made once each and opened
    read-only by their engine (the counterpart of the SQLite ``VariantStore``)."""

    def __init__(self, root: Path, limits: Limits | None = None):
        self.root = Path(root)
        self.limits = limits or Limits()
        self._open: dict[str, object] = {}
        self._writers: dict[str, object] = {}

    def database(self, ref, ops: list[dict]):
        """The variant of ``ref`` (a DatabaseRef on DuckDB or a server) that ``ops`` make,
        opened read-only by its engine; ``ref`` itself when there are no ops."""
        from answerable.builders.counterfactual.script import variant_id

        name = variant_id(ref.db_id, ops) if ops else ref.db_id
        if name not in self._open:
            self._open[name] = self._opened(ref, ops, name)
        return self._open[name]

    def _opened(self, ref, ops: list[dict], name: str):
        from answerable.builders.engines import open_source
        from answerable.builders.engines.base import SourceSpec

        if not ops:
            return ref.open(self.limits)
        if ref.server is None:
            path = self._duckdb_file(ref.path, ops, name)
            return open_source(SourceSpec(ref.db_id, ref.engine, path=path), self.limits)
        return self._postgres_schema(ref, ops, name)

    def _duckdb_file(self, source: Path, ops: list[dict], name: str) -> Path:
        target, sidecar = self.root / f"{name}.duckdb", self.root / f"{name}.duckdb.json"
        stamp = {"source_sha256": sha256_file(source), "ops": ops}
        if target.is_file() and sidecar.is_file() and read_json(sidecar) == _plain(stamp):
            return target
        self.root.mkdir(parents=True, exist_ok=True)
        materialize_duckdb(source, ops, target)
        write_json(stamp, sidecar)
        return target

    def _postgres_schema(self, ref, ops: list[dict], name: str):
        from answerable.builders.engines.postgres import (
            DEFAULT_NAMESPACE,
            _connect,
            resolve_dsn,
        )
        from answerable.builders.isolation import IsolatedDatabase, libpq_environment

        spec = ref.server
        if unedited(ref):
            raise SQLError("engine-not-supported", unedited(ref))
        dsn = resolve_dsn(spec)
        if dsn not in self._writers:
            self._writers[dsn] = _connect(dsn, autocommit=True)
        copies = materialize_postgres(self._writers[dsn], spec, ref.schema, ops, name)
        namespace = spec.namespace or DEFAULT_NAMESPACE
        setup = shadowing_views(spec.scratch, copies)
        opener = ("postgres", (dsn, namespace, setup, libpq_environment()))
        return IsolatedDatabase(opener, self.limits, "postgres")

    def close(self) -> None:
        """Close every connection this store opened (variants stay; see :func:`drop_variants`)."""
        for database in self._open.values():
            database.close()
        for con in self._writers.values():
            con.close()
        self._open.clear()
        self._writers.clear()


def _plain(value):
    import json

    from answerable.ids import canonical_json

    return json.loads(canonical_json(value))


def _describe(ops: list[dict]) -> str:
    return ", ".join(f"{op['op']} {op['table']}.{op['column']}" for op in ops)


# ---- the proof on the engine -------------------------------------------------------------


def _run(database, sql: str, ordered: bool, row_cap: int | None = None) -> Result | SQLError:
    try:
        return database.execute(sql, ordered=ordered, row_cap=row_cap)
    except SQLError as error:
        return error


def prove(item: dict, parent: dict, twin, engine) -> tuple[dict | None, str | None]:
    """``(item as the engine gives it, None)``, or ``(None, why)`` when the engine does
    not prove it (see the module docstring). ``parent`` is the parent as its source
    gave it (engine dialect); ``twin`` and ``engine`` are the item's database (variant
    or source) on the SQLite twin and on the engine."""
    dialect = engine.dialect
    ordered = bool((parent.get("result") or {}).get("ordered"))
    on_twin = _run(twin, sqlite_parent(parent)["sql"], ordered)
    on_engine = _run(engine, parent["sql"], ordered)
    if isinstance(on_twin, SQLError) != isinstance(on_engine, SQLError):
        ran, failed = (
            ("SQLite", dialect) if isinstance(on_engine, SQLError) else (dialect, "SQLite")
        )
        error = on_engine if isinstance(on_engine, SQLError) else on_twin
        return (
            None,
            f"the gold SQL runs on the {ran} variant but fails on the {failed} one ({error})",
        )
    if isinstance(on_twin, Result) and on_twin.hash != on_engine.hash:
        return None, f"the gold SQL gives another result on the {dialect} variant"
    proved = dict(item)
    if item.get("sql"):
        proved["sql"], proved["result"] = parent["sql"], on_engine.to_record()
    readings = []
    for reading in item.get("readings") or []:
        try:
            sql = sqlkit.transpile(reading["sql"], "sqlite", dialect)
        except SQLError as error:
            return None, f"reading {reading['name']}: cannot be written for {dialect} ({error})"
        found = _run(engine, sql, ordered, READING_ROWS)
        if isinstance(found, SQLError):
            return None, f"reading {reading['name']} fails on the {dialect} variant ({found})"
        if found.hash != reading["result_hash"]:
            return None, f"reading {reading['name']} gives another result on the {dialect} variant"
        kept = len(reading.get("rows") or [])
        rows = [list(row) for row in found.rows[:kept]]
        readings.append({**reading, "sql": sql, "columns": list(found.columns), "rows": rows})
    if readings:
        proved["readings"] = readings
    proved["dialect"] = dialect
    proved["id"] = item_id(
        item["db_id"], item["question"], proved.get("sql"), item.get("db_variant"), item.get("edit")
    )
    return proved, None


def counterfactual_on_engines(items: list[dict], env, config, databases: dict, store):
    """The counterfactual step over ``items`` (a shard of parents) where ``env`` reads
    each DuckDB or server database through its SQLite twin (:func:`twin_databases`):
    those parents go in with their SQL written for SQLite, and each item made from one
    comes out proved on its engine by ``store`` (an :class:`EngineVariants`), or as an
    ``engine-disagrees`` reject."""
    from answerable.builders.counterfactual.stage import STEP, is_parent, run_counterfactual
    from answerable.pipeline import StepOutput, reject

    out, originals, ready = StepOutput(), {}, []
    for item in items:
        why = unedited(databases.get(item["db_id"])) if is_parent(item) else None
        if why:
            out.rejects.append(reject(item["id"], STEP, "engine-not-supported", why))
            continue
        if not (is_parent(item) and on_engine(databases.get(item["db_id"]))):
            ready.append(item)
            continue
        try:
            ready.append(sqlite_parent(item))
        except SQLError as error:
            detail = f"the gold SQL cannot be written for the SQLite twin: {error}"
            out.rejects.append(reject(item["id"], STEP, "not-portable", detail))
            continue
        originals[ready[-1]["id"]] = item  # by the id the step sees
    made, _stats = run_counterfactual(ready, env, config)
    out.rejects += [_parent_named(r, originals) for r in made.rejects]
    for item in made.items:
        parent = originals.get((item.get("provenance") or {}).get("parent"))
        if parent is None:
            out.items.append(item)
            continue
        item = {**item, "provenance": {**item["provenance"], "parent": parent["id"]}}
        proved, why = _proved(item, parent, env, databases[item["db_id"]], store)
        if proved is not None:
            out.items.append(proved)
        else:
            out.rejects.append(
                reject(item["id"], STEP, DISAGREES, why, parent=parent["id"], db_id=item["db_id"])
            )
    return out


def _parent_named(found: dict, originals: dict) -> dict:
    """A reject of the step with its parent named by the parent's own id (the step saw
    the SQLite id of a parent on another engine)."""
    for key in ("id", "parent"):
        if found.get(key) in originals:
            found = {**found, key: originals[found[key]]["id"]}
    return found


def _proved(item: dict, parent: dict, env, ref, store) -> tuple[dict | None, str | None]:
    ops = (item.get("edit") or {}).get("ops") or []
    try:
        if ops:
            twin = env.variants.database(item["db_id"], env.source(item["db_id"]), ops)
        else:
            twin = env.database(item["db_id"])
        return prove(item, parent, twin, store.database(ref, ops))
    except SQLError as error:
        return None, str(error)
