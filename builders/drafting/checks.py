"""Checks on drafts, each failure a reject with a reason, and near-duplicate removal.

Per category (each check is its category's ``check``, in the category's module under
:mod:`.categories`; this module holds what the checks share):

- ``missing-column``: the trigger column is not in the schema, or for a ``surface``
  draft not in the table it is asked of (``column-in-schema``)
  and is not a near-synonym of a column (``column-near-synonym``);
- ``out-of-domain``, ``small-talk``: the question names no table or column
  (``shares-schema-term``): a name counts when every content word of it is in the
  question, so ``long`` alone does not name ``long_title``;
- ``vague-word`` and ``vague-question``: the trigger is in the question
  (``trigger-not-in-question``); a vague word must leave something open that the rest
  of the question does not fix (``vague-word-settled``, see :mod:`.settled_by_question`); a vague
  question must lack what makes its parent answerable: it may name one of the parent's
  bound values, columns, tables or aggregates, not two (``still-answerable``);
- ``ambiguous-reference``: the trigger is in the question and holds a reference word
  (``no-reference-word``), the draft has a parent (``no-parent``), and the draft does not
  still name the referent the parent determines (``reference-determined``,
  :mod:`.settled_by_question`);
- ``out-of-scope``: the question asks for a prediction, a chart, a clustering or an
  explanation (``not-out-of-scope``), and a clustering is more than a grouping by one of
  the schema's columns (``Cluster the teams by their city`` is a GROUP BY: ``groupable``).

Every draft must hold no control character (``control-character``: NUL, ESC ...), and
differ from its parent (``same-as-parent``) and, when a model
wrote it, from the examples a prompt shows (``copied-example``: the same or nearly
the same question). Then
:class:`NearDuplicates` drops a draft whose normalized text equals an earlier one's
(``duplicate``) or whose character 3-gram similarity to one is at least the threshold
(``near-duplicate``), within its database, against earlier drafts and the items already
built. A draft is not compared with its own family: its parent and the parent's other
children, which are meant to be close to it.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Collection, Iterable
from difflib import SequenceMatcher

import numpy as np
from sqlglot import exp

from answerable.builders.drafting import lexicon
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft
from answerable.builders.drafting.text import find_phrase, name_words, normalize, words
from answerable.builders.lexical.inflection import singular
from answerable.builders.lexical.lexicon import GENERIC_WORDS, QUESTION_STOPWORDS, SYNONYM_GROUPS
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sqlkit.parsing import parse
from answerable.kernel.errors import SQLError

Failure = tuple[str, str]  # (reason, detail)
SPELLING_SIMILARITY = 0.85
COPY_SIMILARITY = 0.7  # a draft this close to a prompt's example copied it
NGRAM = 3

_CANONICAL = {word: min(group) for group in SYNONYM_GROUPS for word in group}


@functools.lru_cache(maxsize=65536)  # a check meets the same words again and again
def canonical(word: str) -> str:
    """One word for a near-synonym group, after a rough singular."""
    word = singular(word.lower())
    return _CANONICAL.get(word, word)


@functools.lru_cache(maxsize=65536)  # the schema's names, checked against every draft
def content_words(name: str) -> tuple[str, ...]:
    """The canonical words of a name or phrase, without generic words."""
    return tuple(canonical(w) for w in name_words(name) if w not in GENERIC_WORDS)


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
            if _renames(term, column.name):
                return f"{table.name}.{column.name}"
    return None


@functools.lru_cache(maxsize=65536)  # a schema's columns, checked against every draft's terms
def _renames(term: str, column: str) -> bool:
    """Whether ``term`` merely renames ``column`` (:func:`near_synonym`)."""
    return _near(content_words(term), content_words(column), term, column)


def _near(mine: tuple[str, ...], theirs: tuple[str, ...], term: str, column: str) -> bool:
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


def question_terms(question: str) -> set[str]:
    """The canonical content words of a question."""
    return {
        canonical(w)
        for w in words(question)
        if w not in QUESTION_STOPWORDS and w not in GENERIC_WORDS and not w.isdigit()
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


def check_out_of_domain(draft: Draft, context: DatabaseContext) -> Failure | None:
    named = schema_names_in(draft.question, context.schema)
    if named:
        terms = {canonical(w) for name in named for w in name_words(name)}
        said = sorted({w for w in words(draft.question) if canonical(w) in terms})
        shared = f"shares {', '.join(said)} with the schema ({', '.join(named)})"
        return "shares-schema-term", shared
    return None


def schema_links(question: str, context: DatabaseContext) -> list[str]:
    """The words of ``question`` that link it to the context's database: a content word
    (not a function word, not a generic schema word such as ``name`` or ``date``, not a
    number) that is a word of a table or column name, merely renames a column, or is a
    word of a value the database holds (its example values). A question none of whose
    words links is about something this database does not hold.

    >>> from answerable.builders.schema import Column, Table
    >>> schema = DatabaseSchema("x", [Table("players", [Column("name"), Column("height_cm")])])
    >>> context = DatabaseContext("x", schema, {"players": {"name": ["Ada Lovelace"]}})
    >>> schema_links("How many patients were admitted in 2023?", context)
    []
    >>> schema_links("Which players are taller than Ada?", context)
    ['ada', 'players']
    """
    return sorted({word for word in words(question) if _links(word, context)})


@functools.lru_cache(maxsize=65536)  # templated questions share most of their words
def _links(word: str, context: DatabaseContext) -> bool:
    """Whether one word of a question links it to the context's database (see
    :func:`schema_links`), worked out once per word and context (hashed by identity)."""
    if word in QUESTION_STOPWORDS or word in GENERIC_WORDS or word.isdigit():
        return False
    known = _linkable_words(context)
    return canonical(word) in known or near_synonym(word, context.schema) is not None


@functools.lru_cache(maxsize=64)
def _linkable_words(context: DatabaseContext) -> frozenset[str]:
    """The canonical content words of the context's table and column names and of its
    example values (worked out once per context: it is hashed by identity)."""
    names = [t.name for t in context.schema.tables]
    names += [c.name for t in context.schema.tables for c in t.columns]
    known = {w for name in names for w in content_words(name)}
    for columns in context.values.values():
        for values in columns.values():
            for value in values:
                if isinstance(value, str):
                    known.update(
                        canonical(w)
                        for w in words(value)
                        if w not in QUESTION_STOPWORDS and not w.isdigit()
                    )
    return frozenset(known - {canonical(w) for w in GENERIC_WORDS})


def schema_names_in(question: str, schema: DatabaseSchema) -> list[str]:
    """The table and column names ``question`` names: each name split into its words
    (at underscores and case changes) and named when every one of them is among the
    question's words, canonical; never a part of a name alone, nor a name of generic
    words only (``name``, ``id``).

    >>> from answerable.builders.schema import Column, Table
    >>> schema = DatabaseSchema("x", [Table("d_icd", [Column("long_title")])])
    >>> schema_names_in("How long do goldfish usually live?", schema)
    []
    >>> schema_names_in("What is the long title of code 401?", schema)
    ['long_title']
    """
    mine = {canonical(w) for w in words(question)}
    found = []
    for table in schema.tables:
        for name in (table.name, *(c.name for c in table.columns)):
            if not content_words(name) or name in found:
                continue
            if _name_terms(name) <= mine:
                found.append(name)
    return sorted(found)


@functools.lru_cache(maxsize=65536)
def _name_terms(name: str) -> frozenset[str]:
    """Every word of a name, canonical (generic ones too)."""
    return frozenset(canonical(w) for w in name_words(name))


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


AGGREGATE_CUES = {
    exp.Count: ("how many", "number", "count"),
    exp.Avg: ("average", "mean"),
    exp.Sum: ("total", "sum"),
    exp.Max: ("most", "highest", "largest", "maximum", "latest", "biggest"),
    exp.Min: ("least", "lowest", "smallest", "minimum", "earliest", "fewest"),
}


def parent_specifics(parent: dict) -> dict[str, tuple[str, ...]]:
    """What makes a parent answerable, each with the phrases that name it in a question:
    its bound values (the literals of its SQL), its columns and tables (all their content
    words) and its aggregates (any of their cue words). Empty when the parent's SQL does
    not parse.

    >>> sorted(parent_specifics({"sql": "SELECT COUNT(*) FROM players WHERE position = 'GK'"}))
    ["'GK'", 'COUNT', 'players', 'position']
    """
    return _specifics(parent.get("sql") or "", parent.get("dialect") or "sqlite")


@functools.lru_cache(maxsize=1024)  # a parent's drafts, in a row, are checked against it
def _specifics(sql: str, dialect: str) -> dict[str, tuple[str, ...]]:
    """:func:`parent_specifics` of a parent's SQL (shared: read it, never change it)."""
    try:
        tree = parse(sql, dialect)
    except SQLError:
        return {}
    specifics: dict[str, tuple[str, ...]] = {}
    for literal in tree.find_all(exp.Literal):
        if words(literal.this):
            specifics[literal.sql()] = (literal.this,)
    for node in (*tree.find_all(exp.Column), *tree.find_all(exp.Table)):
        if content_words(node.name):
            specifics[node.name] = (" ".join(content_words(node.name)),)
    for kind, cues in AGGREGATE_CUES.items():
        if tree.find(kind) is not None:
            specifics[kind.key.upper()] = cues
    return specifics


