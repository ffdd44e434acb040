"""Draft N prompts over the demo databases against a model server, as a process.

The worker of the SIGKILL test and of the benchmark: it plans jobs from the demo seed
pairs (every category, as many samples as needed to reach N), sends them through the
real drafting path (prompts, cache, client, validation) and writes one line per draft
to ``--out``.

    python -m tests.drafting_run --base-url URL --cache FILE --demo DIR --count 500 --out F
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from answerable.builders.drafting.cache import ReplyCache
from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.context import load_context
from answerable.builders.drafting.llm import draft_with_llm
from answerable.builders.drafting.per_category import plan_jobs
from answerable.builders.drafting.settings import LLMSettings, Usage
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.ids import item_id
from answerable.kernel.records import read_jsonl
from tests.conftest import REPO

SEEDS = REPO / "raw" / "demo" / "seeds"


def demo_parents() -> list[dict]:
    """The demo seed pairs as answerable items (unverified: only prompts need them)."""
    parents = []
    for path in sorted(SEEDS.glob("*.jsonl")):
        for pair in read_jsonl(path):
            parents.append(
                {
                    "id": item_id(pair["db_id"], pair["question"], pair["sql"]),
                    "db_id": pair["db_id"],
                    "question": pair["question"],
                    "sql": pair["sql"],
                    "label": "answerable",
                }
            )
    return parents


def demo_jobs(count: int, seed: int = 13):
    """``count`` drafting jobs over the demo seeds, every category, in a fixed order."""
    parents = demo_parents()
    samples = math.ceil(count / (len(parents) * len(CATEGORIES)))
    return plan_jobs(parents, list(CATEGORIES), samples, seed)[:count]


def draft(base_url: str, cache: Path, demo: Path, count: int, concurrency: int = 16):
    """Draft ``count`` jobs; returns ``(drafts, rejects, usage)``."""
    jobs = demo_jobs(count)
    contexts = {}
    for db_id in sorted({job.db_id for job in jobs}):
        path = demo / f"{db_id}.sqlite"
        database = ReadOnlyDatabase(path)
        contexts[db_id] = load_context(db_id, DatabaseSchema.from_sqlite(path, db_id), database)
        database.close()
    settings = LLMSettings(
        base_url=base_url,
        model="test-model",
        concurrency=concurrency,
        temperature=0.7,
        backoff_s=0.05,
    )
    usage = Usage()
    with ReplyCache(cache) as replies:
        drafts, rejects = draft_with_llm(jobs, contexts, settings, replies, usage)
    return drafts, rejects, usage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--demo", type=Path, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)
    drafts, rejects, usage = draft(
        args.base_url, args.cache, args.demo, args.count, args.concurrency
    )
    with open(args.out, "w", encoding="utf-8") as out:
        for made in drafts:
            out.write(json.dumps({"job": made.job.key, "question": made.question}) + "\n")
    print(json.dumps({"drafts": len(drafts), "rejects": len(rejects), "usage": usage.to_report()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
