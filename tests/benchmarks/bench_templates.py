"""template_v1 at BiomedSQL scale: the demo templates expanded to 68,227 verified pairs.

Generates the demo databases (seed 7) into a temporary folder, expands every template
of raw/demo/templates with the quotas raised so that they add up to 68,227 (seed 13,
two worker processes), then times sqlite3 alone executing the same final SQL
statements in one plain loop: the floor. The last line is exactly

    pairs=<n> seconds=<total> floor_seconds=<floor> ratio=<total/floor> peak_rss_mb=<mb>

``seconds`` covers loading the templates, drawing values, writing and executing every
pair (kept or rejected), checking results and building the items. ``peak_rss_mb`` is
the largest summed resident memory of this process and its workers, sampled every
50 ms. Run with ``python tests/benchmarks/bench_templates.py [workers]``.
"""

from __future__ import annotations

import os
import resource
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from answerable.builders.demo import generate_demo
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef
from answerable.builders.templates import Settings, expand_templates, load_templates

REPO = Path(__file__).resolve().parents[2]
TARGET = 68_227


class PeakMemory:
    """Samples the resident memory of this process and all its descendants."""

    def __init__(self, every: float = 0.05):
        self.every, self.peak, self._stop = every, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(_rss(pid) for pid in _tree(os.getpid())))
            self._stop.wait(self.every)

    @property
    def mb(self) -> float:
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        return max(self.peak, own) / 2**20


def _tree(pid: int) -> list[int]:
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children = task.read_text().split()
        except OSError:
            continue
        for child in children:
            pids += _tree(int(child))
    return pids


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def quotas_for(template_ids: list[str], total: int) -> dict[str, int]:
    """Quotas adding up to ``total``, as even as they can be (the first ids get one more)."""
    base, extra = divmod(total, len(template_ids))
    return {tid: base + (index < extra) for index, tid in enumerate(sorted(template_ids))}


def floor_seconds(items: list[dict], databases: dict[str, Path]) -> float:
    """sqlite3 alone: every final SQL statement executed and fetched in one plain loop."""
    connections = {
        db_id: sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        for db_id, path in databases.items()
    }
    statements = [(connections[i["db_id"]], i["sql"]) for i in items]
    started = time.perf_counter()
    for connection, sql in statements:
        connection.execute(sql).fetchall()
    seconds = time.perf_counter() - started
    for connection in connections.values():
        connection.close()
    return seconds


def main(workers: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        paths = generate_demo(Path(folder), 7)
        refs = {
            db: DatabaseRef(db, p, DatabaseSchema.from_sqlite(p, db)) for db, p in paths.items()
        }
        settings = Settings(seed=13, attempts=4, workers=workers)
        with PeakMemory() as memory:
            started = time.perf_counter()
            loaded = load_templates([REPO / "raw" / "demo" / "templates"], REPO / "raw" / "demo")
            quotas = quotas_for([t.id for t in loaded.templates], TARGET)
            made = expand_templates(loaded.templates, refs, settings, quotas=quotas)
            seconds = time.perf_counter() - started
        print(f"templates={len(loaded.templates)} workers={workers} rejects={len(made.rejects)}")
        print(
            "rejects by reason: "
            + ", ".join(
                f"{k} {v}" for k, v in sorted(Counter(r["reason"] for r in made.rejects).items())
            )
        )
        short = {
            t: q
            for t, q in quotas.items()
            if Counter(i["provenance"]["external_id"] for i in made.items)[t] < q
        }
        if short:
            print(f"templates short of their quota: {sorted(short)}")
        floor = floor_seconds(made.items, paths)
    pairs = len(made.items)
    print(
        f"pairs={pairs} seconds={seconds:.2f} floor_seconds={floor:.2f} "
        f"ratio={seconds / floor:.3f} peak_rss_mb={memory.mb:.0f}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
