"""Detection of problematic questions (OncoMX-NAQ, DTE) and DTE's BIO tag accuracy.

An item that is not answerable is detected when the system gives no SQL for it (a
label "answerable" with no SQL counts as not detected); accuracy is reported per gold
category, the category standing in for the label when the source gives none. An
answerable item is handled right when the system answers it, so ``detection_accuracy``
covers both sides, as OncoMX-NAQ checks both. ``category_accuracy`` is the share of
problematic items whose predicted category is the gold one, and ``tag_accuracy`` the
share of question tokens whose predicted BIO tag is the gold tag, over items whose
predictions carry tags.
"""

from __future__ import annotations

from answerable.release.evaluate.metric import Metric, Scored, one, when


def detected(s: Scored) -> bool:
    """The system's answer-or-abstain decision matches the gold label."""
    if s.answerable:
        return s.answered
    return not s.answered and s.predicted_label != "answerable"


def kind(s: Scored) -> str:
    """The category a problematic item is reported under."""
    return s.category or s.label


def metrics(scored: list[Scored]) -> list[Metric]:
    """Detection accuracy (overall and per category), category and tag accuracy."""
    found = [
        Metric("detection_accuracy", when(detected), one),
        Metric(
            "category_accuracy",
            when(lambda s: s.predicted_category == s.category),
            when(lambda s: not s.answerable and s.category is not None),
        ),
        Metric("tag_accuracy", lambda s: s.tag_hits, lambda s: s.tag_total),
    ]
    for name in sorted({kind(s) for s in scored if not s.answerable}):
        found.append(
            Metric(
                f"detection.{name}",
                when(detected),
                when(lambda s, n=name: not s.answerable and kind(s) == n),
            )
        )
    return found
