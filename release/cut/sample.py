"""Stratified sampling of the accepted items, for the report's ``sampling`` section.

Items are grouped into strata by the recipe's fields (any item field, a dotted path
into one, or a short name such as ``hardness``, ``generator``, ``operation``,
``scare_stratum``; see :mod:`answerable.release.cut.expressions`). Each item draws a hash of
(seed, its id), so the draw never depends on the rest of the pool:

- ``count: N`` keeps the N lowest draws of each stratum; a stratum holding fewer than
  ``minimum`` items (by default N: an absolute quota is a promise) stops the release.
- ``share: s`` keeps every item whose draw is below s: an item chosen stays chosen
  however the pool grows.
- ``per_answerable_test: {unanswerable: 1}`` keeps, after the split, that many items of
  the label per answerable test item (TrustSQL's one unanswerable per answerable).
"""

from __future__ import annotations

import polars as pl

from answerable.kernel.errors import AnswerableError
from answerable.release.cut.config import TEST_SPLIT, ReleaseConfig
from answerable.release.cut.expressions import DERIVED, FIELD_ALIASES, field_expr, item_hash, unit

STEP = "sample"


class ShortStratumError(AnswerableError):
    """A stratum holds fewer items than its required minimum."""


def stratum_columns(frame: pl.DataFrame, config: ReleaseConfig, key: str) -> list[pl.Expr]:
    """The expressions of the strata fields; an unknown field is an error naming it."""
    fields = config.sample.strata if config.sample else []
    exprs = []
    for name in fields:
        expr = field_expr(name, frame.schema)
        if expr is None:
            known = sorted({*FIELD_ALIASES, *DERIVED, *frame.columns})
            raise config.error(
                key, f"unknown stratum field '{name}'", fix=f"use one of {', '.join(known)}"
            )
        exprs.append(expr.alias(f"stratum:{name}"))
    return exprs


def sample_items(
    frame: pl.DataFrame, config: ReleaseConfig, seed: int
) -> tuple[pl.DataFrame, dict]:
    """The chosen items and the report's ``sampling`` section."""
    chosen, report = sampled(frame, config, seed)
    return (frame if chosen is None else frame.filter(chosen)), report


def sampled(frame: pl.DataFrame, config: ReleaseConfig, seed: int) -> tuple[pl.Series | None, dict]:
    """Which items :func:`sample_items` chooses (a boolean column; None when it keeps
    every item) and the report's ``sampling`` section."""
    sample = config.sample
    if sample is None or (sample.count is None and sample.share is None):
        return None, {"pool": frame.height, "chosen": frame.height, "strata": None}
    columns = stratum_columns(frame, config, "sample.strata")
    names = [f"stratum:{field}" for field in sample.strata]
    work = frame.with_columns(*columns, draw=item_hash("id", seed, STEP))
    if not names:
        work, names = work.with_columns(pl.lit("all").alias("stratum:all")), ["stratum:all"]
    if sample.count is not None:
        _check_quota(work, names, config)
        chosen = pl.col("draw").rank("ordinal").over(names) <= sample.count
    else:
        chosen = unit(pl.col("draw")) < sample.share
    work = work.with_columns(chosen=chosen)
    strata = _strata_report(work, names, config)
    report = {
        "pool": frame.height,
        "chosen": int(work["chosen"].sum()),
        "strata": sample.strata,
        "quota": {"count": sample.count} if sample.count is not None else {"share": sample.share},
        "minimum": sample.minimum,
        "by_stratum": strata,
    }
    return work["chosen"], report


def kept_rows(columns: list[pl.Series], chosen: pl.Series) -> pl.DataFrame:
    """The rows ``chosen`` of the frame whose ``columns`` are given, each column taken out
    of the list as its rows are copied: a column of the pool is freed once its chosen
    rows are (when nothing else holds it), so a pool and its chosen copy are never held
    whole at once. Sampling keeps most of a pool, and both together were a release's
    peak of memory."""
    kept = []
    while columns:
        kept.append(columns.pop(0).filter(chosen))
    return pl.DataFrame(kept)


