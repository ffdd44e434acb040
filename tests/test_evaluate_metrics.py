"""The metric families on hand-made scored items, the breakdowns and the bootstrap."""

from __future__ import annotations

import pytest

from answerable.builders.executor import Result, result_hash
from answerable.kernel.errors import ConfigError
from answerable.release.evaluate import (
    bootstrap,
    compare,
    detection,
    references,
    reliability,
    scare,
)
from answerable.release.evaluate.metric import Scored
from answerable.release.evaluate.predictions import read_predictions
from answerable.release.evaluate.registry import HEADLINE, all_metrics
from answerable.release.evaluate.report import breakdowns
from answerable.release.evaluate.tally import Tally


def values(scored: list[Scored]) -> dict:
    return {m.name: m.value(scored) for m in all_metrics(scored)}


RIGHT = Scored(
    "r",
    "answerable",
    answered=True,
    predicted_label="answerable",
    correct=True,
    jaccard=1.0,
    strata=frozenset({"answerable-correct"}),
)
WRONG = Scored(
    "w",
    "answerable",
    answered=True,
    predicted_label="answerable",
    jaccard=0.5,
    strata=frozenset({"answerable-incorrect"}),
    error_types=frozenset({"PV"}),
)
FAILS = Scored(
    "f",
    "answerable",
    answered=True,
    predicted_label="answerable",
    error="parse-error",
    strata=frozenset({"answerable-incorrect"}),
    error_types=frozenset({"T/C"}),
)
SHY = Scored(
    "s",
    "answerable",
    predicted_label="ambiguous",
    strata=frozenset({"answerable-correct", "answerable-incorrect"}),
    error_types=frozenset({"PV"}),
)
CAUGHT = Scored(
    "c",
    "unanswerable",
    "missing-column",
    predicted_label="unanswerable",
    predicted_category="missing-column",
)
MISSED = Scored(
    "m",
    "unanswerable",
    "missing-value",
    answered=True,
    predicted_label="answerable",
    error="timeout",
)
AMBIG = Scored(
    "a",
    "ambiguous",
    "column-ambiguous",
    predicted_label="unanswerable",
    predicted_category="missing-column",
)
ITEMS = [RIGHT, WRONG, FAILS, SHY, CAUGHT, MISSED, AMBIG]


def test_execution_metrics():
    got = values(ITEMS)
    assert got["ex"] == pytest.approx(1 / 4)  # over the 4 answerable items
    assert got["jac"] == pytest.approx(1.5 / 4)
    assert got["ser"] == pytest.approx(2 / 4)  # 4 answers given, 2 failed
    assert got["parse_error_rate"] == pytest.approx(1 / 4)
    assert got["exec_error_rate"] == pytest.approx(1 / 4)


def test_reliability_scores_every_case():
    # right +1, wrong -c, fails -c, shy 0, caught +1, missed -c, ambiguous abstained +1
    got = values(ITEMS)
    for c, name in ((0, "rs_0"), (5, "rs_5"), (10, "rs_10"), (len(ITEMS), "rs_n")):
        assert got[name] == pytest.approx(100 * (3 - 3 * c) / 7)
    assert reliability.abstain_all(ITEMS) == pytest.approx(100 * 3 / 7)


def test_scare_rates_and_per_class_scores():
    got = values(ITEMS)
    assert got["coverage"] == pytest.approx(3 / 4)
    assert got["pr"] == pytest.approx(1 / 2)  # right and shy are answerable-correct
    assert got["cr"] == pytest.approx(0 / 3)  # wrong, fails, shy
    assert got["cr_PV"] == 0.0 and got["cr_T/C"] == 0.0 and got["cr_OG"] is None
    # "unanswerable" said for caught and ambig: one right; truth is caught and missed
    assert got["unanswerable_precision"] == pytest.approx(1 / 2)
    assert got["unanswerable_recall"] == pytest.approx(1 / 2)
    assert got["unanswerable_f1"] == pytest.approx(1 / 2)
    # "ambiguous" said once (shy, wrongly); the ambiguous item was not called so
    assert got["ambiguous_precision"] == 0.0 and got["ambiguous_recall"] == 0.0
    assert got["ambiguous_f1"] == 0.0


def test_f1_is_the_harmonic_mean():
    items = [
        Scored("1", "ambiguous", predicted_label="ambiguous"),
        Scored("2", "ambiguous", predicted_label="ambiguous"),
        Scored("3", "ambiguous"),
        Scored("4", "answerable", predicted_label="ambiguous"),
    ]
    precision, recall, f1 = (m.value(items) for m in scare.per_class("ambiguous"))
    assert (precision, recall) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert f1 == pytest.approx(2 * precision * recall / (precision + recall))


