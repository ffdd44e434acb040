"""SCARE (no licensed code): the ``scare`` export read by a loader written from the
paper's text gives the numbers of ``answerable evaluate --profile scare``; SCARE's six
categories map to ours and back.

The loader follows SCARE Sec. 3.3-4: the benchmark is (question, candidate SQL)
instances in four strata; a model answers each instance with SQL or a label; coverage
is the share of answerable instances answered with SQL, PR and CR the execution accuracy
over the answerable-correct and answerable-incorrect instances, and precision, recall
and F1 are per label over the instances.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from answerable.release.contents import read_items
from answerable.release.export.run import export_release
from answerable.release.export.scare import CATEGORIES, FROM_SCARE
from tests.paper_releases import evaluate_json, paper_release

__all__ = ["paper_release"]  # the session fixture, used by name

ANSWERABLE = ("answerable-correct", "answerable-incorrect")


def answers(items: list[dict]) -> tuple[list[dict], dict[str, bool]]:
    """Our predictions, and for each answered item whether its SQL is right: in turn the
    gold SQL, other SQL with the same rows, a wrong answer, a label, a syntax error."""
    rows, right = [], {}
    for n, item in enumerate(sorted(items, key=lambda i: i["id"])):
        gold, kind = item["sql"], n % 5
        if kind == 0 and gold:
            rows.append({"id": item["id"], "sql": gold})
            right[item["id"]] = True
        elif kind == 1 and gold:
            rows.append({"id": item["id"], "sql": f"SELECT * FROM ({gold}) AS same_rows"})
            right[item["id"]] = True
        elif kind == 2:
            rows.append({"id": item["id"], "sql": "SELECT 'no such answer'"})
            right[item["id"]] = False
        elif kind == 4:
            rows.append({"id": item["id"], "sql": "SELEC name FROM"})
            right[item["id"]] = False
        else:  # a label: the right one for half the problematic items, else a wrong one
            label = item["label"] if item["label"] != "answerable" and n % 2 else "ambiguous"
            rows.append({"id": item["id"], "sql": None, "label": label})
    return rows, right


def scare_from_the_text(folder: Path, said: dict[str, dict], right: dict[str, bool]) -> dict:
    """SCARE's Table 3 numbers from the export's instances and the model's answers."""
    instances = [r for path in sorted(folder.glob("*.json")) for r in json.loads(path.read_text())]
    found = {}
    answerable = [r for r in instances if r["sampled_category"] in ANSWERABLE]
    found["coverage"] = sum(said[r["id"]]["sql"] is not None for r in answerable) / len(answerable)
    for name, stratum in (("pr", ANSWERABLE[0]), ("cr", ANSWERABLE[1])):
        members = [r for r in instances if r["sampled_category"] == stratum]
        found[name] = sum(right.get(r["id"], False) for r in members) / len(members)
    for label in ("ambiguous", "unanswerable"):
        predicted = [r for r in instances if said[r["id"]].get("label") == label]
        gold = [r for r in instances if r["sampled_category"] == label]
        hits = sum(r["sampled_category"] == label for r in predicted)
        found[f"{label}_precision"] = hits / len(predicted)
        found[f"{label}_recall"] = hits / len(gold)
        found[f"{label}_f1"] = 2 * hits / (len(predicted) + len(gold))
    return found


@pytest.mark.slow  # builds a paper recipe: minutes on a loaded machine
def test_scare_export_read_as_the_paper_describes_gives_the_scare_profile(paper_release, tmp_path):
    release = paper_release("scare")
    items = read_items(release)
    exported = export_release(release, "scare", tmp_path / "scare")
    left = {item_id for item_id, _ in exported.left_out}
    assert all(i["label"] == "answerable" for i in items if i["id"] in left)
    rows, right = answers([i for i in items if i["id"] not in left])
    said = {r["id"]: r for r in rows}
    paper = scare_from_the_text(tmp_path / "scare", said, right)

    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = evaluate_json(tmp_path, release, predictions)  # the release names scare
    assert report["settings"]["profile"] == "scare" and report["missing"] == len(left)
    for name, value in paper.items():
        assert report[name] == pytest.approx(value, abs=1e-6), name
    assert 0 < report["pr"] < 1 and 0 < report["cr"] < 1


def test_scare_categories_map_both_ways():
    assert len(CATEGORIES) == 6  # SCARE's three ambiguous and three unanswerable kinds
    for ours, (short, label) in CATEGORIES.items():
        assert FROM_SCARE[short] == ours
        assert label == ("ambiguous" if short in ("VQ", "VW", "AR") else "unanswerable")
