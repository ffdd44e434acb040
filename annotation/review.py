"""Review as the build and the ``answerable review`` commands use it.

The recipe's ``review`` section chooses the backend (``local`` or ``argilla``) and the
policy. The build pushes the candidates that need a person, pulls the decisions and
applies the policy; the release takes the accepted items only. Without a ``review``
section there is no review and every candidate goes to the release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from answerable.annotation import spot_check
from answerable.annotation.agreement import agreement_report
from answerable.annotation.corrections import CorrectionError, Verifier
from answerable.annotation.excerpt import KnownReads, schema_excerpt
from answerable.annotation.policy import (
    CONFLICT,
    OPEN,
    REJECTED,
    Policy,
    ReviewOutcome,
    apply_policy,
    generator_of,
)
from answerable.annotation.queue import STEP, PushReport, ReviewQueue
from answerable.annotation.store import LocalQueue, store_path
from answerable.builders.executor import Limits
from answerable.kernel.errors import ConfigError
from answerable.kernel.recipe import Recipe
from answerable.kernel.records import write_json
from answerable.pipeline import Workspace, reject

Log = Callable[[str], None]


def wants_review(recipe: Recipe) -> bool:
    """True when the recipe has a ``review`` section."""
    return "review" in recipe.data


def holds_release(recipe: Recipe) -> bool:
    """True when no release may be cut while items await review (the default)."""
    return recipe.section("review").get("hold_release", True)


def policy_of(recipe: Recipe) -> Policy:
    """The recipe's acceptance policy."""
    return Policy.from_recipe(recipe.section("review"))


def backend_of(recipe: Recipe) -> str:
    """``local`` or ``argilla``."""
    return recipe.section("review").get("backend", "local")


def open_queue(recipe: Recipe) -> ReviewQueue:
    """The recipe's review queue (a context manager): the local store or Argilla."""
    section = recipe.section("review")
    if backend_of(recipe) == "argilla":
        from answerable.annotation.argilla_queue import ArgillaQueue, connect

        argilla = section.get("argilla") or {}
        return ArgillaQueue(
            connect(str(recipe.file)),
            dataset=argilla.get("dataset", recipe.dataset),
            workspace=argilla.get("workspace", "answerable"),
            min_submitted=policy_of(recipe).min_annotators,
        )
    return LocalQueue(store_path(recipe.workdir, recipe.dataset))


def open_local_queue(recipe: Recipe) -> LocalQueue:
    """The local store; a clear error when the recipe reviews in Argilla."""
    if backend_of(recipe) != "local":
        raise ConfigError(
            recipe.file,
            "review.backend",
            "this recipe reviews in Argilla: open the dataset in Argilla's web app",
            fix="use backend: local for the local review page and export/import",
        )
    return LocalQueue(store_path(recipe.workdir, recipe.dataset))


def hotkeys_of(recipe: Recipe, defaults: dict[str, str]) -> dict[str, str]:
    """The review page's keys: ``defaults`` with the recipe's ``review.hotkeys`` over
    them; a clear error when two actions share a key."""
    keys = {**defaults, **(recipe.section("review").get("hotkeys") or {})}
    seen: dict[str, str] = {}
    for action, key in keys.items():
        if key in seen:
            raise ConfigError(
                recipe.file,
                f"review.hotkeys.{action}",
                f"the key {key!r} is also the key of {seen[key]}",
                fix=f"give {action} or {seen[key]} another key",
            )
        seen[key] = action
    return keys


def where_to_review(recipe: Recipe) -> str:
    """How a person opens this recipe's review: the page command, or the Argilla dataset."""
    if backend_of(recipe) == "argilla":
        name = (recipe.section("review").get("argilla") or {}).get("dataset", recipe.dataset)
        return f"review them in the Argilla dataset '{name}'"
    return f"open the review page with `answerable review serve {recipe.file}`"


@dataclass
class ReviewResult:
    """What the review step of a build found."""

    outcome: ReviewOutcome
    pushed: PushReport
    decisions: int
    problems: list[str] = field(default_factory=list)
    report: Path | None = None
    spot_checks: dict = field(default_factory=dict)

    @property
    def awaiting(self) -> int:
        """Items that still need a person (open or in conflict)."""
        return self.outcome.awaiting

    def rejects(self) -> list[dict]:
        """Rejects-report lines: items the queue refused and items reviewers rejected."""
        refused = list(self.pushed.rejects)
        for item_id in self.outcome.ids(REJECTED):
            reason = self.outcome.resolutions[item_id].reason
            refused.append(reject(item_id, STEP, "rejected-in-review", reason))
        return refused


