"""Agreement statistics against values computed by hand (worked out in the comments)."""

from __future__ import annotations

import pytest

from answerable.annotation.agreement import (
    agreement_report,
    cohen_kappa,
    fleiss_kappa,
    percent_agreement,
)
from tests.review_helpers import decision


def test_cohen_kappa_textbook_table():
    # 50 items; yes/yes 20, yes/no 5, no/yes 10, no/no 15.
    # p_o = 35/50 = 0.70; rater 1 says yes 25/50, rater 2 says yes 30/50;
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.50; kappa = (0.70 - 0.50) / 0.50 = 0.40
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(pairs) == 0.4


def test_cohen_kappa_three_outcomes():
    # 10 items, rows rater A, columns rater B over (accept, reject, relabel):
    #   accept:  4 1 0 | reject: 0 3 0 | relabel: 1 0 1
    # p_o = 8/10; A: accept 5, reject 3, relabel 2; B: accept 5, reject 4, relabel 1
    # p_e = (25 + 12 + 2) / 100 = 0.39; kappa = (0.8 - 0.39) / 0.61 = 0.672131...
    pairs = (
        [("accept", "accept")] * 4
        + [("accept", "reject")]
        + [("reject", "reject")] * 3
        + [("relabel", "accept"), ("relabel", "relabel")]
    )
    assert cohen_kappa(pairs) == 0.6721


def test_cohen_kappa_edge_cases():
    assert cohen_kappa([]) is None
    assert cohen_kappa([("a", "a")] * 3) is None  # chance agreement 1: undefined
    assert cohen_kappa([("a", "b"), ("b", "a")]) == -1.0


def test_fleiss_kappa_wikipedia_example():
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories,
    # P_bar = 0.378, P_e = 0.213, kappa = 0.210.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    items = [{str(j): n for j, n in enumerate(row) if n} for row in table]
    assert fleiss_kappa(items) == pytest.approx(0.210, abs=0.001)


def test_fleiss_kappa_small_hand_example():
    # 3 items, 3 raters: {a:3}, {a:2, b:1}, {b:3}
    # P_i = 1, (4 + 1 - 3) / 6 = 1/3, 1; P_bar = 7/9
    # p_a = 5/9, p_b = 4/9; P_e = 41/81; kappa = (63/81 - 41/81) / (40/81) = 22/40 = 0.55
    assert fleiss_kappa([{"a": 3}, {"a": 2, "b": 1}, {"b": 3}]) == 0.55
    assert fleiss_kappa([{"a": 3}, {"a": 3}]) is None


def test_percent_agreement():
    # items with 2+ ratings: [a,a] yes, [a,b] no, [b,b,b] yes -> 2/3
    assert percent_agreement([["a", "a"], ["a", "b"], ["b", "b", "b"], ["a"]]) == 0.6667
    assert percent_agreement([["a"]]) is None


def test_report_from_decisions_overall_and_per_category():
    # Four items; ana, ben, cy on items 1-3, ana and ben only on item 4.
    #   item 1 (vague-word):    accept accept accept
    #   item 2 (vague-word):    accept reject accept
    #   item 3 (missing-column): reject reject reject
    #   item 4 (missing-column): relabel->vague-word, accept
    ids = ["1" * 16, "2" * 16, "3" * 16, "4" * 16]
    groups = {ids[0]: "vague-word", ids[1]: "vague-word"}
    groups |= {ids[2]: "missing-column", ids[3]: "missing-column"}
    rows = [
        (ids[0], ("accept", "accept", "accept")),
        (ids[1], ("accept", "reject", "accept")),
        (ids[2], ("reject", "reject", "reject")),
    ]
    made = []
    for item, verdicts in rows:
        for annotator, verdict in zip(("ana", "ben", "cy"), verdicts, strict=True):
            made.append(decision(item, annotator, verdict))
    made.append(decision(ids[3], "ana", "relabel", label="ambiguous", category="vague-word"))
    made.append(decision(ids[3], "ben", "accept"))
    report = agreement_report(made, groups)
    overall = report["overall"]
    # percent: items 1 and 3 agree out of 4 -> 0.5
    assert (overall["items"], overall["percent_agreement"]) == (4, 0.5)
    pairs = {tuple(p["annotators"]): p for p in overall["cohen"]}
    # ana/ben over 4 items: (acc,acc) (acc,rej) (rej,rej) (relabel,acc): p_o = 2/4
    # ana: acc 2, rej 1, rel 1; ben: acc 2, rej 2 -> p_e = (4 + 2 + 0) / 16 = 0.375
    # kappa = (0.5 - 0.375) / 0.625 = 0.2
    assert (pairs[("ana", "ben")]["items"], pairs[("ana", "ben")]["kappa"]) == (4, 0.2)
    assert pairs[("ana", "ben")]["agreement"] == 0.5
    # ana/cy over 3 items, all equal: p_o = 1; ana: acc 2 rej 1, cy: acc 2 rej 1
    # p_e = (4 + 1) / 9 = 5/9 -> kappa = 1
    assert pairs[("ana", "cy")]["kappa"] == 1.0
    # Fleiss over items 1-3: P_i = 1, 1/3, 1 -> P_bar = 7/9; ratings acc 5, rej 4 of 9
    # P_e = 41/81 -> kappa = 0.55 (the same table as the small hand example)
    assert overall["fleiss"] == {"items": 3, "kappa": 0.55}
    by = report["by_category"]
    assert by["vague-word"]["percent_agreement"] == 0.5
    assert by["missing-column"]["percent_agreement"] == 0.5
    # missing-column, ana/ben: (rej,rej) (relabel,acc): p_o 0.5; ana rej 1 rel 1; ben rej 1
    # acc 1 -> p_e = 1/4; kappa = (0.5 - 0.25) / 0.75 = 0.3333
    mc_pairs = {tuple(p["annotators"]): p["kappa"] for p in by["missing-column"]["cohen"]}
    assert mc_pairs[("ana", "ben")] == 0.3333
