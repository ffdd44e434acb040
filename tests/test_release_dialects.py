"""release.dialects: the demo's gold SQL shipped in DuckDB's (and PostgreSQL's) dialect,
each translation verified on a copy of the released database in that engine; failures
kept without the dialect or dropped, listed in the report, counted in manifest and card."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
import yaml

from answerable.builders.engines.duckdb import DuckDBDatabase, copy_sqlite_to_duckdb
from answerable.kernel.errors import ConfigError
from answerable.kernel.typed_items import to_items
from answerable.release.cut.dialects import (
    FIELD,
    DialectSettings,
    GoldInDialects,
    card_lines,
    check_shipped,
    dialect_settings,
    translate,
)
from answerable.release.cut.write import read_split
from answerable.release.databases import item_files
from answerable.schemas import validate
from tests import postgres_server as server
from tests.conftest import DEMO_RECIPE, run_in

postgres_server, postgres_demo = server.postgres_server, server.postgres_demo  # fixtures


def gold_in_dialects(frame, folder, settings, file="recipe"):
    """The frame with the dialects' SQL filled, and the report, in one chunk (as the
    release writer calls :class:`GoldInDialects` chunk by chunk)."""
    with GoldInDialects(folder, settings, file) as dialects:
        frame = dialects.add(frame)
    return frame, dialects.report()


def _recipe(folder, **release) -> object:
    """The demo recipe without drafting and review (their items carry no gold SQL), its
    release asking for ``release`` settings, copied into ``folder``."""
    data = yaml.safe_load(DEMO_RECIPE.read_text())
    for key in ("drafting", "review"):
        data.pop(key, None)
    data["release"].update(release)
    recipe = folder / "recipe"
    shutil.copytree(DEMO_RECIPE.parent, recipe, ignore=shutil.ignore_patterns("recipe.yaml"))
    (recipe / "recipe.yaml").write_text(yaml.safe_dump(data))
    return recipe / "recipe.yaml"


def _release(folder, **release) -> object:
    """The demo built through the CLI with ``release`` settings: the release folder."""
    result = run_in(folder, "build", _recipe(folder, **release))
    assert result.exit_code == 0, result.output
    manifest = yaml.safe_load(DEMO_RECIPE.read_text())
    return folder / "releases" / manifest["dataset"] / manifest["version"]


def _items(release) -> list[dict]:
    return to_items(pl.concat([read_split(p) for p in sorted(release.glob("data/*.parquet"))]))


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    """The demo released with DuckDB's dialect (and SQLite's), failures kept."""
    return _release(tmp_path_factory.mktemp("dialects"), dialects=["duckdb", "sqlite"])


def test_every_gold_query_ships_in_duckdb_or_is_a_listed_failure(kept):
    items = _items(kept)
    report = json.loads((kept / "report.json").read_text())["dialects"]
    failed = {f["id"] for f in report["failures"] if f["engine"] == "duckdb"}
    with_sql = [i for i in items if i["sql"] and i["result"]]
    assert len(with_sql) > 150 and any(i["db_variant"] for i in with_sql)
    for item in with_sql:
        by_dialect = item[FIELD]
        assert by_dialect["sqlite"] == item["sql"]  # the dialect it was verified in
        assert ("duckdb" in by_dialect) != (item["id"] in failed), item["id"]
        assert "postgres" not in by_dialect  # not asked for
    assert all(i[FIELD] is None for i in items if not i["sql"])
    # julianday has no DuckDB counterpart: a failure naming it, and the item is kept
    assert any("julianday" in f["reason"] for f in report["failures"])
    assert failed <= {i["id"] for i in items}
    manifest = json.loads((kept / "manifest.json").read_text())
    validate("manifest", manifest)
    counts = manifest["dialects"]["engines"]
    assert counts["duckdb"] == {"verified": len(with_sql) - len(failed), "failed": len(failed)}
    assert counts["sqlite"] == {"verified": len(with_sql), "failed": 0}
    assert manifest["dialects"]["on_failure"] == "keep"
    card = (kept / "README.md").read_text()
    assert f"duckdb {counts['duckdb']['verified']} verified, {len(failed)} not" in card


def test_each_shipped_duckdb_query_gives_the_items_result_on_duckdb(kept, tmp_path):
    """Checked again here, item by item, on DuckDB copies of the released files (a
    variant's delta read over its base)."""
    opened = {}
    for item in _items(kept):
        sql = (item[FIELD] or {}).get("duckdb")
        if sql is None:
            continue
        path, base = item_files(kept, item)
        if path not in opened:
            target = tmp_path / f"{len(opened)}.duckdb"
            opened[path] = DuckDBDatabase(copy_sqlite_to_duckdb(path, target, base=base))
        found = opened[path].execute(sql, ordered=item["result"]["ordered"])
        assert found.hash == item["result"]["hash"], item["id"]
    assert len(opened) > 2
    for database in opened.values():
        database.close()


def test_the_jsonl_files_carry_the_same_typed_field(kept):
    for parquet in kept.glob("data/*.parquet"):
        jsonl = read_split(parquet.with_suffix(".jsonl"))
        assert jsonl[FIELD].equals(read_split(parquet)[FIELD])
        assert jsonl.schema[FIELD] == pl.Struct(
            {"sqlite": pl.String, "duckdb": pl.String, "postgres": pl.String}
        )


def test_drop_leaves_out_the_items_whose_translation_failed(kept, monkeypatch):
    """on_dialect_failure: drop, over the same release's items (the step alone: a build
    would only repeat what the kept release showed)."""
    frame = pl.concat([read_split(p) for p in sorted(kept.glob("data/*.parquet"))])
    settings = DialectSettings(("duckdb",), "drop")
    dropped, report = gold_in_dialects(
        frame.with_columns(pl.lit(None).alias(FIELD)), kept, settings
    )
    gone = {f["id"] for f in report["failures"]}
    assert gone and report["on_failure"] == "drop"
    assert not set(dropped["id"]) & gone
    assert set(dropped["id"]) | gone == set(frame["id"])
    assert dropped.schema == frame.schema
    manifest = {"dialects": {k: v for k, v in report.items() if k != "failures"}}
    assert "left out of the release" in " ".join(card_lines(manifest))


def test_an_unknown_engine_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError) as caught:
        dialect_settings({"dialects": ["duckdb", "oracle"]}, "recipe.yaml")
    assert "release.dialects" in str(caught.value) and "oracle" in str(caught.value)
    result = run_in(tmp_path, "build", _recipe(tmp_path, dialects=["mysql"]))
    assert result.exit_code == 1 and "release.dialects" in result.output
    assert "Traceback" not in result.output


