"""DTE / NoisySP (no licensed code): the ``dte`` export read by a loader written from the
paper's text gives Table 4's per-class tagging accuracy equal to ``answerable evaluate
--profile dte``; the paper's six sub-categories map to ours and back.

The loader follows DTE Sec. 2-5: each example is a question over a schema, its tokens
labelled with BIO tags of five classes (COL, VAL, AMB, UNK, O; Table 3), its tagged
spans grounded to schema concepts; Table 4 is "accuracy for each label category", the
share of tokens of that class whose predicted label is right.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from answerable.release.export.dte import CATEGORIES, FROM_DTE
from answerable.release.export.run import export_release
from tests.paper_releases import evaluate_json, paper_release

__all__ = ["paper_release"]  # the session fixture, used by name

CLASSES = ("COL", "VAL", "AMB", "UNK", "O")


def load_from_the_text(folder: Path) -> list[dict]:
    """The examples, checked as the paper describes them."""
    examples = [r for path in sorted(folder.glob("*.json")) for r in json.loads(path.read_text())]
    for example in examples:
        assert len(example["tokens"]) == len(example["tags"]) > 0
        for tag in example["tags"]:
            assert tag == "O" or (tag[:2] in ("B-", "I-") and tag[2:] in CLASSES[:4]), tag
        columns = {f"{t}.{c}".lower() for t, cs in example["schema"].items() for c in cs}
        for binding in example["bindings"]:
            assert example["tags"][binding["start"]] == f"B-{binding['tag']}"
            if binding["tag"] == "COL" and binding["concept"]:
                assert binding["concept"].lower() in columns  # grounded to the schema
    return examples


def predicted_tags(n: int, tags: list[str]) -> list[str]:
    """A tagger's output: right on some examples, every third token called O on others,
    shifted B/I on the rest."""
    if n % 3 == 0:
        return list(tags)
    if n % 3 == 1:
        return [("O" if k % 3 == 0 else t) for k, t in enumerate(tags)]
    return [
        t.replace("B-", "I-") if t.startswith("B-") and k % 2 else t for k, t in enumerate(tags)
    ]


@pytest.mark.slow  # builds a paper recipe: minutes on a loaded machine
def test_dte_export_read_as_the_paper_describes_gives_table_4_of_the_dte_profile(
    paper_release, tmp_path
):
    release = paper_release("dte")
    exported = export_release(release, "dte", tmp_path / "dte")
    assert exported.left_out == []
    examples = load_from_the_text(tmp_path / "dte")
    hits, totals = defaultdict(int), defaultdict(int)
    rows = []
    for n, example in enumerate(sorted(examples, key=lambda e: e["id"])):
        said = predicted_tags(n, example["tags"])
        rows.append({"id": example["id"], "sql": example["sql"], "tags": said})
        for gold, guess in zip(example["tags"], said, strict=True):
            name = gold.split("-", 1)[-1]
            totals[name] += 1
            hits[name] += gold == guess
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = evaluate_json(tmp_path, release, predictions)  # the release names dte
    assert report["settings"]["profile"] == "dte"
    for name in CLASSES:
        expected = hits[name] / totals[name] if totals[name] else None
        assert report[f"tag_accuracy.{name}"] == pytest.approx(expected, abs=1e-6), name
    assert [heading for heading, _ in report["table"]["columns"]] == list(CLASSES)


def test_dte_categories_map_both_ways():
    assert len(CATEGORIES) == 6  # Sec. 2.1: two ambiguous and four unanswerable kinds
    for ours, theirs in CATEGORIES.items():
        assert FROM_DTE[theirs] == ours
