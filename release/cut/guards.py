"""Guards before a release is cut: no contradictory items, no superseded labels, no empty
release.

Two items that ask the same question (normalized) of the same database, edited the same
way, but whose gold results differ, cannot both be right: both become rejects, each
naming the other, and neither is released.

An answerable item whose question was then proved ambiguous on the same, unedited
database (a value the source itself holds in two columns) is superseded: its
child shows that the question reads two ways with different results, so the parent's
answerable label is withdrawn and the child is released in its place.

The guards read the items as a stream (a large build's candidates wait on disk): each
finding keeps a few short fields per item, never the items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import polars as pl

from answerable.kernel.errors import AnswerableError
from answerable.kernel.records import ItemFiles
from answerable.pipeline import reject
from answerable.release.cut.expressions import normalized_question


class EmptyReleaseError(AnswerableError):
    """Nothing would be released."""


def guard_rejects(read: Callable[[], Iterable[dict]]) -> dict[str, dict]:
    """The reject of every item no release may carry, by id: contradictory items and
    superseded parents. ``read()`` gives the items afresh; they are read at most three
    times (once per finding, once more for the items found)."""
    contradictory = contradictions(read())
    superseded = superseding_children(_guard_fields(read()))
    if not contradictory and not superseded:
        return {}
    found = {}
    for item in _guard_fields(read()):
        if item["id"] in contradictory:
            found[item["id"]] = contradictory_reject(item, contradictory[item["id"]])
        elif item["id"] in superseded:
            found[item["id"]] = superseded_reject(item, superseded[item["id"]])
    return found


GUARD_FIELDS = ("id", "label", "db_variant", "provenance", "trigger")
"""What :func:`superseding_children` and the rejects read of each item."""


def _guard_fields(items: Iterable[dict]) -> Iterable[dict]:
    """Items in Parquet files with only :data:`GUARD_FIELDS` decoded (the result, the
    candidates and the rest stay undecoded); other items as they are."""
    return items.fields(*GUARD_FIELDS) if isinstance(items, ItemFiles) else items


def _generator(item: dict) -> str:
    return (item.get("provenance") or {}).get("generator", "unknown")


def contradictory_reject(item: dict, others: list[str]) -> dict:
    """The reject of an item that contradicts ``others`` (their ids)."""
    detail = (
        f"same question and database as {', '.join(others)} but a different gold result; "
        "neither is released"
    )
    return reject(item["id"], _generator(item), "contradictory", detail)


def superseded_reject(item: dict, child: str) -> dict:
    """The reject of an answerable item that its ``child`` proved ambiguous."""
    detail = (
        f"{child} shows the question reads two ways on this database, with different "
        "results (the source holds the value in two columns); the answerable label is "
        "withdrawn and the ambiguous item released instead"
    )
    return reject(item["id"], _generator(item), "superseded", detail)


def superseding_children(items: Iterable[dict]) -> dict[str, str]:
    """For each answerable item on an unedited database that a child item proved
    ambiguous there (``trigger.in_source``), the child's id (the first in id order)."""
    children: dict[str, str] = {}
    answerable = set()
    for item in items:
        if item.get("db_variant"):
            continue
        parent = (item.get("provenance") or {}).get("parent")
        if parent and (item.get("trigger") or {}).get("in_source"):
            children[parent] = min(children.get(parent, item["id"]), item["id"])
        if item["label"] == "answerable":
            answerable.add(item["id"])
    return {parent: child for parent, child in children.items() if parent in answerable}


SHORT_FIELDS = ("id", "db_id", "db_variant", "question", "hash")  # what contradictions reads


def _short_fields(items: ItemFiles) -> pl.DataFrame:
    """:data:`SHORT_FIELDS` of items in Parquet files, read as columns (the result's hash
    its struct's field): no item is decoded whole, none held as a dict."""
    columns = ["id", "db_id", "db_variant", "question", "result"]
    frames = [pl.scan_parquet(file).select(columns) for file in items.files]
    short = pl.concat(frames).select(
        "id",
        "db_id",
        pl.col("db_variant").fill_null(""),
        "question",
        hash=pl.col("result").struct.field("hash"),
    )
    return short.collect(engine="streaming")  # the results are read a piece at a time


def contradictions(items: Iterable[dict]) -> dict[str, list[str]]:
    """For each contradictory item, the ids of the items it contradicts (``items`` is
    read once, keeping five short fields of each)."""
    if isinstance(items, ItemFiles):
        frame = _short_fields(items)
    else:
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
        frame = pl.DataFrame(rows, schema=list(SHORT_FIELDS), orient="row")
    frame = frame.filter(pl.col("hash").is_not_null())
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
