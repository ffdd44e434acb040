"""SCARE (no licensed code): the ``scare`` export read by a loader written from the
paper's text gives the numbers of ``answerable evaluate --profile scare``; SCARE's six
categories map to ours and back.

The loader follows SCARE Sec. 3-5: the benchmark is (question, candidate SQL)
instances in four strata, each shown with the candidate's execution result; a model
answers each instance with SQL or a label; coverage is the share of answerable
instances answered with SQL, PR and CR the execution accuracy (the answer's execution
result against the instance's ``gt_exe``) over the answerable-correct and
answerable-incorrect instances, and precision, recall and F1 are per label over the
instances. Execution results are processed as SCARE's authors' EHRSQL scorer does (its
``process_answer`` in ../shared/reference/ehrsql2024).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from answerable.release.export.run import export_release
from answerable.release.export.scare import CATEGORIES, FROM_SCARE
from answerable.release.reader import database_key, read_items
from tests.paper_releases import evaluate_json, load_module, paper_release, reference

__all__ = ["paper_release"]  # the session fixture, used by name

ANSWERABLE = ("answerable-correct", "answerable-incorrect")
NOT_RUN = "null"


def answers(items: list[dict]) -> list[dict]:
    """Our predictions, in turn: the gold SQL, other SQL with the same rows, a wrong
    answer, a label, a syntax error, and the first candidate kept as it is."""
    rows = []
    for n, item in enumerate(sorted(items, key=lambda i: i["id"])):
        gold, kind = item["sql"], n % 6
        first = next((c["sql"] for c in item.get("candidates") or [] if c.get("sql")), None)
        if kind == 0 and gold:
            rows.append({"id": item["id"], "sql": gold})
        elif kind == 1 and gold:
            rows.append({"id": item["id"], "sql": f"SELECT * FROM ({gold}) AS same_rows"})
        elif kind == 2:
            rows.append({"id": item["id"], "sql": "SELECT 'no such answer'"})
        elif kind == 4:
            rows.append({"id": item["id"], "sql": "SELEC name FROM"})
        elif kind == 5 and first:
            rows.append({"id": item["id"], "sql": first})
        else:  # a label: the right one for half the problematic items, else a wrong one
            label = item["label"] if item["label"] != "answerable" and n % 2 else "ambiguous"
            rows.append({"id": item["id"], "sql": None, "label": label})
    return rows


def processed(sql: str, database: Path, process_answer) -> str:
    """The execution result of ``sql`` as SCARE's authors process it (EHRSQL's
    ``process_answer``), or EHRSQL's error marker."""
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return process_answer(con.execute(sql).fetchall())
    except sqlite3.Error:
        return "error_pred"
    finally:
        con.close()


def scare_from_the_text(folder: Path, said: dict[str, dict], databases: dict, process) -> dict:
    """SCARE's Table 3 numbers from the export's instances and the model's answers: an
    answer is right when its execution result, processed, equals the instance's
    ``gt_exe``; an answer that keeps the candidate has the candidate's ``pred_exe``."""
    instances = [r for path in sorted(folder.glob("*.json")) for r in json.loads(path.read_text())]

    def right(r: dict) -> bool:
        sql = said[r["id"]]["sql"]
        if sql is None or r["gt_exe"] == NOT_RUN:
            return False
        if sql == r["pred_sql"]:
            return r["pred_exe"] == r["gt_exe"]
        return processed(sql, databases[r["db_id"]], process) == r["gt_exe"]

    found = {}
    answerable = [r for r in instances if r["sampled_category"] in ANSWERABLE]
    found["coverage"] = sum(said[r["id"]]["sql"] is not None for r in answerable) / len(answerable)
    for name, stratum in (("pr", ANSWERABLE[0]), ("cr", ANSWERABLE[1])):
        members = [r for r in instances if r["sampled_category"] == stratum]
        found[name] = sum(map(right, members)) / len(members)
    for label in ("ambiguous", "unanswerable"):
        predicted = [r for r in instances if said[r["id"]].get("label") == label]
        gold = [r for r in instances if r["sampled_category"] == label]
        hits = sum(r["sampled_category"] == label for r in predicted)
        found[f"{label}_precision"] = hits / len(predicted)
        found[f"{label}_recall"] = hits / len(gold)
        found[f"{label}_f1"] = 2 * hits / (len(predicted) + len(gold))
    return found


