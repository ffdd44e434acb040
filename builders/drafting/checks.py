"""Checks on drafts, each failure a reject with a reason, and near-duplicate removal.

Per category (the issue's rules):

- ``missing-column``: the trigger column is not in the schema, or for a ``surface``
  draft not in the table it is asked of (``column-in-schema``)
  and is not a near-synonym of a column (``column-near-synonym``);
- ``out-of-domain``, ``small-talk``: the question shares no schema term (``shares-schema-term``);
- ``vague-word`` and ``vague-question``: the trigger is in the question
  (``trigger-not-in-question``); a vague word must leave something open that the rest
  of the question does not fix (``vague-word-settled``, see :mod:`.settled`);
- ``ambiguous-reference``: the trigger is in the question and holds a reference word
  (``no-reference-word``), the draft has a parent (``no-parent``), and the draft does not
  still name the referent the parent determines (``reference-determined``, :mod:`.settled`);
- ``out-of-scope``: the question asks for a prediction, a chart, a clustering or an
  explanation (``not-out-of-scope``), and a clustering is more than a grouping by one of
  the schema's columns (``Cluster the teams by their city`` is a GROUP BY: ``groupable``).

Every draft must also differ from its parent (``same-as-parent``). Then
:class:`NearDuplicates` drops a draft whose normalized text equals an earlier one's
(``duplicate``) or whose character 3-gram similarity to one is at least the threshold
(``near-duplicate``), within its database, against earlier drafts and the items already
built. A draft is not compared with its own family: its parent and the parent's other
children, which are meant to be close to it.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import re
import zlib
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from difflib import SequenceMatcher

import numpy as np

from answerable.builders.drafting import lexicon, settled
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft
from answerable.builders.drafting.text import find_phrase, name_words, normalize, words
from answerable.builders.lexical.inflection import singular
from answerable.builders.schema import DatabaseSchema

Failure = tuple[str, str]  # (reason, detail)
SPELLING_SIMILARITY = 0.85
NGRAM = 3

_CANONICAL = {word: min(group) for group in lexicon.SYNONYM_GROUPS for word in group}


def canonical(word: str) -> str:
    """One word for a near-synonym group, after a rough singular."""
    word = singular(word.lower())
    return _CANONICAL.get(word, word)


def content_words(name: str) -> list[str]:
    """The canonical words of a name or phrase, without generic words."""
    return [canonical(w) for w in name_words(name) if w not in lexicon.GENERIC_WORDS]


def near_synonym(term: str, schema: DatabaseSchema) -> str | None:
    """The ``table.column`` that ``term`` merely renames, or None.

    Near means: the term's words (canonical, generic words left out) all belong to the
    column, or the column's words all belong to the term and include its head word
    (the last one: ``home address`` ~ ``address``), or the two are spelled alike.

    >>> from answerable.builders.schema import Column, Table
    >>> schema = DatabaseSchema("x", [Table("p", [Column("gender"), Column("date_of_birth")])])
    >>> [near_synonym(term, schema) for term in ("sex", "birthday", "salary")]
    ['p.gender', 'p.date_of_birth', None]
    """
    mine = content_words(term)
    if not mine:
        return None
    for table in schema.tables:
        for column in table.columns:
            theirs = content_words(column.name)
            if _near(mine, theirs, term, column.name):
                return f"{table.name}.{column.name}"
    return None


def _near(mine: list[str], theirs: list[str], term: str, column: str) -> bool:
    if theirs and set(mine) <= set(theirs):
        return True
    if theirs and set(theirs) <= set(mine) and mine[-1] in theirs:
        return True
    spelled = SequenceMatcher(None, "".join(words(term)), "".join(name_words(column)))
    return (  # the quick upper bounds first: ratio() is slow
        spelled.real_quick_ratio() >= SPELLING_SIMILARITY
        and spelled.quick_ratio() >= SPELLING_SIMILARITY
        and spelled.ratio() >= SPELLING_SIMILARITY
    )


def schema_terms(schema: DatabaseSchema) -> set[str]:
    """The canonical words of every table and column name, generic words left out."""
    terms = set()
    for table in schema.tables:
        terms.update(content_words(table.name))
        for column in table.columns:
            terms.update(content_words(column.name))
    return terms


def question_terms(question: str) -> set[str]:
    """The canonical content words of a question."""
    return {
        canonical(w)
        for w in words(question)
        if w not in lexicon.STOPWORDS and w not in lexicon.GENERIC_WORDS and not w.isdigit()
    }


def out_of_scope_tasks(question: str) -> list[str]:
    """The tasks SQL cannot serve that ``question`` asks for (prediction, chart ...).

    >>> out_of_scope_tasks("Plot the admissions per month and explain the peaks.")
    ['chart', 'explanation']
    """
    return [
        task
        for task, cues in lexicon.OUT_OF_SCOPE_CUES.items()
        if any(find_phrase(question, cue) for cue in cues)
    ]


def reference_words(phrase: str) -> list[str]:
    """The reference words (that, those, it, previous ...) in ``phrase``."""
    return [w for w in words(phrase) if w in lexicon.REFERENCE_WORDS]


# ---- per category --------------------------------------------------------------------


def check_missing_column(draft: Draft, context: DatabaseContext) -> Failure | None:
    column = "_".join(words(draft.trigger))
    schema = context.schema
    if draft.subtype == "surface":  # the name is another table's: only the asked one counts
        asked = schema.table(draft.details.get("table") or "")
        schema = DatabaseSchema(schema.db_id, [asked] if asked is not None else [])
    for table in schema.tables:
        if table.column(column) is not None:
            return "column-in-schema", f"'{draft.trigger}' is the column {table.name}.{column}"
    near = near_synonym(draft.trigger, schema)
    if near is not None:
        return "column-near-synonym", f"'{draft.trigger}' is a near-synonym of {near}"
    return None


def check_out_of_domain(draft: Draft, context: DatabaseContext) -> Failure | None:
    shared = question_terms(draft.question) & schema_terms(context.schema)
    if shared:
        named = sorted({w for w in words(draft.question) if canonical(w) in shared})
        return "shares-schema-term", f"shares {', '.join(named)} with the schema"
    return None


def check_trigger_in_question(draft: Draft, _context: DatabaseContext) -> Failure | None:
    if find_phrase(draft.question, draft.trigger) is None:
        return "trigger-not-in-question", f"'{draft.trigger}' is not in the question"
    return None


def check_ambiguous_reference(draft: Draft, context: DatabaseContext) -> Failure | None:
    missing = check_trigger_in_question(draft, context)
    if missing is not None:
        return missing
    if not reference_words(draft.trigger):
        return "no-reference-word", f"'{draft.trigger}' holds no reference word"
    if draft.parent_id is None:
        return "no-parent", "an ambiguous reference needs the question it was made from"
    return None


def check_vague_word(draft: Draft, context: DatabaseContext) -> Failure | None:
    """The trigger is in the question, and the question does not already fix what the
    vague word leaves open (:func:`settled.vague_word_settled`)."""
    missing = check_trigger_in_question(draft, context)
    if missing is not None:
        return missing
    fixed = settled.vague_word_settled(draft.question, draft.trigger)
    if fixed is not None:
        return "vague-word-settled", f"'{draft.trigger}' is settled by '{fixed}'"
    return None


def check_reference_not_determined(draft: Draft, context: DatabaseContext) -> Failure | None:
    """The ambiguous-reference checks, then: the parent does not determine the referent
    in a way the draft still shows (:func:`settled.reference_determined`)."""
    failure = check_ambiguous_reference(draft, context)
    if failure is not None:
        return failure
    value = settled.reference_determined(
        draft.question,
        draft.trigger,
        draft.job.parent,
        context.schema,
        draft.details.get("concept"),
    )
    if value is not None:
        return (
            "reference-determined",
            f"'{draft.trigger}' is determined: the question names {value!r}",
        )
    return None


def check_out_of_scope(draft: Draft, context: DatabaseContext) -> Failure | None:
    tasks = out_of_scope_tasks(draft.question)
    if not tasks:
        return "not-out-of-scope", "asks for no prediction, chart, clustering or explanation"
    column = grouped_by(draft.question, context.schema) if tasks == ["clustering"] else None
    if column is not None:
        return "groupable", f"grouping by {column} is a GROUP BY, not a clustering"
    return None


_GROUPED = re.compile(
    r"\b(?:cluster|segment|group)\w*\b.*?\b(?:by|of similar|with similar|on)\s+"
    r"(?:their |its |the )?(?P<what>[a-z][a-z ]*?)\s*[.?!]?\s*$"
)


def grouped_by(question: str, schema: DatabaseSchema) -> str | None:
    """The column a "clustering" request only groups by, or None: ``Cluster the teams
    into groups by their city`` is answered by ``GROUP BY city``; a clustering that SQL
    cannot serve learns a similarity (k-means, a model, several attributes)."""
    found = _GROUPED.search(question.lower())
    if found is None:
        return None
    said = words(found.group("what"))
    for table in schema.tables:
        for column in table.columns:
            named = [singular(w) for w in name_words(column.name)]
            if named and [singular(w) for w in said] == named:
                return f"{table.name}.{column.name}"
    return None


CHECKS = {
    "vague-question": check_trigger_in_question,
    "vague-word": check_vague_word,
    "ambiguous-reference": check_reference_not_determined,
    "missing-column": check_missing_column,
    "out-of-scope": check_out_of_scope,
    "out-of-domain": check_out_of_domain,
    "small-talk": check_out_of_domain,  # shares no schema term either
}
"""The check of each drafted category."""


def check_draft(draft: Draft, context: DatabaseContext) -> Failure | None:
    """Why ``draft`` fails its category's check, or None when it passes."""
    if normalize(draft.question) == normalize(draft.job.parent["question"]):
        return "same-as-parent", "the draft repeats its parent's question"
    return CHECKS[draft.category](draft, context)


