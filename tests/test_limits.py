"""Limits with defaults in the recipe: a question, SQL text or JSONL line past its limit
is a too-long reject naming the limit, and the build goes on."""

from __future__ import annotations

import json

import pytest

from answerable.kernel.ids import sha256_file
from answerable.kernel.records import read_jsonl
from tests.conftest import run_in
from tests.test_cli import seed, tiny_project


def build_rejects(tmp_path, seeds, extra: str = "") -> list[dict]:
    """Build the tiny project whose first seed is its one good item; its rejects. The
    source database must be unchanged."""
    recipe = tiny_project(tmp_path, seeds, extra=extra)
    before = sha256_file(tmp_path / "dbs" / "shop.sqlite")
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    assert "candidates: 1 items" in result.output
    assert sha256_file(tmp_path / "dbs" / "shop.sqlite") == before
    return list(read_jsonl(tmp_path / ".answerable" / "tiny" / "reports" / "rejects.jsonl"))


GOOD = seed("How many items are there?", "SELECT count(*) FROM item")


def test_a_1mb_question_is_rejected_by_the_default_limits(tmp_path):
    huge = seed("Which? " + "x" * 1_000_000, "SELECT name FROM item")
    rejects = build_rejects(tmp_path, [GOOD, huge])
    assert [(r["reason"], r["external_id"]) for r in rejects] == [("too-long", "2")]
    assert "limits.max_line_bytes (1000000)" in rejects[0]["detail"]


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (seed("Which? " + "x" * 2100, "SELECT name FROM item"), "question of 2107 characters"),
        (
            seed("Which items?", "SELECT name FROM item WHERE name <> '" + "y" * 20_100 + "'"),
            "limits.max_sql_chars (20000)",
        ),
    ],
)
def test_default_question_and_sql_limits(tmp_path, bad, words):
    rejects = build_rejects(tmp_path, [GOOD, bad])
    assert [r["reason"] for r in rejects] == ["too-long"]
    assert words in rejects[0]["detail"]


def test_the_recipe_sets_the_limits(tmp_path):
    seeds = [GOOD, seed("Which items have a name at all?", "SELECT name FROM item")]
    extra = "limits:\n  max_question_chars: 28\n  max_line_bytes: 5000\n"
    rejects = build_rejects(tmp_path, seeds, extra=extra)
    assert [r["detail"] for r in rejects] == [
        "question of 31 characters is over limits.max_question_chars (28)"
    ]


def test_a_utf8_bom_is_read_as_a_bom(tmp_path):
    recipe = tiny_project(tmp_path, [GOOD])
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n")
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    assert "candidates: 1 items" in result.output
