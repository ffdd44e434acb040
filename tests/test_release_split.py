"""The split step: kinds, families kept together, labels placed only in test, and each
bad setting as one error naming the key."""

from __future__ import annotations

import polars as pl
import pytest

from answerable.kernel.errors import ConfigError
from answerable.release.cut import expressions
from answerable.release.cut.expressions import with_family
from answerable.release.cut.split import split_items
from tests.release_helpers import config, frame_of, hex_id, make_item

RATIOS = {"train": 0.6, "dev": 0.2, "test": 0.2}


def _pool(n: int = 300) -> list[dict]:
    """n seed items, each with a counterfactual child and a draft of the child."""
    items = []
    for i in range(n):
        items.append(
            make_item(f"seed{i}", parent=f"example{i}", skeleton=f"SELECT _ FROM t{i % 40}")
        )
        items.append(make_item(f"cf{i}", parent=f"seed{i}", skeleton=f"SELECT _ FROM t{i % 40}"))
        items.append(
            make_item(f"draft{i}", parent=f"cf{i}", sql=None, label="ambiguous")
            if i % 10 == 0
            else make_item(f"draft{i}", parent=f"seed{i}")
        )
    return items


def _splits(frame: pl.DataFrame) -> dict[str, str]:
    return dict(zip(frame["id"], frame["split"], strict=True))


def test_a_family_is_the_top_of_the_parent_chain():
    items = [
        make_item("a", parent="example-a"),
        make_item("b", parent="a"),
        make_item("c", parent="b"),
        make_item("d"),
        make_item("e", parent="gone"),  # drafts of a parent left out still share a family
        make_item("f", parent="gone"),
    ]
    family = dict(with_family(frame_of(items)).select("id", "family").rows())
    top = hex_id("example-a")
    assert [family[hex_id(n)] for n in "abc"] == [top, top, top]
    assert family[hex_id("d")] == hex_id("d")
    assert family[hex_id("e")] == family[hex_id("f")] == hex_id("gone")


def test_question_split_follows_the_ratios_and_keeps_families_together():
    items = _pool()
    frame, report = split_items(frame_of(items), config(split={"ratios": RATIOS}), seed=3)
    counts = frame["split"].value_counts()
    shares = {row[0]: row[1] / frame.height for row in counts.iter_rows()}
    assert shares.keys() == RATIOS.keys()
    for name, ratio in RATIOS.items():
        assert abs(shares[name] - ratio) < 0.08, shares
    placed = _splits(frame)
    for i in range(300):
        assert placed[hex_id(f"seed{i}")] == placed[hex_id(f"cf{i}")] == placed[hex_id(f"draft{i}")]
    assert report["kind"] == "question" and report["families"] == 300


def test_the_split_is_deterministic_and_seeded():
    items = _pool(100)
    first = _splits(split_items(frame_of(items), config(split={"ratios": RATIOS}), 3)[0])
    again = _splits(split_items(frame_of(items[::-1]), config(split={"ratios": RATIOS}), 3)[0])
    other = _splits(split_items(frame_of(items), config(split={"ratios": RATIOS}), 4)[0])
    assert first == again
    assert first != other


def test_test_only_labels_take_their_family_to_test():
    items = _pool()
    settings = config(split={"ratios": RATIOS, "test_only": ["ambiguous", "unanswerable"]})
    frame, report = split_items(frame_of(items), settings, seed=3)
    placed = _splits(frame)
    for i in range(0, 300, 10):
        assert placed[hex_id(f"draft{i}")] == placed[hex_id(f"seed{i}")] == "test"
    assert set(frame.filter(pl.col("label") != "answerable")["split"]) == {"test"}
    assert report["groups_moved_to_test"] == 30
    assert set(frame["split"]) == {"train", "dev", "test"}


def test_equal_questions_share_a_split():
    items = [
        make_item(f"q{i}", question="How many items are there?" if i < 5 else None)
        for i in range(200)
    ]
    frame, _ = split_items(frame_of(items), config(split={"ratios": RATIOS}), seed=1)
    assert frame.filter(pl.col("question") == "How many items are there?")["split"].n_unique() == 1


def test_query_split_puts_no_skeleton_in_two_splits():
    items = _pool()
    frame, _ = split_items(
        frame_of(items),
        config(split={"kind": "query", "ratios": RATIOS, "test_only": ["ambiguous"]}),
        seed=3,
    )
    by_skeleton = frame.with_columns(sk=pl.col("sql_meta").struct.field("skeleton"))
    spread = by_skeleton.drop_nulls("sk").group_by("sk").agg(pl.col("split").n_unique())
    assert spread["split"].max() == 1
    assert frame["split"].n_unique() >= 2


