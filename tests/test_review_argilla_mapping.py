"""Items to Argilla records and responses to decisions: the pure mapping functions.

The response JSON below has the shape of the real server's records listing
(``GET /api/v1/datasets/{id}/records?include=responses``), as the contract tests in
``test_review_argilla.py`` see it.
"""

from __future__ import annotations

import pytest

from answerable.annotation.argilla_mapping import (
    CATEGORY_OPTIONS,
    HARDNESS,
    decisions_from_record,
    item_from_record,
    record_for,
    record_problem,
    settings_spec,
)
from answerable.annotation.decisions import CATEGORY_LABEL, DecisionError, check_decision
from answerable.annotation.excerpt import schema_excerpt
from answerable.builders.drafting.categories import definitions
from answerable.schemas import validate
from tests.review_helpers import by_category, demo_schemas, review_items

ITEMS = by_category(review_items())
USERS = {
    "11111111-1111-1111-1111-111111111111": "ana",
    "22222222-2222-2222-2222-222222222222": "ben",
}


def test_settings_spec_has_the_fields_questions_and_distribution():
    spec = settings_spec(min_submitted=3)
    names = ["question", "schema", "sql", "result", "readings", "explanation"]
    assert [f["name"] for f in spec["fields"]] == names
    assert [f["required"] for f in spec["fields"]] == [True, False, False, False, False, False]
    questions = {q["name"]: q for q in spec["questions"]}
    assert questions["verdict"]["labels"] == ["accept", "reject", "relabel"]
    assert questions["verdict"]["required"] is True
    assert questions["category"]["labels"] == ["answerable", *CATEGORY_LABEL]
    assert questions["corrected_question"]["kind"] == "text"
    assert (questions["comment"]["kind"], questions["comment"]["required"]) == ("text", False)
    for entry in definitions():  # label descriptions and guidelines: the taxonomy text
        described = questions["category"]["label_descriptions"][entry.name]
        assert described == f"{entry.label}: {entry.definition}"
        assert entry.definition in spec["guidelines"] and entry.example in spec["guidelines"]
    assert (questions["spans"]["field"], questions["spans"]["labels"]) == (
        "question",
        ["AMB", "UNK", "COL", "VAL"],
    )
    assert spec["metadata"] == {
        "terms": ["database", "generator", "item_label", "item_category"],
        "integers": ["hardness", "row_count", "tables"],
    }
    assert spec["min_submitted"] == 3


def test_record_of_a_drafted_item(demo_dir):
    item = ITEMS["column-ambiguous"]
    excerpt = schema_excerpt(item, demo_schemas(demo_dir)["clinic"])
    record = record_for(item, excerpt)
    assert record["id"] == item["id"]
    assert record["fields"]["question"] == item["question"]
    assert "~~length_of_stay~~ *(dropped)*" in record["fields"]["schema"]
    assert "**length_days** *(added)*" in record["fields"]["schema"]
    assert "sql" not in record["fields"]  # no gold SQL: the optional field stays empty
    assert record["fields"]["explanation"].startswith("**Trigger:** added-columns")
    assert record["metadata"] == {
        "database": "clinic",
        "generator": "add_synonyms_v1",
        "item_label": "ambiguous",
        "item_category": "column-ambiguous",
    }
    assert record["suggestions"] == [
        {"question_name": "category", "value": "column-ambiguous", "agent": "add_synonyms_v1"},
        {
            "question_name": "spans",
            "value": [{"label": "AMB", "start": 0, "end": 8}],
            "agent": "add_synonyms_v1",
        },
    ]
    assert record_problem(record) is None


