"""Words about columns: name tokens, roles and synonym checks.

A column's name is split into tokens (``home_score`` -> ``home``, ``score``;
``FirstName`` -> ``first``, ``name``); its *role* (measure, count, date, time, name,
code, category, flag, identifier) picks the fill of an added column. The word lists
(synonyms, function words, units, key tokens) are in :mod:`answerable.builders.lexical.lexicon`;
the qualifier pairs that make near-synonyms in :mod:`answerable.builders.lexical.contrasts`, and
``singular()`` in :mod:`answerable.builders.lexical.inflection`.

:func:`canonical` is the one normal form behind both synonym checks: two names that
normalize to the same token set are *exact synonyms* (``length_of_stay`` and
``stay_length``; ``players.player_name`` and ``players.name``; ``actual_price`` and
``price``).

>>> name_tokens("FirstName"), name_tokens("length_of_stay")
(['first', 'name'], ['length', 'of', 'stay'])
>>> is_exact_synonym("date_of_birth", "birth_date")
True
>>> is_exact_synonym("home_score", "away_score")
False
"""

from __future__ import annotations

import functools
import re

from answerable.builders.lexical.inflection import singular
from answerable.builders.lexical.lexicon import (
    COLUMN_SYNONYMS,
    ID_TOKENS,
    MENTION_SYNONYMS,
    NAME_STOPWORDS,
    NEUTRAL,
    PERSON_TABLES,
    UNITS,
)

_CANON = {word: group[0] for group in COLUMN_SYNONYMS for word in group}
_MENTION = {word: group[0] for group in MENTION_SYNONYMS for word in group}

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_NUMERIC_TYPES = ("INT", "REAL", "FLOA", "DOUB", "NUM", "DEC")
_DATE_WORDS = frozenset({"date", "day", "dob", "birth", "year", "month", "born", "death"})
_TIME_WORDS = frozenset({"time", "datetime", "timestamp", "ts", "hour"})
_COUNT_WORDS = frozenset({"count", "number", "num", "cards", "goals", "points", "visits"})
_NAME_WORDS = frozenset({"name", "title", "label", "surname", "firstname", "lastname"})
_CODE_WORDS = frozenset({"code", "abbreviation", "abbr", "symbol", "iso", "postal", "zip"})
_FLAG_PREFIXES = ("is", "has", "was", "can")


def name_tokens(name: str) -> list[str]:
    """Lower-case tokens of a column or table name, split on ``_``, spaces and case."""
    return list(_name_tokens(name))


@functools.lru_cache(maxsize=1 << 14)
def _name_tokens(name: str) -> tuple[str, ...]:
    """:func:`name_tokens`, split once per name (a build asks about the same few
    hundred names tens of thousands of times)."""
    tokens = []
    for part in re.split(r"[\s_\-.]+", name):
        tokens += [t.lower() for t in _CAMEL.findall(part)]
    return tuple(tokens)


def canon_word(word: str) -> str:
    """One word in its synonym group's spelling (``sex`` -> ``gender``)."""
    return _CANON.get(word, word)


def mention_word(word: str) -> str:
    """One word in its looser mention group's spelling (``goal`` -> ``score``)."""
    return _MENTION.get(word, word)


def content_tokens(name: str) -> list[str]:
    """Name tokens without stopwords, in order."""
    return [t for t in name_tokens(name) if t not in NAME_STOPWORDS]


def head_token(name: str) -> str | None:
    """The noun a column is about: ``length`` of ``length_of_stay``, ``score`` of
    ``home_score``, ``height`` of ``height_cm``; None for a bare identifier."""
    tokens = name_tokens(name)
    if "of" in tokens[1:]:
        return tokens[tokens.index("of") - 1]
    content = [t for t in tokens if t not in NAME_STOPWORDS | UNITS | ID_TOKENS]
    return content[-1] if content else None