def test_detection_per_category_and_tags():
    got = values(ITEMS)
    assert got["detection.missing-column"] == 1.0
    assert got["detection.missing-value"] == 0.0
    assert got["detection.column-ambiguous"] == 1.0
    # answerable items are handled right when answered: right, wrong, fails (not shy)
    assert got["detection_accuracy"] == pytest.approx(5 / 7)
    assert got["category_accuracy"] == pytest.approx(1 / 3)
    assert got["tag_accuracy"] is None  # no prediction carried tags
    tagged = [Scored("t", "unanswerable", tag_hits=3, tag_total=4), Scored("u", "answerable")]
    assert values(tagged)["tag_accuracy"] == 0.75
    # a label "answerable" without SQL does not detect anything
    assert not detection.detected(Scored("x", "unanswerable", predicted_label="answerable"))


def test_breakdowns_group_items_and_count_operations_once_each():
    items = [
        Scored(
            "1",
            "answerable",
            answered=True,
            correct=True,
            groups={"label": ("answerable",), "operation": ("Join", "Order-By")},
        ),
        Scored("2", "answerable", groups={"label": ("answerable",), "operation": ("Join",)}),
        Scored("3", "unanswerable", groups={"label": ("unanswerable",), "operation": ("none",)}),
    ]
    got = breakdowns(items, Tally(all_metrics(items), items))
    assert got["operation"]["Join"]["items"] == 2 and got["operation"]["Join"]["ex"] == 0.5
    assert got["operation"]["Order-By"]["ex"] == 1.0
    assert got["label"]["unanswerable"]["rs_0"] == 100.0
    assert got["label"]["unanswerable"]["ex"] is None


def test_tally_sums_agree_with_item_by_item_values():
    items = ITEMS * 3 + [Scored("j", "answerable", answered=True, jaccard=0.25)]
    tally = Tally(all_metrics(items), items)
    assert len(tally.parts) == len(ITEMS) + 1  # copies share their pattern
    every = tally.values(tally.counts())
    for metric in all_metrics(items):
        expected = metric.value(items)
        assert every[metric.name] == (None if expected is None else pytest.approx(expected))
    some = [0, 1, len(items) - 1]
    assert tally.values(tally.counts(some))["jac"] == pytest.approx(
        all_metrics(items)[1].value([items[i] for i in some])
    )


def test_bootstrap_is_seeded_bounded_and_brackets_the_value():
    items = ITEMS * 20
    tally = Tally(all_metrics(items), items)
    first = bootstrap.intervals(tally, list(HEADLINE), resamples=200, seed=3)
    assert first == bootstrap.intervals(tally, list(HEADLINE), resamples=200, seed=3)
    assert first != bootstrap.intervals(tally, list(HEADLINE), resamples=200, seed=4)
    assert set(first) == set(HEADLINE)
    for metric in all_metrics(items):
        if metric.name not in HEADLINE:
            continue
        low, high = first[metric.name]
        value = metric.value(items)
        assert low <= value + 1e-9 and value - 1e-9 <= high, metric.name
        if metric.name in ("ex", "coverage", "pr", "cr", "ser", "jac"):
            assert 0.0 <= low <= high <= 1.0, metric.name
    assert first["ambiguous_f1"] == [0.0, 0.0]
    # the spread shrinks with more items
    more = ITEMS * 200
    wide = first["rs_0"][1] - first["rs_0"][0]
    narrow = bootstrap.intervals(Tally(all_metrics(more), more), ["rs_0"], 200, seed=3)["rs_0"]
    assert narrow[1] - narrow[0] < wide
    empty = Tally(all_metrics([]), [])
    assert bootstrap.intervals(empty, ["ex"], resamples=10)["ex"] is None


def test_a_single_resample_gives_an_interval_rounded_to_six_places():
    """Kills: ``resamples < 1`` -> ``<= 1`` (one resample is a valid, if degenerate,
    interval) and the bounds rounded to 7 places instead of the report's 6."""
    items = [Scored(f"i{n}", "answerable", answered=True, correct=n < 2) for n in range(7)]
    tally = Tally(all_metrics(items), items)
    [low, high] = bootstrap.intervals(tally, ["ex"], resamples=1, seed=1)["ex"]
    assert low == high
    many = bootstrap.intervals(tally, ["ex"], resamples=200, seed=1)["ex"]
    assert all(bound == round(bound, 6) for bound in [low, *many])
    assert any(bound != round(bound, 5) for bound in [low, *many])


def test_execution_errors_leave_out_parse_errors():
    """Kills: the execution-error rate counting parse errors instead of the others."""
    errors = ["parse-error", "timeout", "unknown-column", None]
    items = [Scored(f"i{n}", "answerable", answered=True, error=e) for n, e in enumerate(errors)]
    found = values(items)
    assert found["exec_error_rate"] == 2 * found["parse_error_rate"] > 0
    assert found["ser"] == found["exec_error_rate"] + found["parse_error_rate"]


