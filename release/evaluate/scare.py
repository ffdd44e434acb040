"""SCARE's metrics: coverage, preservation and correction rates, per-class P/R/F1.

An answerable item belongs to SCARE's answerable-correct stratum when one of its
candidate SQL queries gives the gold result, and to answerable-incorrect when one does
not (an item may be in both; each rate scores the same prediction). Coverage is the
share of answerable items given SQL rather than a label; PR and CR are execution
accuracy over the two strata, a label or an abstention counting as wrong, and CR is
also given per SCARE error type of the incorrect candidates. Precision, recall and F1
are per predicted label, for "ambiguous" and "unanswerable".
"""

from __future__ import annotations

from collections.abc import Callable

from answerable.release.evaluate.metric import Metric, Scored, when

CLASSES = ("ambiguous", "unanswerable")
ERROR_TYPES = ("T/C", "J/G", "PV", "OL", "OG")


def metrics(scored: list[Scored]) -> list[Metric]:
    """Coverage, PR, CR (overall and per error type) and P/R/F1 per class."""
    correct = when(lambda s: s.correct)
    found = [
        Metric("coverage", when(lambda s: s.answered), when(lambda s: s.answerable)),
        Metric("pr", correct, when(lambda s: _in(s, "answerable-correct")), needs_execution=True),
        Metric("cr", correct, when(lambda s: _in(s, "answerable-incorrect")), needs_execution=True),
    ]
    for kind in ERROR_TYPES:
        test = when(lambda s, k=kind: _incorrect_as(s, k))
        found.append(Metric(f"cr_{kind}", correct, test, needs_execution=True))
    for label in CLASSES:
        found += per_class(label)
    return found


def instance_metrics() -> list[Metric]:
    """SCARE's metrics as its text defines them, over (question, candidate SQL)
    instances: each question counts once per candidate it is paired with (once when it
    has none), so coverage, PR, CR and the per-class P/R/F1 weigh questions as the
    benchmark's instances do."""
    correct = when(lambda s: s.correct)
    found = [
        Metric("coverage", lambda s: s.answered * _weight(s), lambda s: s.answerable * _weight(s)),
        _per_instance("pr", "answerable-correct"),
        _per_instance("cr", "answerable-incorrect"),
    ]
    for kind in ERROR_TYPES:
        found.append(
            Metric(
                f"cr_{kind}",
                lambda s, k=kind: correct(s) * s.error_types_of(k),
                lambda s, k=kind: float(s.error_types_of(k)) if s.answerable else 0.0,
                needs_execution=True,
            )
        )
    for label in CLASSES:
        found += per_class(label, _weight)
    return found


def _weight(s: Scored) -> float:
    """How many of SCARE's instances an item is: one per stratified candidate, at least one."""
    return float(len(s.candidate_strata) or 1)


def _per_instance(name: str, stratum: str) -> Metric:
    def instances(s: Scored) -> float:
        return float(s.candidates_in(stratum)) if s.answerable else 0.0

    return Metric(
        name, lambda s: instances(s) if s.correct else 0.0, instances, needs_execution=True
    )


def _in(s: Scored, stratum: str) -> bool:
    return s.answerable and stratum in s.strata


def _incorrect_as(s: Scored, kind: str) -> bool:
    return _in(s, "answerable-incorrect") and kind in s.error_types


def per_class(label: str, weight: Callable[[Scored], float] = lambda _: 1.0) -> list[Metric]:
    """Precision, recall and F1 of predicting ``label``, each item counted ``weight`` times."""
    hit = lambda s: weight(s) * (s.label == label and s.predicted_label == label)  # noqa: E731
    said = lambda s: weight(s) * (s.predicted_label == label)  # noqa: E731
    truth = lambda s: weight(s) * (s.label == label)  # noqa: E731
    return [
        Metric(f"{label}_precision", hit, said),
        Metric(f"{label}_recall", hit, truth),
        # F1 = 2TP / (2TP + FP + FN), a ratio of sums like every metric here
        Metric(f"{label}_f1", lambda s: 2 * hit(s), lambda s: said(s) + truth(s)),
    ]