def copied_example(question: str, examples: Iterable[str]) -> Failure | None:
    """``copied-example`` when ``question`` is, or nearly is (character 3-gram
    similarity of :data:`COPY_SIMILARITY` or more), one of a prompt's ``examples``.

    >>> copied_example("Which recent books were published after 2020?",
    ...                ["Which recent books were published?"])
    ('copied-example', "0.75 similar to the prompt's example 'Which recent books were published?'")
    """
    grams = ngrams(question)
    for example in examples:
        score = similarity(grams, ngrams(example))
        if score >= COPY_SIMILARITY:
            return "copied-example", f"{score:.2f} similar to the prompt's example {example!r}"
    return None


# ---- near-duplicates -------------------------------------------------------------------


def ngrams(text: str, n: int = NGRAM) -> frozenset[str]:
    """The character n-grams of ``text``'s normalized form (padded with spaces)."""
    return _grams(normalize(text), n)


def _grams(normalized: str, n: int = NGRAM) -> frozenset[str]:
    padded = f" {normalized} "
    return frozenset(padded[i : i + n] for i in range(max(1, len(padded) - n + 1)))


_NUMBERS: dict[str, int] = {}  # every n-gram an index has seen -> its number, in order met
_BITS = array("B")  # the signature bit of each numbered n-gram (see _signature)


