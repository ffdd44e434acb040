"""Fresh values: plausible stand-ins for a literal that its column does not hold.

A value written must read as a real value of its column. The Faker provider is chosen by
the column's words (a city, a country, a person's or a company's name ...); codes, dates
and seasons keep the literal's shape (``78552`` -> five digits, ``IV`` -> two capitals,
``2022-23`` -> another season); any other column gets real words of the kind WordNet
gives its values (:func:`kindred`: a drug column's values are drugs, so another drug;
a state capital column's, cities). A column WordNet cannot place gets no stand-in: a
blend of two of its values ('Governmecare', 'rith' for 'left') reads as a typo, not as
a value nobody has. The case style of the original is kept, so ``arizona`` is replaced by
a lower-case state.

>>> rng = random.Random(3)
>>> fresh_candidates("players", "nationality", "Brazil", rng, 1)[0] != "Brazil"
True
>>> fresh_candidates("players", "preferred_foot", "left", rng, 2, ["both", "left", "right"])
[]
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from functools import cache

from faker import Faker

from answerable.builders.counterfactual import gate
from answerable.builders.counterfactual.lexicon import is_person_table, name_tokens, singular
from answerable.builders.lexical import wordnet

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
    ``n`` from the fitting provider or shape, then ``n`` real words of the kind of
    ``known`` (some of the column's values), for columns whose every provider value is
    taken (US states) or that have no provider (drugs)."""
    fake = _faker()
    fake.seed_instance(rng.getrandbits(64))
    known = [k for k in known if k]
    draw = _drawer(table, column, original, fake)
    drawn = [_same_case(original, draw()) for _ in range(n)] if draw else []
    drawn += [_same_case(original, word) for word in kindred(known, original, rng, n)]
    return list(dict.fromkeys(drawn))


def kindred(known: list[str], original: str, rng: random.Random, n: int) -> list[str]:
    """Up to ``n`` words WordNet files under the kind of the column's values
    (:func:`gate.column_kinds`) that the column does not hold; none when WordNet is
    absent or knows too few of the values to say their kind."""
    if not wordnet.available():
        return []
    members = kind_members(tuple(sorted(set(known))[: gate.SAMPLE]))
    held = {k.lower() for k in known} | {original.lower()}
    pool = [m for m in members if m.lower() not in held]
    return rng.sample(pool, min(n, len(pool)))


@cache
def kind_members(known: tuple[str, ...]) -> tuple[str, ...]:
    """The words of every WordNet noun below the narrowest kinds of these values (a
    medicine, not any drug: no 'White Wine' among prescriptions), sorted."""
    kinds = [wordnet.wordnet().synset(name) for name in gate.column_kinds(known)]
    above = {a for kind in kinds for a in kind.closure(_parents)}
    found = set()
    for kind in kinds:
        if kind in above:
            continue
        for synset in kind.closure(_children):
            words = (w.replace("_", " ") for w in synset.lemma_names())
            found |= {w for w in words if w[:1].isalpha() and " of " not in w}  # a name
    return tuple(sorted(found))


def _children(synset) -> list:
    return synset.hyponyms() + synset.instance_hyponyms()


def _parents(synset) -> list:
    return synset.hypernyms() + synset.instance_hypernyms()


def _drawer(table: str, column: str, original: str, fake: Faker) -> Callable[[], str] | None:
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
    return None


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