def test_record_of_an_answerable_item_and_back():
    item = ITEMS["answerable-league"]
    record = record_for(item, None)
    assert record["fields"]["sql"].startswith("```sql\nSELECT COUNT(*)")
    assert record["metadata"]["item_category"] == "answerable"
    meta, result = item["sql_meta"], item["result"]
    assert record["metadata"]["row_count"] == result["row_count"]
    assert record["metadata"]["tables"] == len(meta["tables"])
    assert record["metadata"]["hardness"] == HARDNESS[meta["hardness"]]
    assert record["fields"]["result"].startswith(f"| {result['columns'][0]} |")
    assert f"| {result['rows'][0][0]} |" in record["fields"]["result"]
    back = item_from_record({"external_id": item["id"], **record})
    assert (back["id"], back["label"], back["category"], back["db_id"]) == (
        item["id"],
        "answerable",
        None,
        "league",
    )


def test_record_problems_are_caught_before_sending():
    record = record_for(ITEMS["vague-word"], None)
    record["suggestions"][1]["value"][0]["end"] = 999
    assert "outside the question" in record_problem(record)
    record = record_for(dict(ITEMS["vague-word"], category="sort-of-vague"), None)
    assert "not in the taxonomy" in record_problem(record)
    assert "answerable" in CATEGORY_OPTIONS


def response(user: str, status: str, values, at="2026-03-01T10:00:00.123456"):
    return {
        "user_id": user,
        "status": status,
        "values": values,
        "inserted_at": at,
        "updated_at": at,
    }


def record_of(key: str, *responses: dict) -> dict:
    """A listing record of the fixture item ``key`` with these responses."""
    item = ITEMS[key]
    return {
        "external_id": item["id"],
        "fields": {"question": item["question"]},
        "metadata": record_for(item, None)["metadata"],
        "responses": list(responses),
    }


def test_submitted_responses_become_decisions():
    ana, ben = list(USERS)
    relabel = {"verdict": {"value": "relabel"}, "category": {"value": "vague-question"}}
    relabel["spans"] = {"value": [{"label": "VAL", "start": 29, "end": 37}]}
    accept = {"verdict": {"value": "accept"}}
    accept["corrected_question"] = {"value": "  Which patients came in this month?  "}
    record = record_of(
        "vague-word", response(ana, "submitted", relabel), response(ben, "submitted", accept)
    )
    decisions, problems = decisions_from_record(record, USERS)
    assert problems == []
    first, second = decisions
    assert (first["annotator"], first["label"], first["category"]) == (
        "ana",
        "ambiguous",
        "vague-question",
    )
    assert first["spans"] == [{"start": 29, "end": 37, "tag": "VAL"}]
    assert first["time"] == "2026-03-01T10:00:00.123456Z"
    assert (second["annotator"], second["verdict"], second["category"]) == ("ben", "accept", None)
    assert second["question"] == "Which patients came in this month?"
    for decision in decisions:
        validate("review_decision", decision)


def test_spans_given_with_a_corrected_question_are_dropped_and_reported():
    ana, _ = list(USERS)
    values = {"verdict": {"value": "accept"}}
    values["corrected_question"] = {"value": "Which patients came in this month?"}
    values["spans"] = {"value": [{"label": "VAL", "start": 29, "end": 37}]}
    record = record_of("vague-word", response(ana, "submitted", values))
    [decision], [problem] = decisions_from_record(record, USERS)
    assert decision["spans"] is None and decision["question"].endswith("this month?")
    assert "spans not kept" in problem


def test_null_empty_draft_and_discarded_responses():
    ana, ben = list(USERS)
    stranger = "33333333-3333-3333-3333-333333333333"
    empty = {"verdict": {"value": "reject"}, "category": {"value": None}}
    empty |= {"corrected_question": {"value": ""}, "spans": {"value": []}}
    record = record_of(
        "out-of-scope",
        response(ana, "discarded", None),
        response(ben, "draft", {"verdict": {"value": "accept"}}),
        response(stranger, "submitted", empty),
        response(ana, "submitted", None),
        response(ben, "submitted", {"verdict": None}),
        response(ben, "submitted", {"verdict": {"value": "shrug"}}),
    )
    decisions, problems = decisions_from_record(record, USERS)
    [kept] = decisions
    assert (kept["annotator"], kept["verdict"]) == (stranger, "reject")
    assert kept["question"] is None and kept["spans"] is None and kept["category"] is None
    assert len(problems) == 3
    assert all("no readable verdict" in p for p in problems)
    assert "response of ana" in problems[0] and "'shrug'" in problems[2]


