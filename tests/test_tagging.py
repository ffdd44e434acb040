"""Spans on answerable items and responses on problematic ones (DTE tags every question)."""

from __future__ import annotations

import json
import re

from answerable.builders.counterfactual.bio import bio_tags
from answerable.builders.counterfactual.explain import RESPONSES
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.builders.sources.common import DatabaseRef
from answerable.builders.tagging import answerable_spans, tag_items
from answerable.kernel.records import read_parquet
from tests.conftest import REPO

SHOP = DatabaseSchema(
    "shop", [Table("item", [Column("item_id", "INT"), Column("name"), Column("price", "REAL")])]
)
DATABASES = {"shop": DatabaseRef("shop", None, SHOP)}


def item(question, sql, label="answerable", category=None, **more):
    return {
        "id": question[:8],
        "db_id": "shop",
        "question": question,
        "sql": sql,
        "label": label,
        "category": category,
        **more,
    }


def test_an_answerable_question_is_tagged_col_and_val():
    found = answerable_spans(
        item("What is the price of the Lamp?", "SELECT price FROM item WHERE name = 'Lamp'"), SHOP
    )
    assert [(s["text"], s["tag"], s["concept"]) for s in found] == [
        ("price", "COL", "item.price"),
        ("Lamp", "VAL", "item.name"),
    ]
    lamp = item("What is the price of the Lamp?", "SELECT price FROM item WHERE name = 'Lamp'")
    tagged = tag_items([lamp], DATABASES)[0]
    assert tagged["spans"] == found and "spans" not in lamp
    assert bio_tags(tagged)["tags"] == ["O", "O", "O", "B-COL", "O", "O", "B-VAL", "O"]


def test_spans_already_there_and_sql_that_does_not_bind_are_left_alone():
    own = [{"start": 0, "end": 4, "tag": "COL", "text": "What", "concept": "item.name"}]
    kept = item("What is the price?", "SELECT price FROM item", spans=own)
    broken = item("What is the colour?", "SELECT colour FROM item")
    assert tag_items([kept, broken], DATABASES) == [kept, broken]


def test_a_problematic_item_gets_its_categorys_response_unless_it_has_one():
    bare = item("Hello there!", None, "unanswerable", "small-talk")
    own = item("Price of unicorns?", None, "unanswerable", "missing-value", explanation="mine")
    tagged = tag_items([bare, own], DATABASES)
    assert tagged[0]["explanation"] == RESPONSES["small-talk"]
    assert tagged[1]["explanation"] == "mine"


def test_every_problematic_category_of_the_schema_has_a_response():
    schema = json.loads((REPO / "schemas" / "item.schema.json").read_text())
    names = {c for c in schema["properties"]["category"]["enum"] if c}
    assert names == set(RESPONSES)


def test_the_demo_builds_answerable_items_with_spans(demo_build):
    cwd, _ = demo_build
    items = read_parquet(cwd / ".answerable" / "answerable-demo" / "candidates.parquet")
    answerable = [i for i in items if i["label"] == "answerable"]
    with_spans = [i for i in answerable if i.get("spans")]
    assert len(with_spans) / len(answerable) > 0.8
    for i in with_spans:
        assert {s["tag"] for s in i["spans"]} <= {"COL", "VAL"}
        for span in i["spans"]:  # the text itself, or its words (a comma between left out)
            text = i["question"][span["start"] : span["end"]]
            assert span["text"] in (text, " ".join(re.findall(r"[A-Za-z0-9]+", text)))
    problematic = [i for i in items if i["label"] != "answerable"]
    assert problematic and all(i.get("explanation") for i in problematic)