@functools.lru_cache(maxsize=4096)  # a text checked is remembered next, or checked again
def _numbered(normalized: str) -> frozenset[int]:
    """The n-grams of a normalized text as their numbers (:data:`_NUMBERS`): one number
    per distinct n-gram, so sets of numbers meet and differ exactly as the n-grams do."""
    found = []
    for gram in _grams(normalized):
        number = _NUMBERS.get(gram)
        if number is None:
            number = _NUMBERS[gram] = len(_NUMBERS)
            _BITS.append(zlib.crc32(gram.encode()) % (8 * SIGNATURE_BYTES))
        found.append(number)
    return frozenset(found)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two n-gram sets.

    >>> round(similarity(ngrams("How many patients?"), ngrams("How many patients are there?")), 2)
    0.65
    """
    return _jaccard(len(a & b), len(a), len(b))


def _jaccard(shared: int, size_a: int, size_b: int) -> float:
    """Jaccard similarity of two sets of these sizes sharing ``shared`` members."""
    if not (size_a or size_b):
        return 1.0
    return shared / (size_a + size_b - shared)  # one set operation: |a | b| by counting


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

    A templated build makes most of its questions from a few templates with other values,
    and a value (a team, a year) recurs across templates: an index of single n-grams
    (prefix filtering) proposes ever more questions per check as the build grows, all
    sharing a value or a template's words with the new one, few close to it. So the
    index groups the remembered questions by their text with the values masked
    (:func:`masked`: numbers and capitalized names), and bounds a whole group at once:
    the n-grams every member has (the group's core) plus the most any member has
    besides them. A group of another template fails the bound without a look at its
    members; in a group that passes, a member can reach the threshold only if it shares
    with the new question at least ``m`` of its n-grams outside the core, so it holds
    one of any ``|rest| - m + 1`` of the new question's other n-grams (pigeonhole): the
    group's shortest postings of those propose the members (an n-gram no member has
    outside the core needs no reading). The mask only decides how the questions are
    grouped, never an answer: every bound holds for any grouping.

    A proposal is ruled out without its n-grams when the bound says it cannot reach the
    threshold: each question keeps a 256-bit signature (one bit per n-gram, by a hash),
    and a bit of ``A``'s that is not in ``B``'s stands for an n-gram of ``A`` not in ``B``
    (distinct bits, distinct n-grams), so ``|A & B| <= |A| - popcount(sig(A) & ~sig(B))``.

    Most drafts of a templated build repeat the text of an earlier one (71% at quota
    200), so each checked text keeps its close questions (whatever their kin) and how
    many questions they cover: the same text checked again looks only at the questions
    remembered since (:meth:`_close`).

    A build's worth of questions are held at once, so they are held compactly: an n-gram
    is a number (:func:`_numbered`: one per distinct n-gram in the process, so the
    answers are exact), the questions' numbers follow one another in one array of 32-bit
    integers, and so do the groups' cores; a posting is an array of them too. A
    remembered question keeps its id, kin and normalized text, its numbers, size and
    signature, and its place in its group's postings; a checked text, its entry in the
    cache of close questions (``tests/benchmarks/dedup_memory.py`` measures the bytes).
    """

    def __init__(self, threshold: float, built: Iterable[dict] = ()):
        self.threshold = threshold
        self._seen: dict[str, _Remembered] = {}
        self._checked = ""  # the last text checked
        for item in built:
            self.add(item["db_id"], item["id"], item["question"], family(item))

    def add(self, db_id: str, record_id: str, question: str, kin: frozenset[str]) -> None:
        """Remember one question."""
        text = normalize(question)
        text = self._checked if text == self._checked else text
        remembered = self._seen.get(db_id) or self._seen.setdefault(db_id, _Remembered())
        remembered.add((record_id, tuple(kin), text), _numbered(text), masked(question))

    def check(self, db_id: str, question: str, kin: frozenset[str]) -> Failure | None:
        """Why ``question`` repeats an earlier one of ``db_id``, or None."""
        remembered = self._seen.get(db_id)
        if remembered is None:
            return None
        text = normalize(question)
        grams = _numbered(text)
        same = remembered.first.get(text)
        before = len(remembered.records) if same is None else same  # later ones cannot win
        index = self._first_close(remembered, text, grams, before, kin)
        if index is not None:
            other_id, _kin, other_text = remembered.records[index]
            score = remembered.similarity(grams, index)
            return "near-duplicate", f"{score:.2f} similar to {other_id}: {other_text!r}"
        if same is None:
            return None
        return "duplicate", f"same question as {remembered.records[same][0]}"

    def _first_close(
        self, remembered: _Remembered, text: str, grams: frozenset, before: int, kin: frozenset
    ) -> int | None:
        """The earliest remembered question below ``before`` whose similarity to ``text``
        reaches the threshold and whose kin is not ``kin``, or None.

        Templated drafts repeat: most drafts of a large build have the text of an
        earlier one. So a text keeps (``remembered.close``) how many questions it has
        looked at and which of them are close, whatever their kin: a check of the same
        text later finds its answer there, or looks only at the questions after them.
        And a look stops at the first close question of another family, the answer:
        the questions after it are looked at only if a later check needs them."""
        covered, *found = remembered.close.get(text, (0,))
        self._checked = text  # remembered next if kept: one string for both
        for index in found:  # ascending
            if index >= before:
                return None
            if kin.isdisjoint(remembered.records[index][1]):
                return index
        if covered >= before:
            return None
        answer = None
        for index in remembered.proposed(grams, before, self.threshold, covered):
            if self._reaches(grams, remembered, index):
                found.append(index)
                if kin.isdisjoint(remembered.records[index][1]):
                    answer = index
                    break
        covered = before if answer is None else answer + 1  # every close one below is found
        remembered.close[text] = (covered, *found)  # one tuple: the cache is per text
        return answer

    def _reaches(self, grams: frozenset, remembered: _Remembered, index: int) -> bool:
        """Whether the similarity of ``grams`` to a remembered question reaches the threshold."""
        if _too_short(len(grams), remembered.sizes[index], self.threshold):
            return False
        return remembered.similarity(grams, index) >= self.threshold


