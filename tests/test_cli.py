"""End to end through the command line: the demo build, bad input, exit codes."""

from __future__ import annotations

import json
import re
import sqlite3
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from answerable.cli import main
from answerable.kernel.ids import sha256_file
from answerable.kernel.records import read_jsonl, read_parquet
from answerable.release.reader import read_release_manifest as read_manifest
from answerable.release.verify import check_files
from answerable.schemas import validate
from tests.conftest import DEMO_RECIPE, run_in


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_help_lists_the_commands():
    result = run("--help")
    assert result.exit_code == 0
    for command in ("bio", "build", "demo", "inspect", "validate"):
        assert command in result.output


def test_demo_build_prints_where_the_release_went(demo_build):
    cwd, result = demo_build
    release = cwd / "releases" / "answerable-demo" / "0.1.0"
    assert f"release: {release}" in result.output
    assert "data/test.parquet" in result.output
    manifest = read_manifest(release)
    assert check_files(release, manifest) == []
    validate("manifest", manifest)
    assert manifest["counts"]["total"] > 0
    splits, formats = ("train", "dev", "test"), ("parquet", "jsonl")
    data = {f"data/{split}.{fmt}" for split in splits for fmt in formats}
    documents = {"README.md", "composition.png", "croissant.json", "CHANGELOG.md", "LICENSE"}
    paths = {f["path"] for f in manifest["files"]}
    databases = {p for p in paths if p.startswith("databases/")}
    assert paths == data | {"report.json", "schema/record.schema.json"} | documents | databases
    assert "databases/clinic.sqlite" in databases
    assert any(p.startswith("databases/variants/") for p in databases)
    assert "databases/ (" in result.output


def test_demo_candidates_are_valid_verified_items(demo_build):
    cwd, _ = demo_build
    items = read_parquet(cwd / ".answerable" / "answerable-demo" / "candidates.parquet")
    seeds = [i for i in items if i["provenance"]["generator"] == "seed_v1"]
    assert len(seeds) >= 20
    for item in items:
        validate("item", item)
    executed = [i for i in items if i["provenance"]["generator"] in ("seed_v1", "template_v1")]
    for item in executed:
        assert item["label"] == "answerable"
        assert item["result"]["row_count"] > 0
    for item in seeds:
        assert item["provenance"]["params"]["verified_by"] == "execution"
    assert {i["db_id"] for i in items} == {"clinic", "league"}


@pytest.mark.slow  # among the longest of the default run: CI's second pass
def test_two_builds_give_identical_files(demo_build, tmp_path):
    first, _ = demo_build
    result = run_in(tmp_path, "build", DEMO_RECIPE)
    assert result.exit_code == 0, result.output
    for relative in (
        ".answerable/answerable-demo/candidates.parquet",
        ".answerable/answerable-demo/reports/rejects.jsonl",
        "releases/answerable-demo/0.1.0/data/train.parquet",
        "releases/answerable-demo/0.1.0/data/test.jsonl",
        "releases/answerable-demo/0.1.0/report.json",
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


def test_demo_build_has_verified_counterfactual_items_and_inspect_counts_them(demo_build):
    cwd, _ = demo_build
    # Candidates, not the release: drafted and value-ambiguous items await review.
    candidates = cwd / ".answerable" / "answerable-demo" / "candidates.parquet"
    items = read_parquet(candidates)
    by_generator = Counter(i["provenance"]["generator"] for i in items)
    for generator in ("drop_column_v1", "drop_unused_v1"):
        assert by_generator[generator] > 0, by_generator
    assert by_generator["value_unanswerable_v1"] + by_generator["value_ambiguous_v1"] > 0
    # the demo's near-synonym proposals split a person's name: judged, and rejected
    rejects = read_jsonl(cwd / ".answerable" / "answerable-demo" / "reports" / "rejects.jsonl")
    assert "implausible-parts-of-name" in {r["reason"] for r in rejects}
    edits = (
        "drop_column_v1",
        "add_near_synonyms_v1",
        "value_unanswerable_v1",
        "value_ambiguous_v1",
        "drop_unused_v1",
    )
    edited = [i for i in items if i["provenance"]["generator"] in edits]
    assert all(i["provenance"]["parent"] in {j["id"] for j in items} for i in edited)
    assert all(
        (
            cwd / ".answerable" / "answerable-demo" / "variants" / f"{i['db_variant']}.sqlite"
        ).is_file()
        for i in edited
        if i["db_variant"]
    )
    result = run("inspect", candidates)
    assert result.exit_code == 0, result.output
    counts = dict(re.findall(r"^\s+(\S+)\s+(\d+)$", result.output, re.M))
    categories = Counter(i["category"] for i in items)
    for name in ("missing-column", "missing-value", "drop_column_v1", "drop_unused_v1"):
        assert int(counts[name]) > 0, result.output
    assert int(counts["missing-column"]) == categories["missing-column"]
    assert int(counts["missing-value"]) == categories["missing-value"]


def test_bio_tags_of_the_demo_candidates(demo_build, tmp_path):
    cwd, _ = demo_build
    out = tmp_path / "bio.jsonl"
    candidates = cwd / ".answerable" / "answerable-demo" / "candidates.parquet"
    result = run("bio", candidates, "--out", out)
    assert result.exit_code == 0, result.output
    lines = list(read_jsonl(out))
    assert lines and all(len(line["tokens"]) == len(line["tags"]) for line in lines)
    tags = {tag for line in lines for tag in line["tags"]}
    assert {"B-UNK", "B-AMB", "B-COL", "O"} <= tags


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


def test_changed_release_settings_are_not_served_from_the_earlier_release(tmp_path):
    """The same items with other release settings are another release: the build must
    not hand back the one it cut before (it used to, since the reuse key held only the
    items); the version is taken, so the build says to bump it."""
    recipe = tiny_project(tmp_path, [seed("How many items?", "SELECT count(*) FROM item")])
    assert run_in(tmp_path, "build", recipe).exit_code == 0
    recipe.write_text(recipe.read_text() + "release:\n  formats: [jsonl]\n")
    assert_clean_error(run_in(tmp_path, "build", recipe), "already published", "bump")
