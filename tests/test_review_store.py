"""The local review store and its decisions: push, pull, audit trail, bad input."""

from __future__ import annotations

import json

import pytest

from answerable.annotation.decisions import (
    CATEGORY_LABEL,
    TAXONOMY,
    DecisionError,
    check_decision,
)
from answerable.annotation.store import LocalQueue
from answerable.schemas import SCHEMA_DIR, validate
from tests.review_helpers import by_category, decision, filled_queue, review_items


@pytest.fixture
def queue(tmp_path, demo_dir):
    with filled_queue(tmp_path / "review" / "queue.sqlite", demo_dir) as queue:
        yield queue


def test_taxonomy_matches_the_item_schema():
    schema = json.loads((SCHEMA_DIR / "item.schema.json").read_text())
    categories = {c for c in schema["properties"]["category"]["enum"] if c}
    assert categories == set(CATEGORY_LABEL)
    assert set(TAXONOMY) == set(schema["properties"]["label"]["enum"])


def test_push_is_idempotent_by_item_id(queue):
    again = queue.push(review_items())
    assert (again.added, again.updated, again.rejects) == (0, 6, [])  # excerpt dropped: updated
    assert len(queue.items()) == 6
    items = review_items()
    excerpts = {i["id"]: queue.excerpt(i["id"]) for i in items}
    same = queue.push(items, excerpts)
    assert (same.added, same.updated, same.unchanged) == (0, 0, 6)


def test_push_keeps_decisions_and_reports_bad_items(queue):
    item = review_items()[0]
    queue.record(decision(item["id"], "ana", "accept"))
    bad = {"id": "nope", "db_id": "clinic", "question": "q", "label": "answerable"}
    report = queue.push([item, bad])
    assert report.unchanged + report.updated == 1
    assert [(r["id"], r["reason"]) for r in report.rejects] == [("nope", "not-reviewable")]
    assert "16-hex-digit" in report.rejects[0]["detail"]
    assert [d["verdict"] for d in queue.pull()] == ["accept"]


def test_pull_gives_valid_decisions_and_progress_counts_them(queue):
    items = by_category(review_items())
    queue.record(decision(items["vague-word"]["id"], "ana", "accept"))
    queue.record(decision(items["vague-word"]["id"], "ben", "reject", comment="unclear"))
    queue.record(decision(items["out-of-scope"]["id"], "ana", "accept"))
    pulled = queue.pull()
    assert len(pulled) == 3
    for record in pulled:
        validate("review_decision", record)
    progress = queue.progress()
    assert (progress.items, progress.decided, progress.decisions) == (6, 2, 3)
    assert progress.by_annotator == {"ana": 2, "ben": 1}
    assert progress.undecided == 4


# ---- bad input --------------------------------------------------------------------


def test_decision_for_an_unknown_item_is_refused_and_nothing_is_kept(queue):
    with pytest.raises(DecisionError, match="unknown item id 'aaaaaaaaaaaaaaaa'") as error:
        queue.record(decision("a" * 16, "ana", "accept"), where="row 4")
    assert str(error.value).startswith("row 4: ")
    assert queue.history() == []


def test_second_decision_by_the_same_annotator_counts_and_both_are_kept(queue):
    item_id = by_category(review_items())["vague-word"]["id"]
    queue.record(decision(item_id, "ana", "accept", minute=1))
    queue.record(decision(item_id, "ana", "relabel", minute=2, category="vague-question"))
    assert [d["verdict"] for d in queue.history(item_id)] == ["accept", "relabel"]
    [current] = queue.pull()
    assert (current["verdict"], current["label"], current["category"]) == (
        "relabel",
        "ambiguous",
        "vague-question",
    )


def test_annotator_names_differing_in_case_and_spaces_are_one_annotator(queue):
    item_id = by_category(review_items())["vague-word"]["id"]
    queue.record(decision(item_id, "Dave", "accept", minute=1))
    queue.record(decision(item_id, " dave ", "reject", minute=2))
    [current] = queue.pull()
    assert (current["annotator"], current["verdict"]) == ("dave", "reject")
    assert {d["annotator"] for d in queue.history(item_id)} == {"dave"}


def test_later_time_counts_even_when_recorded_first(queue):
    item_id = by_category(review_items())["vague-word"]["id"]
    queue.record(decision(item_id, "ana", "reject", minute=30))
    queue.record(decision(item_id, "ana", "accept", minute=5))  # an older spreadsheet row
    assert len(queue.history(item_id)) == 2
    assert [d["verdict"] for d in queue.pull()] == ["reject"]


