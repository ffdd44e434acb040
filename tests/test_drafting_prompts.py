"""Prompts and replies of drafting: pure functions, no model, no network."""

from __future__ import annotations

import doctest
import importlib
import json

import pytest

from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.context import load_context
from answerable.builders.drafting.prompts import (
    create_table,
    draft_messages,
    prompt_hash,
    schema_text,
    sql_messages,
)
from answerable.builders.drafting.replies import (
    DRAFT_REPLY,
    ReplyError,
    parse_reply,
    queries_by_id,
    retry_message,
    sql_reply,
)
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import Column, DatabaseSchema, Table
from tests.conftest import REPO

MODULES = [
    "cache",
    "checks",
    "context",
    "prompts",
    "replies",
    "text",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(f"answerable.builders.drafting.{name}")
    failed, _tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failed == 0


def shop() -> DatabaseSchema:
    item = Table(
        "item",
        [Column("id", "INTEGER"), Column("name", "TEXT"), Column("price", "REAL")],
        ["id"],
    )
    sale = Table(
        "sale",
        [Column("id", "INTEGER"), Column("item_id", "INTEGER")],
        ["id"],
        [("item_id", "item", "id")],
    )
    return DatabaseSchema("shop", [item, sale])


def test_create_table_shows_three_values_per_column_and_the_keys():
    values = {"id": [1, 2, 3], "name": ["Pen", "O'Brien's ink", "x" * 60], "price": [1.5]}
    expected = (REPO / "tests/fixtures/drafting/create_table.sql").read_text()
    text = create_table(shop().tables[0], values) + "\n\n" + create_table(shop().tables[1], {})
    assert text + "\n" == expected


def test_schema_text_of_a_real_database_has_every_table(demo_dir):
    schema = DatabaseSchema.from_sqlite(demo_dir / "clinic.sqlite", "clinic")
    with ReadOnlyDatabase(demo_dir / "clinic.sqlite") as database:
        context = load_context("clinic", schema, database)
    text = schema_text(context)
    assert text.count("CREATE TABLE") == len(schema.tables)
    assert "gender TEXT, -- e.g. 'M', 'F'" in text
    assert all(len(values) <= 3 for table in context.values.values() for values in table.values())


@pytest.mark.parametrize("name", list(CATEGORIES))
def test_each_category_prompt_holds_schema_definition_examples(name):
    category = CATEGORIES[name]
    messages = draft_messages(category, "CREATE TABLE t (a INTEGER);", "How many t?", "the table t")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "CREATE TABLE t (a INTEGER);" in user
    assert f"Category: {name} ({category.label})" in user
    assert category.definition in user
    assert 2 <= user.count("Reply: {") <= 3
    assert ("Parent question: How many t?" in user) == category.uses_parent
    assert "Focus: the table t" in user


def test_the_parent_is_shown_for_exactly_the_transforming_categories():
    transforming = {name for name, c in CATEGORIES.items() if c.uses_parent}
    assert transforming == {"vague-word", "ambiguous-reference", "out-of-scope"}


def test_examples_are_valid_replies_and_not_about_the_demo():
    for category in CATEGORIES.values():
        assert 2 <= len(category.examples) <= 3
        for example in category.examples:
            parse_reply(_json(example))
            assert "patient" not in example["question"].lower()


def _json(example: dict) -> str:
    return json.dumps({k: example[k] for k in ("question", "trigger", "rationale")})


def test_prompt_hash_is_stable_and_sensitive():
    one = draft_messages(CATEGORIES["vague-word"], "S", "Q1")
    assert prompt_hash(one) == prompt_hash(draft_messages(CATEGORIES["vague-word"], "S", "Q1"))
    assert prompt_hash(one) != prompt_hash(draft_messages(CATEGORIES["vague-word"], "S", "Q2"))


def test_sql_prompt_asks_for_a_query_per_question_id():
    questions = [("q1", "How many t?"), ("q2", "Which a\nare large?")]
    messages = sql_messages("CREATE TABLE t (a INTEGER);", questions)
    assert "Questions:\nq1: How many t?\nq2: Which a are large?\n" in messages[1]["content"]
    assert '{"queries": [{"id": ..., "sql": ...}, ...]}' in messages[0]["content"]


# ---- replies -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"question": "Recent admissions?", "trigger": "Recent", "rationale": "r"}',
        'Sure! Here it is:\n{"question": "Recent admissions?", "trigger": "Recent", '
        '"rationale": "r"}\nHope that helps.',
        '```json\n{"question": " Recent admissions? ", "trigger": "Recent", "rationale": "r", '
        '"extra": 1}\n```',
    ],
)
def test_replies_are_read_through_fences_and_chatter(text):
    assert parse_reply(text) == {
        "question": "Recent admissions?",
        "trigger": "Recent",
        "rationale": "r",
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no json here", "holds no JSON object"),
        ('{"question": "Q?", "trigger": ', "holds no JSON object"),
        ('{"question": "Q?", "trigger": "x",}', "not valid JSON"),
        ('{"question": "Q?", "rationale": "r"}', "'trigger' is a required property"),
        (
            '{"question": "Q?", "trigger": 3, "rationale": "r"}',
            "trigger: 3 is not of type 'string'",
        ),
        ('{"question": "Q?", "trigger": "", "rationale": "r"}', "trigger"),
        ("", "holds no JSON object"),
    ],
)
def test_bad_replies_raise_with_a_reason(text, problem):
    with pytest.raises(ReplyError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_reply(text)


def test_the_retry_message_carries_the_validation_error():
    with pytest.raises(ReplyError) as caught:
        parse_reply('{"question": "Q?"}')
    message = retry_message(caught.value)
    assert message["role"] == "user"
    assert "'trigger' is a required property" in message["content"]
    assert "question, trigger, rationale" in message["content"]
    assert "queries" in retry_message(caught.value, sql_reply(["q1"]))["content"]


def test_sql_replies_carry_a_query_per_id_and_may_leave_some_out():
    schema = sql_reply(["q1", "q2"])
    whole = parse_reply(
        '{"queries": [{"id": "q1", "sql": " SELECT 1 "}, {"id": "q2", "sql": "SELECT 2"}]}', schema
    )
    assert queries_by_id(whole) == {"q1": "SELECT 1", "q2": "SELECT 2"}
    partial = parse_reply('{"queries": [{"id": "q2", "sql": "SELECT 2"}]}', schema)
    assert queries_by_id(partial) == {"q2": "SELECT 2"}
    twice = '{"queries": [{"id": "q1", "sql": "SELECT 1"}, {"id": "q1", "sql": "SELECT 9"}]}'
    assert queries_by_id(parse_reply(twice, schema)) == {"q1": "SELECT 1"}
    for bad in (
        '{"sql": "SELECT 1"}',  # the one-question reply
        '{"queries": [{"id": "q7", "sql": "SELECT 1"}]}',  # an id nobody asked for
        '{"queries": [{"id": "q1"}]}',
        '{"queries": [{"id": "q1", "sql": "SELECT 1"}',
    ):
        with pytest.raises(ReplyError):
            parse_reply(bad, schema)
    assert DRAFT_REPLY["required"] == ["question", "trigger", "rationale"]
