"""Drafts from the real small model (SmolLM2-135M on llama.cpp), checked as a build checks
them: prints how many replies were usable and how many drafts the checks kept, and
writes every draft with its check result to ``--out`` for a careful reader.

    python -m tests.benchmarks.real_model_drafts --count 24 --out drafts.jsonl

The jobs are the demo seeds' (``tests/drafting_run.py``), every drafted category in
turn; ``--base-url`` uses a running server instead of starting one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

from answerable.builders.demo import generate_demo
from answerable.builders.drafting.cache import ReplyCache
from answerable.builders.drafting.context import load_context
from answerable.builders.drafting.llm import draft_with_llm
from answerable.builders.drafting.per_category import check_draft
from answerable.builders.drafting.settings import LLMSettings, Usage
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from tests.drafting_run import demo_jobs
from tests.llama_server import MODEL, LlamaServer


def contexts_of(jobs, demo: Path) -> dict:
    """The drafting context of each database the jobs draft for."""
    contexts = {}
    for db_id in sorted({job.db_id for job in jobs}):
        path = demo / f"{db_id}.sqlite"
        database = ReadOnlyDatabase(path)
        contexts[db_id] = load_context(db_id, DatabaseSchema.from_sqlite(path, db_id), database)
        database.close()
    return contexts


def run(base_url: str, count: int, cache: Path, demo: Path) -> tuple[list[dict], dict]:
    """Every job's outcome (a draft and its check, or the reject) and the usage."""
    jobs = demo_jobs(count)
    contexts = contexts_of(jobs, demo)
    settings = LLMSettings(
        base_url=base_url,
        model=MODEL,
        concurrency=1,
        temperature=0.0,
        max_tokens=96,
        timeout_s=900,
        validation_retries=0,
        json_schema=True,
    )
    usage = Usage()
    with ReplyCache(cache) as replies:
        drafts, rejects = draft_with_llm(jobs, contexts, settings, replies, usage)
    rows = []
    for made in drafts:
        failure = check_draft(made, contexts[made.job.db_id])
        rows.append(
            {
                "category": made.category,
                "parent": made.job.parent["question"],
                "question": made.question,
                "trigger": made.trigger,
                "kept": failure is None,
                "reason": failure[0] if failure else None,
                "detail": failure[1] if failure else None,
            }
        )
    rows += [{"category": r.get("category"), "reject": r["reason"]} for r in rejects]
    return rows, usage.to_report()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cache", type=Path, help="the reply cache (default: a temporary one)")
    parser.add_argument("--base-url", help="a running server (default: start one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        generate_demo(demo, 7)
        cache = args.cache or Path(tmp) / "replies.sqlite"
        with nullcontext(None) if args.base_url else LlamaServer() as server:
            rows, usage = run(args.base_url or server.base_url, args.count, cache, demo)
    with open(args.out, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    drafted = [r for r in rows if "question" in r]
    kept = [r for r in drafted if r["kept"]]
    print(json.dumps({"jobs": len(rows), "drafts": len(drafted), "kept": len(kept), **usage}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
