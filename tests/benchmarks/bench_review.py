"""Benchmark: push 10,000 items to the local review store and pull their decisions; then
the review page served by the real server over HTTP.

    python tests/benchmarks/bench_review.py [--items N] [--requests R]

The items are copies of the review fixture items with distinct ids and questions, each
with a small schema excerpt; one decision per item is recorded (untimed) before the
pull. Timed: ``push`` of all items into a fresh store (one transaction), and ``pull`` of
the decisions that count. Targets (issue 6): push <= 3 s, pull <= 2 s.

Then a fresh store of the same items is served by ``review serve``'s server on a free
port, and an annotator asks for the next item and decides it, ``R`` times (200), over
HTTP with the session token. The server time of each request is measured around the
page's handler (``next_ms``, ``decide_ms``: medians); the round trip is printed too.
Targets (issue 15): next_ms_p50 <= 20, decide_ms_p50 <= 20.

Then, on a fresh store of the same items served with the demo databases (generated
into a temporary folder), the queue's navigation and corrections, timed around the
page's handlers (issue 33): a search over question and SQL (``search_ms_p50``, the
median of 50 searches for one item's words), a bulk accept of the 1,000 items a filter
selects (the spot checks: ``bulk_seconds_1000``, the decisions recorded one per item
and the page's index brought up to date), and a correction of an answerable item with
its SQL run on the demo database (``correction_ms_p50``, median of 20: checked,
executed, validated, recorded). Targets: search <= 50 ms, bulk <= 2 s, correction
<= 100 ms.

Before the last two lines: ``search_ms_p50=<a> bulk_seconds_1000=<b>
correction_ms_p50=<c>``. Line before the last: the page's request counts and round-trip
medians. Last line, exactly: ``items=<n> push_seconds=<s> pull_seconds=<s2>
next_ms_p50=<a> decide_ms_p50=<b>``
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from answerable.annotation.corrections import Verifier
from answerable.annotation.decisions import make_decision
from answerable.annotation.policy import Policy
from answerable.annotation.server import Filters, ReviewPage, make_server
from answerable.annotation.store import LocalQueue
from answerable.builders.demo import generate_demo
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef
from answerable.kernel.ids import item_id

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


class TimedPage(ReviewPage):
    """The review page, recording the server time of each next-item and decision."""

    def __init__(self, *args):
        super().__init__(*args)
        self.times: dict[str, list[float]] = {"next": [], "decide": []}

    def next_item(self, *args, **kwargs):
        return self._timed("next", super().next_item, *args, **kwargs)

    def decide(self, *args, **kwargs):
        return self._timed("decide", super().decide, *args, **kwargs)

    def _timed(self, name, call, *args, **kwargs):
        start = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            self.times[name].append(1000 * (time.perf_counter() - start))


def serve_and_review(items: list[dict], excerpts: dict, folder: Path, requests: int) -> dict:
    """Serve a fresh store of ``items``; ``requests`` next-item + decision pairs over HTTP."""
    token = "bench"
    with LocalQueue(folder / "page.sqlite") as queue:
        queue.push(items, excerpts)
        page = TimedPage(queue, Policy("majority", 2), "bench")
        server = make_server(page, port=0, token=token)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1])
        headers = {"X-Review-Token": token}
        trips = {"next": [], "decide": []}
        after = ""
        try:
            for n in range(requests):
                start = time.perf_counter()
                connection.request("GET", f"/api/next?annotator=ana&after={after}", headers=headers)
                item = json.loads(connection.getresponse().read())["item"]
                trips["next"].append(1000 * (time.perf_counter() - start))
                body = json.dumps(
                    {"item_id": item["id"], "annotator": "ana", "verdict": VERDICTS[n % 3]}
                ).encode()
                start = time.perf_counter()
                connection.request(
                    "POST",
                    "/api/decisions",
                    body,
                    dict(headers, **{"Content-Type": "application/json"}),
                )
                reply = connection.getresponse()
                reply.read()
                assert reply.status == 201, reply.status
                trips["decide"].append(1000 * (time.perf_counter() - start))
                after = item["id"]
            assert len(queue.pull()) == requests
        finally:
            connection.close()
            server.shutdown()
            server.server_close()
    return {"server": page.times, "trip": trips}


def navigate_and_correct(items: list[dict], excerpts: dict, folder: Path) -> dict:
    """Search, a bulk accept of 1,000 filtered items and corrections, on a fresh store."""
    demo = folder / "demo"
    generate_demo(demo, 7)
    refs = {
        db_id: DatabaseRef(
            db_id,
            demo / f"{db_id}.sqlite",
            DatabaseSchema.from_sqlite(demo / f"{db_id}.sqlite", db_id),
        )
        for db_id in ("clinic", "league")
    }
    spot = {item["id"]: {"spot_check": True} for item in items[:1000]}
    with LocalQueue(folder / "nav.sqlite") as queue, Verifier(refs) as verifier:
        queue.push(items, excerpts, spot)
        page = ReviewPage(queue, Policy("majority", 2), "bench", verifier=verifier)
        page.next_item("ana")  # the index is built once, as on the page's first request
        search = []
        for n in range(50):
            words = Filters(q=f"left foot (variant {(n * 197) % len(items)})")
            start = time.perf_counter()
            page.next_item("ana", filters=words)
            search.append(1000 * (time.perf_counter() - start))
        start = time.perf_counter()
        done = page.bulk({"annotator": "ana", "verdict": "accept", "filters": {"spot": "yes"}})
        bulk_seconds = time.perf_counter() - start
        assert len(done["item_ids"]) == 1000, len(done["item_ids"])
        clinic = [i for i in items[1000:] if i["db_id"] == "clinic" and i["sql"]][:20]
        corrections = []
        for n, item in enumerate(clinic):
            fix = {
                "item_id": item["id"],
                "annotator": "ben",
                "verdict": "accept",
                "question": f"How many male patients are there? ({n})",
                "sql": f"SELECT COUNT(*) FROM patients WHERE gender = 'M' AND {n} = {n}",
            }
            start = time.perf_counter()
            page.decide(fix)
            corrections.append(1000 * (time.perf_counter() - start))
        assert sum(bool(d["sql"]) for d in queue.pull() if d["annotator"] == "ben") == len(clinic)
    return {"search": search, "bulk": bulk_seconds, "correction": corrections}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
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
        timed = serve_and_review(items, excerpts, Path(folder), args.requests)
        moved = navigate_and_correct(items, excerpts, Path(folder))
    print(f"recorded {recorded} decisions; a second push left {again.unchanged} items unchanged")
    median = {k: statistics.median(v) for k, v in timed["server"].items()}
    trip = {k: statistics.median(v) for k, v in timed["trip"].items()}
    print(
        f"page over HTTP, {len(items)} items: {len(timed['server']['next'])} next-item and "
        f"{len(timed['server']['decide'])} decision requests; round trip p50 "
        f"next={trip['next']:.2f} ms decide={trip['decide']:.2f} ms"
    )
    print(
        f"search_ms_p50={statistics.median(moved['search']):.2f} "
        f"bulk_seconds_1000={moved['bulk']:.3f} "
        f"correction_ms_p50={statistics.median(moved['correction']):.2f}"
    )
    print(
        f"items={len(items)} push_seconds={push_seconds:.3f} pull_seconds={pull_seconds:.3f} "
        f"next_ms_p50={median['next']:.2f} decide_ms_p50={median['decide']:.2f}"
    )


if __name__ == "__main__":
    main()
