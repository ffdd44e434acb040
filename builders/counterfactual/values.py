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
>>> next(fresh_candidates("players", "nationality", "Brazil", rng, 1)) != "Brazil"
True
>>> list(fresh_candidates("players", "preferred_foot", "left", rng, 2, ["both", "left", "right"]))
[]
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import TYPE_CHECKING

from answerable.builders.counterfactual import gate
from answerable.builders.counterfactual.lexicon import is_person_table, name_tokens, singular
from answerable.builders.lexical import wordnet

if TYPE_CHECKING:
    from faker import Faker

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
def english_faker() -> Faker:
    """One Faker for the process's made-up values; every user seeds it
    (``seed_instance``) before each draw, so what it gives never depends on who drew
    before."""
    from faker import Faker  # a tenth of a second: with the first value made

    return Faker("en_US")


def fresh_candidates(
    table: str,
    column: str,
    original: str,
    rng: random.Random,
    n: int,
    known: list[str] = (),
) -> Iterator[str]:
    """Up to ``2 n`` stand-ins for ``original`` in ``table.column``, drawn with ``rng``:
    ``n`` from the fitting provider or shape, then ``n`` real words of the kind of
    ``known`` (some of the column's values), for columns whose every provider value is
    taken (US states) or that have no provider (drugs). They are drawn as they are asked
    for: a caller that stops at the first that fits draws no more (the WordNet words are
    looked up only once every provider value is refused), and draws nothing else from
    :func:`english_faker` while it reads them."""
    fake = english_faker()
    fake.seed_instance(rng.getrandbits(64))
    known = [k for k in known if k]
    draw = _drawer(table, column, original, fake)
    drawn = (_same_case(original, draw()) for _ in range(n if draw else 0))
    kin = (_same_case(original, word) for word in _later(kindred, known, original, rng, n, column))
    seen = set()
    for value in itertools.chain(drawn, kin):
        if value not in seen:
            seen.add(value)
            yield value


def _later(function: Callable[..., list], *arguments) -> Iterator:
    """The values of ``function(*arguments)``, called when the first is asked for."""
    yield from function(*arguments)


def kindred(
    known: list[str], original: str, rng: random.Random, n: int, column: str = ""
) -> list[str]:
    """Up to ``n`` things WordNet files under the kind of the column's values
    (:func:`gate.column_kinds`), named by their first word, none of whose names the
    column holds ('Wyoming' is held, so neither 'WY' nor 'Equality State' is fresh); the
    kind must be one the column's name says (a drug column's medicines; a mountain
    column's values are not persons though WordNet knows 'whitney' as one). None when
    WordNet is absent or knows too few of the values."""
    if not wordnet.available():
        return []
    said = frozenset(singular(t) for t in name_tokens(column))
    held = {k.lower() for k in known} | {original.lower()}
    sample = tuple(sorted(set(known))[: gate.SAMPLE])
    like = gate.like_known(known)
    for broader in (False, True):  # the US states are all held: a state elsewhere
        groups = kind_groups(sample, said, broader)
        pool = [_bare(g[0], said) for g in groups if not {m.lower() for m in g} & held]
        pool = [p for p in pool if p and like(_same_case(original, p))]
        if pool:
            return rng.sample(pool, min(n, len(pool)))
    return []


@cache
def kind_groups(
    known: tuple[str, ...], said: frozenset[str], broader: bool = False
) -> tuple[tuple[str, ...], ...]:
    """The names of each WordNet noun at the bottom of the narrowest kinds of these
    values (a medicine, not any drug: no 'White Wine' among prescriptions; Ramipril, not
    'alpha blocker'), or with ``broader`` of their parents (an American state's: any
    state), that the column's words ``said`` name, sorted; only named things
    (instances: the Danube, Utah) when the kind has any ('free state' is no state)."""
    kinds = [wordnet.wordnet().synset(name) for name in gate.column_kinds(known)]
    above = {a for kind in kinds for a in kind.closure(_parents)}
    leaves = [
        synset
        for kind in kinds
        if (kind in above) == broader and said & _kind_words(kind)
        for synset in kind.closure(_children)
        if not _children(synset)
    ]
    named = [s for s in leaves if s.instance_hypernyms()]  # Utah, the Danube
    groups = set()
    for synset in named or leaves:  # things by name when there are any, else kinds
        words = (w.replace("_", " ") for w in synset.lemma_names())
        names = tuple(w for w in words if w[:1].isalpha() and " of " not in w)
        if names:
            groups.add(names)
    return tuple(sorted(groups))


def _bare(name: str, said: frozenset[str]) -> str:
    """The name without a last word the column's name says: the river column holds
    'mississippi', and questions say 'the mississippi river', so 'Uruguay River' is
    written 'Uruguay'."""
    words = name.split()
    return " ".join(words[:-1]) if len(words) > 1 and words[-1].lower() in said else name


def _kind_words(kind) -> set[str]:
    """The words naming a kind and its ancestors (``medicine``, ``drug``, ``agent`` ...)."""
    names = [n for s in [kind, *kind.closure(_parents)] for n in s.lemma_names()]
    return {w for n in names for w in n.lower().split("_")}


def _children(synset) -> list:
    return synset.hyponyms() + synset.instance_hyponyms()


def _parents(synset) -> list:
    return synset.hypernyms() + synset.instance_hypernyms()


def _drawer(table: str, column: str, original: str, fake: Faker) -> Callable[[], str] | None:
    words = {singular(t) for t in name_tokens(column)}
    if "county" in words:  # Faker has no counties: a made-up town's
        return lambda: f"{fake.city()} County"
    if words & {"name", "title", "label"} and is_person_table(table):
        return fake.name
    if words <= {"name", "title", "label"}:  # a bare name: named by the table's kind
        words = {singular(t) for t in name_tokens(table)}
        if words & {"restaurant", "cafe", "bar", "diner", "shop", "store"}:
            return lambda: f"{fake.last_name()}'s"  # Denny's, Nunez's
    for keys, provider in _PROVIDERS:
        if words & keys:
            return getattr(fake, provider)
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
