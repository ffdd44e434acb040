"""Scoring profiles: one paper's way of scoring, so numbers compare with the paper's.

A profile fixes how results are compared (the mode), which metrics are computed and by
which definition, and the table the paper prints (its columns, and the breakdown its
rows run over). Definitions follow each paper's text; where the paper's published code
computes something else, :attr:`Profile.differences` says what and which one is used.

- ``trustsql``: TrustSQL, Sec. 4.4, Eq. 4: RS(c) for c = 0, 10, N; a result is compared
  in row order when the gold SQL orders it (as Spider's execution check does); ambiguous
  questions count as not answerable.
- ``ehrsql``: EHRSQL 2024's shared task: RS(0), RS(5), RS(10), RS(N) with its result
  comparison (rounded text cells, sorted rows).
- ``scare``: SCARE, Sec. 4 and Table 3, over (question, candidate SQL) instances:
  coverage, PR and CR on the answerable-correct and answerable-incorrect strata, and
  precision, recall and F1 of "ambiguous" and "unanswerable".
- ``biomedsql``: BiomedSQL, Sec. 5.1: EX as set equality of results, JAC, and SER as the
  share of the evaluation set's questions whose SQL does not execute (no SQL included,
  as its code's ``1 - mean(sql_ran)`` counts it).
- ``naq``: Query Carefully, Sec. 3.2: the share of each category's questions detected as
  not answerable.
- ``dte``: Know What I Don't Know, Sec. 5.1, Tables 4 and 5: sequence labelling accuracy
  per tag class (COL, VAL, AMB, UNK, O), and grounding accuracy per class that links to
  a concept (COL, VAL, AMB), for predictions that carry ``bindings``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from answerable.release.evaluate import detection, reliability, scare
from answerable.release.evaluate.metric import Metric, Scored, one, when
from answerable.release.export.naq import CATEGORIES as NAQ_CATEGORIES

TAG_CLASSES = ("COL", "VAL", "AMB", "UNK", "O")
GROUNDED_CLASSES = ("COL", "VAL", "AMB")  # UNK and O link to no concept (DTE Sec. 5.1)


@dataclass(frozen=True)
class Profile:
    """One paper's scoring: comparison mode, metrics, and the shape of its table."""

    name: str
    paper: str  # the paper and the section its definitions come from
    mode: str
    metrics: Callable[[list[Scored]], list[Metric]]
    columns: tuple[tuple[str, str], ...]  # (the paper's column heading, metric name)
    rows: str | None = None  # the breakdown the paper's table rows run over
    row_names: Mapping[str, str] | None = None  # our group values in the paper's words
    differences: tuple[str, ...] = ()  # where the paper's own code departs from its text


def trustsql_metrics(scored: list[Scored]) -> list[Metric]:
    """RS(0), RS(10) and RS(N) (TrustSQL reports these three penalties)."""
    return [reliability.rs("rs_0", 0), reliability.rs("rs_10", 10), reliability.rs_n(scored)]


def ehrsql_metrics(scored: list[Scored]) -> list[Metric]:
    """RS(0), RS(5), RS(10) and RS(N)."""
    return reliability.metrics(scored)


def scare_metrics(_scored: list[Scored]) -> list[Metric]:
    """Coverage, PR and CR per (question, candidate) instance, P/R/F1 per class."""
    return scare.instance_metrics()


def biomedsql_metrics(_scored: list[Scored]) -> list[Metric]:
    """EX, JAC, and SER over every question of the evaluation set: a question without
    SQL that runs (a failure, or no SQL) counts as a syntax error."""
    answerable = when(lambda s: s.answerable)
    return [
        Metric("ex", when(lambda s: s.correct), answerable, needs_execution=True),
        Metric("jac", lambda s: s.jaccard, answerable, needs_execution=True),
        Metric(
            "ser", when(lambda s: not s.answered or s.error is not None), one, needs_execution=True
        ),
    ]


