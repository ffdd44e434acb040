"""The acceptance policy: from annotators' decisions to accepted, rejected and open items.

Three rules, chosen in the recipe (``review.policy``):

- ``unanimous``: at least ``min_annotators`` decided and all agree (SCARE kept a drafted
  question only when three annotators approved it); one disagreement is a conflict.
- ``majority``: at least ``min_annotators`` decided and more than half agree; a tie or a
  split with no majority is a conflict.
- ``single``: one decision is enough; two annotators who disagree are a conflict.

Agreement means the same outcome (:func:`outcome`): accept, reject, or relabel to the same
label and category (and the same corrected SQL). A relabel moves the item to its new
label and category; new spans replace the item's; a corrected question or SQL makes the
corrected item that replaces it (:mod:`.corrections`). Items from machine-verified
generators listed in ``auto_accept`` are accepted without review. An ``adjudicator``'s
decision, when the recipe names one, settles the item whatever the others said: that is
how conflicts are resolved.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from answerable.annotation.corrections import corrected_item, is_correction
from answerable.annotation.decisions import outcome
from answerable.annotation.queue import decision_time

MODES = ("unanimous", "majority", "single")
ACCEPTED, REJECTED, OPEN, CONFLICT = "accepted", "rejected", "open", "conflict"
STATUSES = (OPEN, CONFLICT, ACCEPTED, REJECTED)


@dataclass(frozen=True)
class Policy:
    """How many annotators must decide, how they must agree, and what skips review."""

    mode: str = "majority"
    min_annotators: int = 1
    auto_accept: tuple[str, ...] = ()
    adjudicator: str | None = None

    @classmethod
    def from_recipe(cls, section: dict) -> Policy:
        """The policy of a recipe's ``review`` section (already checked by its schema)."""
        mode = section.get("policy", "majority")
        return cls(
            mode=mode,
            min_annotators=1 if mode == "single" else section.get("min_annotators", 1),
            auto_accept=tuple(section.get("auto_accept", ())),
            adjudicator=section.get("adjudicator"),
        )

    def describe(self) -> str:
        """One line for people: ``majority of at least 3 annotators``."""
        if self.mode == "single":
            return "a single annotator"
        plural = "s" if self.min_annotators > 1 else ""
        return f"{self.mode} of at least {self.min_annotators} annotator{plural}"


@dataclass
class Resolution:
    """Where one item stands: its status, the winning decisions and a reason."""

    item_id: str
    status: str
    decisions: list[dict] = field(default_factory=list)
    winners: list[dict] = field(default_factory=list)
    reason: str = ""
    auto: bool = False


def generator_of(item: dict) -> str | None:
    """The name of the generator that made ``item`` (from its provenance)."""
    return (item.get("provenance") or {}).get("generator")


def resolve(item: dict, decisions: list[dict], policy: Policy) -> Resolution:
    """The status of one item given its current decisions (one per annotator)."""
    item_id = item["id"]
    generator = generator_of(item)
    if not decisions:
        if generator in policy.auto_accept:
            return Resolution(item_id, ACCEPTED, reason=f"auto-accepted: {generator}", auto=True)
        return Resolution(item_id, OPEN, reason="no decision yet")
    judge = [d for d in decisions if d["annotator"] == policy.adjudicator]
    if judge:
        return _settled(item_id, decisions, judge, f"adjudicated by {policy.adjudicator}")
    votes = Counter(outcome(d) for d in decisions)
    top, count = votes.most_common(1)[0]
    winners = [d for d in decisions if outcome(d) == top]
    if len(votes) > 1 and policy.mode in ("unanimous", "single"):
        return Resolution(item_id, CONFLICT, decisions, reason=_split(votes))
    if len(decisions) < policy.min_annotators:
        missing = policy.min_annotators - len(decisions)
        return Resolution(item_id, OPEN, decisions, reason=f"needs {missing} more decision(s)")
    if policy.mode == "majority" and count * 2 <= len(decisions):
        return Resolution(item_id, CONFLICT, decisions, reason=f"no majority: {_split(votes)}")
    return _settled(item_id, decisions, winners, f"{policy.mode}: {_split(votes)}")


