"""Scoring with what the release has: label metrics without databases, execution metrics
where the item's database is shipped, and a bare ``sql: null`` as "not answerable"."""

from __future__ import annotations

import shutil

from answerable.release.evaluate.report import evaluate
from tests.evaluate_helpers import tiny_item, tiny_release, write_lines

ITEMS = [
    ("How many labs are there?", "SELECT COUNT(*) FROM labs", "answerable"),
    ("Which patients had labs?", "SELECT DISTINCT patient FROM labs", "answerable"),
    ("What is each patient's blood type?", None, "unanswerable"),
    ("Which doctor ordered each lab?", None, "unanswerable"),
    ("Which labs are high?", None, "ambiguous"),
]


def release_of(tmp_path):
    items = [tiny_item(q, sql, label) for q, sql, label in ITEMS]
    return tiny_release(tmp_path, items), items


def test_bare_null_on_every_unanswerable_item_agrees_with_detection(tmp_path):
    release, items = release_of(tmp_path)
    rows = [
        {"id": i["id"], "sql": i["sql"]} if i["label"] == "answerable" else {"id": i["id"]}
        for i in items
    ]
    rows[2]["sql"] = None  # explicit null and an absent sql alike abstain
    report = evaluate(release, write_lines(tmp_path / "p.jsonl", rows), resamples=0)
    assert report["metrics"]["detection.missing-column"] == 1.0
    # the two unanswerable items are found; the ambiguous abstention, naming no label,
    # is one false "unanswerable": P = 2/3, R = 1, F1 = 0.8
    assert report["metrics"]["unanswerable_recall"] == 1.0
    assert report["unanswerable_f1"] == 0.8
    assert report["ex"] == 1.0 and report["not_available"] == {}


def test_a_release_without_its_databases_scores_the_label_metrics(tmp_path):
    release, items = release_of(tmp_path)
    shutil.rmtree(release / "databases")
    rows = [{"id": i["id"], "sql": "SELECT 1"} for i in items[:2]]
    rows += [{"id": i["id"], "sql": None, "label": i["label"]} for i in items[2:]]
    report = evaluate(release, write_lines(tmp_path / "p.jsonl", rows), resamples=0)
    assert report["not_available"]["execution"]["items"] == len(items)
    assert "does not ship" in report["not_available"]["execution"]["reason"]
    for name in ("ex", "jac", "ser", "rs_0", "rs_n", "pr", "cr"):
        assert report[name] is None, name
    assert report["metrics"]["detection_accuracy"] == 1.0
    assert report["ambiguous_f1"] == 1.0 and report["unanswerable_f1"] == 1.0
    assert report["coverage"] == 1.0


def test_without_databases_rs_scores_the_items_that_are_not_answerable_only(tmp_path):
    release, items = release_of(tmp_path)
    shutil.rmtree(release / "databases")
    rows = [{"id": i["id"], "sql": None} for i in items[:4]] + [
        {"id": items[4]["id"], "sql": "SELECT 1"}
    ]
    report = evaluate(release, write_lines(tmp_path / "p.jsonl", rows), resamples=20)
    assert report["rs_10"] is None and report["ci95"]["rs_10"] is None  # over all: not available
    by_label = report["breakdowns"]["label"]
    assert by_label["answerable"]["rs_10"] is None
    assert by_label["unanswerable"]["rs_10"] == 100.0  # both abstained: no SQL to run
    assert by_label["ambiguous"]["rs_10"] == -1000.0  # answered: -10, whatever the SQL gives
    assert report["not_available"]["execution"]["answerable"] == 2
