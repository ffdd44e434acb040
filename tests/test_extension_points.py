"""A new export format and a new metric family are each one module and one registry line:
a toy of each, registered only in its registry (:data:`FORMATS`, :data:`FAMILIES`), is run
through the command a user types (``answerable export``, ``answerable evaluate``)."""

from __future__ import annotations

import json
import sys
import types

import pytest

from answerable.release.evaluate import registry
from answerable.release.evaluate.metric import Metric, Scored, when
from answerable.release.export import FORMATS
from answerable.release.export.common import Export, by_split, json_text
from tests.conftest import run_in
from tests.evaluate_helpers import tiny_item, tiny_release

# ---- the toy format, as its own module would hold it ------------------------------------


def export_questions(items: list[dict], schemas) -> Export:
    """One JSON file per split: the answerable questions; the rest left out."""
    out = Export()
    for split, members in by_split(items).items():
        rows = []
        for item in members:
            if item["label"] != "answerable":
                out.leave_out(item, "questions only")
            else:
                rows.append({"question": item["question"], "known": item["db_id"] in schemas})
        if rows:
            out.files[f"{split}.json"] = json_text(rows)
    return out


# ---- the toy metric family, as its own module would hold it -----------------------------


def toy_metrics(scored: list[Scored]) -> list[Metric]:
    """The share of answerable items the system answered at all."""
    return [Metric("toy_answered", when(lambda s: s.answered), when(lambda s: s.answerable))]


@pytest.fixture
def toy_format(monkeypatch):
    """The toy format's module and its one registry line."""
    module = types.ModuleType("answerable.release.export.toy")
    module.export = export_questions
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(FORMATS, "toy", module.export)


@pytest.fixture
def toy_family(monkeypatch):
    """The toy family's one registry line."""
    monkeypatch.setitem(registry.FAMILIES, "toy", toy_metrics)


def test_a_registered_export_format_runs_through_the_command(toy_format, demo_build, tmp_path):
    cwd, _ = demo_build
    release = cwd / "releases" / "answerable-demo" / "0.1.0"
    result = run_in(tmp_path, "export", release, "--format", "toy", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("toy: 3 files in ")
    assert "left out 36 items (36: questions only)" in result.output  # the demo's unanswerable
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert written == {"train.json", "dev.json", "test.json", "left_out.jsonl"}
    rows = json.loads((tmp_path / "out" / "test.json").read_text())
    assert rows and all(set(row) == {"question", "known"} and row["known"] for row in rows)


def test_an_unregistered_format_is_refused_by_the_command(demo_build, tmp_path):
    cwd, _ = demo_build
    release = cwd / "releases" / "answerable-demo" / "0.1.0"
    result = run_in(tmp_path, "export", release, "--format", "toy", "--out", tmp_path / "out")
    assert result.exit_code == 2 and "'toy' is not one of" in result.output


def test_a_registered_metric_family_is_in_the_evaluate_report(toy_family, tmp_path):
    items = [tiny_item(f"How many labs, {n}?", "SELECT count(*) FROM labs") for n in range(3)]
    items.append(tiny_item("Who ordered it?", None, label="unanswerable"))
    release = tiny_release(tmp_path, items)
    result = run_in(tmp_path, "evaluate", release, "--reference", "gold", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["metrics"]["toy_answered"] == 1.0
    result = run_in(tmp_path, "evaluate", release, "--reference", "abstain", "--json")
    assert json.loads(result.output)["metrics"]["toy_answered"] == 0.0
