"""Variants stored as deltas give the same results and verdicts as whole edited copies.

Two proofs, on the demo databases and on Chinook (a real database nobody on the project
wrote; read from ``../shared/data``, skipped without it):

- the counterfactual step, run with every parent and every applicable edit, makes the
  same items and the same rejects (same labels, results, readings, reasons) whether its
  variants are deltas or whole copies;
- every counterfactual item of the demo build runs its own SQL, its parent's SQL, its
  readings and its candidate SQL to the same outcome (result hash or error reason) on
  the delta over its base as on a whole copy, and both report the same schema.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from answerable.builders.counterfactual.materialize import (
    VariantStore,
    materialize,
    materialize_full,
)
from answerable.builders.counterfactual.script import add_column, drop_column
from answerable.builders.counterfactual.stage import run_counterfactual
from answerable.builders.counterfactual.survey import EVERY_PARENT, survey_env, verified_parents
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.errors import SQLError
from answerable.ids import sha256_file
from answerable.records import read_parquet
from tests.conftest import REPO, shared_data

LIMITS = Limits(2.0, 100)


def run_both(parents: list[dict], databases: dict, folder: Path) -> tuple:
    """The counterfactual step's output with delta variants and with whole copies."""
    outputs = []
    for full in (False, True):
        env = survey_env(databases, folder / str(full), 13, LIMITS)
        env.variants = VariantStore(folder / f"variants-{full}", LIMITS, full=full)
        try:
            outputs.append(run_counterfactual(parents, env, EVERY_PARENT)[0])
        finally:
            env.close()
    return tuple(outputs)


def assert_same_step(parents: list[dict], databases: dict, folder: Path) -> int:
    deltas, copies = run_both(parents, databases, folder)
    assert deltas.items == copies.items
    assert deltas.rejects == copies.rejects
    assert len(list((folder / "variants-False").glob("*.sqlite"))) > 0
    return sum(1 for i in deltas.items if i["db_variant"])


def outcome(database: ReadOnlyDatabase, sql: str | None):
    """The result hash and row count, or the error reason."""
    if not sql:
        return None
    try:
        result = database.execute(sql)
    except SQLError as error:
        return error.reason
    return result.hash, result.row_count, result.rows


def queries(item: dict, parents: dict) -> list[str]:
    """Every SQL text whose outcome decides or shows the item's verdict."""
    found = [item.get("sql")]
    parent = parents.get((item.get("provenance") or {}).get("parent"))
    found.append(parent and parent.get("sql"))
    trigger = item.get("trigger") or {}
    found += list(trigger.get("readings") or [])
    found += [c["sql"] for c in item.get("candidates") or [] if c.get("sql")]
    return [sql for sql in found if sql]


def assert_same_per_item(items: list[dict], sources: dict, folder: Path) -> int:
    by_id = {i["id"]: i for i in items}
    deltas = VariantStore(folder / "deltas", LIMITS)
    copies = VariantStore(folder / "copies", LIMITS, full=True)
    checked = 0
    try:
        for item in (i for i in items if i.get("db_variant")):
            source, ops = sources[item["db_id"]], item["edit"]["ops"]
            delta = deltas.database(item["db_id"], source, ops)
            copy = copies.database(item["db_id"], source, ops)
            assert deltas.schema(item["db_id"], source, ops) == copies.schema(
                item["db_id"], source, ops
            )
            for sql in queries(item, by_id):
                assert outcome(delta, sql) == outcome(copy, sql), (item["id"], sql)
                checked += 1
    finally:
        deltas.close()
        copies.close()
    return checked


@pytest.fixture(scope="module")
def demo_parents(demo_dir, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("delta-parents")
    parents, databases = [], {}
    for name in ("clinic", "league"):
        spec = {"name": name, "format": "jsonl", "path": f"{name}.jsonl", "databases": "demo"}
        made, found = verified_parents(
            spec, REPO / "raw" / "demo" / "seeds", workdir, demo_dir=demo_dir
        )
        parents += made.items
        databases.update(found)
    return parents, databases


def test_the_step_gives_the_same_items_on_deltas_and_copies_demo(demo_parents, tmp_path):
    parents, databases = demo_parents
    assert assert_same_step(parents, databases, tmp_path) >= 30


def test_the_step_gives_the_same_items_on_deltas_and_copies_chinook(tmp_path):
    base = shared_data("chinook")
    questions = REPO / "tests" / "fixtures" / "counterfactual" / "chinook.jsonl"
    spec = {"name": "chinook", "format": "jsonl", "path": str(questions), "databases": str(base)}
    parents, databases = verified_parents(spec, base, tmp_path, 13, LIMITS)
    assert assert_same_step(parents.items, databases, tmp_path) >= 10


def test_every_demo_build_item_runs_the_same_on_delta_and_copy(demo_build, tmp_path):
    cwd, _ = demo_build
    items = read_parquet(cwd / ".answerable" / "answerable-demo" / "candidates.parquet")
    sources = {db: cwd / ".answerable" / "demo" / f"{db}.sqlite" for db in ("clinic", "league")}
    edited = [i for i in items if i["db_variant"]]
    assert {i["provenance"]["generator"] for i in edited} >= {"drop_column_v1", "drop_unused_v1"}
    assert assert_same_per_item(items, sources, tmp_path) >= 2 * len(edited)


def test_a_whole_copy_and_a_delta_differ_only_in_storage(demo_dir, tmp_path):
    source = demo_dir / "league.sqlite"
    ops = [
        add_column("players", "primary_position", "TEXT", "position", "shuffle", 5),
        drop_column("players", "position"),
    ]
    copy = materialize_full(source, ops, tmp_path / "copy.sqlite")
    deltas = VariantStore(tmp_path / "deltas")
    delta = deltas.ensure("league", source, ops)
    assert delta.stat().st_size * 5 < copy.stat().st_size
    merged = DatabaseSchema.from_sqlite(delta, "league", base=source)
    assert DatabaseSchema.from_sqlite(copy, "league") == merged


def test_the_merged_view_keeps_the_executor_locks(demo_dir, tmp_path):
    source = demo_dir / "league.sqlite"
    before = sha256_file(source)
    delta = materialize(source, [drop_column("players", "position")], tmp_path / "v.sqlite")
    with ReadOnlyDatabase(delta, LIMITS, base=source) as db:
        assert (
            db.execute("SELECT count(*) FROM base.players").rows
            == db.execute("SELECT count(*) FROM temp.players").rows  # the merged view
        )
        with pytest.raises(SQLError, match="position"):
            db.execute("SELECT position FROM players")
        for sql in (
            f"ATTACH DATABASE '{source}' AS other",
            "DETACH DATABASE base",
            "DELETE FROM base.players",
            "WITH x AS (SELECT 1) DELETE FROM base.players",
            "WITH x AS (SELECT 1) DELETE FROM teams",  # a table read through to the base
            "CREATE TEMP VIEW players AS SELECT 1",
            "DROP VIEW players",
        ):
            with pytest.raises(SQLError) as caught:
                db.execute(sql)
            assert caught.value.reason == "not-read-only", sql
    assert sha256_file(source) == before
