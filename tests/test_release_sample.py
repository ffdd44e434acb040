"""Stratified sampling: quotas per stratum by per-item hash, stable as the pool grows,
short strata never silent, TrustSQL's one unanswerable per answerable test item."""

from __future__ import annotations

import polars as pl
import pytest

from answerable.kernel.errors import ConfigError
from answerable.release.cut.publish import prepare_release
from answerable.release.cut.sample import (
    ShortStratumError,
    balance_test,
    kept_rows,
    sample_items,
    sampled,
)
from tests.release_helpers import config, frame_of, make_item

STRATA = ("answerable-correct", "answerable-incorrect", "ambiguous", "unanswerable")


def _pool(n: int, start: int = 0) -> list[dict]:
    return [
        make_item(
            f"item{i}",
            db_id=f"db{i // 4 % 2}",
            stratum=STRATA[i % 4],
            hardness=("easy", "medium", "hard")[i % 3],
        )
        for i in range(start, start + n)
    ]


def _chosen(items, seed=5, **sample) -> set[str]:
    frame, _ = sample_items(frame_of(items), config(sample=sample), seed)
    return set(frame["id"])


def test_count_per_stratum_per_database_scare_style():
    frame, report = sample_items(
        frame_of(_pool(400)),
        config(sample={"strata": ["scare_stratum"], "per_database": True, "count": 20}),
        seed=5,
    )
    with_strata = frame.with_columns(s=pl.col("candidates").list.first().struct.field("stratum"))
    sizes = with_strata.group_by("s", "db_id").len()
    assert sizes.height == 8 and set(sizes["len"]) == {20}
    assert report["pool"] == 400 and report["chosen"] == 160
    assert report["strata"] == ["scare_stratum", "db_id"]
    assert {row["chosen"] for row in report["by_stratum"]} == {20}
    assert {row["available"] for row in report["by_stratum"]} == {50}


def test_strata_by_nested_fields_and_short_names():
    frame, _ = sample_items(
        frame_of(_pool(300)), config(sample={"strata": ["hardness"], "count": 7}), 1
    )
    hardness = frame["sql_meta"].struct.field("hardness").value_counts()
    assert dict(hardness.rows()) == {"easy": 7, "medium": 7, "hard": 7}
    frame, _ = sample_items(
        frame_of(_pool(300)), config(sample={"strata": ["provenance.generator"], "count": 9}), 1
    )
    assert frame.height == 9


def test_the_choice_is_seeded_and_does_not_depend_on_order():
    items = _pool(200)
    assert _chosen(items, strata=["label"], count=30) == _chosen(
        items[::-1], strata=["label"], count=30
    )
    assert _chosen(items, strata=["label"], count=30) != _chosen(
        items, 6, strata=["label"], count=30
    )


def test_a_share_keeps_every_chosen_item_as_the_pool_grows():
    small, grown = _pool(300), _pool(300) + _pool(900, start=300)
    before = _chosen(small, strata=["scare_stratum"], share=0.3)
    after = _chosen(grown, strata=["scare_stratum"], share=0.3)
    assert before <= after
    assert 0.2 < len(after) / 1200 < 0.4


def test_a_count_keeps_the_lowest_draws_so_growth_only_swaps_in_better_draws():
    small, grown = _pool(200), _pool(200) + _pool(200, start=200)
    before = _chosen(small, strata=["label"], count=50)
    after = _chosen(grown, strata=["label"], count=50)
    # an item of the old pool chosen now was chosen before; leavers make room for newcomers
    old_ids = {i["id"] for i in small}
    assert after & old_ids <= before
    assert len(before - after) == len(after - old_ids)


def test_a_short_stratum_stops_the_release_unless_a_minimum_allows_it():
    items = [*_pool(40), make_item("rare", stratum="weird")]
    with pytest.raises(
        ShortStratumError,
        match=r"stratum scare_stratum=weird holds 1 items, "
        r"short of the minimum 5.*fix:",
    ):
        sample_items(frame_of(items), config(sample={"strata": ["scare_stratum"], "count": 5}), 1)
    _frame, report = sample_items(
        frame_of(items), config(sample={"strata": ["scare_stratum"], "count": 5, "minimum": 1}), 1
    )
    weird = [row for row in report["by_stratum"] if row["stratum"]["scare_stratum"] == "weird"]
    assert weird == [
        {"stratum": {"scare_stratum": "weird"}, "available": 1, "chosen": 1, "short": 4}
    ]


def test_quotas_that_exceed_the_pool():
    with pytest.raises(
        ConfigError,
        match=r"release\.sample\.count: 4 strata x 30 asks for 120 "
        r"items; the pool holds 40.*fix:",
    ):
        sample_items(
            frame_of(_pool(40)), config(sample={"strata": ["scare_stratum"], "count": 30}), 1
        )


