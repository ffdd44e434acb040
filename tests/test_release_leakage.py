"""Leakage checks: each kind of leak planted between two splits is caught, errors stop
the release, warnings only report."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from answerable.release.cut import expressions
from answerable.release.cut.leakage import LeakageError, check_leakage
from tests.release_helpers import config, frame_of, hex_id, make_item

ALL_WARN = {
    check: "warn"
    for check in (
        "same_question",
        "near_question",
        "same_sql",
        "same_skeleton",
        "same_database",
        "family",
    )
}


def _clean() -> list[dict]:
    return [
        make_item(
            "train1",
            db_id="a",
            question="How many patients were admitted?",
            sql="SELECT count(*) FROM admission",
            split="train",
        ),
        make_item(
            "test1",
            db_id="b",
            question="Which team scored the most goals?",
            sql="SELECT team FROM goal GROUP BY team",
            split="test",
        ),
    ]


def _found(items: list[dict], **leakage) -> dict:
    return check_leakage(frame_of(items), config(leakage={**ALL_WARN, **leakage}))


def test_a_clean_release_has_no_leaks():
    report = _found(_clean())
    assert {check: found["leaks"] for check, found in report.items()} == dict.fromkeys(ALL_WARN, 0)


@pytest.mark.parametrize(
    ("check", "planted"),
    [
        ("same_question", {"question": "how many Patients were admitted"}),
        ("near_question", {"question": "How many patients were admitted today?", "db_id": "a"}),
        ("same_sql", {"sql": "select  COUNT(*) from admission"}),
        ("same_skeleton", {"skeleton": "SELECT _ FROM train1"}),
        ("same_database", {"db_id": "a"}),
    ],
)
def test_each_planted_leak_is_caught(check, planted):
    items = _clean()
    leak = make_item("leak", split="test", **{k: v for k, v in planted.items() if k != "skeleton"})
    if "skeleton" in planted:
        leak["sql_meta"]["skeleton"] = planted["skeleton"]
    items[0]["sql_meta"]["skeleton"] = "SELECT _ FROM train1"
    report = _found([*items, leak])
    assert report[check]["leaks"] >= 1, report[check]
    example = report[check]["examples"][0]
    assert sorted(example["ids"]) == sorted([hex_id("train1"), hex_id("leak")])
    assert sorted(example["splits"]) == ["test", "train"]


def test_a_family_across_two_splits_is_caught():
    items = [*_clean(), make_item("child", parent="train1", split="test", question="Other?")]
    report = _found(items)
    assert report["family"]["leaks"] == 1
    assert report["family"]["examples"][0]["splits"] == ["test", "train"]


def test_near_duplicates_within_a_family_or_one_split_are_not_leaks():
    items = [
        *_clean(),
        make_item(
            "kin",
            db_id="a",
            parent="train1",
            question="How many patients were admitted?!",
            split="test",
        ),
        make_item("one", db_id="c", question="How many goals were scored?", split="train"),
        make_item("two", db_id="c", question="How many goals were scored today?", split="train"),
    ]
    assert _found(items, family="off")["near_question"]["leaks"] == 0
    items[-1]["split"] = "test"
    assert _found(items, family="off")["near_question"]["leaks"] == 1


def test_an_error_check_stops_the_release_with_one_line():
    items = [
        *_clean(),
        make_item("leak", question="How many patients were admitted?", split="test"),
    ]
    with pytest.raises(LeakageError) as raised:
        _found(items, same_question="error")
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("release leakage: same_question: 1 values in two splits")
    assert "release.leakage.same_question: warn" in message


def test_off_checks_are_not_run_and_defaults_follow_the_split_kind():
    report = check_leakage(
        frame_of(_clean()), config(split={"kind": "query", "ratios": {"test": 1}})
    )
    assert report["same_skeleton"]["severity"] == "error"
    assert report["same_database"] == {"severity": "off"}
    report = check_leakage(
        frame_of(_clean()), config(split={"kind": "database", "ratios": {"test": 1}})
    )
    assert report["same_database"]["severity"] == "error"


def test_a_hash_collision_changes_no_count_and_no_example(monkeypatch):
    """The checks compare 64-bit hashes of the values; when every value hashes alike (each
    a collision), the values are compared instead and the section is the same."""
    items = []
    for n in range(40):
        split = ("train", "dev", "test")[n % 3]
        item = make_item(f"i{n}", db_id=f"db{n % 4}", parent=f"p{n % 7}", split=split)
        item["question"] = f"How many rows in table {n % 10}?"
        item["sql"] = f"SELECT  count(*) FROM t{n % 11}"
        item["sql_meta"]["skeleton"] = f"SELECT _ FROM t{n % 5}"
        items.append(item)
    for n in range(10):  # values of one item each: no leak, whatever their hash
        item = make_item(f"lone{n}", db_id=f"lone{n}", split="train", skeleton=f"SELECT {n}")
        items.append({**item, "question": f"Lone question {n}?", "sql": f"SELECT {n}"})
    real = _found(items, near_question="off")
    assert all(real[check]["leaks"] > 1 for check in ALL_WARN if check != "near_question")
    monkeypatch.setattr(expressions, "key_hash", lambda values: values.is_null().cast(pl.UInt64))
    assert _found(items, near_question="off") == real


# letters, digits, punctuation, spaces, tabs, newlines and Unicode spaces (no-break, em)
TEXTS = st.text(alphabet=st.sampled_from("aB9 ,?-_\t\n\r\x0b\x0c\u00a0\u2003\u00e9"), max_size=30)


@given(st.lists(TEXTS, min_size=1, max_size=20))
def test_runs_to_space_is_the_plus_pattern(texts):
    """The compared forms of a question and a SQL text are those the ``+`` patterns give."""
    column = pl.Series("t", texts)
    for run, lone in (("[^a-z0-9]", "[^a-z0-9 ]"), (r"\s", r"[^\S ]")):
        expected = column.str.replace_all(f"{run}+", " ")
        got = pl.select(expressions.runs_to_space(pl.lit(column), run, lone)).to_series()
        assert got.to_list() == expected.to_list()
