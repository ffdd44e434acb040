"""Cross-check: RS(c) and the ``ehrsql`` mode agree with EHRSQL 2024's scoring program.

``ehrsql_rs`` below restates the public scorer's formula (glee4810/ehrsql-2024,
scoring_program: each result becomes the text of its rows, a cell that reads as a
number as a float rounded to 3 places and every cell as ``str``, sorted, first 100; a
failing query is an error string; "null" is an abstention; +1 / 0 / -1 per item, -1
scaled by the penalty, 100 x the mean) in our own code, on raw ``sqlite3``, so the two
implementations share nothing.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from answerable.release.evaluate.compare import EHRSQL_DIGITS
from answerable.release.evaluate.report import evaluate
from tests.evaluate_helpers import tiny_item, tiny_release

CASES = {  # name: (gold SQL or None, predicted SQL or "null")
    "exact": ("SELECT patient FROM labs WHERE id = 3", "SELECT 'ann'"),
    "rounding": ("SELECT value FROM labs WHERE id = 1", "SELECT 1.2345"),
    "rounding-off": ("SELECT value FROM labs WHERE id = 1", "SELECT 1.24"),
    "nulls": ("SELECT unit FROM labs WHERE patient = 'bob'", "SELECT NULL UNION ALL SELECT NULL"),
    "null-as-text": (
        "SELECT unit FROM labs WHERE patient = 'bob'",
        "SELECT 'None' UNION ALL SELECT 'None'",
    ),
    "duplicates": (
        "SELECT patient FROM labs WHERE patient = 'bob'",
        "SELECT DISTINCT patient FROM labs WHERE patient = 'bob'",
    ),
    "order": ("SELECT patient FROM labs ORDER BY id", "SELECT patient FROM labs ORDER BY id DESC"),
    "parse-error": ("SELECT patient FROM labs", "SELEC patient FROM labs"),
    "exec-error": ("SELECT patient FROM labs", "SELECT nope FROM labs"),
    "abstain-answerable": ("SELECT patient FROM labs", "null"),
    "abstain-unanswerable": (None, "null"),
    "answer-unanswerable": (None, "SELECT patient FROM labs"),
    "wrong": ("SELECT count(*) FROM labs", "SELECT count(*) FROM labs WHERE unit = 'mg'"),
}
PENALTIES = {"rs_0": 0, "rs_5": 5, "rs_10": 10}


def ehrsql_answer(con: sqlite3.Connection, sql: str) -> str:
    """One query's answer as EHRSQL's scorer writes it."""
    if sql == "null":
        return "null"
    try:
        rows = con.execute(sql).fetchall()
    except sqlite3.Error:
        return "error_pred"

    def cell(value):
        try:
            return str(round(float(value), EHRSQL_DIGITS))
        except (TypeError, ValueError):
            return str(value)

    return str(sorted([[cell(v) for v in row] for row in rows])[:100])


def ehrsql_rs(real: dict[str, str], pred: dict[str, str], con, penalty: float) -> float:
    """EHRSQL 2024's reliability score of ``pred`` against ``real`` (ids to SQL or "null")."""
    scores = []
    for key, gold_sql in real.items():
        gold, mine = ehrsql_answer(con, gold_sql), ehrsql_answer(con, pred[key])
        if gold != "null" and gold == mine:
            scores.append(1)
        elif gold != "null" and mine == "null":
            scores.append(0)
        elif gold != "null" or mine != "null":
            scores.append(-1)
        else:
            scores.append(1)
    return 100 * sum(s * penalty if s == -1 else s for s in scores) / len(scores)


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ehrsql")
    items = {
        name: tiny_item(f"case {name}", gold, "answerable" if gold else "unanswerable")
        for name, (gold, _) in CASES.items()
    }
    release = tiny_release(folder, list(items.values()))
    return folder, release, items


def score_both(folder, release, items, chosen: list[str]) -> tuple[dict, dict]:
    """Our RS values and EHRSQL's for predictions on ``chosen`` cases (the rest abstain)."""
    pred = {items[n]["id"]: CASES[n][1] if n in chosen else "null" for n in CASES}
    real = {i["id"]: i["sql"] or "null" for i in items.values()}
    path = folder / f"pred-{len(chosen)}-{chosen[0]}.json"
    path.write_text(json.dumps(pred))  # EHRSQL's own layout: {id: sql or "null"}
    report = evaluate(release, path, mode="ehrsql", resamples=0)
    con = sqlite3.connect(release / "databases" / "tiny.sqlite")
    theirs = {name: ehrsql_rs(real, pred, con, c) for name, c in PENALTIES.items()}
    theirs["rs_n"] = ehrsql_rs(real, pred, con, len(real))
    con.close()
    return {name: report[name] for name in theirs}, theirs


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_scores_as_ehrsql_scores_it(cases, name):
    ours, theirs = score_both(*cases, [name])
    assert ours == pytest.approx(theirs, abs=1e-6)


def test_all_cases_together_score_as_ehrsql_scores_them(cases):
    ours, theirs = score_both(*cases, sorted(CASES))
    assert ours == pytest.approx(theirs, abs=1e-6)
    assert ours["rs_0"] != ours["rs_10"]  # the mix has wrong answers, so penalties bite


def test_the_cases_cover_every_kind_of_outcome(cases):
    folder, release, items = cases
    path = folder / "all.json"
    path.write_text(json.dumps({items[n]["id"]: CASES[n][1] for n in CASES}))
    report = evaluate(release, path, mode="ehrsql", resamples=0)
    assert report["errors"] == {"parse-error": 1, "unknown-column": 1}
    assert report["abstained"] == 2
    # rounding and NULL-as-text are right under EHRSQL's comparison and wrong under
    # the default multiset one, which keeps full precision and tells NULL from text
    strict = evaluate(release, path, resamples=0)
    assert report["metrics"]["ex"] - strict["metrics"]["ex"] == pytest.approx(2 / 11, abs=1e-6)


def test_integral_floats_and_numbers_as_text_are_one_answer(tmp_path):
    # EHRSQL writes 2, 2.0 and '2' alike ('2.0'): every cell that reads as a number
    # becomes a float
    item = tiny_item("two", "SELECT value FROM labs WHERE id = 2")
    release = tiny_release(tmp_path, [item])
    path = tmp_path / "p.json"
    path.write_text(json.dumps({item["id"]: "SELECT 2"}))
    con = sqlite3.connect(release / "databases" / "tiny.sqlite")
    real, pred = {item["id"]: item["sql"]}, {item["id"]: "SELECT 2"}
    assert ehrsql_rs(real, pred, con, 1) == 100.0
    assert evaluate(release, path, mode="ehrsql", resamples=1)["rs_0"] == 100.0
    path.write_text(json.dumps({item["id"]: "SELECT '2'"}))
    assert ehrsql_rs(real, {item["id"]: "SELECT '2'"}, con, 1) == 100.0
    assert evaluate(release, path, mode="ehrsql", resamples=1)["rs_0"] == 100.0
