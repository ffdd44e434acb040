"""Drafting against a model server: 1,000 drafts, then the same run with the cache warm.

The server is the test suite's local OpenAI-compatible server (``tests/llm_server.py``)
answering every request after 200 ms; the client runs 16 requests at a time through
the real drafting path (prompts, client, reply cache, validation). Targets: seconds
<= 15 (1000 / 16 * 0.2 = 12.5 is the floor), requests = 1000, rerun_requests = 0,
rerun_seconds <= 2.

Run with ``python tests/benchmarks/bench_drafting.py``. The last line is exactly
``drafts=<n> seconds=<s> requests=<r> rerun_seconds=<s2> rerun_requests=<r2>``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from answerable.builders.demo import generate_demo
from tests.drafting_run import draft
from tests.llm_server import LLMServer

DRAFTS = 1000
LATENCY_S = 0.2
CONCURRENCY = 16


def timed_run(server: LLMServer, cache: Path, demo: Path) -> tuple[int, float, int]:
    """(drafts, seconds, requests the server received) of one run."""
    before = server.requests
    started = time.perf_counter()
    drafts, rejects, usage = draft(server.base_url, cache, demo, DRAFTS, CONCURRENCY)
    seconds = time.perf_counter() - started
    print(f"  {len(drafts)} drafts, {len(rejects)} invalid replies, usage {usage.to_report()}")
    return len(drafts), seconds, server.requests - before


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, LLMServer(latency=LATENCY_S) as server:
        work = Path(folder)
        generate_demo(work / "demo", 7)
        cache = work / "replies.sqlite"
        print(f"cold run: {DRAFTS} drafts, {CONCURRENCY} in flight, {LATENCY_S}s per reply")
        drafts, seconds, requests = timed_run(server, cache, work / "demo")
        print("warm run: same drafts, cache filled")
        _, rerun_seconds, rerun_requests = timed_run(server, cache, work / "demo")
        print(f"most requests in flight at once: {server.max_in_flight}")
    print(
        f"drafts={drafts} seconds={seconds:.2f} requests={requests} "
        f"rerun_seconds={rerun_seconds:.2f} rerun_requests={rerun_requests}"
    )


if __name__ == "__main__":
    main()
