"""End to end through the command line: the demo build, bad input, exit codes."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

from click.testing import CliRunner

from answerable.cli import main
from answerable.ids import sha256_file
from answerable.records import read_jsonl, read_parquet
from answerable.release.publish import read_manifest, verify_release
from answerable.schemas import validate
from tests.conftest import DEMO_RECIPE, run_in


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_help_lists_the_commands():
    result = run("--help")
    assert result.exit_code == 0
    for command in ("build", "demo", "inspect", "validate"):
        assert command in result.output


def test_demo_build_prints_where_the_release_went(demo_build):
    cwd, result = demo_build
    release = cwd / "releases" / "answerable-demo" / "0.1.0"
    assert f"release: {release}" in result.output
    assert "items.parquet" in result.output
    assert verify_release(release) == []
    manifest = read_manifest(release)
    validate("manifest", manifest)
    assert manifest["counts"]["total"] > 0
    assert {f["path"] for f in manifest["files"]} == {"items.parquet", "items.jsonl"}


def test_demo_candidates_are_valid_verified_items(demo_build):
    cwd, _ = demo_build
    items = read_parquet(cwd / ".answerable" / "answerable-demo" / "candidates.parquet")
    assert len(items) >= 20
    for item in items:
        validate("item", item)
    answerable = [i for i in items if i["label"] == "answerable"]
    assert len(answerable) >= 20
    for item in answerable:
        assert item["result"]["row_count"] > 0
        assert item["provenance"]["params"]["verified_by"] == "execution"
    assert {i["db_id"] for i in answerable} == {"clinic", "league"}


def test_two_builds_give_identical_files(demo_build, tmp_path):
    first, _ = demo_build
    result = run_in(tmp_path, "build", DEMO_RECIPE)
    assert result.exit_code == 0, result.output
    for relative in (
        ".answerable/answerable-demo/candidates.parquet",
        ".answerable/answerable-demo/reports/rejects.jsonl",
        "releases/answerable-demo/0.1.0/items.parquet",
        "releases/answerable-demo/0.1.0/items.jsonl",
        "releases/answerable-demo/0.1.0/manifest.json",
    ):
        assert sha256_file(first / relative) == sha256_file(tmp_path / relative), relative


def test_rerun_reuses_finished_steps(demo_build):
    cwd, _ = demo_build
    result = run_in(cwd, "build", DEMO_RECIPE)
    assert result.exit_code == 0, result.output
    assert "(cached)" in result.output
    assert "unchanged, already published" in result.output


def test_inspect_counts_by_label_category_and_database(demo_build):
    cwd, _ = demo_build
    result = run("inspect", cwd / "releases" / "answerable-demo" / "0.1.0")
    assert result.exit_code == 0, result.output
    assert "by label:" in result.output and "answerable" in result.output
    assert "clinic" in result.output and "league" in result.output


def test_validate_demo_recipe():
    result = run("validate", DEMO_RECIPE)
    assert result.exit_code == 0, result.output
    assert "ok" in result.output


# ---- bad input: one clear line, exit 1, no traceback --------------------------------


def tiny_project(tmp_path: Path, seeds: list | str, extra: str = "") -> Path:
    db = tmp_path / "dbs" / "shop.sqlite"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
    con.executemany(
        "INSERT INTO item VALUES (?, ?, ?)", [(i, f"thing {i}", i * 2.5) for i in range(1, 40)]
    )
    con.commit()
    con.close()
    lines = seeds if isinstance(seeds, str) else "".join(json.dumps(s) + "\n" for s in seeds)
    (tmp_path / "seeds.jsonl").write_text(lines)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        textwrap.dedent("""\
        dataset: tiny
        version: 0.1.0
        seed: 1
        sources:
          - name: shop-seeds
            format: jsonl
            path: seeds.jsonl
            databases: dbs
        """)
        + extra
    )
    return recipe


def seed(question, sql):
    return {"db_id": "shop", "question": question, "sql": sql}


def assert_clean_error(result, *words):
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert errors == lines[-1:], result.output
    for word in words:
        assert word in errors[0]


def test_unknown_recipe_key(tmp_path):
    recipe = tiny_project(
        tmp_path, [seed("How many items?", "SELECT count(*) FROM item")], extra="colour: red\n"
    )
    assert_clean_error(run_in(tmp_path, "build", recipe), str(recipe), "colour", "fix:")


def test_missing_input_file(tmp_path):
    recipe = tiny_project(tmp_path, [])
    (tmp_path / "seeds.jsonl").unlink()
    assert_clean_error(run_in(tmp_path, "build", recipe), "sources[0].path", "not found")


def test_malformed_seed_file(tmp_path):
    recipe = tiny_project(tmp_path, '{"db_id": "shop", "question": "q", "sql": \n')
    assert_clean_error(run_in(tmp_path, "build", recipe), "seeds.jsonl", "line 1")


def test_file_that_is_not_a_sqlite_database(tmp_path):
    recipe = tiny_project(tmp_path, [seed("How many items?", "SELECT count(*) FROM item")])
    (tmp_path / "dbs" / "shop.sqlite").write_text("this is not a database")
    assert_clean_error(run_in(tmp_path, "build", recipe), "shop.sqlite", "SQLite")


def test_usage_error_exits_2():
    assert run("build").exit_code == 2
    assert run("frobnicate").exit_code == 2


def test_bad_seeds_are_rejected_with_reasons_and_the_build_goes_on(tmp_path):
    seeds = [
        seed("How many items are there?", "SELECT count(*) FROM item"),
        seed("Unparseable?", "SELECT FROM WHERE item"),
        seed("What colour is each item?", "SELECT colour FROM item"),
        seed("Which items cost more than a million?", "SELECT name FROM item WHERE price > 1e6"),
        seed(
            "Count forever?",
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
            "FROM c) SELECT count(*) FROM c",
        ),
        seed("Drop it?", "DROP TABLE item"),
    ]
    recipe = tiny_project(tmp_path, seeds, extra="execution:\n  timeout_s: 0.3\n")
    before = sha256_file(tmp_path / "dbs" / "shop.sqlite")
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    rejects = list(read_jsonl(tmp_path / ".answerable" / "tiny" / "reports" / "rejects.jsonl"))
    reasons = sorted(r["reason"] for r in rejects)
    assert reasons == sorted(
        ["parse-error", "unknown-column", "empty-result", "timeout", "not-read-only"]
    )
    assert all(r["id"] and r["detail"] for r in rejects)
    assert "candidates: 1 items" in result.output
    assert sha256_file(tmp_path / "dbs" / "shop.sqlite") == before


def test_published_version_is_never_rewritten(tmp_path):
    recipe = tiny_project(tmp_path, [seed("How many items?", "SELECT count(*) FROM item")])
    assert run_in(tmp_path, "build", recipe).exit_code == 0
    cheapest = seed("Cheapest?", "SELECT min(price) FROM item")
    (tmp_path / "seeds.jsonl").write_text(json.dumps(cheapest))
    assert_clean_error(run_in(tmp_path, "build", recipe), "already published", "bump")
