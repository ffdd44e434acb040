"""The scoring profiles: each paper's metric definitions on hand-made scored items, where
they differ from the default report's, and a profile named by the release."""

from __future__ import annotations

import json

import pytest

from answerable.release.evaluate import reliability
from answerable.release.evaluate.metric import Scored
from answerable.release.evaluate.profiles import PROFILES
from answerable.release.evaluate.registry import all_metrics
from answerable.release.evaluate.report import breakdowns, evaluate, format_report
from answerable.release.evaluate.tally import Tally
from tests.evaluate_helpers import tiny_item, tiny_release, write_lines


def values(profile: str | None, scored: list[Scored]) -> dict:
    metrics = PROFILES[profile].metrics(scored) if profile else all_metrics(scored)
    return {m.name: m.value(scored) for m in metrics}


def scare_item(name: str, correct: bool, strata: list[str]) -> Scored:
    return Scored(
        name,
        "answerable",
        answered=True,
        predicted_label="answerable",
        correct=correct,
        strata=frozenset(strata),
        candidate_strata=tuple(sorted(strata)),
    )


def test_scare_pr_counts_question_candidate_instances_as_the_papers_text_does():
    # SCARE Sec. 4: PR is execution accuracy "over the total number of instances" of the
    # answerable-correct stratum, an instance being a (question, candidate SQL) pair
    scored = [
        scare_item("a", True, ["answerable-correct"] * 3),  # right, three instances
        scare_item("b", False, ["answerable-correct"]),  # wrong, one instance
    ]
    assert values("scare", scored)["pr"] == 0.75  # 3 of 4 instances
    assert values(None, scored)["pr"] == 0.5  # the default pools by question


def test_biomedsql_ser_divides_by_every_question_of_the_evaluation_set():
    scored = [
        Scored("a", "answerable", answered=True, error="parse-error"),
        Scored("b", "answerable", answered=True, correct=True),
        Scored("c", "answerable"),  # no SQL: not executable either
        Scored("d", "answerable", answered=True, correct=True),
    ]
    assert values("biomedsql", scored)["ser"] == 0.5  # (a, c) of 4 questions
    assert values(None, scored)["ser"] == pytest.approx(1 / 3)  # errors of the answered


def test_rs_n_of_a_breakdown_uses_the_groups_own_n():
    scored = [
        Scored("a", "answerable", answered=True, groups={"database": ("x",)}),  # wrong
        Scored("b", "unanswerable", groups={"database": ("x",)}),
        Scored("c", "unanswerable", groups={"database": ("y",)}),
        Scored("d", "unanswerable", groups={"database": ("y",)}),
    ]
    tally = Tally(reliability.metrics(scored), scored)
    found = breakdowns(scored, tally, ("rs_n",))["database"]
    assert found["x"]["rs_n"] == 100.0 * (1 - 2) / 2  # N = 2 in database x, not 4
    assert found["y"]["rs_n"] == 100.0


def test_dte_reports_tag_accuracy_per_tag_class():
    scored = [
        Scored(
            "a",
            "ambiguous",
            tag_hits=3,
            tag_total=4,
            tags_by_class=(("AMB", 0, 1), ("O", 3, 3)),
        )
    ]
    found = values("dte", scored)
    assert found["tag_accuracy"] == 0.75
    assert found["tag_accuracy.AMB"] == 0.0 and found["tag_accuracy.O"] == 1.0
    assert found["tag_accuracy.COL"] is None  # no COL token: nothing to score


def test_a_release_that_names_its_profile_is_scored_with_it(tmp_path):
    items = [
        tiny_item("How many labs are there?", "SELECT COUNT(*) FROM labs"),
        tiny_item("What is each patient's blood type?", None, "unanswerable"),
    ]
    release = tiny_release(tmp_path, items)
    manifest = json.loads((release / "manifest.json").read_text())
    (release / "manifest.json").write_text(
        json.dumps(manifest | {"scoring": {"profile": "ehrsql"}})
    )
    rows = [{"id": items[0]["id"], "sql": "SELECT 2"}, {"id": items[1]["id"], "sql": None}]
    predictions = write_lines(tmp_path / "p.jsonl", rows)
    report = evaluate(release, predictions, resamples=0)
    assert report["settings"]["profile"] == "ehrsql" and report["settings"]["mode"] == "ehrsql"
    assert [c for c, _ in report["table"]["columns"]] == ["RS(0)", "RS(5)", "RS(10)", "RS(N)"]
    assert report["rs_10"] == 100.0 * (1 - 10) / 2
    other = evaluate(release, predictions, resamples=0, profile="trustsql", mode="multiset")
    assert other["settings"]["mode"] == "multiset" and "rs_5" not in other


def test_the_text_report_names_metrics_intervals_and_breakdown_tables(tmp_path):
    items = [
        tiny_item("How many labs are there?", "SELECT COUNT(*) FROM labs"),
        tiny_item("What is each patient's blood type?", None, "unanswerable"),
    ]
    release = tiny_release(tmp_path, items)
    rows = [{"id": items[0]["id"], "sql": "SELECT COUNT(*) FROM labs"}]
    report = evaluate(release, write_lines(tmp_path / "p.jsonl", rows), resamples=20)
    text = format_report(report)
    assert "ex: Execution accuracy" in text and "BiomedSQL §5.1" in text
    assert "rs_10: Reliability score, penalty 10" in text and "TrustSQL §4.4, Eq. 4" in text
    assert "95% bootstrap interval" in text and "1.0000 to 1.0000" in text
    for group in ("label", "category", "database", "hardness"):
        assert f"By {group}" in text
    assert "  unanswerable      1" in text  # a row of the label table
    scare = format_report(
        evaluate(release, write_lines(tmp_path / "p.jsonl", rows), resamples=0, profile="scare")
    )
    assert "As the paper prints it: SCARE" in scare and "Unans F1" in scare
