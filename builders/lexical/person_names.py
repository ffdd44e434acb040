"""People's first and last names, from Faker's English name lists (no download).

Used to tell which part of a name a value can be: 'Kyle' is a first name and no last
name, so ``first_name``/``last_name`` are not two readings of "named Kyle"; and whether
a column's values are people's names at all (a music store's artists are mostly bands:
'AC/DC', 'Aerosmith').

>>> name_parts("Kyle")
frozenset({'first'})
>>> sorted(name_parts("Taylor"))
['first', 'last']
"""

from __future__ import annotations

from functools import cache


@cache
def _lists() -> tuple[frozenset[str], frozenset[str]]:
    from faker.providers.person.en_US import Provider  # Faker's import is a tenth of a second

    first = {n.lower() for n in Provider.first_names}
    last = {n.lower() for n in Provider.last_names}
    return frozenset(first), frozenset(last)


def name_parts(value: str) -> frozenset[str]:
    """Which parts of a person's name the value is known as (``first``, ``last``);
    empty when the lists know neither."""
    first, last = _lists()
    low = value.strip().lower()
    return frozenset(p for p, names in (("first", first), ("last", last)) if low in names)


def looks_like_person(value: str) -> bool:
    """Whether a full name starts with a known first name ('Eric Clapton', not 'Queen')."""
    words = value.split()
    return len(words) >= 2 and "first" in name_parts(words[0])
