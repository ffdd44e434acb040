"""Singular and plural nouns through ``inflect``, the one ``singular()`` of the project.

``inflect`` knows the irregular and classical forms (``diagnoses`` -> ``diagnosis``,
``criteria`` -> ``criterion``, ``people`` -> ``person``); short words and words that end
like a singular (``status``, ``class``, ``analysis``) are kept as they are, because
``inflect`` reads ``bus`` or ``this`` as plurals.

>>> [singular(w) for w in ("patients", "diagnoses", "stays", "cities", "status", "class")]
['patient', 'diagnosis', 'stay', 'city', 'status', 'class']
>>> [singular(w) for w in ("matches", "capacities", "is", "data", "series")]
['match', 'capacity', 'is', 'data', 'series']
>>> plural("city"), plural("diagnosis")
('cities', 'diagnoses')
"""

from __future__ import annotations

import functools
import re
import sys

KEEP = frozenset({"data", "media", "has", "was", "this", "yes", "gas", "news", "sales"})
"""Words kept as they are: mass nouns in schema names and words inflect misreads."""


@functools.cache
def singular(word: str) -> str:
    """The singular of a noun, lower-case words kept in their case; the word itself when
    it is not a plural."""
    low = word.lower()
    if len(low) <= 3 or low in KEEP or low.endswith(("ss", "us", "is")) or not low.isalpha():
        return word
    found = engine().singular_noun(low)
    if not found:
        return word
    return found if word.islower() else word[: len(found)] if word.startswith(found) else found


@functools.cache
def plural(word: str) -> str:
    """The plural of a singular noun (``city`` -> ``cities``)."""
    return engine().plural_noun(word)


def with_article(before: str, phrase: str) -> str:
    """``before`` with the indefinite article at its end ("with an ") made the one
    ``phrase`` takes ("with a " before "ticket price", "with an " before "hour"), or
    left out before a plural ("with home goals"); ``before`` as it is when it ends in no
    article."""
    found = re.search(r"\b(a|an)(\s+)$", before, flags=re.IGNORECASE)
    if found is None:
        return before
    last = phrase.split()[-1] if phrase.split() else phrase
    if singular(last) != last:
        return before[: found.start()]
    article = engine().a(phrase).split()[0]
    if found.group(1)[0].isupper():
        article = article.capitalize()
    return before[: found.start()] + article + found.group(2)


@functools.cache
def engine():
    """``inflect``'s engine, imported on first use (a command that never inflects a word
    does not pay for it; a build makes it before forking its workers)."""
    return _import_inflect().engine()


def _import_inflect():
    """``inflect``, imported without ``typeguard``'s instrumentation of its methods.

    ``inflect`` decorates its engine's methods with ``@typechecked``, which re-parses the
    module's source once per method: 1.7 CPU seconds at every start of a process, for
    checks that only catch a caller passing a non-string (ours pass non-empty strings).
    The decorator is swapped for one that returns the function during the import."""
    if "inflect" in sys.modules:
        return sys.modules["inflect"]
    import typeguard

    checked = typeguard.typechecked
    typeguard.typechecked = _unchecked
    try:
        import inflect
    finally:
        typeguard.typechecked = checked
    return inflect


def _unchecked(target=None, **_options):
    """``@typechecked`` and ``@typechecked(...)`` without the checks."""
    return _unchecked if target is None else target
