"""Put every item of a release into a split.

Items that must not be told apart by the split move as one group: a family (an item,
the items made from it and their drafts; see :func:`expressions.with_family`), the items
asking the same question, and per split kind the items sharing a SQL skeleton (query
split) or a database (cross-database split). A group lands in a split by the hash of
its smallest id, so it stays there as the pool grows. A group holding a label placed
only in test (``test_only``) goes to test whole, or its family would leak.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from answerable.release.cut.config import TEST_SPLIT, ReleaseConfig
from answerable.release.cut.earlier import Earlier
from answerable.release.cut.expressions import (
    hashed,
    item_hash,
    normalized_question,
    unit,
    with_family,
    with_groups,
)

STEP = "split"
LINKS = {
    "question": ["family", "question_key"],
    "query": ["family", "question_key", "skeleton"],
    "database": ["family", "question_key", "db_id"],
    "source": ["family"],
    "none": ["family"],
}


def split_items(
    frame: pl.DataFrame, config: ReleaseConfig, seed: int, pinned: Earlier | None = None
) -> tuple[pl.DataFrame, dict]:
    """``frame`` with its ``split`` column set (and ``family`` and ``question_key``, the
    normalized question's codes, for the leakage check), and the report's ``splits``
    section.

    ``pinned`` (the earlier versions, see :mod:`answerable.release.cut.earlier`) keeps
    each released item in its split; a new item linked to released ones (those of this
    version, and those released before but absent now) joins their split, and only the
    other new items are drawn by the ratios. A new item that cannot join (its label is
    placed only in test but its family was released elsewhere, or it links released
    items of two splits) is held back from this release and listed in the report."""
    kind = config.split.kind
    departed = pinned.departed(frame["id"]) if pinned is not None else None
    work = with_family(_link_rows(frame, kind, departed))  # departed items link, then leave
    # the question compared as codes: its normalized text is never held for every item
    work = work.with_columns(question_key=hashed(work, normalized_question()))
    _check_skeletons(work.head(frame.height), config)
    work = with_groups(work, LINKS[kind])
    work = work.with_columns(
        # a group draws with the hash of its first id, so it stays put as the pool grows
        draw=unit(item_hash("id", seed, STEP)).gather(pl.col("group")),
        forced=_forced(work, config.split.test_only),
    )
    kept = None
    if pinned is not None:
        work = _with_pins(work, pinned.splits).head(frame.height)
        _refuse_moves(work, config)
    fresh = work if pinned is None else work.filter(pl.col("group_split").is_null())
    work = work.with_columns(placed=_placement(work, config, seed, fresh))
    _check_family_sizes(work, config, fresh)
    if pinned is not None:
        work = work.with_columns(placed=pl.coalesce("pinned", "group_split", "placed"))
        kept, held = _kept(work, config)
        frame, work = frame.filter(~held), work.filter(~held)
    report = {
        "kind": kind,
        "ratios": config.split.ratios if kind not in ("source", "none") else None,
        "free_ratios": free_ratios(fresh, config) if kind not in ("source", "none") else None,
        "test_only": config.split.test_only,
        "groups": work["group"].n_unique(),
        "families": work["family"].n_unique(),
        "groups_moved_to_test": _moved(work, config),
        "counts": _counts(work),
    }
    if kept is not None:
        report["kept"] = kept
    # the family and the question's codes ride along for the leakage check (writers drop them)
    shared = {name: work[name] for name in ("family", "question_key")}
    return frame.with_columns(split=work["placed"], **shared), report


def _link_rows(frame: pl.DataFrame, kind: str, departed: pl.DataFrame | None) -> pl.DataFrame:
    """The fields that link items into groups and place them, of this version's items
    then of the ``departed`` ones (see :meth:`Earlier.departed`): this version's rows
    keep their row numbers, so a group without a departed item draws as before."""
    parent = pl.col("provenance").struct.field("parent")
    fields = ["id", "db_id", "question", "label", "split", parent]
    if "skeleton" in LINKS[kind]:  # the narrow frame holds it only then (publish.READ_PARTS)
        fields.append(pl.col("sql_meta").struct.field("skeleton"))
    work = frame.select(fields)
    if departed is not None and departed.height:
        work = pl.concat([work, departed.select(work.columns)], how="vertical_relaxed")
    return work.with_columns(provenance=pl.struct("parent")).drop("parent")


def _with_pins(work: pl.DataFrame, pinned: pl.DataFrame) -> pl.DataFrame:
    """``work`` with ``pinned`` (an item's released split, null for a new item),
    ``group_split`` (the split of the group's first released item) and ``group_splits``
    (how many splits its released items are in)."""
    released = pinned.select("id", pl.col("split").alias("pinned"))
    work = work.join(released, on="id", how="left", maintain_order="left")
    first = pl.col("pinned").sort_by("id").drop_nulls().first()
    return work.with_columns(
        group_split=first.over("group"),
        group_splits=pl.col("pinned").drop_nulls().n_unique().over("group"),
    )


def _refuse_moves(work: pl.DataFrame, config: ReleaseConfig) -> None:
    """Released items this recipe would place in another split: one error naming them."""
    split, pinned = config.split, pl.col("pinned")
    if split.kind == "none":
        allowed = pinned == TEST_SPLIT
    elif split.kind == "source":
        allowed = pinned == pl.col("split")
    else:
        allowed = pinned.is_in(list(split.ratios))
    if split.test_only:
        allowed = allowed & (~pl.col("label").is_in(split.test_only) | (pinned == TEST_SPLIT))
    moved = work.filter(pinned.is_not_null() & ~allowed.fill_null(False))
    if moved.height:
        named = ", ".join(f"{i} ({s})" for i, s in moved.select("id", "pinned").rows())
        raise config.error(
            "split",
            f"{moved.height} released items would leave the split an earlier version gave "
            f"them: {named}",
            fix="keep their splits and labels in the recipe, or set release.resplit: true "
            "and raise the major version",
        )


def _kept(work: pl.DataFrame, config: ReleaseConfig) -> tuple[dict, pl.Series]:
    """The report's ``kept`` section, and which new items are held back: those whose
    group's released items are in two splits, or whose label is placed only in test
    while their group was released elsewhere."""
    new_in_group = pl.col("pinned").is_null() & pl.col("group_split").is_not_null()
    test_only = pl.col("label").is_in(config.split.test_only)
    clash = (pl.col("group_splits") > 1) | (test_only & (pl.col("group_split") != TEST_SPLIT))
    held = work.select((new_in_group & clash).alias("held"))["held"]
    kept = {
        "released_before": int(work["pinned"].is_not_null().sum()),
        "joined_their_family": int(work.select(new_in_group & ~clash).sum().item()),
        "drawn": int(work["group_split"].is_null().sum()),
        "held_back": sorted(work.filter(held)["id"].to_list()),
    }
    return kept, held


def _placement(
    work: pl.DataFrame, config: ReleaseConfig, seed: int, fresh: pl.DataFrame
) -> pl.Series:
    """Each item's split by its group's draw, the ratios set for the ``fresh`` items
    (those no earlier version placed)."""
    kind, split = config.split.kind, config.split
    if kind == "none":
        placed = pl.lit(TEST_SPLIT)
    elif kind == "source":
        placed = pl.col("split").drop_nulls().first().over("group")
    else:
        draw = pl.col("draw")
        ratios = free_ratios(fresh, config)
        names, placed, bound = list(ratios), None, 0.0
        for name in names[:-1]:  # split i takes the draws in [sum of ratios before i, + ratio i)
            bound += ratios[name]
            placed = (placed.when if placed is not None else pl.when)(draw < bound).then(
                pl.lit(name)
            )
        placed = pl.lit(names[-1]) if placed is None else placed.otherwise(pl.lit(names[-1]))
    if split.test_only:
        placed = pl.when("forced").then(pl.lit(TEST_SPLIT)).otherwise(placed)
    result = work.with_columns(placed.alias("placed"))["placed"]
    if kind == "source" and result.null_count():
        example = work.filter(result.is_null())["id"][0]
        raise config.error(
            "split.kind",
            f"'source' keeps the split a source gave, but {result.null_count()} items have "
            f"none (e.g. {example})",
            fix="choose kind: question (or query, database) to split them here",
        )
    return result


def _forced(work: pl.DataFrame, test_only: list[str]) -> pl.Series:
    """Whether each item's group holds a label placed only in test (numpy: one pass)."""
    group = work["group"].to_numpy()
    marked = np.zeros(work.height, dtype=bool)
    marked[group[work["label"].is_in(test_only).to_numpy()]] = True
    return pl.Series(marked[group])


def free_ratios(work: pl.DataFrame, config: ReleaseConfig) -> dict[str, float]:
    """The ratios for the groups no ``test_only`` label sends to test, so that the items
    the ratios are about (those of the other labels) still split as asked: the ones
    already in test by their family count toward test's share.

    >>> import polars as pl
    >>> from answerable.release.cut.config import release_config
    >>> work = pl.DataFrame({"label": ["answerable"] * 10, "forced": [False] * 10})
    >>> free_ratios(work, release_config({"split": {"ratios": {"train": 0.5, "test": 0.5},
    ...                                              "test_only": ["unanswerable"]}}))
    {'train': 0.5, 'test': 0.5}
    """
    split = config.split
    if not split.test_only:
        return dict(split.ratios)
    counted = work.select("forced", "label").filter(~pl.col("label").is_in(split.test_only))
    total, moved = counted.height, int(counted["forced"].sum())
    if moved == 0 or moved == total:
        return dict(split.ratios)
    wanted = {name: ratio * total for name, ratio in split.ratios.items()}
    wanted[TEST_SPLIT] = max(0.0, wanted[TEST_SPLIT] - moved)
    whole = sum(wanted.values())
    return {name: count / whole for name, count in wanted.items()}


def _check_skeletons(work: pl.DataFrame, config: ReleaseConfig) -> None:
    """A query split groups by skeleton: an item without one must be placed by its label
    or ride with a family member that has one."""
    if config.split.kind != "query":
        return
    placed_by_label = pl.col("label").is_in(config.split.test_only)
    has_kin = pl.col("skeleton").is_not_null().any().over("family")
    loose = work.filter(~placed_by_label & ~has_kin)
    if loose.height:
        raise config.error(
            "split.kind",
            f"a query split needs a SQL skeleton, and {loose.height} items have none "
            f"(e.g. {loose['id'][0]}, label {loose['label'][0]})",
            fix="place their labels in test (split.test_only) or use kind: question",
        )


def _check_family_sizes(work: pl.DataFrame, config: ReleaseConfig, fresh: pl.DataFrame) -> None:
    """A group bigger than a split's share of the release cannot keep the ratios (only
    the ``fresh`` groups are drawn by them: the others stay where they were released)."""
    if config.split.kind in ("source", "none") or fresh.height == 0:
        return
    sizes = fresh.group_by("group").len()
    largest = sizes.sort(["len", "group"], descending=[True, False]).row(0, named=True)
    largest["group"] = work["id"][largest["group"]]
    for name, ratio in config.split.ratios.items():
        target = ratio * work.height
        if ratio > 0 and largest["len"] > max(target, 1):
            raise config.error(
                "split.ratios",
                f"split '{name}' holds about {target:.0f} items, but the items of family/"
                f"group {largest['group']} ({largest['len']}) must stay together",
                fix=f"raise the share of '{name}' or release more items",
            )


def _moved(work: pl.DataFrame, config: ReleaseConfig) -> int:
    if not config.split.test_only:
        return 0
    forced = work.filter(pl.col("label").is_in(config.split.test_only))
    return forced["group"].n_unique()


def _counts(work: pl.DataFrame) -> dict:
    counts = work.group_by("placed", "label").len().sort("placed", "label")
    out: dict[str, dict] = {}
    for row in counts.iter_rows(named=True):
        entry = out.setdefault(row["placed"], {"total": 0, "by_label": {}})
        entry["total"] += row["len"]
        entry["by_label"][row["label"]] = row["len"]
    return out
