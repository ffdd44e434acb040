"""How a predicted result is compared with the gold result: one function per mode.

Results are the executor's: every row is hashed (numbers by value, so 1 equals 1.0) and
the first ``row_cap`` rows are kept. A mode compares two results:

- ``multiset`` (default): the same rows, each as often, in any order;
- ``set``: the same distinct rows, in any order;
- ``ordered``: the same rows in the same order when the gold SQL has a top-level
  ORDER BY, otherwise as ``multiset``;
- ``ehrsql``: EHRSQL 2024's scorer: every cell as text, numbers (also numbers stored as
  text) as floats rounded to 3 decimals, rows sorted, the first 100 rows compared.

``set`` and ``ehrsql`` look at kept rows; when either result has more rows than the
cap, they fall back to the multiset hash (the release's row cap says how many rows a
comparison sees).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Any

from answerable.builders.executor import Result

EHRSQL_DIGITS = 3
EHRSQL_ROWS = 100


def ordered_for(mode: str, gold_ordered: bool) -> bool:
    """Whether results are hashed in row order under ``mode``."""
    return mode == "ordered" and gold_ordered


def same_hash(predicted: Result, gold: Result) -> bool:
    """Equal under ``multiset`` and ``ordered`` (both hashed the way the mode wants)."""
    return predicted.hash == gold.hash


def same_set(predicted: Result, gold: Result) -> bool:
    """Equal as sets of distinct rows."""
    if predicted.truncated or gold.truncated:
        return same_hash(predicted, gold)
    return len(predicted.columns) == len(gold.columns) and row_set(predicted) == row_set(gold)


def same_ehrsql(predicted: Result, gold: Result) -> bool:
    """Equal as EHRSQL 2024's scorer compares: rounded text cells, sorted, first 100 rows."""
    if predicted.truncated or gold.truncated:
        return same_hash(predicted, gold)
    return ehrsql_answer(predicted.rows) == ehrsql_answer(gold.rows)


def ehrsql_cell(value: Any) -> str:
    """One cell as EHRSQL's scorer writes it: a value that reads as a number (``5``,
    ``'5'``, ``5.0``) as that number in floating point rounded to 3 places
    (``'5.0'``), everything else as ``str``."""
    with suppress(TypeError, ValueError, OverflowError):
        value = round(float(value), EHRSQL_DIGITS)
    return str(value)


def ehrsql_answer(rows: list[list[Any]]) -> str:
    """The text EHRSQL's scorer compares for one result."""
    return str(sorted([ehrsql_cell(v) for v in row] for row in rows)[:EHRSQL_ROWS])


def row_set(result: Result) -> set[tuple]:
    """The distinct kept rows of a result."""
    return {tuple(row) for row in result.rows}


def jaccard(predicted: Result, gold: Result) -> float:
    """BiomedSQL's JAC: |P ∩ G| / |P ∪ G| over the kept rows' sets (1 when both are empty)."""
    mine, theirs = row_set(predicted), row_set(gold)
    union = len(mine | theirs)
    return len(mine & theirs) / union if union else 1.0


MODES: dict[str, Callable[[Result, Result], bool]] = {
    "multiset": same_hash,
    "set": same_set,
    "ordered": same_hash,
    "ehrsql": same_ehrsql,
}
