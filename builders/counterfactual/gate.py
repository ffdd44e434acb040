"""The plausibility gate: an ambiguous item is emitted only when a careful reader would
agree that it is ambiguous.

Column-ambiguous (:func:`judge_columns`): the target ``table.column`` is dropped and the
candidates added; the item passes when

1. each candidate is a *reading* of the question's mention: it keeps the target's content
   words and adds one qualifier (``admission_location`` for ``location``), or its head is
   a WordNet synonym or hyponym of the mention's head (``reading``);
2. the question does not already say which (its words hold neither qualifier:
   ``goals at home`` settles ``home``/``away``, ``resolved-by-question``), the target
   is not already one part of the pair (``LName`` is a last name, ``already-qualified``),
   and the mention says the word the pair qualifies (``winners`` grounded on
   ``winner_name`` does not say ``name``, ``not-mentioned``);
3. the two qualifiers are a curated contrast for the target's head noun in this kind of
   table (:mod:`answerable.builders.lexical.contrasts`): they differ in meaning, neither
   is the default. Otherwise the reason is the rule they break (``default-marked``,
   ``ordinal``, ``range``, ``parts-of-total``, ``no-contrast``); a person's first and last
   name are parts of the full name the question means, not two readings of it
   (``parts-of-name``), and a country of birth needs an owner who is born
   (``not-born``: a car maker is a firm). A fill that shuffles the
   target's values makes the data differ; it never makes a second meaning, so it counts
   for nothing here.

Value-ambiguous (:func:`judge_value`): the value written into the second column must fit
it (:func:`value_fits`): its shape (case, digits, length) must be the shape of most of the
column's values, and, when WordNet knows the column's values, the value must share their
kind: of the WordNet hypernyms held by at least half of the values that WordNet knows, at
depth :data:`SPECIFIC_DEPTH` or below, the narrowest ones and their direct parents
(``state capital`` and ``city`` for a capital column; ``American state`` and ``state``
for a state column) must meet the value's hypernyms ('Medicare' is health insurance, not
an ethnic group; 'austin' is a city, not a state). When WordNet
knows no kind of the column's values, the column's name decides: the value's hypernyms
must hold the column's head noun (or a compound ending in it: 'Medicare' is social
insurance, so it fits ``insurance``), and a value WordNet knows only as an adjective or verb
('Widowed') names no thing of that kind.

>>> judge_columns("What is the location of each admission?", "location", "admissions",
...               "location", ["admission_location", "discharge_location"]).ok
True
>>> judge_columns("What is the position of each player?", "position", "players",
...               "position", ["primary_position", "secondary_position"]).reason
'default-marked'
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from answerable.builders.counterfactual.grounding import Mention, same_stem, stem
from answerable.builders.counterfactual.lexicon import (
    head_token,
    is_person_table,
    name_tokens,
)
from answerable.builders.lexical import contrasts, person_names, wordnet
from answerable.builders.lexical.inflection import singular
from answerable.builders.lexical.lexicon import (
    NAME_STOPWORDS,
    UNITS,
)

SPECIFIC_DEPTH = 5
"""Hypernyms shallower than this (``entity``, ``location``, ``region``) say too little
about a column's kind to judge a value by."""
SHARED_SHARE = 0.5
MIN_KNOWN = 3
SAMPLE = 40


@dataclass(frozen=True)
class Verdict:
    """The gate's decision: ``ok``, or a reason code and a one-line detail."""

    ok: bool
    reason: str = ""
    detail: str = ""


PASS = Verdict(True)


def _reject(reason: str, detail: str) -> Verdict:
    return Verdict(False, reason, detail)


def words_of(name: str) -> list[str]:
    """A name's content words, singular (units and stopwords left out)."""
    return [singular(t) for t in name_tokens(name) if t not in NAME_STOPWORDS | UNITS]


def table_words(table: str) -> set[str]:
    """The singular words of a table's name."""
    return {singular(t) for t in name_tokens(table)}


