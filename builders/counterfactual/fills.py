"""Values for an added near-synonym column: perturbed copies of the target's values.

Each fill keeps the target's domain, so a filter on the target (``position =
'Goalkeeper'``, ``height_cm > 195``) still finds rows under either reading, while the
rows differ, so the two readings give different answers:

- ``shuffle``: the values permuted across rows (names, categories, codes, text);
- ``jitter``: numbers moved a little (small integers by 1 to 3; reals, and integers of
  :data:`LARGE` or more such as populations, by up to 30 %, so that the two readings of
  ``the city with the largest population`` can name different cities);
- ``shift_days``: ISO dates and times moved by 1 to 400 days.

A fill is a pure function of the values (in rowid order) and a seed.

>>> fill_values("jitter", [10, 20, None], seed=1)
[8, 22, None]
>>> fill_values("shift_days", ["2021-10-27 22:00:00"], seed=1)
['2021-08-19 22:00:00']
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from typing import Any

FILLS = ("shuffle", "jitter", "shift_days")
LARGE = 1000
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(.*)")


def choose_fill(role: str, declared_type: str) -> str:
    """The fill that suits a column's role and declared type."""
    kind = (declared_type or "").upper()
    if role in ("date", "time"):
        return "shift_days"
    numeric = any(t in kind for t in ("INT", "REAL", "FLOA", "DOUB", "NUM", "DEC"))
    if role in ("measure", "count") and numeric:
        return "jitter"
    return "shuffle"


def fill_values(method: str, values: list[Any], seed: int) -> list[Any]:
    """The new column's values, one per value of the source column, in the same order."""
    rng = random.Random(seed)
    if method == "shuffle":
        shuffled = list(values)
        rng.shuffle(shuffled)
        return shuffled
    change = _jitter if method == "jitter" else _shift_days
    return [None if v is None else change(v, rng) for v in values]


def _jitter(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, int) and abs(value) >= LARGE:
        return round(value * rng.uniform(0.7, 1.3))
    if isinstance(value, int):
        moved = value + rng.choice((-3, -2, -1, 1, 2, 3))
        return max(moved, 0) if value >= 0 else moved
    return round(value * rng.uniform(0.7, 1.3), _decimals(value))


def _decimals(value: float) -> int:
    text = repr(value)
    return min(len(text.split(".")[1]), 6) if "." in text and "e" not in text else 6


def _shift_days(value: Any, rng: random.Random) -> Any:
    match = _ISO.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return value
    try:
        day = date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return value
    days = rng.randint(1, 400) * rng.choice((-1, 1))
    return (day + timedelta(days=days)).isoformat() + match[4]