def _not_run(s: Scored) -> bool:
    return not s.answered or s.error is not None


def naq_metrics(scored: list[Scored]) -> list[Metric]:
    """Detection accuracy, overall and per category."""
    return [m for m in detection.metrics(scored) if m.name.startswith("detection")]


def dte_metrics(_scored: list[Scored]) -> list[Metric]:
    """Tag accuracy over every token, and per gold tag class (Table 4); grounding
    accuracy per class that links to a concept (Table 5: COL, VAL, AMB)."""
    found = [Metric("tag_accuracy", lambda s: s.tag_hits, lambda s: s.tag_total)]
    for name in TAG_CLASSES:
        found.append(
            Metric(
                f"tag_accuracy.{name}",
                lambda s, n=name: s.tag_hits_of(n),
                lambda s, n=name: s.tag_total_of(n),
            )
        )
    for name in GROUNDED_CLASSES:
        found.append(
            Metric(
                f"grounding_accuracy.{name}",
                lambda s, n=name: s.grounded_of(n),
                lambda s, n=name: s.spans_of(n),
            )
        )
    return found


PROFILES: dict[str, Profile] = {
    "trustsql": Profile(
        "trustsql",
        "TrustSQL (Lee et al.), Sec. 4.4, Eq. 4",
        "ordered",
        trustsql_metrics,
        (("RS(0)", "rs_0"), ("RS(10)", "rs_10"), ("RS(N)", "rs_n")),
        rows="label",  # TrustSQL's code prints total, feasible and infeasible
        differences=(
            "TrustSQL's code compares results on databases named atis, advising or mimic_iv"
            " as plain lists (row order always matters there, and a COUNT(*) > 0 result"
            " is folded to 0/1); the text's Acc(x) is execution accuracy, so every"
            " database is compared as Spider's check does.",
        ),
    ),
    "ehrsql": Profile(
        "ehrsql",
        "EHRSQL 2024 shared task (Lee et al.), scoring program",
        "ehrsql",
        ehrsql_metrics,
        (("RS(0)", "rs_0"), ("RS(5)", "rs_5"), ("RS(10)", "rs_10"), ("RS(N)", "rs_n")),
    ),
    "scare": Profile(
        "scare",
        "SCARE (Lee et al.), Sec. 4, Table 3",
        "multiset",
        scare_metrics,
        (
            ("Cov", "coverage"),
            ("PR", "pr"),
            ("CR", "cr"),
            ("Amb P", "ambiguous_precision"),
            ("Amb R", "ambiguous_recall"),
            ("Amb F1", "ambiguous_f1"),
            ("Unans P", "unanswerable_precision"),
            ("Unans R", "unanswerable_recall"),
            ("Unans F1", "unanswerable_f1"),
        ),
    ),
    "biomedsql": Profile(
        "biomedsql",
        "BiomedSQL (Koretsky et al.), Sec. 5.1",
        "set",
        biomedsql_metrics,
        (("EX (%)", "ex"), ("JAC (%)", "jac"), ("SER (%)", "ser")),
    ),
    "naq": Profile(
        "naq",
        "Query Carefully (OncoMX-NAQ), Sec. 3.2",
        "multiset",
        naq_metrics,
        (("Detected", "detection_accuracy"),),
        rows="category",
        row_names=NAQ_CATEGORIES,
    ),
    "dte": Profile(
        "dte",
        "Know What I Don't Know (DTE), Sec. 5.1, Tables 4 and 5",
        "multiset",
        dte_metrics,
        tuple((name, f"tag_accuracy.{name}") for name in TAG_CLASSES)
        + tuple((f"{name} grounding", f"grounding_accuracy.{name}") for name in GROUNDED_CLASSES),
    ),
}


def profile_of(name: str) -> Profile:
    """The profile called ``name`` (a :class:`KeyError` names the known ones)."""
    return PROFILES[name]
