"""The metric families ``answerable evaluate`` reports: one module per family, one line each."""

from __future__ import annotations

from answerable.release.evaluate import accuracy, detection, reliability, scare
from answerable.release.evaluate.metric import Metric, Scored

FAMILIES = {
    "execution": accuracy.metrics,  # BiomedSQL: EX, JAC, SER
    "reliability": reliability.metrics,  # TrustSQL / EHRSQL 2024: RS(c)
    "scare": scare.metrics,  # SCARE: coverage, PR, CR, per-class P/R/F1
    "detection": detection.metrics,  # OncoMX-NAQ and DTE: detection, BIO tags
}

# The headline numbers: the JSON report's top-level keys, with bootstrap intervals.
HEADLINE = ("ex", "jac", "ser", "rs_0", "rs_5", "rs_10", "rs_n", "coverage", "pr", "cr")
HEADLINE += ("ambiguous_f1", "unanswerable_f1")


def all_metrics(scored: list[Scored]) -> list[Metric]:
    """Every metric of every family, for these scored items."""
    return [metric for family in FAMILIES.values() for metric in family(scored)]