# ---- near-duplicates -------------------------------------------------------------------


def ngrams(text: str, n: int = NGRAM) -> frozenset[str]:
    """The character n-grams of ``text``'s normalized form (padded with spaces)."""
    return _grams(normalize(text), n)


@functools.lru_cache(maxsize=4096)  # the questions a check compares with recur: ~16 MB
def _grams(normalized: str, n: int = NGRAM) -> frozenset[str]:
    padded = f" {normalized} "
    return frozenset(padded[i : i + n] for i in range(max(1, len(padded) - n + 1)))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two n-gram sets.

    >>> round(similarity(ngrams("How many patients?"), ngrams("How many patients are there?")), 2)
    0.65
    """
    if not (a or b):
        return 1.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)  # one set operation: |a | b| by counting


def family(item: dict) -> frozenset[str]:
    """The ids a record is kin to: itself and its parent."""
    parent = (item.get("provenance") or {}).get("parent")
    return frozenset(x for x in (item.get("id"), parent) if x)


class NearDuplicates:
    """Remembers questions per database; says whether a new one repeats one of them.

    The answer is the earliest remembered question that repeats the new one, as a scan
    of all of them in order would find, but without the scan: a dict finds the same
    normalized text, an index proposes the only questions that can reach the threshold,
    a bound rules most proposals out, and the exact similarity decides the rest, tried
    in the order they were remembered (the first repeat is the answer).

    The index is prefix filtering (AllPairs, Bayardo et al. 2007): put every n-gram in
    one fixed order, rarest first. When two n-gram sets have Jaccard similarity >= t,
    they share at least ``ceil(t|A|)`` of ``A``'s n-grams and ``ceil(t|B|)`` of ``B``'s,
    so the first ``|A| - ceil(t|A|) + 1`` of ``A`` (its prefix) and the prefix of ``B``
    share one. So only a remembered question's prefix is indexed, and a new question
    looks up only its own: the rare n-grams (a value, a name), not the ones a template
    repeats in every question it makes. The order is the n-grams' frequency among the
    questions the index starts with (``built``, and the ``coming`` ones it is told of),
    fixed before the first is remembered; an n-gram it has not counted is the rarest.
    Any fixed order gives the same answers; this one keeps the lists short.

    Templated questions still share rare n-grams (a team's name, a year), so the lists
    grow with the build; they are read as NumPy views, and a proposal is ruled out
    without its n-grams when the bound says it cannot reach the threshold: each question
    keeps a 256-bit signature (one bit per n-gram, by a hash), and a bit of ``A``'s that
    is not in ``B``'s stands for an n-gram of ``A`` not in ``B`` (distinct bits, distinct
    n-grams), so ``|A & B| <= |A| - popcount(sig(A) & ~sig(B))``.

    Most drafts of a templated build repeat the text of an earlier one (71% at quota
    200), so each checked text keeps its close questions (whatever their kin) and how
    many questions they cover: the same text checked again reads only the postings'
    tails, the questions remembered since (:meth:`_close`).

    A remembered question costs a few hundred bytes (a build's worth are held at once):
    its id, kin and normalized text, the size of its n-gram set (the set itself is made
    again from the text when the similarity is computed), its signature and its place
    in the postings of its prefix, arrays of 32-bit integers; a checked text, its entry
    in the cache of close questions.
    """

    def __init__(self, threshold: float, built: Iterable[dict] = (), coming: Iterable[str] = ()):
        self.threshold = threshold
        self._seen: dict[str, _Remembered] = {}
        self._checked = ""  # the last text checked
        held = [(item["db_id"], item["id"], item["question"], family(item)) for item in built]
        self._frequency: Counter[str] = Counter()
        for question in itertools.chain((question for _, _, question, _ in held), coming):
            self._frequency.update(ngrams(question))
        for db_id, record_id, question, kin in held:
            self.add(db_id, record_id, question, kin)

    def add(self, db_id: str, record_id: str, question: str, kin: frozenset[str]) -> None:
        """Remember one question."""
        text = normalize(question)
        text = self._checked if text == self._checked else text
        grams = _grams(text)
        remembered = self._seen.get(db_id) or self._seen.setdefault(db_id, _Remembered())
        remembered.add((record_id, tuple(kin), text), grams, self._prefix(grams))

    def check(self, db_id: str, question: str, kin: frozenset[str]) -> Failure | None:
        """Why ``question`` repeats an earlier one of ``db_id``, or None."""
        remembered = self._seen.get(db_id)
        if remembered is None:
            return None
        text, grams = normalize(question), ngrams(question)
        same = remembered.first.get(text)
        before = len(remembered.records) if same is None else same  # later ones cannot win
        for index in self._close(remembered, text, grams, before):
            other_id, other_kin, other_text = remembered.records[index]
            if kin.isdisjoint(other_kin):
                score = similarity(grams, _grams(other_text))
                return "near-duplicate", f"{score:.2f} similar to {other_id}: {other_text!r}"
        if same is None:
            return None
        return "duplicate", f"same question as {remembered.records[same][0]}"

    def _close(self, remembered: _Remembered, text: str, grams: frozenset, before: int) -> list:
        """The indexes below ``before``, ascending, of the remembered questions whose
        similarity to ``text`` reaches the threshold, whatever their kin.

        Templated drafts repeat: most drafts of a large build have the text of an
        earlier one. A text's answer is kept (``remembered.close``) with the number of
        questions it covers, and a check of the same text later looks only at the
        questions remembered since, in the postings' tails: the cost of a repeated text
        does not grow with the build."""
        covered, *found = remembered.close.get(text, (0,))
        if covered < before:
            prefix = self._prefix(grams)
            proposed = remembered.proposed(prefix, grams, before, self.threshold, covered)
            found += [index for index in proposed if self._reaches(grams, remembered, index)]
            remembered.close[text] = (before, *found)  # one tuple: the cache is per text
        self._checked = text  # remembered next if kept: one string for both
        return [index for index in found if index < before]

    def _reaches(self, grams: frozenset, remembered: _Remembered, index: int) -> bool:
        """Whether the similarity of ``grams`` to a remembered question reaches the threshold."""
        if _too_short(len(grams), remembered.sizes[index], self.threshold):
            return False
        return similarity(grams, _grams(remembered.records[index][2])) >= self.threshold

    def _prefix(self, grams: frozenset[str]) -> list[str]:
        """The first n-grams of a set in the index's order, as many as a match at the
        threshold must share one of.

        The margin keeps float rounding from shortening the prefix (longer is always safe).
        """
        keep = len(grams) - math.ceil(self.threshold * len(grams) - 1e-9) + 1
        # by frequency, then by text (a stable sort of the sorted n-grams): one total order
        return sorted(sorted(grams), key=self._frequency.__getitem__)[:keep]


SIGNATURE_BYTES = 32  # a question's n-gram signature: 256 bits
_POPCOUNT = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.int64)


class _Remembered:
    """The questions of one database: records in the order remembered, the first index
    of each normalized text, the sizes and signatures, and the postings of the prefixes."""

    def __init__(self):
        self.records: list[tuple[str, tuple, str]] = []  # id, kin, normalized text
        self.first: dict[str, int] = {}
        self.sizes = array("i")
        self.signatures = array("B")  # SIGNATURE_BYTES per question
        self.postings: dict[str, array] = {}
        # a checked text -> (how many questions its answer covers, *the close ones' indexes)
        self.close: dict[str, tuple[int, ...]] = {}

    def add(self, record: tuple, grams: frozenset[str], prefix: list[str]) -> None:
        index = len(self.records)
        self.first.setdefault(record[2], index)
        for gram in prefix:
            found = self.postings.get(gram)
            if found is None:
                self.postings[gram] = found = array("i")
            found.append(index)
        self.records.append(record)
        self.sizes.append(len(grams))
        self.signatures.frombytes(_signature(grams))

    def proposed(
        self, prefix: list[str], grams: frozenset, before: int, t: float, start: int = 0
    ) -> list[int]:
        """The distinct indexes from ``start`` to below ``before``, ascending, that share a
        prefix n-gram with ``grams`` and that the sizes and signatures do not rule out at
        threshold ``t``."""
        lists = []
        for gram in prefix:
            found = self.postings.get(gram)
            if found is not None:
                first = bisect_left(found, start) if start else 0
                end = bisect_left(found, before)
                if first < end:
                    lists.append(np.frombuffer(found, np.int32, end - first, 4 * first))
        if not lists:
            return []
        indexes = np.concatenate(lists)
        # the sizes first (4 bytes an entry): shared <= the smaller size
        sizes = np.frombuffer(self.sizes, dtype=np.int32)[indexes]
        size = len(grams)
        fit = _reach(np.minimum(sizes, size), size, sizes, t)
        indexes, sizes = indexes[fit], sizes[fit]
        mine = np.frombuffer(_signature(grams), dtype=np.uint64)
        theirs = np.frombuffer(self.signatures, dtype=np.uint64).reshape(-1, len(mine))[indexes]
        only_mine = _popcount(mine & ~theirs)
        only_theirs = _popcount(theirs & ~mine)
        shared = np.minimum(size - only_mine, sizes - only_theirs)
        reach = _reach(shared, size, sizes, t)
        return np.unique(indexes[reach]).tolist()  # an index in several lists: once


def _reach(shared, size_a: int, sizes_b: np.ndarray, t: float) -> np.ndarray:
    """Whether an overlap of ``shared`` n-grams between sets of these sizes reaches
    Jaccard ``t``: s / (|a| + |b| - s) >= t exactly when s (1 + t) >= t (|a| + |b|)."""
    return shared * (1 + t) >= t * (size_a + sizes_b) - 1e-9


def _signature(grams: frozenset[str]) -> bytes:
    """One bit per n-gram (by a hash that is the same in every process)."""
    bits = functools.reduce(operator.or_, map(_bit, grams), 0)
    return bits.to_bytes(SIGNATURE_BYTES, "little")


@functools.lru_cache(maxsize=65536)
def _bit(gram: str) -> int:
    return 1 << (zlib.crc32(gram.encode()) % (8 * SIGNATURE_BYTES))


def _popcount(words: np.ndarray) -> np.ndarray:
    """The set bits of each row of 64-bit words."""
    if hasattr(np, "bitwise_count"):  # NumPy 2
        return np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    return _POPCOUNT[words.view(np.uint8)].reshape(len(words), -1).sum(axis=1)


def _too_short(size_a: int, size_b: int, threshold: float) -> bool:
    """Sizes so different that the similarity cannot reach the threshold."""
    small, large = sorted((size_a, size_b))
    return large == 0 or small / large < threshold