@functools.lru_cache(maxsize=1 << 14)
def column_role(name: str, declared_type: str = "", primary_key: bool = False) -> str:
    """The role of a column, from its name tokens and declared type (worked out once per
    name and type: the edits ask about every column of a schema again and again)."""
    tokens = set(name_tokens(name))
    kind = (declared_type or "").upper()
    if primary_key or (tokens & ID_TOKENS and head_token(name) is None):
        return "identifier"
    if tokens & ID_TOKENS and name_tokens(name)[-1] in ID_TOKENS:
        return "identifier"
    if name_tokens(name)[0] in _FLAG_PREFIXES or "BOOL" in kind:
        return "flag"
    if tokens & _TIME_WORDS or "TIME" in kind:
        return "time"
    if tokens & _DATE_WORDS or "DATE" in kind:
        return "date"
    if tokens & _CODE_WORDS:
        return "code"
    if tokens & _NAME_WORDS:
        return "name"
    if any(t in kind for t in _NUMERIC_TYPES):
        return "count" if tokens & _COUNT_WORDS else "measure"
    return "category"


def is_person_table(table: str) -> bool:
    """Whether a table's rows are people (``players``, ``Customer``)."""
    return any(singular(t) in PERSON_TABLES for t in name_tokens(table))


def spell_like(name: str, qualifier: str) -> str:
    """``qualifier`` put before ``name`` in the name's own style (after a flag's ``is_``).

    >>> spell_like("home_score", "minimum"), spell_like("UnitPrice", "list_sale")
    ('minimum_home_score', 'ListSaleUnitPrice')
    >>> spell_like("FOOD_TYPE", "primary"), spell_like("is_penalty", "confirmed")
    ('PRIMARY_FOOD_TYPE', 'is_confirmed_penalty')
    """
    prefix, _, rest = name.partition("_")
    if prefix.lower() in _FLAG_PREFIXES and rest:
        return f"{prefix}_{spell_like(rest, qualifier)}"
    if name.isupper() and len(name) > 1:
        return f"{qualifier.upper()}_{name}"
    if "_" not in name and any(c.isupper() for c in name):
        return "".join(part.title() for part in qualifier.split("_")) + name
    return f"{qualifier}_{name}"


def canonical(name: str, table: str | None = None) -> frozenset[str]:
    """The normal form of a column name: content tokens, singular, synonyms merged,
    neutral qualifiers, units and the table's own name dropped."""
    table_words = {canon_word(singular(t)) for t in name_tokens(table)} if table else set()
    words = set()
    for token in content_tokens(name):
        word = singular(token)
        if word in NEUTRAL or word in UNITS:
            continue
        words.add(canon_word(word))
    without_table = words - table_words
    return frozenset(without_table or words)


def is_exact_synonym(a: str, b: str, table: str | None = None) -> bool:
    """Whether two column names of one table mean the same thing: equal normal forms
    (:func:`canonical`), or one is the other plus words of the table's name
    (``player_name`` and ``name`` in ``players``, but not ``CampusFee`` and ``Campus``
    in ``csu_fees``: the longer name's head noun must remain). Keys are synonyms only
    when their words are the same (``customer_id`` and ``policy_id`` in a link table are
    not), and a name with no content word is nobody's synonym.
    """
    full_a, full_b = canonical(a), canonical(b)
    if not full_a - ID_TOKENS or not full_b - ID_TOKENS:
        return False
    if full_a == full_b:
        return True
    keys = name_tokens(a)[-1] in ID_TOKENS or name_tokens(b)[-1] in ID_TOKENS
    if keys or table is None or not (full_a <= full_b or full_b <= full_a):
        return False
    longer = a if len(full_a) > len(full_b) else b
    head = canon_word(singular(head_token(longer) or ""))
    rest_a, rest_b = canonical(a, table), canonical(b, table)
    return rest_a == rest_b and head in rest_a


def shares_meaning(a: str, b: str, table: str | None = None) -> bool:
    """Whether two names share a content word after normalization (``home_score`` and
    ``away_score`` do): the dropped column is then *related* to one that remains."""
    return bool(canonical(a, table) & canonical(b, table))
