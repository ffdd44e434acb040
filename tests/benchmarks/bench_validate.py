"""Item validation: jsonschema alone against the compiled validator, on 5,000 demo items.

The items are the demo build's candidates, repeated (with fresh ids) up to 5,000. Each
validator checks all of them; both must find every item valid.

Run with ``python tests/benchmarks/bench_validate.py``. The last line is exactly
``items=<n> jsonschema_seconds=<s1> compiled_seconds=<s2> speedup=<s1/s2>``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from answerable.schemas import fast_validator, validator
from tests.benchmarks.demo_build import demo_candidates

ITEMS = 5000


def demo_items() -> list[dict]:
    """5,000 items cycled from a demo build's candidates, each with its own id."""
    candidates = demo_candidates()
    return [{**candidates[i % len(candidates)], "id": f"{i:016x}"} for i in range(ITEMS)]


def timed(check, items: list[dict]) -> float:
    started = time.perf_counter()
    assert all(check(item) for item in items)
    return time.perf_counter() - started


def main() -> None:
    items = demo_items()
    fast_validator("item"), validator("item")  # compile outside the timing
    slow = timed(validator("item").is_valid, items)
    fast = timed(fast_validator("item").is_valid, items)
    print(
        f"items={len(items)} jsonschema_seconds={slow:.3f} compiled_seconds={fast:.3f} "
        f"speedup={slow / fast:.0f}"
    )


if __name__ == "__main__":
    main()
