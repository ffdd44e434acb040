"""A new counterfactual generator is one module and one registry line: a toy generator,
registered only in :data:`GENERATORS`, is proposed, verified and emitted by the
counterfactual step on a tiny database, its items proved on their edited copies;
nothing else names it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from answerable.builders.counterfactual import GENERATORS, Config, run_counterfactual
from answerable.builders.counterfactual import verify as checks
from answerable.builders.counterfactual.generators.base import EditEnv, Parent, Proposal, Skip
from answerable.builders.counterfactual.generators.helpers import split, tag_at
from answerable.builders.counterfactual.script import drop_column
from answerable.builders.counterfactual.survey import survey_env, verified_parents
from answerable.builders.executor import Limits, ReadOnlyDatabase


class DropFirstColumn:
    """A toy generator: drop the first (sorted) column the gold SQL reads, keep the
    question; the label holds when the gold SQL no longer binds on the copy."""

    name = "toy_drop_first_v1"
    label = "unanswerable"
    category = "missing-column"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Drop the first read column that the question mentions."""
        grounded = sorted(parent.grounding.columns)
        if not grounded:
            return "no-mention"
        target = grounded[0]
        mention = parent.grounding.columns[target]
        return Proposal(
            self.name,
            parent,
            [drop_column(*split(target))],
            parent.item["question"],
            parent.grounding.spans(tag_at(mention, "UNK")),
            {"kind": "missing-column", "column": target, "span": mention.text},
            {"target": target},
            mention=mention,
        )

    def verify(self, proposal: Proposal, env: EditEnv):
        """The gold SQL does not bind on the edited copy."""
        parent = proposal.parent
        failure = checks.gold_does_not_bind(
            parent.item["sql"],
            env.binding_error(parent, proposal.ops),
            env.edited_database(parent, proposal.ops),
        )
        if failure is None:
            proposal.explanation = f"No column holds the {proposal.mention.text}."
        return failure


@pytest.fixture
def toy(monkeypatch):
    """The toy generator registered, as its one registry line would register it."""
    generator = DropFirstColumn()
    monkeypatch.setitem(GENERATORS, generator.name, generator)
    return generator


def tiny_source(folder: Path) -> dict:
    """A shop database with two products and a JSONL of two questions over it."""
    (folder / "dbs").mkdir(parents=True)
    with sqlite3.connect(folder / "dbs" / "shop.sqlite") as db:
        db.execute("CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
        db.executemany(
            "INSERT INTO products VALUES (?, ?, ?)", [(1, "Lamp", 20.0), (2, "Desk", 150.0)]
        )
    questions = [
        {"db_id": "shop", "question": "What is the price of each product?",
         "sql": "SELECT price FROM products"},
        {"db_id": "shop", "question": "List the name of every product.",
         "sql": "SELECT name FROM products"},
    ]  # fmt: skip
    (folder / "shop.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return {"name": "shop", "format": "jsonl", "path": "shop.jsonl", "databases": "dbs"}


def test_a_registered_toy_generator_makes_verified_items(toy, tmp_path):
    spec = tiny_source(tmp_path)
    parents, databases = verified_parents(spec, tmp_path, tmp_path / "work")
    assert len(parents.items) == 2
    config = Config(rate=1.0, control_rate=0.0, edits=(toy.name,))
    env = survey_env(databases, tmp_path / "work", 13, Limits(2.0, 100), config)
    try:
        output, stats = run_counterfactual(parents.items, env, config)
    finally:
        env.close()
    assert output.rejects == [] and stats.parents == 2
    made = sorted(output.items, key=lambda i: i["trigger"]["column"])
    assert [i["trigger"]["column"] for i in made] == ["products.name", "products.price"]
    for item in made:
        assert item["provenance"]["generator"] == toy.name
        assert (item["label"], item["category"]) == ("unanswerable", "missing-column")
        assert item["edit"]["ops"] == [drop_column(*split(item["trigger"]["column"]))]
        assert item["explanation"].startswith("No column holds the ")
    variant = made[0]["db_variant"]
    copies = list((tmp_path / "work").rglob(f"{variant}*.sqlite"))
    assert copies, variant  # the edit was materialized, and the gold SQL fails on it
    copy = ReadOnlyDatabase(copies[0], base=databases["shop"].path)
    with copy as db, pytest.raises(Exception, match="name"):
        db.execute("SELECT name FROM products")


def test_an_unregistered_generator_is_not_run(tmp_path):
    spec = tiny_source(tmp_path)
    parents, databases = verified_parents(spec, tmp_path, tmp_path / "work")
    config = Config(rate=1.0, control_rate=0.0, edits=("toy_drop_first_v1",))
    env = survey_env(databases, tmp_path / "work", 13, Limits(2.0, 100), config)
    try:
        with pytest.raises(KeyError, match="toy_drop_first_v1"):
            run_counterfactual(parents.items, env, config)
    finally:
        env.close()
