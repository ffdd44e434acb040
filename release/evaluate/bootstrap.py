"""Seeded bootstrap 95% confidence intervals for ratio-of-sums metrics.

Items are resampled with replacement; a resample is a vector of counts per item, so
every metric of a resample is ``(num . counts) / (den . counts)``. The generator is
seeded, so the same items, seed and resample count give the same intervals.
"""

from __future__ import annotations

import numpy as np

from answerable.release.evaluate.metric import Metric, Scored

RESAMPLES = 1000
BATCH = 50  # resamples per matrix product


def intervals(
    metrics: list[Metric], scored: list[Scored], resamples: int = RESAMPLES, seed: int = 0
) -> dict[str, list[float] | None]:
    """``{name: [low, high]}`` (2.5th and 97.5th percentiles), None when undefined."""
    if not scored or resamples < 1:
        return {m.name: None for m in metrics}
    parts = np.array([[m.parts(s) for s in scored] for m in metrics], dtype=np.float64)
    num, den = parts[:, :, 0], parts[:, :, 1]
    rng = np.random.default_rng(seed)
    n = len(scored)
    values = []
    for start in range(0, resamples, BATCH):
        size = min(BATCH, resamples - start)
        counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(size)])
        with np.errstate(invalid="ignore", divide="ignore"):
            values.append((num @ counts.T) / (den @ counts.T))
    table = np.concatenate(values, axis=1)
    found = {}
    for row, metric in zip(table, metrics, strict=True):
        row = row[np.isfinite(row)] * metric.scale
        found[metric.name] = (
            [round(float(np.percentile(row, 2.5)), 6), round(float(np.percentile(row, 97.5)), 6)]
            if row.size
            else None
        )
    return found