def _settled(item_id: str, decisions: list[dict], winners: list[dict], reason: str) -> Resolution:
    status = REJECTED if winners[0]["verdict"] == "reject" else ACCEPTED
    return Resolution(item_id, status, decisions, winners, reason)


def _split(votes: Counter) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(votes.items()))


def final_item(item: dict, resolution: Resolution, policy: Policy) -> dict:
    """The item as the release takes it: relabel and corrections applied, ``review`` filled.

    A corrected question or SQL makes a new item (:func:`corrected_item`: new id, made by
    ``review_correction_v1``, its provenance naming the old id and the annotators); its
    ``review`` keeps the old id under ``corrected_from`` (and ``reviewed_id``), the old
    question under ``original_question``. The build verifies it before the release takes it.
    """
    final = dict(item)
    review = {"status": resolution.status, "policy": policy.mode, "reason": resolution.reason}
    review["decisions"] = [_trail(d) for d in resolution.decisions]
    if resolution.auto:
        review["auto_accepted"] = True
    latest = sorted(resolution.winners, key=lambda d: decision_time(d["time"]))
    relabel = next((d for d in reversed(latest) if d["verdict"] == "relabel"), None)
    if relabel is not None:
        review["relabeled_from"] = {"label": item["label"], "category": item.get("category")}
        final.update(label=relabel["label"], category=relabel["category"], subtype=None)
    question = _latest(latest, "question")
    sql = _latest(latest, "sql")
    spans = next((d["spans"] for d in reversed(latest) if d.get("spans") is not None), None)
    if spans is not None:
        final["spans"] = spans
    question = question if question != item["question"] else None
    sql = sql if sql != item.get("sql") else None
    if question or sql:
        authors = [d["annotator"] for d in latest if is_correction(d)]
        final = corrected_item(
            final,
            label=final["label"],
            category=final.get("category"),
            question=question,
            sql=sql,
            by=authors,
        )
        review.update(reviewed_id=item["id"], corrected_from=item["id"])
        if question:
            review["original_question"] = item["question"]
    final["review"] = review
    return final


def _latest(decisions: list[dict], name: str):
    """The latest non-empty value of one field among time-ordered decisions."""
    return next((d[name] for d in reversed(decisions) if d.get(name)), None)


def _trail(decision: dict) -> dict:
    keep = ("annotator", "verdict", "label", "category", "question", "sql", "comment", "time")
    return {k: decision.get(k) for k in keep if decision.get(k) is not None}


@dataclass
class ReviewOutcome:
    """Every item's resolution, and the accepted items as the release takes them."""

    resolutions: dict[str, Resolution]
    accepted: list[dict]

    def ids(self, status: str) -> list[str]:
        """Ids of the items with one status, sorted."""
        return sorted(i for i, r in self.resolutions.items() if r.status == status)

    def counts(self) -> dict[str, int]:
        """Items per status (every status present, zero or not) and auto-accepted ones."""
        counts = dict.fromkeys(STATUSES, 0)
        for resolution in self.resolutions.values():
            counts[resolution.status] += 1
        counts["auto_accepted"] = sum(r.auto for r in self.resolutions.values())
        return counts

    @property
    def awaiting(self) -> int:
        """Items that still need a person: open or in conflict."""
        counts = self.counts()
        return counts[OPEN] + counts[CONFLICT]


def apply_policy(items: list[dict], decisions: list[dict], policy: Policy) -> ReviewOutcome:
    """Resolve every item; the accepted ones come back in their final form."""
    by_item: dict[str, list[dict]] = {}
    for decision in decisions:
        by_item.setdefault(decision["item_id"], []).append(decision)
    resolutions, accepted = {}, []
    for item in items:
        resolution = resolve(item, by_item.get(item["id"], []), policy)
        resolutions[item["id"]] = resolution
        if resolution.status == ACCEPTED:
            accepted.append(final_item(item, resolution, policy))
    return ReviewOutcome(resolutions, accepted)