def test_an_unknown_stratum_field():
    with pytest.raises(
        ConfigError,
        match=r"release\.sample\.strata: unknown stratum field "
        r"'colour'.*fix: use one of",
    ):
        sample_items(frame_of(_pool(10)), config(sample={"strata": ["colour"], "count": 1}), 1)


def test_a_quota_is_count_or_share():
    with pytest.raises(ConfigError, match=r"release\.sample: give one quota"):
        config(sample={"strata": ["label"], "count": 3, "share": 0.5})


def test_one_unanswerable_per_answerable_test_item():
    items = [make_item(f"a{i}", split="test" if i < 10 else "train") for i in range(30)]
    items += [make_item(f"u{i}", label="unanswerable", split="test") for i in range(25)]
    settings = config(sample={"per_answerable_test": {"unanswerable": 1}})
    frame, report = balance_test(frame_of(items), settings, seed=2)
    test = frame.filter(pl.col("split") == "test")
    assert dict(test["label"].value_counts().rows()) == {"answerable": 10, "unanswerable": 10}
    assert frame.filter(pl.col("split") == "train").height == 20
    assert report["unanswerable"] == {
        "per_answerable": 1,
        "answerable": 10,
        "wanted": 10,
        "available": 25,
        "short": 0,
    }


def test_per_answerable_test_takes_strata_in_turn():
    """TrustSQL's five unanswerable types come out even however uneven the pool is."""
    items = [make_item(f"a{i}", split="test") for i in range(20)]
    sizes = {"out-of-domain": 40, "out-of-scope": 9, "missing-column": 5}
    for category, size in sizes.items():
        for i in range(size):
            item = make_item(f"{category}{i}", label="unanswerable", split="test")
            items.append({**item, "category": category})
    settings = config(sample={"strata": ["category"], "per_answerable_test": {"unanswerable": 1}})
    frame, report = balance_test(frame_of(items), settings, seed=4)
    kept = frame.filter(pl.col("label") == "unanswerable")
    # 20 wanted: 5 missing-column (all there are), then the rest in turn: 8 and 7
    counts = dict(kept["category"].value_counts().rows())
    assert counts["missing-column"] == 5
    assert sorted([counts["out-of-scope"], counts["out-of-domain"]]) == [7, 8]
    assert sum(r["kept"] for r in report["unanswerable"]["by_stratum"]) == 20
    assert frame.filter(pl.col("label") == "answerable").height == 20


def test_scare_stratum_of_an_item_without_candidates_is_its_label():
    """Small talk has no candidate SQL offline; it still counts in SCARE's unanswerable."""
    items = [make_item("chat", label="unanswerable"), make_item("plain", stratum=None)]
    frame, report = sample_items(
        frame_of(items), config(sample={"strata": ["scare_stratum"], "count": 1}), 1
    )
    strata = {row["stratum"]["scare_stratum"] for row in report["by_stratum"]}
    assert strata == {"unanswerable", "none"}
    assert frame.height == 2


def test_without_strata_the_whole_pool_is_one_stratum_named_all():
    """Kills: the single stratum's value changed: the report (and a short-stratum error)
    names it ``all``."""
    _, report = sample_items(frame_of(_pool(12)), config(sample={"count": 5}), 1)
    assert [(row["stratum"], row["chosen"]) for row in report["by_stratum"]] == [
        ({"all": "all"}, 5)
    ]
    with pytest.raises(ShortStratumError, match="stratum all=all holds 12 items"):
        sample_items(frame_of(_pool(12)), config(sample={"count": 20, "minimum": 15}), 1)


def test_the_chosen_rows_are_copied_a_column_at_a_time():
    """Each of the pool's columns leaves the list before the next is copied, so none is
    held by it once its chosen rows are; the rows are sample_items' rows."""
    frame = frame_of(_pool(40))
    settings = config(sample={"strata": ["scare_stratum"], "share": 0.5})
    chosen, _ = sampled(frame, settings, 5)
    held = []

    class Columns(list):
        def pop(self, index=-1):
            column = super().pop(index)
            held.append(len(self))
            return column

    kept = kept_rows(Columns(frame.get_columns()), chosen)
    assert held == list(range(frame.width - 1, -1, -1))
    assert kept.equals(sample_items(frame, settings, 5)[0])
    assert 0 < kept.height < frame.height


def test_a_release_samples_the_rows_sample_items_chooses():
    settings = config(sample={"strata": ["scare_stratum"], "share": 0.5}, split={"kind": "none"})
    frame, report = prepare_release(frame_of(_pool(40)), settings, 5, "toy 1.0.0")
    expected, sampling = sample_items(frame_of(_pool(40)), settings, 5)
    assert frame["id"].to_list() == expected["id"].to_list()
    assert report["sampling"] == sampling