_NAME = re.compile(r"[A-Za-z0-9]+")


def masked(question: str) -> str:
    """The words of ``question``, lower case, with each run of values (a word with a
    digit, a capitalized word after the first) as one ``#``: the template a question
    was made from, as near as its text tells.

    >>> masked("How many goals did Adam Bradshaw score in 2021-22?")
    'how many goals did # score in #'
    """
    out: list[str] = []
    for place, match in enumerate(_NAME.finditer(question)):
        word = match.group()
        if (place and word[0].isupper()) or not word.isalpha():  # a capital or a digit
            if out and out[-1] == "#":
                continue
            word = "#"
        out.append(word.lower())
    return " ".join(out)


SIGNATURE_BYTES = 32  # a question's n-gram signature: 256 bits
_POPCOUNT = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.int64)


class _Remembered:
    """The questions of one database: records in the order remembered, the first index
    of each normalized text, the n-gram numbers (one array for all, with each
    question's end), sizes and signatures, and the groups of questions with the same
    masked text (:class:`_Groups`)."""

    def __init__(self):
        self.records: list[tuple[str, tuple, str]] = []  # id, kin, normalized text
        self.first: dict[str, int] = {}
        self.grams = array("i")  # every question's n-gram numbers, one after another
        self.ends = array("q")  # where each question's numbers end in ``grams``
        self.sizes = array("i")
        self.signatures = array("B")  # SIGNATURE_BYTES per question
        self.groups = _Groups()
        # a checked text -> (how many questions its answer covers, *the close ones' indexes)
        self.close: dict[str, tuple[int, ...]] = {}

    def add(self, record: tuple, grams: frozenset[int], mask: str) -> None:
        index = len(self.records)
        self.first.setdefault(record[2], index)
        self.records.append(record)
        self.grams.extend(grams)
        self.ends.append(len(self.grams))
        self.sizes.append(len(grams))
        self.signatures.frombytes(_signature(grams))
        self.groups.add(mask, index, grams)

    def similarity(self, grams: frozenset[int], index: int) -> float:
        """The similarity of ``grams`` to the remembered question at ``index``."""
        theirs = self.grams[self.ends[index - 1] if index else 0 : self.ends[index]]
        return _jaccard(len(grams.intersection(theirs)), len(grams), len(theirs))

    def proposed(self, grams: frozenset, before: int, t: float, start: int = 0) -> list[int]:
        """The indexes from ``start`` to below ``before``, ascending, that the groups
        propose for ``grams`` (:meth:`_Groups.proposed`) and that the sizes and
        signatures do not rule out at threshold ``t``."""
        mine = np.frombuffer(_signature(grams), dtype=np.uint64)
        indexes = self.groups.proposed(grams, mine, before, t, start)
        if not len(indexes):
            return []
        sizes = np.frombuffer(self.sizes, dtype=np.int32)[indexes]
        size = len(grams)
        theirs = np.frombuffer(self.signatures, dtype=np.uint64).reshape(-1, len(mine))[indexes]
        only_mine = _popcount(mine & ~theirs)
        only_theirs = _popcount(theirs & ~mine)
        shared = np.minimum(size - only_mine, sizes - only_theirs)
        return indexes[_reach(shared, size, sizes, t)].tolist()


