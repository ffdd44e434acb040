"""The compiled validator gives jsonschema's verdict on every demo record and every bad one."""

from __future__ import annotations

import copy

import pytest

from answerable.kernel.records import read_parquet
from answerable.release.reader import read_items
from answerable.schemas import KINDS, fast_validator, validator
from tests.test_schemas import BAD, GOOD


def verdicts(kind: str, record) -> tuple[bool, bool]:
    """(compiled, jsonschema) verdicts on one record."""
    return fast_validator(kind).is_valid(record), validator(kind).is_valid(record)


def faults(item: dict) -> list[dict]:
    """One item spoiled in several ways, each of which the item schema forbids."""
    spoiled = []
    for key, value in (("label", "maybe"), ("id", "short"), ("spans", "x"), ("colour", 1)):
        record = copy.deepcopy(item)
        record[key] = value
        spoiled.append(record)
    missing = copy.deepcopy(item)
    del missing["question"]
    spoiled.append(missing)
    if item.get("spans"):
        bad_span = copy.deepcopy(item)
        bad_span["spans"][0]["tag"] = "XYZ"
        spoiled.append(bad_span)
    return spoiled


@pytest.fixture(scope="module")
def demo_items(demo_build) -> list[dict]:
    cwd, _result = demo_build
    candidates = read_parquet(next(cwd.glob(".answerable/*/candidates.parquet")))
    released = read_items(next(cwd.glob("releases/*/*/manifest.json")).parent)
    assert candidates and released
    return candidates + released


def test_same_verdict_on_every_demo_record(demo_items):
    for item in demo_items:
        assert verdicts("item", item) == (True, True), item["id"]


def test_same_verdict_on_every_spoiled_demo_record(demo_items):
    for item in demo_items:
        for record in faults(item):
            assert verdicts("item", record) == (False, False), (item["id"], record)


@pytest.mark.parametrize("kind", KINDS)
def test_same_verdict_on_the_good_records(kind):
    assert verdicts(kind, GOOD[kind]) == (True, True)


@pytest.mark.parametrize(("kind", "record", "pointer"), BAD)
def test_same_verdict_on_the_golden_bad_records(kind, record, pointer):
    assert verdicts(kind, record) == (False, False), pointer


def test_a_decision_span_resolves_through_the_item_schema():
    decision = {**GOOD["review_decision"], "spans": [{"start": 0, "end": 1, "tag": "XYZ"}]}
    assert verdicts("review_decision", decision) == (False, False)
    decision["spans"][0]["tag"] = "UNK"
    assert verdicts("review_decision", decision) == (True, True)


def test_no_verdict_depends_on_the_format_checkers_installed():
    # jsonschema checks "date-time" only where an optional package (rfc3339-validator) is
    # installed, the compiled validator never: the time's pattern decides for both.
    decision = {**GOOD["review_decision"], "time": "2026-02-30T10:00:00Z"}  # no such day
    assert verdicts("review_decision", decision) == (True, True)
    decision["time"] = "30 February 2026"
    assert verdicts("review_decision", decision) == (False, False)