# ---- result comparison (release/evaluate/compare.py) -------------------------------------


def result(rows: list[list], columns: int = 1) -> Result:
    """A result of ``rows`` with its multiset hash, as the executor gives it."""
    return Result(
        [f"c{n}" for n in range(columns)], rows, len(rows), result_hash(rows, False), False
    )


def test_only_the_ordered_mode_hashes_in_row_order():
    """Kills: ``mode == "ordered"`` compared with another name."""
    assert compare.ordered_for("ordered", True) is True
    assert compare.ordered_for("ordered", False) is False
    assert compare.ordered_for("multiset", True) is False


def test_set_mode_ignores_order_and_duplicates_but_not_rows():
    """Kills: ``same_set`` asking for a different number of columns, and the ``set`` mode
    registered under another name (``--mode set`` is a documented choice)."""
    assert set(compare.MODES) == {"multiset", "set", "ordered", "ehrsql"}
    assert compare.MODES["set"](result([[1], [2], [2]]), result([[2], [1]]))
    assert not compare.MODES["set"](result([[1], [2]]), result([[1]]))


def test_jaccard_of_row_sets():
    """Kills: ``|P ∩ G| / |P ∪ G|`` -> ``*``, and two empty results scoring other than 1."""
    assert compare.jaccard(result([[1], [2]]), result([[2], [3]])) == pytest.approx(1 / 3)
    assert compare.jaccard(result([]), result([])) == 1.0
    assert compare.jaccard(result([[1]]), result([])) == 0.0


def test_ehrsql_rounds_floats_to_three_digits():
    """Kills: EHRSQL_DIGITS 3 -> 4 (EHRSQL 2024's scorer rounds to three digits, so
    1.2344 and 1.2341 are the same answer)."""
    assert compare.ehrsql_cell(1.2344) == "1.234"
    assert compare.same_ehrsql(result([[1.2344]]), result([[1.2341]]))
    assert not compare.same_ehrsql(result([[1.2344]]), result([[1.2354]]))


def test_ehrsql_writes_every_number_as_a_rounded_float():
    """EHRSQL 2024's ``process_item`` turns whatever reads as a number into a rounded
    float before writing it, so 5, 5.0 and '5' are one answer and text stays text."""
    assert compare.ehrsql_cell(5) == compare.ehrsql_cell("5") == compare.ehrsql_cell(5.0) == "5.0"
    assert compare.ehrsql_cell("5.0004") == "5.0"
    assert compare.ehrsql_cell("bob") == "bob" and compare.ehrsql_cell(None) == "None"
    assert compare.ehrsql_answer([[2, "b"], [10, "a"]]) == "[['10.0', 'a'], ['2.0', 'b']]"


# ---- reference systems and prediction files -----------------------------------------------


def reference_items() -> list[dict]:
    """Six answerable items and fourteen unanswerable ones on one database."""
    return [
        {
            "id": f"{n:016x}",
            "db_id": "shop",
            "question": f"Question {n}?",
            "label": "answerable" if n < 6 else "unanswerable",
            "category": None if n < 6 else "missing-column",
            "sql": f"SELECT {n}" if n < 6 else None,
        }
        for n in range(20)
    ]


def test_the_gold_reference_answers_what_is_answerable_and_abstains_otherwise():
    """Kills: the gold reference giving SQL to an unanswerable item or none to an
    answerable one (its EX must be 1 and its RS(c) 100)."""
    items = reference_items()
    gold = references.reference_predictions("gold", items)
    for item in items:
        assert gold[item["id"]].sql == item["sql"]
        assert (gold[item["id"]].label, gold[item["id"]].category) == (
            item["label"],
            item["category"],
        )


def test_the_random_reference_is_seeded_per_item_and_mixes_both_answers():
    """Kills: the random reference crashing or keyed wrongly (each item gets a prediction
    of its own), drawn by another key than (seed, item id), or never answering."""
    items = reference_items()
    pool = {i["sql"] for i in items if i["sql"]}
    first = references.reference_predictions("random", items, seed=2)
    assert first == references.reference_predictions("random", items, seed=2)
    assert first != references.reference_predictions("random", items, seed=3)
    assert sorted(first) == sorted(i["id"] for i in items)
    answered = [p for p in first.values() if p.sql is not None]
    assert all(p.id == key for key, p in first.items())
    assert answered and {p.sql for p in answered} <= pool
    assert {p.label for p in first.values() if p.sql is None} <= {"ambiguous", "unanswerable"}
    assert len(answered) < len(items)


def test_a_missing_prediction_file_says_how_to_write_one(tmp_path):
    """Kills: the fix of a prediction file's error left out."""
    with pytest.raises(ConfigError, match=r'write one \{"id": \.\.\., "sql": \.\.\.\} object'):
        read_predictions(tmp_path / "none.jsonl")
