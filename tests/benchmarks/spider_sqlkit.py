"""The SQL kit on Spider's dev set: counts, distributions, failures and timings.

Run with ``python tests/benchmarks/spider_sqlkit.py [SPIDER_DIR]``; Spider is read from
the repository's sibling ``../shared/data/spider`` unless a folder is given.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from answerable.builders import sqlkit
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import SQLError

SPIDER = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "spider"


def load(folder: Path) -> tuple[list[dict], dict[str, DatabaseSchema]]:
    """Spider's dev examples and the schema of every database, by ``db_id``."""
    examples = json.loads((folder / "dev.json").read_text())
    tables = json.loads((folder / "tables.json").read_text())
    return examples, {entry["db_id"]: DatabaseSchema.from_spider(entry) for entry in tables}


def parse_all(examples: list[dict]) -> list[tuple[str, str]]:
    """(query, error) for every query that does not parse."""
    failures = []
    for example in examples:
        try:
            sqlkit.parse(example["query"])
        except SQLError as error:
            failures.append((example["query"], str(error)))
    return failures


def analyze_all(examples: list[dict], schemas: dict) -> tuple[list[dict], list[tuple]]:
    """The sql_meta of every query that binds, and (db_id, query, error) for the others."""
    metas, failures = [], []
    for example in examples:
        try:
            metas.append(sqlkit.analyze(example["query"], schemas[example["db_id"]]))
        except SQLError as error:
            failures.append((example["db_id"], example["query"], str(error)))
    return metas, failures


def transpile_failures(examples: list[dict]) -> dict[str, int]:
    """How many queries each target dialect cannot be written in."""
    counts = {}
    for write in ("postgres", "bigquery", "duckdb"):
        counts[write] = 0
        for example in examples:
            try:
                sqlkit.transpile(example["query"], "sqlite", write)
            except SQLError:
                counts[write] += 1
    return counts


def time_per_query(examples: list[dict], schemas: dict, step, rounds: int = 3) -> list[float]:
    """Milliseconds per query for ``step(example, schemas)``, best of ``rounds``."""
    best = [float("inf")] * len(examples)
    for _ in range(rounds):
        for index, example in enumerate(examples):
            start = time.perf_counter()
            with contextlib.suppress(SQLError):
                step(example, schemas)
            best[index] = min(best[index], (time.perf_counter() - start) * 1000)
    return best


STEPS = {
    "parse": lambda e, s: sqlkit.parse(e["query"]),
    "parse+qualify": lambda e, s: sqlkit.qualify(sqlkit.parse(e["query"]), s[e["db_id"]]),
    "analyze (schema)": lambda e, s: sqlkit.analyze(e["query"], s[e["db_id"]]),
    "analyze (no schema)": lambda e, s: sqlkit.analyze(e["query"], None),
}


def report_timings(examples: list[dict], schemas: dict) -> None:
    print("\ntimings (ms per query, best of 3 rounds, schema cache warm):")
    for name, step in STEPS.items():
        times = time_per_query(examples, schemas, step)
        p95 = statistics.quantiles(times, n=20)[-1]
        print(
            f"  {name:20s} mean {statistics.mean(times):.2f}  median "
            f"{statistics.median(times):.2f}  p95 {p95:.2f}  max {max(times):.2f}"
        )


def main(folder: Path = SPIDER) -> None:
    examples, schemas = load(folder)
    total = len(examples)
    parse_failed = parse_all(examples)
    metas, failures = analyze_all(examples, schemas)
    print(f"parsed {total - len(parse_failed)}/{total}")
    print(f"qualified {len(metas)}/{total}")
    print("hardness:", dict(Counter(m["hardness"] for m in metas).most_common()))
    operations = Counter(op for m in metas for op in m["operations"])
    print("operations:", {name: operations[name] for name in sqlkit.OPERATIONS})
    print("distinct skeletons:", len({m["skeleton"] for m in metas}))
    print("transpile failures:", transpile_failures(examples))
    for query, error in parse_failed:
        print(f"  parse failure: {error}\n    {query}")
    for db_id, query, error in failures:
        print(f"  qualify failure [{db_id}]: {error}\n    {query}")
    report_timings(examples, schemas)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SPIDER)