def judge_columns(
    question: str,
    mention: str,
    table: str,
    column: str,
    candidates: list[str],
    compared: Sequence[str] = (),
    known: Sequence[str] = (),
) -> Verdict:
    """Whether replacing ``table.column`` by ``candidates`` makes the question ambiguous;
    ``compared``: the values the gold SQL compares the column with, ``known``: some of
    its values (when the source has rows), for :func:`judge_held_values`."""
    if len(candidates) < 2:
        return _reject("one-candidate", "an ambiguity needs two readings")
    target = set(words_of(column))
    qualifiers = []
    for name in candidates:
        extra = [w for w in words_of(name) if w not in target]
        if not target <= set(words_of(name)):
            verdict = _wordnet_reading(mention, column, name)
            if not verdict.ok:
                return verdict
        if not extra:
            return _reject("same-meaning", f"{name} adds nothing to {column}")
        qualifiers.append(" ".join(extra))
    if len(set(qualifiers)) < len(qualifiers):
        return _reject("same-meaning", f"{' / '.join(candidates)} qualify {column} alike")
    pair = (qualifiers[0], qualifiers[1])
    verdict = judge_qualifiers(question, table, column, pair, mention)
    if not verdict.ok:
        return verdict
    return judge_held_values(pair, column, compared, known)


def judge_held_values(
    pair: tuple[str, str], column: str, compared: Sequence[str], known: Sequence[str]
) -> Verdict:
    """The values decide too. A compared value only one of the two columns could hold
    settles the reading (``named Kyle``: Kyle is a first name and no last name; ``in grade
    9 or 10``: a letter grade is no number; ``value-decides``). A split into first and
    last name needs a column of people's names: when most of its values are not
    ('AC/DC', 'Aerosmith' among a music store's artists), ``not-people``."""
    for value in compared:
        holders = [q for q in pair if could_hold(q, str(value)) is not False]
        if len(holders) < len(pair):
            which = f"the {holders[0]}" if holders else "neither"
            return _reject("value-decides", f"{value!r} can only be {which} {column}")
    if set(pair) <= contrasts.NAME_PARTS and len(known) >= MIN_KNOWN:
        people = [v for v in known if person_names.looks_like_person(v)]
        if len(people) * 2 < len(known):
            return _reject("not-people", f"most values of {column} are not people's names")
    return PASS


def could_hold(qualifier: str, value: str) -> bool | None:
    """Whether a column qualified so could hold the value; None when nothing tells."""
    if qualifier in ("first", "given", "last", "family", "sur") and " " not in value.strip():
        parts = person_names.name_parts(value)
        part = "first" if qualifier in ("first", "given") else "last"
        return (part in parts) if parts else None
    if qualifier == "letter":
        return not any(c.isdigit() for c in value)
    if qualifier == "school":
        return any(c.isdigit() for c in value)
    return None


def judge_qualifiers(
    question: str, table: str, column: str, pair: tuple[str, str], mention: str = ""
) -> Verdict:
    """Rules 2 and 3 for a pair of qualifiers of ``table.column``; with ``mention``, the
    word the pair qualifies must be one the mention says (``winners`` grounded on
    ``winner_name`` does not say ``name``: first/last name is not a reading of it)."""
    own = table_words(table)
    asked = {singular(w) for w in name_tokens(question)} | set(name_tokens(question))
    said = sorted((asked - own) & set(pair))
    if said:
        return _reject("resolved-by-question", f"the question says {said[0]!r}")
    head = head_token(column) or column.lower()
    target = set(words_of(column))
    if target & contrasts.NAME_PARTS and head == "name":
        return _reject("already-qualified", f"{column} is already one part of a name")
    owner = owner_word(table, column)
    if head == "name" and set(pair) <= contrasts.NAME_PARTS and is_people({owner}):
        return _reject("parts-of-name", f"{pair[0]}/{pair[1]} name: {_EXPLAIN['parts-of-name']}")
    if "birth" in pair and not is_born(owner):
        return _reject("not-born", f"a {owner} is not born: {pair[0]}/{pair[1]} reads nothing")
    people = is_people({owner})
    split = [
        word for word in sorted(target) if contrasts.is_contrast(pair, word, own | target, people)
    ]
    if split and mention and not any(_says(mention, word) for word in split):
        return _reject("not-mentioned", f"{mention!r} does not say {split[0]!r}")
    if split:
        return PASS
    reason = contrasts.why_not(pair)
    if reason == "default-marked" and contrasts.both_live(pair, asked):
        return PASS
    return _reject(reason, f"{pair[0]}/{pair[1]} {head}: {_EXPLAIN[reason]}")


_EXPLAIN = {
    "default-marked": "one of them is what the bare word means",
    "ordinal": "ordinals of one figure are not two meanings",
    "range": "the bounds of one figure are not two meanings",
    "parts-of-total": "the parts add up to what the word means",
    "no-contrast": "not a known pair of readings of this word in this table",
    "parts-of-name": "parts of the full name a person's name means, not two readings of it",
}


