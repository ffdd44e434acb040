"""Qualifier pairs: which make two readings of a noun, and which do not.

A *contrast* is a pair of qualifiers that splits one noun into two things a person could
mean by the bare noun (``admission``/``discharge`` location, ``systolic``/``diastolic``
pressure, ``first``/``last`` name of a person, ``home``/``away`` score of a match). Each
is curated with the head nouns it applies to and, where it needs one, the kind of table
it applies in (``home``/``away`` only where the table is about matches; ``short``/``long``
name only for things that have an official long name).

Other qualifiers are *not* second readings, and :func:`why_not` names which rule they
break:

- ``default-marked``: one member is what the bare noun means (``primary``/``secondary``,
  ``main``/``other``, ``old``/``new``, ``current``/``previous``, ``local``/``utc``);
- ``ordinal``: ordinals of one thing (``first``/``second`` earnings, minutes, values);
- ``range``: the bounds of a single figure (``minimum``/``maximum`` height);
- ``parts-of-total``: parts that add up to what the noun means (``urban``/``rural``
  population, ``land``/``water`` area);
- ``no-contrast``: no curated contrast for this noun and table (``registered``/``reported``
  year, ``short``/``long`` name of a person).

A default-marked pair is a candidate only when the question's own words make both
readings live (:func:`both_live`: it says ``either`` or ``whichever``).
"""

from __future__ import annotations

from dataclasses import dataclass

from answerable.builders.lexical.inflection import singular
from answerable.builders.lexical.lexicon import PHONE_WORDS


@dataclass(frozen=True)
class Contrast:
    """Two qualifiers that make two readings of any of ``heads``; ``tables`` (words of
    the table's name, singular) limits where it applies; ``people`` True: only tables of
    people, False: only tables of things."""

    pair: tuple[str, str]
    heads: frozenset[str]
    tables: frozenset[str] = frozenset()
    people: bool | None = None

    def applies(self, head: str, table_words: set[str], person_table: bool) -> bool:
        """Whether the contrast splits ``head`` in a table with these words."""
        if head not in self.heads:
            return False
        if self.people is not None and self.people != person_table:
            return False
        return not self.tables or bool(self.tables & table_words)


def _c(pair: str, heads: str, tables: str = "", people: bool | None = None) -> Contrast:
    return Contrast(
        tuple(pair.split()), frozenset(heads.split()), frozenset(tables.split()), people
    )


NAMED_THINGS = (
    "country countries museum airport airline company department course tournament "
    "tourney stadium team university college organization organisation club league"
)
"""Things that have a short name and an official long one (``Germany``, ``Federal
Republic of Germany``); people, cities, rivers and documents do not."""
MATCH_TABLES = "match game fixture"
STAY_TABLES = "admission stay hospitalization hospitalisation visit encounter"
SPAN_TABLES = (
    "battle war tournament tourney season stay employment contract project exhibition "
    "festival campaign membership subscription prescription lease loan"
)

CONTRASTS = (
    _c("first last", "name", people=True),
    _c("short long", "name title", NAMED_THINGS),
    _c("short long", "title", "diagnosis icd procedure"),
    _c("home away", "score goal team", MATCH_TABLES),
    _c("admission discharge", "date time location", STAY_TABLES),
    _c("admit discharge", "time date", STAY_TABLES),
    _c("start end", "date time year", SPAN_TABLES),
    _c("start stop", "date time", "prescription medication"),
    _c("first last", "careunit unit ward", STAY_TABLES + " icu"),
    _c("systolic diastolic", "pressure bp"),
    _c("gross net", "earnings earning income salary bonus amount revenue profit pay wage"),
    _c("gross net", "total", "invoice order bill purchase sale"),
    _c("list sale", "price"),
    _c("curb gross", "weight", "car vehicle truck"),
    _c("personal work", "email mail"),
    _c("home mobile", "phone telephone tel"),
    _c("home work", PHONE_WORDS),
    _c("billing shipping", "address", "invoice order customer purchase"),
    _c("critic audience", "rating"),
    _c("nominal real", "gnp gdp"),
    _c("nominal ppp", "gnp gdp gni"),
    _c("city highway", "mpg mileage economy", "car vehicle"),
    _c("gross net", "tonnage", "ship vessel boat"),
    _c("singles doubles", "ranking rank point", "ranking"),
    _c("gross net", "horsepower hp", "car vehicle engine"),
    _c("school letter", "grade", "student highschooler pupil"),
    _c("urban metropolitan", "population", "city town"),
    _c("highest lowest", "elevation point altitude", "highlow state country region mountain"),
    _c("birth residence", "country", people=True),
    _c("birth sporting", "nationality", "player footballer athlete"),
    _c("surface catchment", "area", "lake river basin"),
    _c("low high", "normal"),
)
"""The curated contrasts, best first within a head."""

