"""Seeded draws shared by the demo generators: no global random state, no clock."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta

from faker import Faker

from answerable.kernel.ids import rng_for

STEP = "demo"


def table_rng(seed: int, table: str) -> random.Random:
    """The random generator private to one demo table."""
    return rng_for(seed, STEP, table)


def faker_for(seed: int, table: str, locale: str = "en_US") -> Faker:
    """A Faker instance seeded for one table (and locale), independent of every other."""
    fake = Faker(locale)
    fake.seed_instance(rng_for(seed, STEP, f"{table}/faker/{locale}").getrandbits(64))
    return fake


def pick(rng: random.Random, weights: Mapping[str, float]) -> str:
    """One key of ``weights``, drawn with probability proportional to its value."""
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def pick_many(rng: random.Random, items: Sequence, weights: Sequence[float], count: int) -> list:
    """``count`` distinct items, drawn without replacement in proportion to ``weights``."""
    keyed = sorted(range(len(items)), key=lambda i: rng.random() ** (1.0 / weights[i]))
    return [items[i] for i in keyed[-count:][::-1]]


def poisson(rng: random.Random, mean: float) -> int:
    """A Poisson count (Knuth's method; fine for small means)."""
    limit, count, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        count += 1
        product *= rng.random()
    return count


def lognormal(rng: random.Random, median: float, sigma: float) -> float:
    """A log-normal draw with the given median."""
    return rng.lognormvariate(math.log(median), sigma)


def day_between(rng: random.Random, first: date, last: date) -> date:
    """A uniformly drawn day in ``[first, last]``."""
    return first + timedelta(days=rng.randint(0, (last - first).days))


def iso_date(value: date) -> str:
    """``YYYY-MM-DD``."""
    return value.strftime("%Y-%m-%d")


def iso_datetime(value: datetime) -> str:
    """``YYYY-MM-DD HH:MM:SS``, the form SQLite's date functions read."""
    return value.strftime("%Y-%m-%d %H:%M:%S")
