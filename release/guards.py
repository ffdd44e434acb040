"""Guards before a release is cut: no contradictory items, no empty release.

Two items that ask the same question (normalized) of the same database, edited the same
way, but whose gold results differ, cannot both be right: both become rejects, each
naming the other, and neither is released.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from answerable.errors import AnswerableError
from answerable.pipeline import StepOutput, reject
from answerable.release.keys import normalized_question


class EmptyReleaseError(AnswerableError):
    """Nothing would be released."""


def drop_contradictions(output: StepOutput) -> StepOutput:
    """``output`` without its contradictory items, which become rejects."""
    contradictory = contradictions(output.items)
    if not contradictory:
        return output
    kept = StepOutput(rejects=list(output.rejects))
    for item in output.items:
        if item["id"] in contradictory:
            kept.rejects.append(contradictory_reject(item, contradictory[item["id"]]))
        else:
            kept.items.append(item)
    return kept


def contradictory_reject(item: dict, others: list[str]) -> dict:
    """The reject of an item that contradicts ``others`` (their ids)."""
    generator = (item.get("provenance") or {}).get("generator", "unknown")
    detail = (
        f"same question and database as {', '.join(others)} but a different gold result; "
        "neither is released"
    )
    return reject(item["id"], generator, "contradictory", detail)


def contradictions(items: Iterable[dict]) -> dict[str, list[str]]:
    """For each contradictory item, the ids of the items it contradicts (``items`` is
    read once, keeping five short fields of each)."""
    rows = [
        (
            i["id"],
            i["db_id"],
            i.get("db_variant") or "",
            i["question"],
            (i.get("result") or {}).get("hash"),
        )
        for i in items
    ]
    if not rows:
        return {}
    frame = pl.DataFrame(
        rows, schema=["id", "db_id", "db_variant", "question", "hash"], orient="row"
    ).filter(pl.col("hash").is_not_null())
    groups = (
        frame.with_columns(key=normalized_question())
        .group_by("db_id", "db_variant", "key")
        .agg(pl.col("id").sort(), pl.col("hash").n_unique().alias("results"))
        .filter(pl.col("results") > 1)
    )
    found = {}
    for ids in groups["id"]:
        for one in ids:
            found[one] = [other for other in ids if other != one]
    return found


def require_items(count: int, release: str) -> None:
    """An empty release is an error: nothing is published and no version is used up."""
    if count == 0:
        raise EmptyReleaseError(
            f"release {release}: no items to release, nothing published "
            "(fix: check the rejects report and the review queue, or loosen release.sample)"
        )