def _says(mention: str, word: str) -> bool:
    """Whether the mention holds the word, by stem (``named`` ~ ``name``, ``rated`` ~
    ``rating``), its words joined in pairs too (``care unit`` ~ ``careunit``)."""
    said = [w.lower() for w in name_tokens(mention)]
    said += [a + b for a, b in itertools.pairwise(said)]
    return any(same_stem(stem(w), stem(word)) for w in said)


def owner_word(table: str, column: str) -> str:
    """What a column's head belongs to: the word before the head (a singer's
    ``song_name`` names the song, ``winner_name`` a winner), else the last word of the
    table's name (English compounds are head-final: ``Ref_Feature_Types`` holds types)."""
    words = words_of(column)
    if len(words) > 1:
        return words[-2]
    return singular(name_tokens(table)[-1]) if name_tokens(table) else ""


def is_people(words: set[str]) -> bool:
    """Whether these words name people: the curated list, or a WordNet noun whose first
    sense is a person (``conductor``, ``visitor``; an unknown compound by its head:
    ``highschooler`` by ``schooler``)."""
    if any(is_person_table(w) for w in words):
        return True
    for word in words:
        senses = _compound_senses(word)
        if senses and senses[0].lexname() == "noun.person":
            return True
    return False


def is_born(word: str) -> bool:
    """Whether the word names people who are born: the curated tables of people, or a
    WordNet noun whose first sense is a person and that never names a group (a singer
    is born; a car ``maker`` is also a manufacturer, a firm with a seat, not a birth).

    >>> is_born("singer"), is_born("maker")
    (True, False)
    """
    if is_person_table(word):
        return True
    senses = _compound_senses(word)
    return (
        bool(senses)
        and senses[0].lexname() == "noun.person"
        and not any(sense.lexname() == "noun.group" for sense in senses)
    )


def _compound_senses(word: str) -> tuple:
    """The noun senses of the word, or of the longest noun that ends it (English
    compounds are head-final)."""
    for start in range(max(len(word) - 3, 1)):
        senses = wordnet.noun_synsets(word[start:])
        if senses:
            return senses
    return ()


def _wordnet_reading(mention: str, column: str, candidate: str) -> Verdict:
    """A candidate that does not keep the target's words is a reading only when its head
    is a WordNet synonym or hyponym of the mention's head."""
    said = [singular(w) for w in name_tokens(mention)]
    head = head_token(candidate) or candidate
    for word in said[::-1]:
        if wordnet.relation(word, singular(head)) in ("synonym", "hyponym"):
            return PASS
    return _reject("not-a-reading", f"{candidate} is not a reading of {mention!r}")


# ---- values ----------------------------------------------------------------------------


GENERIC_HEADS = frozenset({"name", "title", "label", "value", "text", "description"})


def reading_words(first: str, second: str) -> tuple[set[str], set[str]]:
    """The words that tell two columns apart as readings of one value: each column's
    content words but generic heads (``state`` of ``state_name``, ``composer``), its
    table's words instead when that leaves nothing or the same words (an artist's
    ``Name``; a customer's and an employee's ``City``), less the words both share."""
    names = [qualified.rsplit(".", 1) for qualified in (first, second)]
    own = [set(words_of(column)) - GENERIC_HEADS for _, column in names]
    tables = [table_words(table) for table, _ in names]
    a, b = tables if own[0] == own[1] else [o or t for o, t in zip(own, tables, strict=True)]
    return a - b, b - a