DEFAULT_MARKED = frozenset(
    [
        "primary",
        "secondary",
        "tertiary",
        "main",
        "other",
        "old",
        "new",
        "current",
        "previous",
        "former",
        "legacy",
        "original",
        "revised",
        "actual",
        "estimated",
        "local",
        "utc",
        "server",
        "registered",
        "reported",
        "verified",
        "confirmed",
        "suspected",
        "provisional",
        "disputed",
    ]
)
"""Qualifiers of which one member is the default reading of the bare noun, or that only
say how a value was recorded (``registered``/``reported``)."""
ORDINALS = frozenset(["first", "second", "third", "fourth", "1st", "2nd", "3rd"])
RANGE = frozenset(["minimum", "maximum", "median", "min", "max", "mean", "average"])
PARTS = frozenset(
    {
        frozenset({"urban", "rural"}),
        frozenset({"land", "water"}),
        frozenset({"male", "female"}),
        frozenset({"seating", "standing"}),
        frozenset({"first", "second"}),
        frozenset({"home", "away"}),
    }
)
"""Pairs that add up to the bare noun when the noun is a total (``home``/``away``
attendance); a contrast above overrides this where it applies (match scores)."""
LIVE_WORDS = frozenset({"either", "whichever"})
NAME_PARTS = frozenset(["first", "last", "middle", "given", "family", "sur", "nick", "l", "f"])
"""Words that already make a name one part of a person's name (``LName`` is the last)."""


def contrasts_for(head: str, table_words: set[str], person_table: bool) -> list[tuple[str, str]]:
    """The curated contrasts that split ``head`` in such a table, best first."""
    heads = {head.lower(), singular(head.lower())}
    return [
        c.pair for c in CONTRASTS if any(c.applies(h, table_words, person_table) for h in heads)
    ]


def is_contrast(
    pair: tuple[str, str], head: str, table_words: set[str], person_table: bool
) -> bool:
    """Whether ``pair`` (either order) is a curated contrast for ``head`` here; by the
    singular of each word (a name's words are read singular: ``singles`` as ``single``)."""
    wanted = {singular(p.lower()) for p in pair}
    found = contrasts_for(head, table_words, person_table)
    return any({singular(w) for w in p} == wanted for p in found)


def why_not(pair: tuple[str, str]) -> str:
    """The rule a qualifier pair breaks: ``default-marked``, ``ordinal``, ``range``,
    ``parts-of-total`` or ``no-contrast``."""
    words = {p.lower() for p in pair}
    if words & DEFAULT_MARKED:
        return "default-marked"
    if frozenset(words) in PARTS and words & ORDINALS:
        return "ordinal"
    if frozenset(words) in PARTS:
        return "parts-of-total"
    if words & ORDINALS:
        return "ordinal"
    if words & RANGE:
        return "range"
    return "no-contrast"


def both_live(pair: tuple[str, str], question_words: set[str]) -> bool:
    """Whether the question's own words make both readings of a default-marked pair live:
    it says ``either`` or ``whichever`` (naming one qualifier would settle it)."""
    return bool(question_words & LIVE_WORDS) and not question_words & {p.lower() for p in pair}
