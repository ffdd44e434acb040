"""Evaluate reads only the parts of each item scoring looks at, and runs the predictions
on worker processes while it builds the scored items: the same scores either way."""

from __future__ import annotations

import json

import pytest

from answerable.release.evaluate import report, run
from answerable.release.evaluate.references import reference_predictions
from answerable.release.reader import open_release, read_frame


@pytest.fixture(scope="module")
def demo_release(demo_build):
    cwd, _ = demo_build
    return cwd / "releases" / "answerable-demo" / "0.1.0"


@pytest.mark.parametrize("reference", ["gold", "random"])
def test_the_cut_columns_score_as_whole_items(demo_release, reference):
    whole = open_release(demo_release, report.SCORED_FIELDS).items
    frame = read_frame(demo_release, columns=report.SCORED_FIELDS).sort("id")
    cut = report.to_items(report._scored_columns(frame))
    assert [i["id"] for i in cut] == [i["id"] for i in whole]
    assert any(i.get("candidates") for i in whole) and any(i.get("provenance") for i in whole)
    given = reference_predictions(reference, whole, 3)
    for full, part in zip(whole, cut, strict=True):
        assert report._scored(part, given.get(part["id"])) == report._scored(
            full, given.get(full["id"])
        )
        assert report.groups(part) == report.groups(full)


def test_workers_score_as_this_process_does(demo_release, tmp_path, monkeypatch):
    items = open_release(demo_release).items
    lines = []
    for k, item in enumerate(items):  # right, failing, abstaining and wrong answers
        sql = [item["sql"], "SELEC 1", None, "SELECT 1"][k % 4]
        lines.append(json.dumps({"id": item["id"], "sql": sql}) + "\n")
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    here = report.evaluate(demo_release, path, mode="set", resamples=20, workers=1)
    monkeypatch.setattr(run, "PARALLEL_FROM", 1)
    monkeypatch.setattr(run, "CHUNK", 7)
    pooled = report.evaluate(demo_release, path, mode="set", resamples=20, workers=2)
    assert pooled == here
    assert here["ex"] and here["errors"]
