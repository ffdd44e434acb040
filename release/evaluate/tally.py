"""Scored items folded into their distinct metric patterns, so sums over any subset of
items, and over bootstrap resamples, are small array products.

Items that agree on everything a metric looks at (label, answered, error, correct,
strata, ...) contribute the same ``(num, den)`` to every metric: 100,000 items have a
few hundred patterns. Each metric's parts are computed once per pattern; a subset of
items is a count per pattern.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from answerable.release.evaluate.metric import Metric, Scored


class Tally:
    """Every metric's ``(num, den)`` per distinct pattern, and each item's pattern."""

    def __init__(self, metrics: list[Metric], scored: list[Scored]):
        self.metrics = metrics
        self.scales = np.array([m.scale for m in metrics], dtype=np.float64)
        index: dict[tuple, int] = {}
        rows: list[list[tuple[float, float]]] = []
        self.pattern = np.empty(len(scored), dtype=np.int64)
        for n, s in enumerate(scored):
            key = s.signature
            found = index.get(key)
            if found is None:
                found = index[key] = len(rows)
                rows.append([m.parts(s) for m in metrics])
            self.pattern[n] = found
        self.parts = np.array(rows, dtype=np.float64).reshape(len(rows), len(metrics), 2)

    def counts(self, members: Iterable[int] | None = None) -> np.ndarray:
        """Items per pattern, over all items or the ``members`` (item positions)."""
        chosen = self.pattern if members is None else self.pattern[np.fromiter(members, np.int64)]
        return np.bincount(chosen, minlength=len(self.parts)).astype(np.float64)

    def values(self, counts: np.ndarray) -> dict[str, float | None]:
        """Every metric for items counted per pattern (None when nothing counts)."""
        num = counts @ self.parts[:, :, 0]
        den = counts @ self.parts[:, :, 1]
        return {
            m.name: (float(self.scales[k] * num[k] / den[k]) if den[k] else None)
            for k, m in enumerate(self.metrics)
        }