def judge_second_reading(
    question: str,
    mention: Mention,
    first: str,
    second: str,
    tables_read: set[str],
    tables: frozenset[str] = frozenset(),
) -> Verdict:
    """Whether a value the source holds in ``first`` and in ``second`` makes the
    question read two ways (``tables_read``: the lower-case tables the query reads):

    - asked of another table (``state`` -> ``city``), each column must name its own
      table's rows (``city_name``, ``state_name``) or the two must be one plain
      attribute of two kinds of rows (a customer's and an employee's ``City``; not a
      city's ``state_name``, which names a row of ``tables``, the schema's tables): what
      the question asks of the value is asked of the thing it names, and a state's
      ``capital`` names no state (``not-a-reading``);
    - two columns of one table: neither may name the row (``river_name`` and
      ``traverse``: the Mississippi the river and the state it runs through are not
      two readings of one row, ``names-the-row``);
    - the columns differ in words, and the question, outside the value, says none of
      them (``composed by AC/DC`` says composer, ``the city of new york`` says city:
      ``resolved-by-question``).
    """
    (table, column), (other_table, other_column) = (c.rsplit(".", 1) for c in (first, second))
    attribute = column.lower() == other_column.lower() and not any(
        names_row(t, column) for t in tables
    )
    if other_table.lower() not in tables_read and not attribute:
        for owner, name in ((table, column), (other_table, other_column)):
            if not names_row(owner, name):
                return _reject("not-a-reading", f"{owner}.{name} does not name a {owner}")
    elif table.lower() == other_table.lower():
        for name in (column, other_column):
            if names_row(table, name):
                return _reject("names-the-row", f"{table}.{name} names the {table} itself")
    own, other = reading_words(first, second)
    if not own or not other:
        return _reject("same-meaning", f"{first} and {second} name the same thing")
    said = _said_words(question, mention)
    for word in sorted(own | other):
        if any(_near(w, word) for w in said):
            return _reject("resolved-by-question", f"the question says {word!r}")
    return PASS


def names_row(table: str, column: str) -> bool:
    """Whether a column names its table's rows: a generic head (name, title) with no
    word but the table's (``state_name`` of ``state``, an artist's ``Name``)."""
    content = set(words_of(column))
    return bool(content & GENERIC_HEADS) and content - GENERIC_HEADS <= table_words(table)


def _said_words(question: str, mention: Mention) -> list[str]:
    """The question's words outside the value's span, lower case."""
    rest = question[: mention.start] + " " + question[mention.end :]
    return [w.lower() for w in name_tokens(rest) if w.isalpha()]


def _near(said: str, word: str) -> bool:
    """Same stem, or one word of five letters or more begins the other but for its last
    two letters (``composed`` ~ ``composer``, ``cities`` ~ ``city``)."""
    if same_stem(stem(said), stem(word)) or singular(said) == word:
        return True
    short, long = sorted((said, word), key=len)
    return len(short) >= 5 and long.startswith(short[:-2]) and len(long) - len(short) <= 2


def judge_named_column(question: str, value: str, first: str, second: str) -> Verdict:
    """Whether the question's own words settle which column its value is in: a word of
    it (the value's words aside) that says the first column's name (``discharged`` for
    ``discharge_location``) or whose WordNet gloss does (``coverage``: "the total amount
    and type of insurance carried", for ``insurance``), and that says nothing of the
    second column's name. Then the value is no ambiguity: ``named-column``.

    >>> judge_named_column("Who was discharged to Home?", "Home",
    ...                    "admissions.discharge_location", "admissions.marital_status").reason
    'named-column'
    """
    own = {w.lower() for w in name_tokens(value)}
    said = [w for w in name_tokens(question) if w.lower() not in own | NAME_STOPWORDS]
    first_words, second_words = _column_words(first), _column_words(second)
    for word in said:
        if _names(word, first_words) and not _names(word, second_words):
            return _reject("named-column", f"{word!r} says {first}: the value's column is settled")
    return PASS


def _column_words(qualified: str) -> list[str]:
    """The content words of a ``table.column``'s column name that its table's name does
    not say (``admission`` of ``admissions.admission_location`` names the table)."""
    table, _, column = qualified.rpartition(".")
    own = table_words(table) if table else set()
    return [w for w in words_of(column) if w not in own]


def _names(word: str, column_words: list[str]) -> bool:
    """Whether ``word`` says one of ``column_words``: by stem, or by its first noun
    senses' glosses."""
    if any(same_stem(stem(word.lower()), stem(w)) for w in column_words):
        return True
    senses = wordnet.noun_synsets(word.lower())[:2]
    glosses = " ".join(sense.definition() for sense in senses).lower()
    return any(len(w) > 3 and f" {w}" in f" {glosses}" for w in column_words)


def judge_value(value: str, column: str, known: list[str]) -> Verdict:
    """Whether ``value`` fits the column it is written into (see the module doc)."""
    if not looks_like(value, known):
        return _reject("format-misfit", f"{value!r} does not look like the values of {column}")
    return value_fits(value, column, tuple(sorted(set(known))[:SAMPLE]))


