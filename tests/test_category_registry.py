"""A new drafted category is one module and one registry line: a toy category, its text
and its four functions in one place and registered only in :data:`CATEGORIES`, is
drafted offline, checked, twinned and shown in a prompt by a build through the command a
user types; nothing else names it."""

from __future__ import annotations

import random

import pytest
import sqlglot
import yaml
from sqlglot import exp

from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.category import Category
from answerable.builders.drafting.checks import Failure, check_trigger_in_question
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft, Job, main_table
from answerable.builders.drafting.offline import offline_draft
from answerable.builders.drafting.per_category import database_examples, example_questions
from answerable.builders.drafting.text import humanize
from answerable.builders.drafting.twins import Twin
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.kernel.records import read_jsonl, read_parquet
from answerable.schemas import validate
from tests.conftest import DEMO_RECIPE, REPO, run_in

# ---- the toy category, as its own module would hold it ----------------------------------


def ask_prize(job: Job, context: DatabaseContext, rng: random.Random) -> Draft | None:
    """Whether the rows of the parent's main table won a prize: no database holds it."""
    table = main_table(job.parent)
    if table is None:
        return None
    prize = rng.choice(["Nobel prize", "Pulitzer prize"])
    return offline_draft(job, f"Which {humanize(table)} won a {prize}?", prize, "ask_prize")


def check_prize(draft: Draft, context: DatabaseContext) -> Failure | None:
    """The prize is in the question; the league's drafts are refused (so that the
    check shows in the rejects)."""
    if draft.job.db_id == "league":
        return "toy-refused", "the toy keeps no league draft"
    return check_trigger_in_question(draft, context)


def asked_again(job: Job, context: DatabaseContext, rng: random.Random, database) -> Twin:
    """The parent's question behind the toy's opening words, asking how many rows answer
    it (its own SQL: a twin with the parent's SQL unchanged repeats the courtesy twin)."""
    counted = exp.select("COUNT(*)").from_(sqlglot.parse_one(job.parent["sql"]).subquery("a"))
    question = f"Tell me how many rows answer: {job.parent['question']}"
    return Twin(job, question, counted.sql(), "asked_again", "Tell me")


def prize_examples(table: str, text: tuple, number: tuple, invented: str) -> tuple[dict, ...]:
    """Two examples on the target database's table."""
    return tuple(
        {"question": f"Which {table} won a {prize}?", "trigger": prize, "rationale": "toy"}
        for prize in ("Nobel prize", "Booker prize")
    )


CATEGORY = Category(
    name="external-knowledge",
    label="unanswerable",
    definition="The answer needs a fact from outside the database.",
    trigger="the outside fact",
    explanation="'{trigger}' is not in this database.",
    uses_parent=False,
    examples=({"question": "Which books won a Hugo award?", "trigger": "Hugo award",
               "rationale": "no award data"},),
    offline_rule=ask_prize,
    check=check_prize,
    twin=asked_again,
    example_writer=prize_examples,
)  # fmt: skip


@pytest.fixture
def toy(monkeypatch):
    """The toy category's one registry line."""
    monkeypatch.setitem(CATEGORIES, CATEGORY.name, CATEGORY)
    return CATEGORY


def toy_recipe(tmp_path) -> str:
    """The demo over two seeds of each database, drafting every registered category
    (the recipe names none) twice per parent, half the jobs making a twin."""
    recipe = yaml.safe_load(DEMO_RECIPE.read_text())
    for source in recipe["sources"]:
        source["path"] = str(REPO / "raw" / "demo" / source["path"])
        source["limit"] = 2
    recipe.pop("templates", None)
    recipe.pop("counterfactual", None)
    recipe["drafting"] = {"per_item": 2, "twin_rate": 0.5, "candidates": {"per_item": 0}}
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return str(path)


def test_a_registered_toy_category_is_drafted_checked_and_twinned(toy, tmp_path):
    result = run_in(tmp_path, "build", toy_recipe(tmp_path), "--no-release")
    assert result.exit_code == 0, result.output
    work = tmp_path / ".answerable" / "answerable-demo"
    items = read_parquet(work / "candidates.parquet")
    drafted = [i for i in items if i["category"] == toy.name]
    assert drafted, "no toy draft kept"
    for item in drafted:
        validate("item", item)
        assert item["db_id"] == "clinic"  # the league's failed the toy's check
        assert item["label"] == "unanswerable"
        assert item["provenance"]["params"]["transform"] == "ask_prize"
        assert item["explanation"] == f"'{item['trigger']['text']}' is not in this database."
    twins = [i for i in items if i["provenance"]["params"].get("twin") == "asked_again"]
    assert twins and all(i["question"].startswith("Tell me how many rows") for i in twins)
    assert all(i["label"] == "answerable" and i["result"] for i in twins)
    rejects = list(read_jsonl(work / "reports" / "rejects.jsonl"))
    refused = [r for r in rejects if r["reason"] == "toy-refused"]
    assert refused and all(r["db_id"] == "league" for r in refused)


def test_a_registered_toy_categorys_examples_go_into_prompts_and_copy_checks(toy):
    table = Table("players", [Column("name", "TEXT"), Column("height_cm", "INTEGER")])
    values = {"players": {"name": ["Ann Lee"], "height_cm": [181]}}
    context = DatabaseContext("league", DatabaseSchema("league", [table]), values)
    shown = [e["question"] for e in database_examples(toy, context)]
    assert shown == ["Which players won a Nobel prize?", "Which players won a Booker prize?"]
    assert set(shown) <= set(example_questions(context))  # a model copying one is caught
    assert "Which books won a Hugo award?" in example_questions(context)
