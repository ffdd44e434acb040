"""Fresh values: plausible stand-ins for a literal that its column does not hold.

The Faker provider is chosen by the column's words (a city, a country, a person's or a
company's name ...); codes, dates and seasons keep the literal's shape (``78552`` ->
five digits, ``IV`` -> two capitals, ``2022-23`` -> another season); any other word is
a blend of two of the column's own values (``Furosemide`` and ``Vancomycin`` give
``Furomycin``), which reads like the column's values without being one. The case style
of the original is kept, so ``arizona`` is replaced by a lower-case state.

>>> rng = random.Random(3)
>>> fresh_candidates("players", "nationality", "Brazil", rng, 1)[0] != "Brazil"
True
>>> blend(["Furosemide", "Vancomycin"], random.Random(1))
'Furosemycin'
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from functools import cache

from faker import Faker

from answerable.builders.counterfactual.lexicon import is_person_table, name_tokens, singular

_PROVIDERS: tuple[tuple[frozenset, str], ...] = (
    (frozenset({"city", "town"}), "city"),
    (frozenset({"state", "province"}), "state"),
    (frozenset({"country", "nationality", "nation"}), "country"),
    (frozenset({"street", "address"}), "street_name"),
    (frozenset({"company", "team", "club", "restaurant", "employer", "brand"}), "company"),
    (frozenset({"language"}), "language_name"),
    (frozenset({"job", "occupation", "profession"}), "job"),
    (frozenset({"color", "colour"}), "color_name"),
)
_SEASON = re.compile(r"\d{4}-\d{2}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_CODE = re.compile(r"[A-Z0-9][A-Z0-9\-./]{0,7}")


@cache
def _faker() -> Faker:
    return Faker("en_US")


def fresh_candidates(
    table: str,
    column: str,
    original: str,
    rng: random.Random,
    n: int,
    known: list[str] = (),
) -> list[str]:
    """Up to ``2 n`` stand-ins for ``original`` in ``table.column``, drawn with ``rng``:
    ``n`` from the fitting provider, then ``n`` blends of ``known`` (some of the
    column's values), for columns whose every provider value is taken (US states)."""
    fake = _faker()
    fake.seed_instance(rng.getrandbits(64))
    known = [k for k in known if k]
    draw = _drawer(table, column, original, fake, rng, known)
    drawn = [_same_case(original, draw()) for _ in range(n)]
    if len(set(known)) >= 2:
        drawn += [_same_case(original, blend(known, rng)) for _ in range(n)]
    return list(dict.fromkeys(drawn))


def blend(values: list[str], rng: random.Random) -> str:
    """The start of one value joined to the end of another, cut next to a vowel."""
    first, second = rng.sample(sorted(set(values)), 2)
    return _head(first) + _tail(second)


def _head(word: str) -> str:
    cut = max(2, len(word) // 2)
    while cut < len(word) - 1 and word[cut - 1].lower() not in "aeiou":
        cut += 1
    return word[:cut]


def _tail(word: str) -> str:
    cut = len(word) // 2
    while cut > 1 and word[cut].lower() in "aeiou":
        cut -= 1
    return word[cut:].lower() if word[:1].isupper() else word[cut:]


def _drawer(
    table: str, column: str, original: str, fake: Faker, rng: random.Random, known: list[str]
) -> Callable[[], str]:
    words = {singular(t) for t in name_tokens(column)}
    for keys, provider in _PROVIDERS:
        if words & keys:
            return getattr(fake, provider)
    if words & {"name", "title", "label"} and is_person_table(table):
        return fake.name
    if _SEASON.fullmatch(original):
        return lambda: _season(fake)
    if _DATE.fullmatch(original):
        return lambda: fake.date()
    if _CODE.fullmatch(original):
        return lambda: fake.bothify(re.sub(r"[A-Z]", "?", re.sub(r"\d", "#", original))).upper()
    if len(set(known)) >= 2:
        return lambda: blend(known, rng)
    count = max(1, len(original.split()))
    return lambda: " ".join(fake.word() for _ in range(count))


def _season(fake: Faker) -> str:
    year = int(fake.year())
    return f"{year}-{(year + 1) % 100:02d}"


def _same_case(original: str, value: str) -> str:
    if original.islower():
        return value.lower()
    if original.isupper() and len(original) > 1:
        return value.upper()
    if original.istitle():
        return value.title()
    return value