def test_restating_the_current_decision_adds_nothing(queue):
    item_id = by_category(review_items())["vague-word"]["id"]
    queue.record(decision(item_id, "ana", "accept", minute=1))
    queue.record(decision(item_id, "ana", "accept", minute=9))
    assert len(queue.history(item_id)) == 1


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"category": "sort-of-vague"}, "relabel to unknown category 'sort-of-vague'"),
        ({"label": "ambiguous", "category": "missing-column"}, "unknown category 'missing-column'"),
        ({"label": "maybe"}, "/label"),
        ({}, "relabel without label"),
    ],
)
def test_relabel_to_an_unknown_category_is_refused(queue, fields, message):
    item_id = by_category(review_items())["vague-word"]["id"]
    with pytest.raises(DecisionError, match=message):
        queue.record(decision(item_id, "ana", "relabel", **fields), where="row 2")
    assert queue.history() == []


def test_relabel_to_answerable_needs_sql():
    item = by_category(review_items())["vague-word"]
    with pytest.raises(DecisionError, match="no SQL"):
        check_decision(decision(item["id"], "ana", "relabel", label="answerable"), item, "here")
    answerable = by_category(review_items())["answerable-clinic"]
    wanted = decision(answerable["id"], "ana", "relabel", category="vague-question")
    assert check_decision(wanted, answerable, "here")["label"] == "ambiguous"


def test_bad_verdict_annotator_and_spans_are_refused(queue):
    item = by_category(review_items())["vague-word"]
    with pytest.raises(DecisionError, match="unknown verdict 'maybe'"):
        queue.record(decision(item["id"], "ana", "maybe"))
    with pytest.raises(DecisionError, match="/annotator"):
        queue.record(decision(item["id"], "", "accept"))
    with pytest.raises(DecisionError, match="outside the question"):
        queue.record(
            decision(item["id"], "ana", "accept", spans=[{"start": 5, "end": 99, "tag": "AMB"}])
        )
    assert queue.history() == []


def test_record_many_keeps_the_good_and_names_the_bad(queue):
    item_id = by_category(review_items())["vague-word"]["id"]
    kept, problems = queue.record_many(
        [
            ("row 2", decision(item_id, "ana", "accept")),
            ("row 3", decision("b" * 16, "ana", "accept")),
            ("row 4", decision(item_id, "ben", "relabel", category="nonsense")),
        ]
    )
    assert kept == 1
    assert [p.split(":")[0] for p in problems] == ["row 3", "row 4"]
    assert len(queue.history()) == 1


def test_store_survives_reopening(tmp_path, demo_dir):
    path = tmp_path / "queue.sqlite"
    item_id = review_items()[0]["id"]
    with filled_queue(path, demo_dir) as queue:
        queue.record(decision(item_id, "ana", "accept"))
    with LocalQueue(path) as again:
        assert len(again.items()) == 6
        assert [d["item_id"] for d in again.pull()] == [item_id]


def test_a_bad_decision_is_named_as_a_decision_by_default(queue):
    """Kills: another default ``where`` for ``record`` (the page shows the message as is,
    so it must say what was refused)."""
    with pytest.raises(DecisionError, match=r"^decision: ") as caught:
        queue.record(decision("f" * 16, "ana", "accept"))
    assert caught.value.where == "decision"


def test_data_version_changes_when_another_connection_commits(queue, tmp_path):
    """Kills: the data version read from the wrong column (the review page asks it on
    every poll, to rebuild its index after an import or a build)."""
    before = queue.data_version()
    assert isinstance(before, int)
    with LocalQueue(tmp_path / "review" / "queue.sqlite") as other:
        other.record(decision(review_items()[0]["id"], "bo", "accept"))
    assert queue.data_version() != before


def test_both_backends_offer_what_the_review_queue_protocol_names(queue):
    from answerable.annotation.argilla_queue import ArgillaQueue
    from answerable.annotation.queue import ReviewQueue

    assert isinstance(queue, ReviewQueue)
    names = [
        n for n in vars(ReviewQueue) if not n.startswith("_") or n in ("__enter__", "__exit__")
    ]
    assert {"push", "pull", "progress"} <= set(names)
    assert all(callable(getattr(ArgillaQueue, name, None)) for name in names)