def test_database_split_puts_no_database_in_two_splits():
    items = [make_item(f"x{i}", db_id=f"db{i % 30}") for i in range(300)]
    frame, _ = split_items(frame_of(items), config(split={"kind": "database", "ratios": RATIOS}), 2)
    assert frame.group_by("db_id").agg(pl.col("split").n_unique())["split"].max() == 1
    assert frame["split"].n_unique() == 3


def test_source_split_is_kept_and_families_follow_their_source_example():
    items = [
        make_item("s1", parent="ex1", split="train"),
        make_item("c1", parent="s1"),
        make_item("s2", parent="ex2", split="dev"),
        make_item("d2", parent="s2", label="unanswerable"),
    ]
    frame, _ = split_items(frame_of(items), config(split={"kind": "source"}), seed=1)
    assert _splits(frame) == {
        hex_id("s1"): "train",
        hex_id("c1"): "train",
        hex_id("s2"): "dev",
        hex_id("d2"): "dev",
    }


def test_without_a_split_section_everything_is_test():
    frame, report = split_items(frame_of(_pool(10)), config(), seed=1)
    assert set(frame["split"]) == {"test"} and report["kind"] == "none"


# ---- bad settings: one error naming the key and the fix ----------------------------------


def test_ratios_that_do_not_sum_to_one():
    with pytest.raises(ConfigError, match=r"release\.split\.ratios: the ratios sum to 0\.9.*fix:"):
        config(split={"ratios": {"train": 0.7, "test": 0.2}})


def test_test_only_without_a_test_split():
    with pytest.raises(ConfigError, match=r"release\.split\.test_only: .*fix: add test"):
        config(split={"ratios": {"train": 0.5, "dev": 0.5}, "test_only": ["unanswerable"]})


def test_query_split_over_items_without_sql():
    items = [make_item("a"), make_item("b", label="unanswerable")]
    with pytest.raises(
        ConfigError,
        match=r"release\.split\.kind: a query split needs a SQL "
        r"skeleton, and 1 items have none.*fix:",
    ):
        split_items(frame_of(items), config(split={"kind": "query", "ratios": RATIOS}), 1)


def test_a_family_larger_than_a_split():
    items = [make_item("top")] + [make_item(f"kid{i}", parent="top") for i in range(30)]
    items += [make_item(f"solo{i}") for i in range(69)]
    with pytest.raises(
        ConfigError,
        match=r"release\.split\.ratios: split '\w+' holds about \d+ "
        r"items, but .* \(31\) must stay together.*fix:",
    ):
        split_items(frame_of(items), config(split={"ratios": RATIOS}), 1)


def test_source_split_over_items_without_one():
    items = [make_item("a", split="train"), make_item("b")]
    with pytest.raises(ConfigError, match=r"release\.split\.kind: 'source' .* 1 items have none"):
        split_items(frame_of(items), config(split={"kind": "source"}), 1)


def test_families_sent_to_test_count_toward_its_share_of_the_other_labels():
    items = []
    for i in range(600):
        items.append(make_item(f"p{i}"))
        if i % 5 == 0:  # a fifth of the parents have an unanswerable edit
            items.append(make_item(f"u{i}", parent=f"p{i}", label="unanswerable"))
    settings = config(split={"ratios": RATIOS, "test_only": ["unanswerable"]})
    frame, report = split_items(frame_of(items), settings, seed=3)
    answerable = frame.filter(pl.col("label") == "answerable")
    shares = {k: v / answerable.height for k, v in answerable["split"].value_counts().rows()}
    for name, ratio in RATIOS.items():
        assert abs(shares[name] - ratio) < 0.06, shares
    assert report["free_ratios"]["test"] < 0.01  # the forced parents fill test already
    assert report["free_ratios"]["train"] == pytest.approx(0.75)


def test_a_hash_collision_changes_no_split(monkeypatch):
    """Equal questions are grouped by 64-bit hashes; when every question hashes alike
    (each a collision), the questions are compared instead and every item lands where
    it did."""
    items = _pool(100)
    for n, item in enumerate(items[::10]):  # 30 items of 4 questions: they link families
        item["question"] = f"How many rows in table {n % 4}?"
    settings = config(split={"ratios": RATIOS})
    real, report = split_items(frame_of(items), settings, seed=1)
    assert report["groups"] < report["families"]  # the questions joined families
    codes = expressions.hashed(real, expressions.normalized_question())
    assert codes.n_unique() == 274 and codes.dtype == pl.UInt64
    monkeypatch.setattr(expressions, "key_hash", lambda values: values.is_null().cast(pl.UInt64))
    assert expressions.hashed(real, expressions.normalized_question()).n_unique() == 274
    colliding, again = split_items(frame_of(items), settings, seed=1)
    # the question's codes differ (values' codes instead of hashes); nothing else does
    assert colliding.drop("question_key").equals(real.drop("question_key")) and again == report
