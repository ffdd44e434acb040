"""Words in questions and schema names: the small text helpers drafting shares.

Everything here is pure: tokens, singular forms (``singular`` is the lexical module's),
phrases found on word boundaries, and schema names turned into words (``length_of_stay``
-> ``length of stay``).
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def words(text: str) -> list[str]:
    """Lower-case words of ``text`` (letters and digits).

    >>> words("What's the ICU length-of-stay?")
    ['what', 's', 'the', 'icu', 'length', 'of', 'stay']
    """
    return _WORD.findall(text.lower())


def name_words(name: str) -> list[str]:
    """The words of a schema name: ``firstCareUnit`` and ``first_care_unit`` alike.

    >>> name_words("firstCareUnit"), name_words("length_of_stay")
    (['first', 'care', 'unit'], ['length', 'of', 'stay'])
    """
    return list(_name_words(name))


@lru_cache(maxsize=1 << 12)
def _name_words(name: str) -> tuple[str, ...]:
    """:func:`name_words`, found once per name: a schema's few names are asked about
    for every parent (a caller may change the list it gets, so each gets its own)."""
    return tuple(words(_CAMEL.sub(" ", name).replace("_", " ")))


def humanize(name: str) -> str:
    """A schema name as words: ``icu_stays`` -> ``icu stays``."""
    return " ".join(name_words(name))


def find_phrase(text: str, phrase: str) -> tuple[int, int] | None:
    """The ``(start, end)`` of ``phrase`` in ``text`` on word boundaries, case-insensitive.

    >>> find_phrase("Which recent admissions?", "Recent")
    (6, 12)
    >>> find_phrase("Which recently?", "recent") is None
    True
    """
    phrase = phrase.strip()
    if not phrase:
        return None
    match = whole_words(phrase).search(text)
    return (match.start(), match.end()) if match else None


@lru_cache(maxsize=1 << 14)
def whole_words(phrase: str) -> re.Pattern:
    """``phrase`` as whole words, case-insensitive, compiled once per phrase (``re``'s own
    cache keeps 512 patterns; a build asks about many more values)."""
    return re.compile(rf"(?<![\w]){re.escape(phrase)}(?![\w])", re.IGNORECASE)


def normalize(text: str) -> str:
    """Text for comparison: lower case, words only, single spaces."""
    return " ".join(words(text))


def capitalize(text: str) -> str:
    """``text`` with its first letter upper-cased and the rest left alone."""
    return text[:1].upper() + text[1:]
