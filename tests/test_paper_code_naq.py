"""OncoMX-NAQ: the export loads in Query Carefully's own code, whose per-question verdicts
give the same detection per category as ``answerable evaluate --profile naq``; NAQ's
eight categories map to ours and back."""

from __future__ import annotations

import csv
import json
from collections import defaultdict

import pytest

from answerable.release.export.naq import CATEGORIES, FROM_NAQ
from answerable.release.export.run import export_release
from answerable.release.reader import read_items
from tests.paper_releases import evaluate_json, load_module, paper_release, reference
from tests.test_sources_delimited import NAQ_CATEGORIES

__all__ = ["paper_release"]  # the session fixture, used by name

UNANSWERABLE = "question unanswerable"  # what NAQ's pipeline writes when it abstains


def naq_predictions(items: list[dict]) -> tuple[list[dict], list[dict]]:
    """The same answers in NAQ's prediction lines and in ours: abstentions, other SQL
    (an empty and a non-empty result) and syntax errors, in turn."""
    theirs, ours = [], []
    for n, item in enumerate(sorted(items, key=lambda i: i["id"])):
        kind = n % 4
        if kind in (0, 1):  # abstains (our bare null, and with a label)
            sql, values = UNANSWERABLE, None
            ours.append(
                {"id": item["id"], "sql": None} | ({"label": item["label"]} if kind else {})
            )
        elif kind == 2:  # some SQL with a result: not detected
            sql, values = "SELECT 1", {"result": [[1]], "result_length": 1, "col_ordered_by": []}
            ours.append({"id": item["id"], "sql": sql})
        else:  # a syntax error: not detected either
            sql, values = "SELEC name FROM", {"error": "near SELEC: syntax error"}
            ours.append({"id": item["id"], "sql": sql})
        theirs.append(
            {
                "question": item["question"],
                "sql_model": sql,
                "values_model": values,
                "lm_response_model": "",
            }
        )
    return theirs, ours


def test_naq_export_and_query_carefullys_code_agree_with_the_naq_profile(paper_release, tmp_path):
    code = load_module(
        "naq_evaluation", reference("querycarefully", "src", "evalutation_per_question.py")
    )
    release = paper_release("naq")
    items = read_items(release)
    exported = export_release(release, "naq", tmp_path / "naq")
    assert exported.left_out == []  # all 80, the 10 operator-ambiguous ones included
    with (tmp_path / "naq" / "test.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) == len(items) == 80
    theirs, ours = naq_predictions(items)
    (tmp_path / "theirs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in theirs))
    (tmp_path / "ours.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ours))

    verdicts = code.unans_question(str(tmp_path / "theirs.jsonl"))  # NAQ's own reading
    detected = defaultdict(list)
    for row in rows:  # NAQ's category of each question, from the export
        detected[row["category"]].append(verdicts[row["question"]]["res_bool"])
    paper = {name: sum(found) / len(found) for name, found in detected.items()}

    report = evaluate_json(tmp_path, release, tmp_path / "ours.jsonl")  # the release's profile
    assert report["settings"]["profile"] == "naq"
    table = {row["row"]: row["detection_accuracy"] for row in report["table"]["rows"]}
    mine = {name: value for name, value in table.items() if name != "all"}  # NAQ's words
    assert mine == pytest.approx(paper, abs=1e-6)
    assert table["all"] == pytest.approx(
        sum(v["res_bool"] for v in verdicts.values()) / len(verdicts), abs=1e-6
    )
    assert 0 < table["all"] < 1  # the predictions detect some questions and miss others


def test_naq_categories_map_both_ways():
    # every NAQ category names one of ours, which maps back to it; and the recipe's
    # reading of the file's names is the same map
    assert set(FROM_NAQ) == set(NAQ_CATEGORIES)
    for naq, ours in FROM_NAQ.items():
        assert CATEGORIES[ours] == naq
        assert NAQ_CATEGORIES[naq] == ours
