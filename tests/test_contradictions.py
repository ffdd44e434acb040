"""Contradictions and mislabels are rejects, never released side by side."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from answerable.builders.seeds import question_key
from answerable.kernel.records import read_jsonl
from answerable.release.cut.expressions import normalized_question
from tests.conftest import run_in
from tests.test_cli import seed, tiny_project
from tests.test_limits import GOOD

OTHER = seed(
    "What is the most expensive item?", "SELECT name FROM item ORDER BY price DESC LIMIT 1"
)


def build(tmp_path, seeds) -> tuple[list[dict], list[dict]]:
    """The tiny project built: (candidates' questions and labels, rejects)."""
    recipe = tiny_project(tmp_path, seeds)
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    reports = tmp_path / ".answerable" / "tiny" / "reports"
    return list(read_jsonl(reports / "rejects.jsonl"))


def test_the_same_question_with_and_without_sql_is_a_contradiction_naming_both(tmp_path):
    twin = {"db_id": "shop", "question": "how many items are there", "sql": None}
    rejects = build(tmp_path, [GOOD, twin, OTHER])
    found = sorted((r["reason"], r["external_id"]) for r in rejects)
    assert found == [("contradiction", "1"), ("contradiction", "2")], rejects
    first, second = sorted(rejects, key=lambda r: r["external_id"])
    assert second["id"] in first["detail"] and first["id"] in second["detail"]


def test_a_seed_labelled_unanswerable_whose_sql_runs_is_a_mislabel(tmp_path):
    wrong = {
        **seed("Which items cost more than 10?", "SELECT name FROM item WHERE price > 10"),
        "label": "unanswerable",
        "category": "missing-column",
    }
    rejects = build(tmp_path, [GOOD, wrong, OTHER])
    assert [(r["reason"], r["external_id"]) for r in rejects] == [("mislabel", "2")], rejects
    assert "returns 35 rows" in rejects[0]["detail"]


def test_questions_differing_only_in_punctuation_inside_are_one_question(tmp_path):
    twin = {"db_id": "shop", "question": "How many items are there, (all)?", "sql": None}
    first = seed("How many items are there -- all?", "SELECT count(*) FROM item")
    rejects = build(tmp_path, [first, twin, OTHER])
    found = sorted((r["reason"], r["external_id"]) for r in rejects)
    assert found == [("contradiction", "1"), ("contradiction", "2")], rejects


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_the_seed_key_and_the_release_key_normalize_a_question_alike(question):
    frame = pl.DataFrame({"question": [question]})
    released = frame.select(normalized_question())["question"][0]
    assert question_key("db", question) == ("db", released)