def databases_of(release: Path, items: list[dict]) -> dict[str, Path]:
    """The SQLite file each exported ``db_id`` names (SCARE's items have no edited
    variants: every question is asked over its source database)."""
    found = {}
    for item in items:
        assert not item["database"].get("delta"), item["id"]
        found[database_key(item)] = release / item["database"]["base"]
    return found


@pytest.mark.slow  # builds a paper recipe: minutes on a loaded machine
def test_scare_export_read_as_the_paper_describes_gives_the_scare_profile(paper_release, tmp_path):
    scoring = reference("ehrsql2024", "scoring_program")
    process = load_module("scare_process", scoring / "scoring_utils.py").process_answer
    release = paper_release("scare")
    items = read_items(release)
    exported = export_release(release, "scare", tmp_path / "scare")
    left = {item_id for item_id, _ in exported.left_out}
    assert all(i["label"] == "answerable" for i in items if i["id"] in left)
    kept = [i for i in items if i["id"] not in left]
    databases = databases_of(release, kept)
    rows = answers(kept)
    said = {r["id"]: r for r in rows}
    paper = scare_from_the_text(tmp_path / "scare", said, databases, process)

    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = evaluate_json(tmp_path, release, predictions)  # the release names scare
    assert report["settings"]["profile"] == "scare" and report["missing"] == len(left)
    for name, value in paper.items():
        assert report[name] == pytest.approx(value, abs=1e-6), name
    assert 0 < report["pr"] < 1 and 0 < report["cr"] < 1


@pytest.mark.slow  # builds a paper recipe: minutes on a loaded machine
def test_scare_export_carries_execution_results_as_scare_processes_them(paper_release, tmp_path):
    """``gt_exe`` and ``pred_exe`` equal the gold's and the candidate's results run on the
    shipped database and processed by the authors' code; they agree with ``exec_acc``
    except where a candidate only reorders the rows of a gold that orders them (the
    stratum compares in row order there, SCARE's processed form sorts rows)."""
    scoring = reference("ehrsql2024", "scoring_program")
    process = load_module("scare_process", scoring / "scoring_utils.py").process_answer
    release = paper_release("scare")
    export_release(release, "scare", tmp_path / "scare")
    items = {i["id"]: i for i in read_items(release)}
    databases = databases_of(release, list(items.values()))
    records = [
        r for p in sorted((tmp_path / "scare").glob("*.json")) for r in json.loads(p.read_text())
    ]
    reordered = 0
    for r in records:
        database = databases[r["db_id"]]
        expected = processed(r["pred_sql"], database, process) if r["pred_sql"] else NOT_RUN
        if expected == "error_pred":  # a candidate that does not run (a T/C error, say)
            assert r["pred_exe"].startswith("error: "), r["instance_id"]
        else:
            assert r["pred_exe"] == expected, r["instance_id"]
        if r["sampled_category"] in ANSWERABLE:
            assert r["gt_exe"] == processed(r["gt_sql"], database, process), r["instance_id"]
            if r["exec_acc"] != (r["pred_exe"] == r["gt_exe"]):
                assert not r["exec_acc"] and items[r["id"]]["result"]["ordered"], r["instance_id"]
                reordered += 1
        else:
            assert r["gt_exe"] == NOT_RUN
    assert reordered < len(records) / 20


def test_scare_categories_map_both_ways():
    assert len(CATEGORIES) == 6  # SCARE's three ambiguous and three unanswerable kinds
    for ours, (short, label) in CATEGORIES.items():
        assert FROM_SCARE[short] == ours
        assert label == ("ambiguous" if short in ("VQ", "VW", "AR") else "unanswerable")
