"""The review queue: one interface, two backends (the local store and Argilla).

``push(items, excerpts)`` sends candidate items for review; it is idempotent by item id,
so pushing the same items twice creates no duplicates and keeps every decision made.
``pull()`` returns the decisions that count: the latest one of each annotator on each
item (earlier ones stay in the audit trail). ``progress()`` counts what is decided.
How decisions turn into accepted items is the policy's business
(:mod:`answerable.annotation.policy`), never a backend's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from answerable.pipeline import reject

STEP = "review"
ITEM_ID = re.compile(r"^[0-9a-f]{16}$")
LABELS = ("answerable", "ambiguous", "unanswerable")
RETRACT = "retract"  # the verdict that takes an annotator's decision back (undo)


@dataclass
class PushReport:
    """What a push did: items added, changed, unchanged, and rejects with reasons."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    rejects: list[dict] = field(default_factory=list)
    retired: int = 0  # queued items no longer among the candidates (local store)

    @property
    def pushed(self) -> int:
        """Items the queue holds from this push."""
        return self.added + self.updated + self.unchanged


@dataclass
class Progress:
    """How far the review is: items, items with a decision, decisions per annotator."""

    items: int
    decided: int
    decisions: int
    by_annotator: dict[str, int] = field(default_factory=dict)

    @property
    def undecided(self) -> int:
        """Items nobody has decided yet."""
        return self.items - self.decided


@runtime_checkable
class ReviewQueue(Protocol):
    """What both backends offer: a context manager that pushes, pulls and counts."""

    def __enter__(self) -> ReviewQueue: ...

    def __exit__(self, *exc: object) -> None: ...

    def push(
        self,
        items: Iterable[dict],
        excerpts: Mapping[str, list] | None = None,
        contexts: Mapping[str, dict] | None = None,
    ) -> PushReport: ...

    def pull(self) -> list[dict]: ...

    def progress(self) -> Progress: ...


def queue_problem(item: dict) -> str | None:
    """Why an item cannot enter the queue, or None.

    A cheap check of what review needs (id, database, question, label); the full item
    schema is checked by the build just before the push (``check_items``), at ~1 ms per
    item too slow to repeat on every push of a large queue.
    """
    if not isinstance(item, dict):
        return "not an object"
    if not isinstance(item.get("id"), str) or not ITEM_ID.match(item["id"]):
        return "id is not a 16-hex-digit item id"
    if not isinstance(item.get("db_id"), str) or not item["db_id"]:
        return "no db_id"
    if not isinstance(item.get("question"), str) or not item["question"].strip():
        return "no question"
    if item.get("label") not in LABELS:
        return f"label {item.get('label')!r} is not one of {', '.join(LABELS)}"
    return None


def queue_reject(item: object, problem: str) -> dict:
    """The rejects-report line of an item the queue refused."""
    item_id = item.get("id") if isinstance(item, dict) else None
    return reject(item_id, STEP, "not-reviewable", problem)


def latest_entries(history: Iterable[dict]) -> list[dict]:
    """The latest entry of each annotator on each item, by decision time (ties: the one
    recorded last), sorted by item id and annotator; retractions included."""
    ordered = sorted(history, key=lambda d: decision_time(d["time"]))
    latest = {(d["item_id"], d["annotator"]): d for d in ordered}
    return [latest[key] for key in sorted(latest)]


def latest_decisions(history: Iterable[dict]) -> list[dict]:
    """The decisions that count: the latest of each annotator on each item (see
    :func:`latest_entries`), except where that latest entry is a retraction (the
    annotator took the decision back: the item is undecided for them).

    >>> old = {"item_id": "a", "annotator": "ana", "verdict": "accept",
    ...        "time": "2026-01-02T00:00:00Z"}
    >>> new = dict(old, verdict="reject", time="2026-01-02T00:00:00.5Z")
    >>> [d["verdict"] for d in latest_decisions([new, old])]
    ['reject']
    >>> latest_decisions([new, dict(new, verdict="retract", time="2026-01-03T00:00:00Z")])
    []
    """
    return [d for d in latest_entries(history) if d["verdict"] != RETRACT]


def decision_time(text: str) -> datetime:
    """A decision's time as an aware datetime (its text forms do not sort as strings)."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def count_progress(item_ids: Iterable[str], decisions: Iterable[dict]) -> Progress:
    """:class:`Progress` of the queue holding ``item_ids`` given its current decisions."""
    ids = set(item_ids)
    decisions = [d for d in decisions if d["item_id"] in ids]
    by_annotator: dict[str, int] = {}
    for decision in decisions:
        by_annotator[decision["annotator"]] = by_annotator.get(decision["annotator"], 0) + 1
    decided = len({d["item_id"] for d in decisions})
    return Progress(len(ids), decided, len(decisions), dict(sorted(by_annotator.items())))
