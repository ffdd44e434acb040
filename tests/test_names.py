"""Names used as parts of paths: a planted db_id, dataset, version or template id is
refused with the record and the rule, and nothing outside the source folder is read."""

from __future__ import annotations

import json
import sqlite3

import pytest

from answerable.kernel.names import name_problem
from answerable.kernel.records import read_jsonl
from tests.conftest import run_in
from tests.test_cli import assert_clean_error, seed, tiny_project

PLANTED_DB_IDS = {
    "../../outside/secret": "has a path separator",
    "/etc/secret": "is an absolute path",
    "C:secret": "is an absolute path",
    "..": "is or contains ..",
    "shop\\..\\secret": "has a path separator",
    "shop\x1b[2J": "has a control character",
    "shop\n": "has a control character",
}


@pytest.mark.parametrize(("value", "rule"), sorted(PLANTED_DB_IDS.items()))
def test_name_problem_names_the_rule(value, rule):
    assert name_problem(value).startswith(rule)


@pytest.mark.parametrize("value", ["shop", "concert_singer", "mimic-iv.demo", "Chinook 2"])
def test_plain_names_pass(value):
    assert name_problem(value) is None


def test_planted_db_ids_are_rejects_and_nothing_outside_is_opened(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = sqlite3.connect(outside / "secret.sqlite")
    secret.execute("CREATE TABLE item (id INTEGER, name TEXT)")
    secret.execute("INSERT INTO item VALUES (1, 'the secret')")
    secret.commit()
    secret.close()
    seeds = [seed("How many items are there?", "SELECT count(*) FROM item")]
    for db_id in sorted(PLANTED_DB_IDS):
        seeds.append({"db_id": db_id, "question": "Which names?", "sql": "SELECT name FROM item"})
    project = tmp_path / "project"
    project.mkdir()
    recipe = tiny_project(project, seeds)
    (project / "dbs" / "shop").mkdir()
    result = run_in(project, "build", recipe)
    assert result.exit_code == 0, result.output
    rejects = list(read_jsonl(project / ".answerable" / "tiny" / "reports" / "rejects.jsonl"))
    unsafe = sorted(
        (r["external_id"], r["detail"]) for r in rejects if r["reason"] == "unsafe-name"
    )
    assert len(unsafe) == len(PLANTED_DB_IDS)
    for _, detail in unsafe:
        assert "db_id" in detail and any(rule in detail for rule in PLANTED_DB_IDS.values())
    released = "".join(p.read_text() for p in (project / "releases").rglob("*.jsonl"))
    assert "the secret" not in released and "outside" not in released


@pytest.mark.parametrize(
    ("key", "value"),
    [("dataset", "../escape"), ("dataset", "/abs"), ("version", "1.0.0-../x")],
)
def test_recipe_names_used_in_the_release_path(tmp_path, key, value):
    recipe = tiny_project(tmp_path, [seed("How many items?", "SELECT count(*) FROM item")])
    text = recipe.read_text().replace(
        "dataset: tiny" if key == "dataset" else "version: 0.1.0", f"{key}: {json.dumps(value)}"
    )
    recipe.write_text(text)
    assert_clean_error(run_in(tmp_path, "validate", recipe), key)