class _Groups:
    """The remembered questions of one database grouped by their masked text: per group
    its core (the n-grams all its members have), the smallest and largest member, its
    members and the postings of the members' other n-grams (the member indexes, in
    order, that have each)."""

    def __init__(self):
        self.numbers: dict[int, int] = {}  # a hash of the masked text -> group
        # every group's core, one after another: a core only shrinks, in its place
        self.core_grams, self.core_starts = array("i"), array("q")
        self.members: list[array] = []
        self.postings: list[dict[int, array]] = []
        # per group, for the bound on all groups at once (NumPy views)
        self.core_sizes, self.smallest, self.largest = array("i"), array("i"), array("i")
        self.last = array("i")  # the latest member
        self.core_signatures = array("B")

    def add(self, mask: str, index: int, grams: frozenset[int]) -> None:
        # texts whose hashes meet share a group: any grouping gives the same answers
        group = self.numbers.setdefault(zlib.crc32(mask.encode()), len(self.members))
        if group == len(self.members):
            self.core_starts.append(len(self.core_grams))
            self.core_grams.extend(grams)
            self.members.append(array("i"))
            self.postings.append({})
            self.core_sizes.append(len(grams))
            self.smallest.append(len(grams))
            self.largest.append(len(grams))
            self.last.append(index)
            self.core_signatures.frombytes(_signature(grams))
        core, postings = self.core(group), self.postings[group]
        lost = [gram for gram in core if gram not in grams]
        if lost:  # every member so far has these n-grams: now outside the core
            for gram in lost:
                postings[gram] = array("i", self.members[group])
            core = array("i", (gram for gram in core if gram in grams))
            start = self.core_starts[group]
            self.core_grams[start : start + len(core)] = core
            self.core_sizes[group] = len(core)
            place = group * SIGNATURE_BYTES
            self.core_signatures[place : place + SIGNATURE_BYTES] = array("B", _signature(core))
        for gram in grams.difference(core):
            found = postings.get(gram)
            if found is None:
                postings[gram] = found = array("i")
            found.append(index)
        self.members[group].append(index)
        self.smallest[group] = min(self.smallest[group], len(grams))
        self.largest[group] = max(self.largest[group], len(grams))
        self.last[group] = index

    def core(self, group: int) -> array:
        """The n-gram numbers every member of ``group`` has."""
        start = self.core_starts[group]
        return self.core_grams[start : start + self.core_sizes[group]]

    def proposed(
        self, grams: frozenset, signature: np.ndarray, before: int, t: float, start: int
    ) -> np.ndarray:
        """The distinct member indexes from ``start`` to below ``before``, ascending, of
        the groups whose bound reaches threshold ``t``, that share enough n-grams
        outside their group's core with ``grams`` to reach it."""
        size = len(grams)
        lists = []
        for group in self._reaching(size, signature, start, t):
            postings, members = self.postings[group], self.members[group]
            rest = grams.difference(self.core(group))
            shared = size - len(rest)  # the n-grams it shares with the core
            # a member of size s needs |A & B| >= t (|A| + s) / (1 + t), of which the core
            # gives ``shared``; the smallest size it may have needs the fewest
            least = max(self.smallest[group], math.ceil(t * size - 1e-9))
            needed = math.ceil(t * (size + least) / (1 + t) - shared - 1e-9)
            if needed <= 0:  # the core may be enough: every member is proposed
                lists.append(_between(members, start, before))
                continue
            # a member that reaches it has one of any ``len(rest) - needed + 1`` of these
            # n-grams: take first those no member has outside the core (nothing to read),
            # then the shortest postings; most often the first are enough (none to read)
            held = list(postings.keys() & rest)
            probes = len(held) - needed + 1
            if probes > 0:
                held.sort(key=lambda g: (len(postings[g]), g))
                lists += [_between(postings[g], start, before) for g in held[:probes]]
        if not lists:
            return _NONE
        return np.unique(np.concatenate(lists))  # an index in several lists: once

    def _reaching(self, size: int, signature: np.ndarray, start: int, t: float) -> list[int]:
        """The groups with a member from ``start`` on whose size fits and whose core
        plus the most n-grams a member has besides it can reach threshold ``t``: a
        member's overlap is at most its core's (bounded by the signatures) plus its other
        n-grams, and the test at the largest member is the loosest."""
        if not self.members:
            return []
        cores = np.frombuffer(self.core_sizes, dtype=np.int32)
        largest = np.frombuffer(self.largest, dtype=np.int32)
        smallest = np.frombuffer(self.smallest, dtype=np.int32)
        theirs = np.frombuffer(self.core_signatures, dtype=np.uint64).reshape(len(cores), -1)
        shared = np.minimum(cores - _popcount(theirs & ~signature), size)
        other = largest - cores
        fit = (largest >= t * size - 1e-9) & (smallest * t <= size + 1e-9)
        fit &= np.frombuffer(self.last, dtype=np.int32) >= start
        fit &= _reach(shared + other, size, largest, t)
        return np.flatnonzero(fit).tolist()