def _check_quota(work: pl.DataFrame, names: list[str], config: ReleaseConfig) -> None:
    sample = config.sample
    sizes = work.group_by(names).len().sort(names)
    asked = sample.count * sizes.height
    if asked > work.height and sample.minimum >= sample.count:
        raise config.error(
            "sample.count",
            f"{sizes.height} strata x {sample.count} asks for {asked} items; the pool holds "
            f"{work.height}",
            fix="lower count, or set sample.minimum to accept short strata",
        )
    short = sizes.filter(pl.col("len") < sample.minimum)
    if short.height:
        row = short.row(0, named=True)
        where = ", ".join(f"{n.split(':', 1)[1]}={row[n]}" for n in names)
        raise ShortStratumError(
            f"release sampling: stratum {where} holds {row['len']} items, short of the "
            f"minimum {sample.minimum} ({short.height} strata short; fix: lower "
            "release.sample.minimum or count, or add items to the stratum)"
        )


def _strata_report(work: pl.DataFrame, names: list[str], config: ReleaseConfig) -> list[dict]:
    table = (
        work.group_by(names)
        .agg(pl.len().alias("available"), pl.col("chosen").sum().alias("chosen"))
        .sort(names)
    )
    rows = []
    for row in table.iter_rows(named=True):
        entry = {"stratum": {n.split(":", 1)[1]: row[n] for n in names}}
        entry.update(available=row["available"], chosen=row["chosen"])
        if config.sample.count is not None:
            entry["short"] = max(0, config.sample.count - row["available"])
        rows.append(entry)
    return rows


def balance_test(
    frame: pl.DataFrame, config: ReleaseConfig, seed: int
) -> tuple[pl.DataFrame, dict]:
    """Keep, in test, ``r`` items of each label per answerable test item (the recipe's
    ``per_answerable_test``), choosing by the same per-item hash; other splits untouched.

    With ``strata`` the kept items are taken in turn from each stratum of the label (its
    lowest draw, then each one's second ...), so the strata come out even, within one
    item, as far as each holds enough (TrustSQL's five unanswerable types).
    """
    ratios = config.sample.per_answerable_test if config.sample else {}
    if not ratios:
        return frame, {}
    in_test = pl.col("split") == TEST_SPLIT
    answerable = frame.filter(in_test & (pl.col("label") == "answerable")).height
    names = [f"stratum:{field}" for field in config.sample.strata]
    columns = stratum_columns(frame, config, "sample.strata")
    work = frame.with_columns(*columns, draw=item_hash("id", seed, STEP))
    keep, report = pl.lit(True), {}
    for label, ratio in sorted(ratios.items()):
        wanted = round(ratio * answerable)
        mine = in_test & (pl.col("label") == label)
        turn = pl.when(mine).then(pl.col("draw")).rank("ordinal")
        turn = turn.over(names) if names else turn
        # round robin: first every stratum's lowest draw, then each one's second ...
        order = pl.struct(turn.alias("turn"), pl.col("draw").alias("then"))
        rank = pl.when(mine).then(order.rank("ordinal").over(mine))
        keep = keep & (~mine | (rank <= wanted))
        available = work.filter(mine).height
        report[label] = {
            "per_answerable": ratio,
            "answerable": answerable,
            "wanted": wanted,
            "available": available,
            "short": max(0, wanted - available),
        }
        if names:
            kept = work.filter(mine & (rank <= wanted)).group_by(names).len().sort(names)
            report[label]["by_stratum"] = [
                {"stratum": {n.split(":", 1)[1]: row[n] for n in names}, "kept": row["len"]}
                for row in kept.iter_rows(named=True)
            ]
    return work.filter(keep).select(frame.columns), report
