"""TrustSQL's and EHRSQL 2024's reliability score RS(c).

Per item: +1 for a correct answer or for abstaining on an item that is not
answerable; 0 for abstaining on an answerable item; -c for a wrong or failing answer,
or for answering an item that is not answerable. RS(c) = 100 x the mean. Ambiguous
items count as not answerable (their gold SQL is null, as an unanswerable item's is).
The penalties reported are 0, 5, 10 and N, the number of scored items. An item that is
not answerable is scored without running any SQL, so it counts even where the release
does not ship its database; on a set with an answerable item whose database is not
shipped RS is not available (over the rest it would overstate the score): a schema-only
release gets RS on its items that are not answerable, per label.
"""

from __future__ import annotations

from answerable.release.evaluate.metric import Metric, Scored, one

PENALTIES = (0, 5, 10)


def item_score(s: Scored, penalty: float) -> float:
    """One item's reliability score under ``penalty``."""
    if not s.answered:
        return 0.0 if s.answerable else 1.0
    return 1.0 if s.answerable and s.correct else -penalty


def rs(name: str, penalty: float) -> Metric:
    """RS(``penalty``) as a metric."""
    return Metric(
        name,
        lambda s: item_score(s, penalty),
        one,
        scale=100.0,
        needs_execution=True,
        scored_unrun=lambda s: not s.answerable,  # +1 to abstain, -c to answer: no SQL runs
        whole=True,
    )


def rs_n(scored: list[Scored]) -> Metric:
    """RS(N), N the number of scored items (a breakdown recomputes it with its own N)."""
    return rs("rs_n", len(scored))


def metrics(scored: list[Scored]) -> list[Metric]:
    """RS(0), RS(5), RS(10) and RS(N)."""
    return [rs(f"rs_{c}", c) for c in PENALTIES] + [rs_n(scored)]


def abstain_all(scored: list[Scored]) -> float | None:
    """RS of a system that abstains on every item (any penalty): 100 x share not answerable."""
    return rs("rs", 0).value(Scored(id=s.id, label=s.label) for s in scored)
