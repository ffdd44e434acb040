"""Spot checks: a seeded share of machine-verified items that people look at anyway.

Items of ``auto_accept`` generators skip review, so a generator that breaks would go
unnoticed. ``review.spot_check`` (one share for every such generator, or one per
generator) sends a share of their items to the queue too. The choice is seeded: per
generator, the items are ordered by a hash of (seed, ``spot_check``, item id) and the
first ``ceil(share * n)`` are taken, so the same recipe picks the same items and a
larger share picks a superset. A spot-checked item stays accepted while nobody has
decided it (the release does not wait for it); a reviewer's decision settles it like any
other item, and every rejected spot check is reported with its generator.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict

from answerable.annotation.policy import REJECTED, ReviewOutcome, generator_of

STEP = "spot_check"


def awaits_person(resolution, spot_check: bool) -> bool:
    """Whether an item still waits for a reviewer although the policy settled it: a spot
    check the policy accepted on its own (the release counts it as accepted meanwhile).
    """
    return spot_check and resolution.auto


def shares(section: dict, auto_accept: tuple[str, ...]) -> dict[str, float]:
    """The spot-check share of each auto-accepted generator (0 when not set).

    >>> shares({"spot_check": 0.1}, ("seed_v1", "drop_column_v1"))
    {'seed_v1': 0.1, 'drop_column_v1': 0.1}
    >>> shares({"spot_check": {"drop_column_v1": 0.5}}, ("seed_v1", "drop_column_v1"))
    {'seed_v1': 0.0, 'drop_column_v1': 0.5}
    """
    value = section.get("spot_check", 0)
    if isinstance(value, dict):
        return {g: float(value.get(g, 0)) for g in auto_accept}
    return dict.fromkeys(auto_accept, float(value))


def choose(items: list[dict], share_by_generator: dict[str, float], seed: int) -> list[dict]:
    """The items to spot-check, sorted by id (see the module docstring)."""
    by_generator: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        generator = generator_of(item)
        if share_by_generator.get(generator, 0) > 0:
            by_generator[generator].append(item)
    chosen = []
    for generator, group in by_generator.items():
        count = math.ceil(share_by_generator[generator] * len(group))
        chosen += sorted(group, key=lambda item: _key(seed, item["id"]))[:count]
    return sorted(chosen, key=lambda item: item["id"])


def report(checked: list[dict], outcome: ReviewOutcome) -> dict:
    """Per generator: items sampled, decided by a person, and rejected (with their ids)."""
    found: dict[str, dict] = {}
    for item in checked:
        entry = found.setdefault(
            generator_of(item), {"sampled": 0, "decided": 0, "rejected": 0, "rejected_ids": []}
        )
        entry["sampled"] += 1
        resolution = outcome.resolutions.get(item["id"])
        if resolution is None or resolution.auto:
            continue
        entry["decided"] += 1
        if resolution.status == REJECTED:
            entry["rejected"] += 1
            entry["rejected_ids"].append(item["id"])
    return dict(sorted(found.items()))


def report_lines(by_generator: dict) -> list[str]:
    """One line per generator with a rejected spot check, for the build log."""
    return [
        f"review: spot check: {entry['rejected']} of {entry['decided']} checked items of "
        f"{generator} rejected ({', '.join(entry['rejected_ids'][:5])}): look at the generator"
        for generator, entry in by_generator.items()
        if entry["rejected"]
    ]


def _key(seed: int, item_id: str) -> str:
    return hashlib.sha256(f"{seed}/{STEP}/{item_id}".encode()).hexdigest()
