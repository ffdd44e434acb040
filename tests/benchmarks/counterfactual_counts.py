"""Counterfactual edits over the real sources and the demo: counts per edit and reason.

Run with ``python tests/benchmarks/counterfactual_counts.py [NAME ...]`` (names: spider,
geoquery, restaurants, chinook, demo; all by default). Every parent is selected and
every applicable edit is verified (a survey, not the share a build keeps). Spider dev
has no database contents, so its edits run on the schema and are verified by binding
alone; the others are verified by execution on edited copies. Sources are read from
``../shared/data``; Chinook's questions are the project's own test fixture.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from answerable.builders.counterfactual.survey import survey
from answerable.builders.demo import generate_demo

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
FIXTURES = REPO / "tests" / "fixtures" / "counterfactual"

SOURCES = {
    "spider": (
        {"name": "spider-dev", "format": "spider", "path": "dev.json", "tables": "tables.json"},
        DATA / "spider",
    ),
    "geoquery": (
        {
            "name": "geoquery",
            "format": "text2sql",
            "path": "geography.json",
            "database": "geography.sqlite",
        },
        DATA / "geoquery",
    ),
    "restaurants": (
        {
            "name": "restaurants",
            "format": "text2sql",
            "path": "restaurants.json",
            "database": "restaurants.sqlite",
        },
        DATA / "restaurants",
    ),
    "chinook": (
        {
            "name": "chinook",
            "format": "jsonl",
            "path": str(FIXTURES / "chinook.jsonl"),
            "databases": str(DATA / "chinook"),
        },
        DATA / "chinook",
    ),
}


def report(name: str, spec: dict, base: Path, workdir: Path, demo: Path | None = None) -> None:
    """Print one source's survey."""
    started = time.perf_counter()
    found = survey(spec, base, workdir, demo_dir=demo)
    seconds = time.perf_counter() - started
    by = Counter(i["provenance"]["generator"] for i in found.edited.items)
    verified = Counter(i["provenance"]["params"]["verified_by"] for i in found.edited.items)
    print(
        f"== {name}: {len(found.parents.items)} verified parents "
        f"({len(found.parents.rejects)} source examples rejected), "
        f"{len(found.edited.items)} edited items {dict(sorted(by.items()))}, "
        f"verified by {dict(verified)}, {seconds:.1f} s"
    )
    print("\n".join(found.stats.lines()))
    quality = Counter(
        (r["step"], r["reason"], _how(r["detail"]))
        for r in found.edited.rejects
        if r["reason"] in QUALITY
    )
    for (step, reason, how), n in sorted(quality.items()):
        print(f"  quality check {step} {reason} ({how}): {n}")


QUALITY = {
    "synonym-remains",
    "answer-remains",
    "candidate-is-synonym",
    "candidate-equals-target",
    "span-not-ambiguous",
}


def _how(detail: str) -> str:
    """The kind of leak in a reject's detail (``derivable``, ``same-values`` ...)."""
    kinds = ("derivable", "same-values-via-key (reverse)", "same-values-via-key", "same-values")
    return next((k for k in kinds if f"({k})" in detail), "name")


def main(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            if name == "demo":
                demo = generate_demo(Path(folder) / "demo", 7) and Path(folder) / "demo"
                for db_id in ("clinic", "league"):
                    spec = {"name": db_id, "format": "jsonl", "path": f"{db_id}.jsonl"}
                    spec["databases"] = "demo"
                    seeds = REPO / "raw" / "demo" / "seeds"
                    report(f"demo {db_id}", spec, seeds, Path(folder) / db_id, demo)
                continue
            spec, base = SOURCES[name]
            report(name, spec, base, Path(folder) / name)


if __name__ == "__main__":
    main(sys.argv[1:] or [*SOURCES, "demo"])
