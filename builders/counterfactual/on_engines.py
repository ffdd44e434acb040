"""The counterfactual step on DuckDB and PostgreSQL sources: the same edit scripts, the
same labels and readings as on SQLite, proved by execution on the engine's own variant.

The counterfactual step's proposals and checks read SQLite (rowids, ``sqlite_master``,
readings written in SQLite's dialect, deltas over a SQLite base). For a source on another
engine they therefore run on its **SQLite twin**: every table of the source exported by
the engine (:func:`answerable.builders.engines.export_source`, rows in the order the
engine's variant reads them), under ``<workdir>/<dataset>/twins/``, with each parent's
gold SQL written for SQLite by sqlglot. Every item the step makes there is then **proved
on the engine** (:func:`prove`): the edit script is applied by the engine
(:meth:`~answerable.builders.engines.base.Engine.materialize_variant`, kept by
:class:`~answerable.builders.engines.variants.EngineVariants`) and

- the parent's gold SQL, in the engine's dialect, must fail on the engine's variant
  exactly when it fails on the twin's, and give the same result hash when it runs (an
  answerable control carries the engine's result);
- each reading, written in the engine's dialect by sqlglot, must give the hash the
  twin's reading gave (the item stores the engine's SQL and rows).

An item that fails a proof is an ``engine-disagrees`` reject naming what differed. The
item then carries the engine's dialect and SQL, and its id hashes that SQL (as the
engine's seed and template items do).

Fills and seeded row choices see the rows in rowid order on DuckDB and in physical
(``ctid``) order on PostgreSQL (:func:`.postgres_tables.row_order`): the twin and a
release's exported file hold them in that same order, so the values equal the twin's,
and a SQLite build's for data copied from SQLite (both keep SQLite's rowid order).
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders import sqlkit
from answerable.builders.counterfactual.stage import STEP, is_parent, run_counterfactual
from answerable.builders.engines import export_source
from answerable.builders.engines.variants import on_engine, unedited
from answerable.builders.executor import Result
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import item_id, sha256_file
from answerable.kernel.records import read_json, write_json
from answerable.pipeline import StepOutput, reject

TWINS = "twins"  # the folder of the SQLite twins, under <workdir>/<dataset>/
DISAGREES = "engine-disagrees"  # the reject reason of an item its engine does not prove
READING_ROWS = 20  # rows kept per reading, as the step keeps them


def twin_databases(databases: dict, root: Path, used: set[str]) -> dict:
    """``databases`` with each DuckDB or server database in ``used`` (the parents' db_ids) replaced
    by its SQLite twin (a SQLite DatabaseRef). A DuckDB twin is reused while its sidecar
    records the source's sha256; a server's is exported anew (nothing tells that the
    server's data is as it was). Call it before workers fork: each twin is written once."""
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
