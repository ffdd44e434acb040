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
import heapq
import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable
from difflib import SequenceMatcher

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
    normalized text, and an inverted index from each n-gram to the questions holding it
    proposes the only questions that can reach the threshold. When two n-gram sets have
    Jaccard similarity >= t they share at least ``ceil(t|A|)`` of ``A``'s n-grams, so any
    ``|A| - ceil(t|A|) + 1`` of them hold a shared one (prefix filtering); the check looks
    up that many of the new question's n-grams, the rarest so far, whose lists are short.
    The exact similarity then decides.

    A remembered question costs well under a kilobyte (a build's worth are held at once):
    its id, kin and normalized text, the size of its n-gram set (the set itself is made
    again from the text when the similarity is computed) and its place in the postings,
    arrays of machine integers.
    """

    def __init__(self, threshold: float, built: Iterable[dict] = ()):
        self.threshold = threshold
        self._seen: dict[str, list[tuple[str, tuple, str, int]]] = {}
        self._first: dict[str, dict[str, int]] = {}  # db -> normalized text -> first index
        self._postings: dict[str, dict[str, array]] = {}  # db -> n-gram -> indexes
        for item in built:
            self.add(item["db_id"], item["id"], item["question"], family(item))

    def add(self, db_id: str, record_id: str, question: str, kin: frozenset[str]) -> None:
        """Remember one question."""
        seen = self._seen.setdefault(db_id, [])
        text = normalize(question)
        grams = _grams(text)
        self._first.setdefault(db_id, {}).setdefault(text, len(seen))
        postings = self._postings.setdefault(db_id, {})
        for gram in grams:
            found = postings.get(gram)
            if found is None:
                postings[gram] = found = array("l")
            found.append(len(seen))
        seen.append((record_id, tuple(kin), text, len(grams)))

    def check(self, db_id: str, question: str, kin: frozenset[str]) -> Failure | None:
        """Why ``question`` repeats an earlier one of ``db_id``, or None."""
        text, grams = normalize(question), ngrams(question)
        seen, postings = self._seen.get(db_id, []), self._postings.get(db_id, {})
        same = self._first.get(db_id, {}).get(text)
        rarest = self._prefix(grams, postings)
        hits = Counter(i for gram in rarest for i in postings.get(gram, ()))
        # at most every n-gram not looked up is shared too: a question below that is out
        unseen = len(grams) - len(rarest)
        proposed = {i for i, n in hits.items() if self._may_reach(n + unseen, grams, seen[i][3])}
        for index in sorted(proposed | ({same} if same is not None else set())):
            failure = self._repeats(seen[index], text, grams, kin)
            if failure is not None:
                return failure
        return None

    def _repeats(self, other, text: str, grams: frozenset, kin: frozenset) -> Failure | None:
        other_id, other_kin, other_text, other_size = other
        if text == other_text:
            return "duplicate", f"same question as {other_id}"
        if not kin.isdisjoint(other_kin) or _too_short(len(grams), other_size, self.threshold):
            return None
        score = similarity(grams, _grams(other_text))
        if score >= self.threshold:
            return "near-duplicate", f"{score:.2f} similar to {other_id}: {other_text!r}"
        return None

    def _may_reach(self, shared: int, a: frozenset, size_b: int) -> bool:
        """Whether sets sharing at most ``shared`` members can be ``threshold`` similar
        (``a`` and a set of ``size_b`` members).

        Jaccard ``s / (|a| + |b| - s)`` >= t holds exactly when ``s (1 + t)`` >=
        ``t (|a| + |b|)``; the margin keeps float rounding from ruling a match out.
        """
        return shared * (1 + self.threshold) >= self.threshold * (len(a) + size_b) - 1e-9

    def _prefix(self, grams: frozenset[str], postings: dict[str, list[int]]) -> list[str]:
        """The rarest n-grams of a set, as many as a match at the threshold must share one of.

        The margin keeps float rounding from shortening the prefix (longer is always safe).
        """
        keep = len(grams) - math.ceil(self.threshold * len(grams) - 1e-9) + 1
        return heapq.nsmallest(keep, grams, key=lambda g: (len(postings.get(g, ())), g))


def _too_short(size_a: int, size_b: int, threshold: float) -> bool:
    """Sizes so different that the similarity cannot reach the threshold."""
    small, large = sorted((size_a, size_b))
    return large == 0 or small / large < threshold