@functools.lru_cache(maxsize=65536)
def shape(value: str) -> tuple[str, bool]:
    """A value's look: its case style and whether it has digits (remembered: the same
    candidates and column values are looked at again and again)."""
    letters = [c for c in value if c.isalpha()]
    upper = bool(letters) and all(c.isupper() for c in letters)
    lower = bool(letters) and all(c.islower() for c in letters)
    case = "upper" if upper else "lower" if lower else "title" if value[:1].isupper() else "mixed"
    return case, any(c.isdigit() for c in value)


def looks_like(value: str, known: list[str]) -> bool:
    """Whether most of a column's values share the value's shape and are of a like
    length (within a factor of three): 'Medicare' may sit among insurers' names but
    'Vancomycin' does not sit among dose units such as 'mg'."""
    return like_known(known)(value)


def like_known(known: list[str]) -> Callable[[str], bool]:
    """:func:`looks_like` against one column's values, for asking about many values
    (the column's values are counted once, not once per value)."""
    if not known:
        return lambda _value: False
    by_shape, count = _lengths_by_shape(tuple(known)), len(known)
    answers: dict[tuple, bool] = {}  # by the value's shape and length, all it depends on

    def like(value: str) -> bool:
        key = (shape(value), len(value))
        if key not in answers:
            lengths = by_shape.get(key[0], {})
            alike = sum(n for length, n in lengths.items() if 1 / 3 <= length / len(value) <= 3)
            answers[key] = alike * 2 >= count
        return answers[key]

    return like


@functools.lru_cache(maxsize=1024)
def _lengths_by_shape(known: tuple[str, ...]) -> dict[tuple[str, bool], dict[int, int]]:
    """How many values of each :func:`shape` have each length (one pass over a column's
    values, which :func:`looks_like` compares with many candidates)."""
    found: dict[tuple[str, bool], dict[int, int]] = {}
    for value in known:
        lengths = found.setdefault(shape(value), {})
        lengths[len(value)] = lengths.get(len(value), 0) + 1
    return found


def value_fits(value: str, column: str, known: tuple[str, ...]) -> Verdict:
    """The vocabulary test: the value shares the kind of the column's values."""
    kinds = column_kinds(known)
    mine = _specific_hypernyms(value)
    if kinds:
        if mine & kinds:
            return PASS
        kind = sorted(kinds)[0]
        return _reject(
            "vocabulary-misfit", f"{value!r} is not a {kind} like the values of {column}"
        )
    head = head_token(column.rpartition(".")[2]) or ""
    if not wordnet.is_noun(head):
        return PASS  # nothing to judge by: the shape test stands
    if not mine:
        if wordnet.is_word(value):  # 'widowed': a word, but no thing of any kind
            return _reject("vocabulary-misfit", f"{value!r} is not a name of a {head}")
        return PASS  # a name WordNet does not know: the shape test stands
    heads = {head, singular(head)}
    if any(h.split()[-1] in heads for h in wordnet.hypernyms(value)):  # "social insurance"
        return PASS
    return _reject("vocabulary-misfit", f"{value!r} is not a kind of {head}")


@functools.cache
def column_kinds(known: tuple[str, ...]) -> frozenset[str]:
    """Specific hypernyms held by at least half of the values WordNet knows (empty when it
    knows fewer than :data:`MIN_KNOWN` of them)."""
    sets = [h for h in (_specific_hypernyms(v) for v in known) if h]
    if len(sets) < MIN_KNOWN:
        return frozenset()
    counts: dict[str, int] = {}
    for found in sets:
        for name in found:
            counts[name] = counts.get(name, 0) + 1
    shared = {n for n, c in counts.items() if c >= SHARED_SHARE * len(sets)}
    return frozenset(_narrowest(shared))


def _narrowest(kinds: set[str]) -> set[str]:
    """The most specific of the kinds (none of the others is below them) and their direct
    parents: a state capital column takes any city, but no state."""
    synsets = {name: wordnet.wordnet().synset(name) for name in kinds}
    above = {a.name() for s in synsets.values() for a in _ancestors(s)}
    narrow = [s for name, s in synsets.items() if name not in above]
    return {s.name() for s in narrow} | {p.name() for s in narrow for p in _parents(s)}


def _parents(synset) -> list:
    return synset.hypernyms() + synset.instance_hypernyms()


def _ancestors(synset) -> set:
    return set(synset.closure(_parents))


@functools.cache
def _specific_hypernyms(value: str) -> frozenset[str]:
    found = set()
    for synset in wordnet.noun_synsets(value):
        for path in synset.hypernym_paths():
            found |= {s.name() for s in path[SPECIFIC_DEPTH:-1]}
    return frozenset(found)
