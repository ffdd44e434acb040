"""What every metric is computed from, and the one shape every metric has.

Each scored item is a :class:`Scored` record: the gold side (label, category, groups)
and the system's side (SQL given or not, its label, the execution outcome). Every
metric is a ratio of sums over scored items, ``scale x sum(num) / sum(den)``: execution
accuracy, a reliability score, an F1 and a tag accuracy all fit, so one code path
computes a metric, its breakdowns and its bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Scored:
    """One item as the metrics see it."""

    id: str
    label: str  # gold: answerable, ambiguous or unanswerable
    category: str | None = None
    answered: bool = False  # the system gave SQL
    missing: bool = False  # no prediction for the item (an abstention)
    predicted_label: str | None = None  # "answerable" when it gave SQL
    predicted_category: str | None = None
    error: str | None = None  # executor reason when the SQL failed
    correct: bool = False  # answerable item, SQL gave the gold result
    jaccard: float = 0.0
    strata: frozenset[str] = frozenset()  # SCARE strata of the item's candidates
    error_types: frozenset[str] = frozenset()  # SCARE error types of incorrect candidates
    tag_hits: int = 0  # BIO tags equal to the gold tags
    tag_total: int = 0  # gold tokens of an item whose prediction carries tags
    # per candidate (SCARE's instances): each candidate's stratum, and the error type of
    # each answerable-incorrect one, sorted, with repeats
    candidate_strata: tuple[str, ...] = ()
    candidate_errors: tuple[str, ...] = ()
    # (tag class, hits, tokens) per gold tag class (COL, VAL, AMB, UNK, O), sorted
    tags_by_class: tuple[tuple[str, int, int], ...] = ()
    # (tag class, spans grounded right, spans) per gold class with a concept (DTE Table 5)
    grounding_by_class: tuple[tuple[str, int, int], ...] = ()
    executable: bool = True  # the item's database is shipped, so its SQL could run
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    @property
    def answerable(self) -> bool:
        """The gold label is answerable."""
        return self.label == "answerable"

    @property
    def signature(self) -> tuple:
        """Everything a metric may look at: every field but the id and the groups."""
        return (
            self.label, self.category, self.answered, self.missing, self.predicted_label,
            self.predicted_category, self.error, self.correct, self.jaccard, self.strata,
            self.error_types, self.tag_hits, self.tag_total, self.executable,
            self.candidate_strata, self.candidate_errors, self.tags_by_class,
            self.grounding_by_class,
        )  # fmt: skip

    def candidates_in(self, stratum: str) -> int:
        """How many of the item's candidates are in ``stratum``."""
        return self.candidate_strata.count(stratum)

    def error_types_of(self, kind: str) -> int:
        """How many answerable-incorrect candidates have SCARE error type ``kind``."""
        return self.candidate_errors.count(kind)

    def tag_hits_of(self, tag_class: str) -> int:
        """Tokens of gold class ``tag_class`` whose predicted tag is the gold one."""
        return sum(h for c, h, _ in self.tags_by_class if c == tag_class)

    def tag_total_of(self, tag_class: str) -> int:
        """Tokens of gold class ``tag_class`` compared."""
        return sum(t for c, _, t in self.tags_by_class if c == tag_class)

    def grounded_of(self, tag_class: str) -> int:
        """Gold spans of ``tag_class`` the prediction links to their gold concept."""
        return sum(h for c, h, _ in self.grounding_by_class if c == tag_class)

    def spans_of(self, tag_class: str) -> int:
        """Gold spans of ``tag_class`` with a concept, in an item whose prediction
        carries bindings."""
        return sum(t for c, _, t in self.grounding_by_class if c == tag_class)


@dataclass(frozen=True, slots=True)
class Metric:
    """``scale x sum(num(s)) / sum(den(s))`` over scored items; None when nothing counts.

    A metric that ``needs_execution`` counts only items whose database the release
    ships, and those ``scored_unrun`` says it scores without running SQL: the others
    are left out of it (and reported as not available), never scored as wrong. A
    ``whole`` metric (a reliability score, which mixes answerable items and the others)
    is not available on a set where some item misses its execution.
    """

    name: str
    num: Callable[[Scored], float]
    den: Callable[[Scored], float]
    scale: float = 1.0
    needs_execution: bool = False
    scored_unrun: Callable[[Scored], bool] = lambda _: False
    whole: bool = False  # not available at all on a set where some item misses execution

    def parts(self, s: Scored) -> tuple[float, float]:
        """``(num, den)`` of one item; an item outside the denominator adds nothing."""
        if self.needs_execution and not s.executable and not self.scored_unrun(s):
            return (0.0, 0.0)
        den = self.den(s)
        return (self.num(s), den) if den else (0.0, 0.0)

    def value(self, scored: Iterable[Scored]) -> float | None:
        """The metric over ``scored``."""
        num = den = 0.0
        for s in scored:
            n, d = self.parts(s)
            num, den = num + n, den + d
        return self.scale * num / den if den else None


def one(_: Scored) -> float:
    """Every item counts once."""
    return 1.0


def when(test: Callable[[Scored], bool]) -> Callable[[Scored], float]:
    """1 for items that pass ``test``, else 0."""
    return lambda s: 1.0 if test(s) else 0.0
