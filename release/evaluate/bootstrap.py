"""Seeded bootstrap 95% confidence intervals for ratio-of-sums metrics.

A resample draws as many items as there are, with replacement. Items fall into a few
distinct metric patterns (see :mod:`tally`), so a resample is a multinomial draw of
counts per pattern (the same distribution as drawing items), and each metric of a
resample is ``(counts . num) / (counts . den)``. The generator is seeded: the same items,
seed and resample count give the same intervals.
"""

from __future__ import annotations

import numpy as np

from answerable.release.evaluate.tally import Tally

RESAMPLES = 1000


def intervals(
    tally: Tally, names: list[str], resamples: int = RESAMPLES, seed: int = 0
) -> dict[str, list[float] | None]:
    """``{name: [low, high]}`` (2.5th and 97.5th percentiles), None when undefined."""
    n = len(tally.pattern)
    if not n or resamples < 1:
        return dict.fromkeys(names)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, tally.counts() / n, size=resamples).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        table = (draws @ tally.parts[:, :, 0]) / (draws @ tally.parts[:, :, 1]) * tally.scales
    found = {}
    for k, metric in enumerate(tally.metrics):
        if metric.name not in names:
            continue
        column = table[:, k][np.isfinite(table[:, k])]
        found[metric.name] = (
            [round(float(np.percentile(column, q)), 6) for q in (2.5, 97.5)]
            if column.size
            else None
        )
    return found
