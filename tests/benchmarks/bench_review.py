"""Benchmark: push 10,000 items to the local review store and pull their decisions.

    python tests/benchmarks/bench_review.py [--items N]

The items are copies of the review fixture items with distinct ids and questions, each
with a small schema excerpt; one decision per item is recorded (untimed) before the
pull. Timed: ``push`` of all items into a fresh store (one transaction), and ``pull`` of
the decisions that count. Targets (issue 6): push <= 3 s, pull <= 2 s.

Last line, exactly: ``items=<n> push_seconds=<s> pull_seconds=<s2>``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from answerable.annotation.decisions import make_decision
from answerable.annotation.store import LocalQueue
from answerable.ids import item_id

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "review" / "items.jsonl"
EXCERPT = [
    {
        "name": "patients",
        "columns": [
            {"name": "subject_id", "type": "INTEGER", "mark": None},
            {"name": "gender", "type": "TEXT", "mark": "used"},
            {"name": "insurance", "type": "TEXT", "mark": "edited"},
        ],
    }
]
VERDICTS = ("accept", "reject", "accept", "relabel")


def make_items(count: int) -> list[dict]:
    """``count`` distinct items cycling through the fixture items."""
    base = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    items = []
    for n in range(count):
        item = dict(base[n % len(base)])
        item["question"] = f"{item['question']} (variant {n})"
        item["id"] = item_id(item["db_id"], item["question"], item["sql"], item["db_variant"])
        items.append(item)
    return items


def decisions_for(items: list[dict]) -> list[tuple[str, dict]]:
    made = []
    for n, item in enumerate(items):
        verdict = VERDICTS[n % len(VERDICTS)]
        fields = {"category": "out-of-scope"} if verdict == "relabel" else {}
        if verdict == "relabel" and item["label"] == "answerable":
            verdict, fields = "accept", {}
        decision = make_decision(item["id"], f"annotator-{n % 3}", verdict, **fields)
        made.append((f"item {n}", decision))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    args = parser.parse_args()
    items = make_items(args.items)
    excerpts = {item["id"]: EXCERPT for item in items}
    with tempfile.TemporaryDirectory() as folder, LocalQueue(Path(folder) / "q.sqlite") as queue:
        start = time.perf_counter()
        report = queue.push(items, excerpts)
        push_seconds = time.perf_counter() - start
        assert report.added == len(items) and not report.rejects, report
        recorded, problems = queue.record_many(decisions_for(items))
        assert recorded == len(items) and not problems, problems[:3]
        start = time.perf_counter()
        pulled = queue.pull()
        pull_seconds = time.perf_counter() - start
        assert len(pulled) == len(items)
        again = queue.push(items, excerpts)
        assert again.unchanged == len(items)
    print(f"recorded {recorded} decisions; a second push left {again.unchanged} items unchanged")
    print(f"items={len(items)} push_seconds={push_seconds:.3f} pull_seconds={pull_seconds:.3f}")


if __name__ == "__main__":
    main()
