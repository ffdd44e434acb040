"""Execution metrics (BiomedSQL): EX, JAC and SER.

EX and JAC are over answerable items, an abstention or an error scoring 0; SER is the
share of given SQL that fails to parse or execute.
"""

from __future__ import annotations

from answerable.release.evaluate.metric import Metric, Scored, when


def metrics(scored: list[Scored]) -> list[Metric]:
    """EX, JAC and SER."""
    answerable, answered = when(lambda s: s.answerable), when(lambda s: s.answered)
    return [
        Metric("ex", when(lambda s: s.correct), answerable, needs_execution=True),
        Metric("jac", lambda s: s.jaccard, answerable, needs_execution=True),
        Metric("ser", when(lambda s: s.error is not None), answered, needs_execution=True),
        Metric(
            "parse_error_rate",
            when(lambda s: s.error == "parse-error"),
            answered,
            needs_execution=True,
        ),
        Metric("exec_error_rate", when(_exec_error), answered, needs_execution=True),
    ]


def _exec_error(s: Scored) -> bool:
    return s.error is not None and s.error != "parse-error"
