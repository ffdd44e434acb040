"""Agreement between annotators: Cohen's kappa per pair, Fleiss' kappa, percent agreement.

What is compared is each decision's outcome (accept, reject, relabel to a label and
category, see :func:`answerable.annotation.decisions.outcome`), so two annotators who
both relabel an item agree only when they move it to the same place.

- Cohen's kappa for each pair of annotators, over the items both decided:
  ``(p_o - p_e) / (1 - p_e)`` with ``p_e`` from each one's own outcome frequencies.
- Fleiss' kappa over the items with three or more annotators, in the form that allows
  a different number of annotators per item: ``P_i = (sum_j n_ij^2 - n_i) /
  (n_i (n_i - 1))``, ``P_bar`` their mean, ``p_j`` the share of all ratings in
  outcome ``j``, ``P_e = sum_j p_j^2``; with the same number per item it is Fleiss (1971).
- Percent agreement: the share of items with two or more annotators on which all agree.

A kappa is ``None`` when it is undefined (no items, or chance agreement of 1).
Everything is computed overall and per category (the item's category, or its label
when it has none).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import combinations

from answerable.annotation.decisions import outcome


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters, given their outcome on each shared item.

    >>> cohen_kappa([("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15)
    0.4
    """
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[k] * second[k] for k in first) / (n * n)
    return None if chance == 1 else _round((observed - chance) / (1 - chance))


def fleiss_kappa(items: list[Mapping[str, int]]) -> float | None:
    """Fleiss' kappa given, per item, how many raters chose each outcome.

    >>> fleiss_kappa([{"a": 3}, {"a": 2, "b": 1}, {"b": 3}])
    0.55
    """
    items = [counts for counts in items if sum(counts.values()) >= 2]
    if not items:
        return None
    totals: Counter = Counter()
    agreement = 0.0
    for counts in items:
        n = sum(counts.values())
        agreement += (sum(c * c for c in counts.values()) - n) / (n * (n - 1))
        totals.update(counts)
    p_bar = agreement / len(items)
    ratings = sum(totals.values())
    chance = sum((c / ratings) ** 2 for c in totals.values())
    return None if chance == 1 else _round((p_bar - chance) / (1 - chance))


def percent_agreement(items: Iterable[list[str]]) -> float | None:
    """The share of items (with two or more ratings) on which every rating is the same.

    >>> percent_agreement([["a", "a"], ["a", "b"], ["b", "b", "b"], ["a"]])
    0.6667
    """
    rated = [ratings for ratings in items if len(ratings) >= 2]
    if not rated:
        return None
    return _round(sum(len(set(r)) == 1 for r in rated) / len(rated))


def _round(value: float) -> float:
    return round(value, 4)


def agreement_of(by_item: Mapping[str, Mapping[str, str]]) -> dict:
    """Every statistic over items given as ``{item_id: {annotator: outcome}}``."""
    shared = {i: r for i, r in by_item.items() if len(r) >= 2}
    annotators = sorted({a for ratings in by_item.values() for a in ratings})
    pairs = []
    for first, second in combinations(annotators, 2):
        both = [(r[first], r[second]) for r in by_item.values() if first in r and second in r]
        if both:
            agreed = sum(a == b for a, b in both) / len(both)
            pairs.append(
                {
                    "annotators": [first, second],
                    "items": len(both),
                    "agreement": _round(agreed),
                    "kappa": cohen_kappa(both),
                }
            )
    crowd = [Counter(r.values()) for r in by_item.values() if len(r) >= 3]
    return {
        "items": len(shared),
        "percent_agreement": percent_agreement(list(r.values()) for r in shared.values()),
        "cohen": pairs,
        "fleiss": {"items": len(crowd), "kappa": fleiss_kappa(crowd)},
    }


def agreement_report(decisions: list[dict], groups: Mapping[str, str]) -> dict:
    """Agreement overall and per category; ``groups`` maps item id to its category.

    ``decisions`` are the ones that count (one per annotator and item).
    """
    by_item: dict[str, dict[str, str]] = {}
    for decision in decisions:
        by_item.setdefault(decision["item_id"], {})[decision["annotator"]] = outcome(decision)
    per_group: dict[str, dict] = {}
    for item_id, ratings in by_item.items():
        per_group.setdefault(groups.get(item_id, "unknown"), {})[item_id] = ratings
    return {
        "overall": agreement_of(by_item),
        "by_category": {g: agreement_of(per_group[g]) for g in sorted(per_group)},
    }
