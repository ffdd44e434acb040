"""The record contracts: each kind accepts a good record and names the fault of a bad one."""

from __future__ import annotations

import pytest

from answerable.kernel.errors import RecordError
from answerable.schemas import KINDS, validate, validator

GOOD = {
    "source_example": {
        "id": "0123456789abcdef",
        "source": "s",
        "db_id": "d",
        "question": "q?",
        "sql": "SELECT 1",
        "label": "answerable",
    },
    "template": {
        "id": "t1",
        "db_id": "clinic",
        "questions": ["How many {drug} orders?"],
        "sql": "SELECT count(*) FROM prescriptions WHERE drug = {drug}",
        "placeholders": {"drug": {"column": "prescriptions.drug", "type": "text"}},
        "quota": 5,
    },
    "item": {
        "id": "0123456789abcdef",
        "db_id": "d",
        "question": "q?",
        "sql": None,
        "label": "unanswerable",
        "category": "missing-column",
        "subtype": "related",
        "spans": [{"start": 0, "end": 1, "tag": "UNK", "text": "q", "concept": "t.c"}],
        "trigger": {"kind": "dropped-column", "column": "t.c"},
        "provenance": {"generator": "drop_column_v1", "parent": "fedcba9876543210"},
    },
    "review_decision": {
        "item_id": "0123456789abcdef",
        "annotator": "ana",
        "verdict": "relabel",
        "label": "ambiguous",
        "category": "vague-word",
        "time": "2026-11-21T10:00:00Z",
    },
    "manifest": {
        "dataset": "d",
        "version": "0.1.0",
        "seed": 1,
        "tool": {"name": "answerable", "version": "0.1.0"},
        "recipe_signature": "0123456789abcdef",
        "counts": {"total": 0, "by_label": {}},
        "files": [],
    },
    "recipe": {
        "dataset": "demo",
        "version": "0.1.0",
        "seed": 1,
        "sources": [{"name": "a", "format": "jsonl", "path": "a.jsonl", "databases": "dbs"}],
    },
    "prediction": {"id": "0123456789abcdef", "sql": None, "label": "ambiguous", "tags": ["O"]},
}

BAD = [
    ("item", {**GOOD["item"], "label": "maybe"}, "/label"),
    ("item", {**GOOD["item"], "spans": [{"start": 0, "end": 1, "tag": "XYZ"}]}, "/spans/0/tag"),
    ("item", {**GOOD["item"], "label": "answerable", "category": None}, "/sql"),
    ("item", {**GOOD["item"], "colour": "red"}, "/"),
    ("source_example", {**GOOD["source_example"], "id": "short"}, "/id"),
    ("template", {**GOOD["template"], "questions": []}, "/questions"),
    ("review_decision", {**GOOD["review_decision"], "time": "yesterday"}, "/time"),
    ("review_decision", {**GOOD["review_decision"], "label": None}, "/label"),
    ("prediction", {**GOOD["prediction"], "sql": ""}, "/sql"),
    (
        "recipe",
        {**GOOD["recipe"], "sources": [{"name": "a", "format": "xlsx"}]},
        "/sources/0/format",
    ),
]


@pytest.mark.parametrize("kind", KINDS)
def test_schema_is_valid_draft_2020_12_and_accepts_a_good_record(kind):
    validator(kind).check_schema(validator(kind).schema)
    validate(kind, GOOD[kind])


@pytest.mark.parametrize(("kind", "record", "pointer"), BAD)
def test_error_names_record_id_and_pointer(kind, record, pointer):
    with pytest.raises(RecordError) as caught:
        validate(kind, record)
    assert caught.value.pointer == ("" if pointer == "/" else pointer)
    record_id = record.get("id") or record.get("item_id")
    assert (record_id or "<no id>") in str(caught.value)


def test_unknown_key_lists_the_known_ones():
    with pytest.raises(RecordError, match=r"known keys: .*question"):
        validate("item", {**GOOD["item"], "colour": "red"})


def test_unknown_kind():
    with pytest.raises(ValueError, match="known kinds"):
        validate("nope", {})