def _between(indexes: array, start: int, before: int) -> np.ndarray:
    """The part of an ascending array from ``start`` to below ``before``, as a NumPy view."""
    first = bisect_left(indexes, start) if start else 0
    end = bisect_left(indexes, before)
    if end <= first:
        return _NONE
    return np.frombuffer(indexes, np.int32, end - first, 4 * first)


_NONE = np.zeros(0, dtype=np.int32)


def _reach(shared, size_a: int, sizes_b: np.ndarray, t: float) -> np.ndarray:
    """Whether an overlap of ``shared`` n-grams between sets of these sizes reaches
    Jaccard ``t``: s / (|a| + |b| - s) >= t exactly when s (1 + t) >= t (|a| + |b|)."""
    return shared * (1 + t) >= t * (size_a + sizes_b) - 1e-9


def _signature(grams: Collection[int]) -> bytes:
    """One bit per n-gram, by its number (:func:`_numbered`): the bit a hash of the
    n-gram's text picks, the same in every process; bit ``b`` is bit ``b % 8`` of byte
    ``b // 8``, as ``int.to_bytes(..., "little")`` of their sum would write it."""
    numbers = np.fromiter(grams, dtype=np.int64, count=len(grams))
    bits = np.zeros(8 * SIGNATURE_BYTES, dtype=bool)
    bits[np.frombuffer(_BITS, dtype=np.uint8)[numbers]] = True
    return np.packbits(bits, bitorder="little").tobytes()


def _popcount(words: np.ndarray) -> np.ndarray:
    """The set bits of each row of 64-bit words."""
    if hasattr(np, "bitwise_count"):  # NumPy 2
        return np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    return _POPCOUNT[words.view(np.uint8)].reshape(len(words), -1).sum(axis=1)


def _too_short(size_a: int, size_b: int, threshold: float) -> bool:
    """Sizes so different that the similarity cannot reach the threshold."""
    small, large = sorted((size_a, size_b))
    return large == 0 or small / large < threshold
