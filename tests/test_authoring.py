"""Authoring errors (templates, recipes) stop validate and build with exit 1 and one
line naming the file, the template and the fix; data outcomes stay rejects."""

from __future__ import annotations

import pytest
import yaml

from answerable.kernel.records import read_jsonl
from tests.conftest import run_in
from tests.test_cli import assert_clean_error, seed, tiny_project

GOOD = {
    "id": "shop.price_of",
    "questions": ["What does item {item_id} cost?"],
    "sql": "SELECT price FROM item WHERE id = :item_id",
    "placeholders": {"item_id": {"column": "item.id"}},
}

# (case, change to the good template, words the one line must hold)
TEMPLATE_CASES = [
    (
        "question placeholder missing from the SQL",
        {"questions": ["What does item {item_id} cost in {currency}?"]},
        ["shop.price_of", "questions[0] uses currency"],
    ),
    (
        "SQL placeholder without values",
        {
            "sql": "SELECT price FROM item WHERE id = :item_id AND name = :name",
            "questions": ["What does item {item_id} named {name} cost?"],
        },
        ["shop.price_of", "no values for name"],
    ),
    ("wrong type", {"questions": "What does item {item_id} cost?"}, ["shop.price_of", "questions"]),
    ("unknown db_id", {"db_id": "shopp"}, ["shop.price_of", "shopp", "fix: use one of: shop"]),
    (
        "placeholder the SQL does not use",
        {"placeholders": {"item_id": {"column": "item.id"}, "x": {"values": [1]}}},
        ["placeholders x are not in the SQL"],
    ),
    ("a write", {"sql": "DELETE FROM item WHERE id = :item_id"}, ["must be a query"]),
]


def templated_project(tmp_path, template: dict):
    recipe = tiny_project(
        tmp_path,
        [seed("How many items are there?", "SELECT count(*) FROM item")],
        extra="templates:\n  paths: [templates.yaml]\n",
    )
    (tmp_path / "templates.yaml").write_text(
        yaml.safe_dump({"db_id": "shop", "templates": [template]}, sort_keys=False)
    )
    return recipe


@pytest.mark.parametrize(
    ("case", "change", "words"), TEMPLATE_CASES, ids=[c[0] for c in TEMPLATE_CASES]
)
@pytest.mark.parametrize("command", ["validate", "build"])
def test_template_authoring_errors_exit_1(tmp_path, case, change, words, command):
    recipe = templated_project(tmp_path, {**GOOD, **change})
    result = run_in(tmp_path, command, recipe)
    assert_clean_error(result, "templates.yaml", *words)
    assert not (tmp_path / "releases").exists()


def test_duplicate_template_ids_exit_1(tmp_path):
    recipe = templated_project(tmp_path, GOOD)
    (tmp_path / "more.yaml").write_text(yaml.safe_dump({"db_id": "shop", "templates": [GOOD]}))
    recipe.write_text(recipe.read_text().replace("[templates.yaml]", "[templates.yaml, more.yaml]"))
    assert_clean_error(run_in(tmp_path, "build", recipe), "shop.price_of", "used twice")


def test_a_good_template_builds_and_data_outcomes_stay_rejects(tmp_path):
    empty = {
        **GOOD,
        "id": "shop.none",
        "sql": "SELECT name FROM item WHERE id = :item_id AND price < 0",
    }
    recipe = templated_project(tmp_path, GOOD)
    (tmp_path / "templates.yaml").write_text(
        yaml.safe_dump({"db_id": "shop", "templates": [GOOD, empty]}, sort_keys=False)
    )
    assert run_in(tmp_path, "validate", recipe).exit_code == 0
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    rejects = list(read_jsonl(tmp_path / ".answerable" / "tiny" / "reports" / "rejects.jsonl"))
    assert {r["reason"] for r in rejects if r.get("template") == "shop.none"} == {"empty-result"}


def test_two_sources_with_the_same_name_exit_1(tmp_path):
    recipe = tiny_project(
        tmp_path, [seed("How many items are there?", "SELECT count(*) FROM item")]
    )
    text = recipe.read_text()
    twice = text + text[text.index("  - name:") :]
    recipe.write_text(twice)
    for command in ("validate", "build"):
        assert_clean_error(
            run_in(tmp_path, command, recipe), "sources[1].name", "shop-seeds", "sources[0]"
        )