def test_postgres_without_a_server_named_is_one_line(kept, monkeypatch):
    monkeypatch.delenv("ANSWERABLE_POSTGRES_DSN", raising=False)
    frame = read_split(next(kept.glob("data/*.parquet")))
    with pytest.raises(ConfigError) as caught:
        gold_in_dialects(frame, kept, DialectSettings(("postgres",)), "recipe.yaml")
    assert "ANSWERABLE_POSTGRES_DSN" in str(caught.value)


def test_the_gold_sql_in_postgres_is_verified_on_the_server(kept, postgres_demo, monkeypatch):
    """The same release's items written for PostgreSQL and run on copies loaded into the
    test server (as a role that may create schemas, not a superuser)."""
    import psycopg

    with psycopg.connect(postgres_demo.dsn(), autocommit=True) as con:
        con.execute("DROP ROLE IF EXISTS dialects_checker")
        con.execute("CREATE ROLE dialects_checker LOGIN PASSWORD 'checker'")
        con.execute(f'GRANT CREATE ON DATABASE "{postgres_demo.database}" TO dialects_checker')
    dsn = postgres_demo.dsn(user="dialects_checker", password="checker")
    monkeypatch.setenv("ANSWERABLE_POSTGRES_DSN", dsn)
    items = [i for i in _items(kept) if i["sql"] and i["result"]]
    rows = [
        {**i, "result": i["result"], "edit": json.dumps(i["edit"]) if i["edit"] else None}
        for i in items
    ]
    found = translate(rows, kept, ("postgres",))
    verified = {i for i, by in found.sql.items() if "postgres" in by}
    failed = {f["id"] for f in found.failures}
    assert verified | failed == {i["id"] for i in items} and not verified & failed
    assert len(failed) <= 2  # what docs/explanation/engines.md names: julianday, ties under a LIMIT
    assert any(items_id in verified for items_id in (i["id"] for i in items if i["db_variant"]))
    assert any("julianday" in f["reason"] for f in found.failures)
    # sqlglot rewrites what PostgreSQL reads otherwise (NULLS FIRST keeps SQLite's order)
    assert any(found.sql[i["id"]]["postgres"] != i["sql"] for i in items if i["id"] in verified)


def test_verify_execute_runs_the_shipped_dialects_and_names_a_wrong_one(kept, tmp_path):
    result = run_in(tmp_path, "verify", kept, "--execute")
    assert result.exit_code == 0, result.output
    items = _items(kept)
    answerable = sum(bool(i["label"] == "answerable" and i["result"]) for i in items)
    with_duckdb = sum(bool((i[FIELD] or {}).get("duckdb")) for i in items)
    assert f"{answerable + with_duckdb} gold queries re-executed" in result.output
    # an item whose shipped DuckDB SQL no longer gives its result is named
    items = [i for i in items if (i[FIELD] or {}).get("duckdb")][:3]
    items[1] = {**items[1], FIELD: {"duckdb": items[1][FIELD]["duckdb"] + " LIMIT 0"}}
    executed, problems = check_shipped(kept, items)
    assert executed == 3 and len(problems) == 1
    assert problems[0].startswith(f"item {items[1]['id']}: duckdb SQL gives another result")


def test_the_dialects_a_chunk_at_a_time_are_those_of_the_whole_frame(kept):
    """The release fills and drops a chunk at a time (GoldInDialects.add, one set of
    engine copies): the same frame and report as one call on the whole frame."""
    frame = pl.concat([read_split(p) for p in sorted(kept.glob("data/*.parquet"))]).sort("id")
    frame = frame.with_columns(pl.lit(None).alias(FIELD))
    settings = DialectSettings(("duckdb",), "drop")
    whole, report = gold_in_dialects(frame, kept, settings)
    with GoldInDialects(kept, settings) as dialects:
        chunks = [dialects.add(frame.slice(start, 7)) for start in range(0, frame.height, 7)]
    assert len(chunks) > 2 and dialects.report()["failures"]
    assert pl.concat(chunks).equals(whole) and dialects.report() == report
    assert dialects.dropped() == sorted({f["id"] for f in report["failures"]})
