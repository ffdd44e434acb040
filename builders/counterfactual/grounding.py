"""Grounding: the question spans that mention the columns and values the gold SQL uses.

A key column (``team_id``) is never grounded: the words that seem to name it name the
table it links to. Any other column is mentioned by a run of question words that match
its name tokens (split on ``_`` and case), compared by a light stem (``capacities`` ~
``capacity``, ``admitted`` ~ ``admit``), synonyms merged (``born`` ~ ``birth``), and
with compounds joined (``care unit`` ~ ``careunit``). The run must hold the column's
head noun (``length`` of ``length_of_stay``) or a word specific to it; a word that only
repeats the table's name or a unit (``cm``) grounds nothing. A value is mentioned where
its text occurs as whole words (also as a plural, a ``LIKE`` pattern without its
wildcards, a number with thousands separators or in words).

>>> from answerable.builders import sqlkit
>>> refs = sqlkit.references(sqlkit.parse(
...     "SELECT name, capacity FROM stadiums WHERE city = 'Leeds'"))
>>> g = ground("What are the names and capacities of stadiums in Leeds?", refs)
>>> [(m.text, m.concept) for m in g.mentions()]
[('names', 'stadiums.name'), ('capacities', 'stadiums.capacity'), ('Leeds', 'stadiums.city')]
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from answerable.builders.counterfactual.lexicon import (
    column_role,
    head_token,
    mention_word,
    name_tokens,
    singular,
)
from answerable.builders.drafting.text import whole_words
from answerable.builders.lexical.lexicon import (
    GENERIC_TOKENS,
    ID_TOKENS,
    NAME_STOPWORDS,
    UNITS,
)
from answerable.builders.sqlkit import Literal, Refs

_WORD = re.compile(r"[A-Za-z0-9]+")
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight")
_NUMBER_WORDS += ("nine", "ten", "eleven", "twelve")
VALUE_OPERATORS = frozenset({"eq", "in", "like", "neq", "gt", "gte", "lt", "lte", "between"})


@dataclass(frozen=True)
class Word:
    """One question word with its character offsets, its stem, and the text of the word
    after it (``after``; empty for the last word)."""

    text: str
    start: int
    end: int
    stem: str
    after: str = ""

    @cached_property
    def joined(self) -> str:
        """The stem of this word joined with the next (empty for the last word), worked
        out once per question rather than once per column looked for."""
        return stem(self.text + self.after) if self.after else ""


@dataclass(frozen=True)
class Mention:
    """A question span that names a column (``kind`` column) or one of its values."""

    start: int
    end: int
    text: str
    concept: str
    kind: str = "column"
    literal: Literal | None = None

    def overlaps(self, other: Mention) -> bool:
        """Whether the two spans share a character."""
        return self.start < other.end and other.start < self.end


@dataclass
class Grounding:
    """The mentions of one item's question: by column, and of its values."""

    question: str
    columns: dict[str, Mention] = field(default_factory=dict)
    values: list[Mention] = field(default_factory=list)

    def mentions(self) -> list[Mention]:
        """Every mention, in question order."""
        return sorted([*self.columns.values(), *self.values], key=lambda m: (m.start, m.end))

    def spans(self, tags: dict[int, str] | None = None) -> list[dict]:
        """The item's ``spans``: COL and VAL, with ``tags`` overriding by span start."""
        tags = tags or {}
        return [
            {
                "start": m.start,
                "end": m.end,
                "tag": tags.get(m.start, "COL" if m.kind == "column" else "VAL"),
                "text": m.text,
                "concept": m.concept,
            }
            for m in self.mentions()
        ]


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light stem: lower case, singular, ``-ed``/``-ing`` removed, synonyms merged."""
    low = singular(word.lower())
    for suffix in ("ing", "ed"):
        if low.endswith(suffix) and len(low) - len(suffix) >= 3:
            low = low[: -len(suffix)]
            if low[-1] == low[-2] and low[-1] not in "aeiouls":
                low = low[:-1]
            break
    return mention_word(low)


def same_stem(a: str, b: str) -> bool:
    """Stems equal, or equal but for a final ``e`` (``scor`` ~ ``score``)."""
    return a == b or a + "e" == b or b + "e" == a


def words(question: str) -> list[Word]:
    """The question's words with offsets."""
    texts = [(m.group(), m.start(), m.end()) for m in _WORD.finditer(question)]
    after = [text for text, _, _ in texts[1:]] + [""]
    return [
        Word(text, start, end, stem(text), then)
        for (text, start, end), then in zip(texts, after, strict=True)
    ]


def ground(question: str, refs: Refs) -> Grounding:
    """Mentions of the columns and the compared values of a qualified query's ``refs``."""
    found = words(question)
    grounding = Grounding(question)
    for literal in refs.literals:
        mention = find_value(question, literal, grounding.values)
        if mention is not None:
            grounding.values.append(mention)
    for column in refs.columns:
        mention = find_column(found, column)
        if mention is None or any(mention.overlaps(v) for v in grounding.values):
            continue
        clash = next((c for c in grounding.columns.values() if c.overlaps(mention)), None)
        if clash is None:
            grounding.columns[column] = mention
        elif mention.end - mention.start > clash.end - clash.start:
            del grounding.columns[clash.concept]
            grounding.columns[column] = mention
    return grounding