def test_relabel_to_answerable_and_relabel_without_category():
    ana, _ = list(USERS)
    values = {"verdict": {"value": "relabel"}, "category": {"value": "answerable"}}
    record = record_of("vague-word", response(ana, "submitted", values))
    [decision], _ = decisions_from_record(record, USERS)
    assert (decision["label"], decision["category"]) == ("answerable", None)
    record["responses"][0]["values"]["category"] = {"value": None}
    [decision], _ = decisions_from_record(record, USERS)
    assert decision["label"] is None  # refused later by check_decision: "relabel without label"


def test_an_accept_under_another_category_is_a_relabel_and_comments_are_kept():
    ana, ben = list(USERS)
    moved = {"verdict": {"value": "accept"}, "category": {"value": "vague-question"}}
    moved["comment"] = {"value": " no cut-off for recent "}
    same = {"verdict": {"value": "accept"}, "category": {"value": "vague-word"}}
    record = record_of(
        "vague-word", response(ana, "submitted", moved), response(ben, "submitted", same)
    )
    (first, second), problems = decisions_from_record(record, USERS)
    assert problems == []
    assert (first["verdict"], first["label"], first["category"]) == (
        "relabel",
        "ambiguous",
        "vague-question",
    )
    assert first["comment"] == "no cut-off for recent"
    assert (second["verdict"], second["category"]) == ("accept", None)  # the suggestion kept


def test_readings_as_markdown_stored_or_from_the_trigger():
    item = dict(ITEMS["column-ambiguous"])
    item["trigger"] = dict(
        item["trigger"], readings=["SELECT 1", "SELECT 2"], candidates=["t.a", "t.b"]
    )
    shown = record_for(item, None)["fields"]["readings"]
    assert "**t.a**\n\n```sql\nSELECT 1\n```" in shown and "**t.b**" in shown
    assert "readings" not in record_for(item, None)["fields"]["explanation"]
    item["readings"] = [
        {
            "name": "t.a",
            "sql": "SELECT a FROM t",
            "columns": ["a"],
            "rows": [[1], [None]],
            "row_count": 2,
            "result_hash": "h",
        }
    ]
    shown = record_for(item, None)["fields"]["readings"]
    assert (
        shown == "**t.a**\n\n```sql\nSELECT a FROM t\n```\n\n| a |\n| --- |\n| 1 |\n| NULL |"
        "\n\n*2 row(s)*"
    )
    assert "readings" not in record_for(ITEMS["vague-word"], None)["fields"]


def test_corrected_sql_is_a_correction_and_an_accept_with_it_makes_answerable():
    ana, ben = list(USERS)
    sql = "SELECT count(*) FROM patients"
    given = {"verdict": {"value": "accept"}, "corrected_sql": {"value": f" {sql} "}}
    moved = {**given, "verdict": {"value": "relabel"}, "category": {"value": "vague-question"}}
    record = record_of("vague-word", response(ana, "submitted", given))
    record["responses"].append(response(ben, "submitted", moved))
    (fixed, kept), problems = decisions_from_record(record, USERS)
    assert problems == [] and fixed["sql"] == kept["sql"] == sql
    item = item_from_record(record)
    checked = check_decision(fixed, item, "record")  # as the pull checks it
    assert (checked["verdict"], checked["label"], checked["category"]) == (
        "relabel",
        "answerable",
        None,
    )
    with pytest.raises(DecisionError, match="gold SQL belongs to answerable items"):
        check_decision(kept, item, "record")
    assert any(q["name"] == "corrected_sql" for q in settings_spec(1)["questions"])