def review_candidates(
    recipe: Recipe, items: list[dict], databases: dict, reports: Path, log: Log
) -> ReviewResult:
    """Push what needs review, pull the decisions, apply the policy, write the report."""
    policy = policy_of(recipe)
    needing = [i for i in items if generator_of(i) not in policy.auto_accept]
    machine = [i for i in items if generator_of(i) in policy.auto_accept]
    checked = spot_check.choose(
        machine, spot_check.shares(recipe.section("review"), policy.auto_accept), recipe.seed
    )
    queued = sorted(needing + checked, key=lambda i: i["id"])
    contexts = review_contexts(queued, items, {i["id"] for i in checked})
    with KnownReads(store_path(recipe.workdir, recipe.dataset).parent / "sql-reads.json") as known:
        excerpts = {
            i["id"]: schema_excerpt(
                i,
                _schema(databases, i["db_id"]),
                (contexts.get(i["id"], {}).get("parent") or {}).get("sql"),
                known,
            )
            for i in queued
        }
    with open_queue(recipe) as queue:
        pushed = queue.push(queued, excerpts, contexts)
        if hasattr(queue, "retire"):
            pushed.retired = queue.retire({i["id"] for i in queued})
        decisions = queue.pull()
        problems = list(getattr(queue, "problems", []))
    ids = {i["id"] for i in items}
    decisions = [d for d in decisions if d["item_id"] in ids]
    outcome = apply_policy(items, decisions, policy)
    with Verifier(databases, variants_of(recipe), limits_of(recipe)) as verifier:
        verify_corrections(outcome, verifier)
    result = ReviewResult(outcome, pushed, len(decisions), problems)
    result.spot_checks = spot_check.report(checked, outcome)
    report = review_report(recipe, items, decisions, outcome, result)
    result.report = write_json(report, reports / "review.json")
    _log(result, policy, recipe, log)
    return result


def verify_corrections(outcome: ReviewOutcome, verifier: Verifier) -> None:
    """Verify every accepted correction as the release will take it (its SQL run on its
    database, its claim checked); one that does not verify is rejected with the reason,
    and its old item stays superseded by nothing (it is not released either)."""
    kept = []
    for final in outcome.accepted:
        if not (final.get("review") or {}).get("corrected_from"):
            kept.append(final)
            continue
        old = final["review"]["corrected_from"]
        try:
            kept.append(verifier.verify(final))
        except CorrectionError as error:
            resolution = outcome.resolutions[old]
            resolution.status = REJECTED
            resolution.reason = f"correction {final['id']} does not verify: {error}"
    outcome.accepted = kept


def superseded(outcome: ReviewOutcome) -> dict[str, str]:
    """Old item id -> the id of the verified correction that replaces it."""
    found = {}
    for final in outcome.accepted:
        old = (final.get("review") or {}).get("corrected_from")
        if old:
            found[old] = final["id"]
    return dict(sorted(found.items()))


def limits_of(recipe: Recipe) -> Limits:
    """The recipe's execution limits (``execution.timeout_s`` and ``row_cap``), which
    every gold query and every correction runs under."""
    execution = recipe.section("execution")
    return Limits(execution.get("timeout_s", 2.0), execution.get("row_cap", 100))


def variants_of(recipe: Recipe) -> Path:
    """Where the build keeps the edited databases of counterfactual items."""
    return Workspace(recipe.workdir, recipe.dataset).root / "variants"


def review_contexts(queued: list[dict], items: list[dict], checked: set[str]) -> dict:
    """What the page shows beside each queued item: a draft's parent (question and SQL,
    from the candidates) and whether the item is a spot check; items with neither have
    no entry."""
    by_id = {i["id"]: i for i in items}
    contexts = {}
    for item in queued:
        context = {}
        parent = by_id.get((item.get("provenance") or {}).get("parent") or "")
        if parent is not None:
            context["parent"] = {k: parent.get(k) for k in ("id", "question", "sql")}
        if item["id"] in checked:
            context["spot_check"] = True
        if context:
            contexts[item["id"]] = context
    return contexts


def _schema(databases: dict, db_id: str):
    ref = databases.get(db_id)
    return None if ref is None else ref.schema


def review_report(recipe, items, decisions, outcome: ReviewOutcome, result) -> dict:
    """The review part of the build reports: counts, agreement, conflicts, problems."""
    groups = {i["id"]: i.get("category") or i["label"] for i in items}
    return {
        "backend": backend_of(recipe),
        "policy": policy_of(recipe).describe(),
        "counts": outcome.counts(),
        "pushed": {
            "added": result.pushed.added,
            "updated": result.pushed.updated,
            "unchanged": result.pushed.unchanged,
            "refused": len(result.pushed.rejects),
            "retired": result.pushed.retired,
        },
        "spot_checks": result.spot_checks,
        "decisions": len(decisions),
        "agreement": agreement_report(decisions, groups),
        "conflicts": outcome.ids(CONFLICT),
        "superseded": superseded(outcome),
        "open": len(outcome.ids(OPEN)),
        "problems": result.problems,
    }


def _log(result: ReviewResult, policy: Policy, recipe: Recipe, log: Log) -> None:
    counts = result.outcome.counts()
    log(
        f"review ({policy.describe()}): {counts['accepted']} accepted "
        f"({counts['auto_accepted']} auto), {counts['rejected']} rejected, "
        f"{counts[OPEN]} open, {counts[CONFLICT]} in conflict; "
        f"{result.decisions} decisions"
    )
    if result.pushed.retired:
        log(
            f"review: {result.pushed.retired} queued items are no longer candidates: retired "
            "(their decisions stay in the audit trail)"
        )
    for line in spot_check.report_lines(result.spot_checks):
        log(line)
    for problem in result.problems[:5]:
        log(f"review: {problem}")


@dataclass
class QueueState:
    """The queue as the review commands see it: items, current decisions, resolutions."""

    items: list[dict]
    decisions: list[dict]
    outcome: ReviewOutcome
    problems: list[str]


def queue_state(recipe: Recipe) -> QueueState:
    """Pull the recipe's queue and resolve every item in it."""
    with open_queue(recipe) as queue:
        decisions = queue.pull()
        items = queue.items()
        problems = list(getattr(queue, "problems", []))
    return QueueState(items, decisions, apply_policy(items, decisions, policy_of(recipe)), problems)