@lru_cache(maxsize=1 << 12)
def _column_stems(table: str, column: str) -> tuple[tuple[str, ...], frozenset[str], str, bool]:
    """The stems of a column's name tokens, the ones that may ground it alone, the stem
    of its head noun, and whether it is a key (never grounded)."""
    tokens = [t for t in name_tokens(column) if t not in NAME_STOPWORDS]
    stems = [stem(t) for t in tokens]
    head = head_token(column)
    table_stems = {stem(t) for t in name_tokens(table)}
    weak = GENERIC_TOKENS | UNITS | ID_TOKENS
    strong = {
        s for t, s in zip(tokens, stems, strict=True) if t not in weak and s not in table_stems
    }
    if head is not None:
        strong.add(stem(head))
    key = column_role(column) == "identifier"
    return tuple(stems), frozenset(strong), stem(head or ""), key


def find_column(found: list[Word], qualified_name: str) -> Mention | None:
    """The best run of question words that names column ``table.column``, or None."""
    table, _, column = qualified_name.rpartition(".")
    stems, strong, head, key = _column_stems(table, column)
    if key:
        return None  # a key names the entity it links to, which the question names as a table
    matcher = _matcher(stems)
    best, best_key = None, None
    for start in range(len(found)):
        if not _match_at(found, start, matcher)[0]:
            continue  # no word matches here: no run starts here
        end, matched = _extend(found, start, matcher)
        if not matched or not any(same_stem(m, s) for m in matched for s in strong):
            continue
        rank = (len(matched), any(same_stem(m, head) for m in matched), -start)
        if best_key is None or rank > best_key:
            best, best_key = (start, end), rank
    if best is None:
        return None
    first, last = found[best[0]], found[best[1] - 1]
    text = _text_between(found, best)
    return Mention(first.start, last.end, text, qualified_name)


def _text_between(found: list[Word], run: tuple[int, int]) -> str:
    return " ".join(w.text for w in found[run[0] : run[1]]) if run else ""


def _extend(found: list[Word], start: int, matcher: Matcher) -> tuple[int, set[str]]:
    """How far a run of matching words from ``start`` reaches, and the stems it matched.

    A stopword may sit inside a run (``length of stay``) but not end it.
    """
    matched: set[str] = set()
    index, end = start, start
    while index < len(found):
        step, stem_hit = _match_at(found, index, matcher)
        if step:
            matched.add(stem_hit)
            index += step
            end = index
        elif found[index].text.lower() in NAME_STOPWORDS and matched:
            index += 1
        else:
            break
    return end, matched


Matcher = tuple[dict[str, str], dict[str, str]]


@lru_cache(maxsize=1 << 12)
def _matcher(stems: tuple[str, ...]) -> Matcher:
    """A column's stems by the word stems that match them (:func:`same_stem`), the
    first in order for each; and the first stem of each pair of adjacent stems by the
    word stems that match the pair joined (``careunit`` for ``care``, ``unit``)."""
    single: dict[str, str] = {}
    for s in stems:
        for word in _matching(s):
            single.setdefault(word, s)
    joined: dict[str, str] = {}
    for a, b in itertools.pairwise(stems):
        for word in _matching(stem(a + b)):
            joined.setdefault(word, a)
    return single, joined


def _matching(s: str) -> tuple[str, ...]:
    """Every stem ``x`` with ``same_stem(x, s)``."""
    return (s, s + "e", s[:-1]) if s.endswith("e") else (s, s + "e")


def _match_at(found: list[Word], index: int, matcher: Matcher) -> tuple[int, str]:
    """Words consumed at ``index`` and the column stem they match (0 when none): the
    word itself, then the word joined with the next, then the word against two column
    tokens joined."""
    single, joined = matcher
    here = found[index].stem
    if here in single:
        return 1, single[here]
    if index + 1 < len(found):
        both = found[index].joined  # the word joined with the next
        if both in single:
            return 2, single[both]
    if here in joined:
        return 1, joined[here]
    return 0, ""


def value_texts(literal: Literal) -> list[str]:
    """How a value may be written in a question, most literal first."""
    if literal.is_string:
        text = str(literal.value)
        if literal.operator == "like":
            text = text.strip("%_ ")
        if not text:
            return []
        return [text, text + "s", text[:-1] + "ies" if text.endswith("y") else text + "es"]
    number = literal.value
    if isinstance(number, float) and not number.is_integer():
        return [repr(number)]
    whole = int(number)
    texts = [str(whole), f"{whole:,}"]
    if 0 <= whole < len(_NUMBER_WORDS):
        texts.append(_NUMBER_WORDS[whole])
    return texts


def occurrences(text: str, question: str) -> Iterator[tuple[int, int]]:
    """The spans where ``text`` occurs in ``question`` as whole words, ignoring case,
    left to right and not overlapping, as :func:`whole_words` finds them. When both are
    ASCII (``re``'s case-insensitive match is then equality after ``lower()``, and a word
    character is a letter, a digit or ``_``) they are found without compiling a pattern."""
    if not (text.isascii() and question.isascii()):
        yield from (match.span() for match in whole_words(text).finditer(question))
        return
    low, wanted, at = question.lower(), text.lower(), 0
    while (start := low.find(wanted, at)) >= 0:
        end = start + len(wanted)
        if not (_word_char(low, start - 1) or _word_char(low, end)):
            yield start, end
            at = end
        else:
            at = start + 1


def _word_char(text: str, index: int) -> bool:
    """Whether ``text[index]`` is an ASCII word character (False outside the text)."""
    return 0 <= index < len(text) and (text[index].isalnum() or text[index] == "_")


def find_value(question: str, literal: Literal, taken: list[Mention]) -> Mention | None:
    """The first span of ``question`` that writes ``literal``'s value, clear of ``taken``."""
    if literal.column is None or literal.operator not in VALUE_OPERATORS:
        return None
    for text in value_texts(literal):
        for start, end in occurrences(text, question):
            mention = Mention(start, end, question[start:end], literal.column, "value", literal)
            if not any(mention.overlaps(t) for t in taken):
                return mention
    return None
