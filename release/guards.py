"""Guards before a release is cut: no contradictory items, no empty release.

Two items that ask the same question (normalized) of the same database, edited the same
way, but whose gold results differ, cannot both be right: both become rejects, each
naming the other, and neither is released.

An answerable item whose question was then proved ambiguous on the same, unedited
database (a value the source itself holds in two columns, issue 12) is superseded: its
child shows that the question reads two ways with different results, so the parent's
answerable label is withdrawn and the child is released in its place.
"""

from __future__ import annotations

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
        others = contradictory.get(item["id"])
        if others is None:
            kept.items.append(item)
            continue
        generator = (item.get("provenance") or {}).get("generator", "unknown")
        detail = (
            f"same question and database as {', '.join(others)} but a different gold result; "
            "neither is released"
        )
        kept.rejects.append(reject(item["id"], generator, "contradictory", detail))
    return kept


def drop_superseded(output: StepOutput) -> StepOutput:
    """``output`` without the answerable items that a child proved ambiguous on the
    source itself (``trigger.in_source``); each becomes a ``superseded`` reject naming it."""
    superseded = superseding_children(output.items)
    if not superseded:
        return output
    kept = StepOutput(rejects=list(output.rejects))
    for item in output.items:
        child = superseded.get(item["id"])
        if child is None:
            kept.items.append(item)
            continue
        generator = (item.get("provenance") or {}).get("generator", "unknown")
        detail = (
            f"{child} shows the question reads two ways on this database, with different "
            "results (the source holds the value in two columns); the answerable label is "
            "withdrawn and the ambiguous item released instead"
        )
        kept.rejects.append(reject(item["id"], generator, "superseded", detail))
    return kept


def superseding_children(items: list[dict]) -> dict[str, str]:
    """For each answerable item on an unedited database that a child item proved
    ambiguous there, the child's id (the first in id order)."""
    found: dict[str, str] = {}
    for item in items:
        trigger = item.get("trigger") or {}
        parent = (item.get("provenance") or {}).get("parent")
        if trigger.get("in_source") and parent and not item.get("db_variant"):
            found[parent] = min(found.get(parent, item["id"]), item["id"])
    return {
        item["id"]: found[item["id"]]
        for item in items
        if item["id"] in found and item["label"] == "answerable" and not item.get("db_variant")
    }


def contradictions(items: list[dict]) -> dict[str, list[str]]:
    """For each contradictory item, the ids of the items it contradicts."""
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
