"""The local review page: ``answerable review serve`` on 127.0.0.1.

Python's ``http.server`` serves one static page (``page/``: HTML, JavaScript, CSS, no
build step) and a small JSON API over the local store:

- ``GET /api/meta``: dataset, policy, databases, categories, statuses;
- ``GET /api/next?annotator=&db=&category=&status=&after=``: the next item this
  annotator has not decided, with its schema excerpt and a preview of its result;
- ``POST /api/decisions``: record one decision (JSON body); errors come back as
  ``{"error": ...}`` with status 400;
- ``GET /api/progress?annotator=``.

:class:`ReviewPage` holds the logic and is tested without HTTP. The server accepts JSON
posts only (a form on another site cannot post one without a preflight this server
never grants) and only requests addressed to 127.0.0.1 or localhost.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from answerable.annotation.decisions import TAXONOMY, DecisionError, make_decision
from answerable.annotation.policy import OPEN, STATUSES, Policy, resolve
from answerable.annotation.store import LocalQueue

PAGE_DIR = Path(__file__).parent / "page"
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/review.js": ("review.js", "text/javascript; charset=utf-8"),
    "/review.css": ("review.css", "text/css; charset=utf-8"),
}
AWAITING = "awaiting"  # open or in conflict: what still needs people
PREVIEW_ROWS = 10
ANSWERABLE = "answerable"


class ReviewPage:
    """What the review page asks of the store, without HTTP."""

    def __init__(self, queue: LocalQueue, policy: Policy, dataset: str):
        self.queue, self.policy, self.dataset = queue, policy, dataset

    def meta(self) -> dict:
        """What the page needs once: names, filters, categories and keys."""
        summaries = self.queue.summaries()
        return {
            "dataset": self.dataset,
            "policy": self.policy.describe(),
            "databases": sorted({s["db_id"] for s in summaries}),
            "categories": sorted({s["category"] or ANSWERABLE for s in summaries}),
            "statuses": [AWAITING, *STATUSES, "any"],
            "taxonomy": {label: [c for c in cats if c] for label, cats in TAXONOMY.items()},
        }

    def _rows(self) -> list[tuple[dict, dict, str]]:
        """(summary, decisions by annotator, status) of every item, by id."""
        by_item: dict[str, dict] = {}
        for decision in self.queue.pull():
            by_item.setdefault(decision["item_id"], {})[decision["annotator"]] = decision
        rows = []
        for summary in self.queue.summaries():
            decided = by_item.get(summary["id"], {})
            item = {"id": summary["id"], "provenance": {"generator": summary["generator"]}}
            status = resolve(item, list(decided.values()), self.policy).status
            rows.append((summary, decided, status))
        return rows

    def next_item(self, annotator: str, db=None, category=None, status=None, after=None) -> dict:
        """The first matching item (after ``after``, wrapping) the annotator has not decided."""
        annotator = _annotator(annotator)
        every = self._rows()
        rows = [
            (summary, decided, state)
            for summary, decided, state in every
            if annotator not in decided and _matches(summary, state, db, category, status)
        ]
        later = [row for row in rows if after and row[0]["id"] > after]
        chosen = (later or rows or [None])[0]
        view = None if chosen is None else self.view(chosen[0]["id"], chosen[2], len(chosen[1]))
        return {"item": view, "remaining": len(rows), "progress": _progress(every, annotator)}

    def view(self, item_id: str, status: str, decisions: int) -> dict:
        """One item as the page shows it (no other annotator's verdict, to avoid bias)."""
        item = self.queue.item(item_id)
        result = item.get("result") or None
        if result:
            result = {
                "columns": result.get("columns", []),
                "rows": result.get("rows", [])[:PREVIEW_ROWS],
                "row_count": result.get("row_count"),
            }
        keys = ("id", "db_id", "db_variant", "question", "sql", "label", "category", "subtype")
        shown = {k: item.get(k) for k in keys}
        shown.update(
            spans=item.get("spans") or [],
            trigger=item.get("trigger"),
            explanation=item.get("explanation"),
            generator=(item.get("provenance") or {}).get("generator"),
            schema=self.queue.excerpt(item_id) or [],
            result=result,
            status=status,
            decisions=decisions,
        )
        return shown

    def decide(self, payload: dict) -> dict:
        """Record one decision from the page; :class:`DecisionError` when it is wrong."""
        if not isinstance(payload, dict):
            raise DecisionError("request", "the body is not a JSON object")
        fields = {k: payload.get(k) for k in ("label", "category", "question", "spans", "comment")}
        decision = make_decision(
            payload.get("item_id"),
            _annotator(payload.get("annotator")),
            payload.get("verdict"),
            **fields,
        )
        kept = self.queue.record(decision, where=f"decision on item {payload.get('item_id')}")
        return {"decision": kept, "progress": self.progress(kept["annotator"])}

    def progress(self, annotator: str | None = None) -> dict:
        """Items per status, and how many this annotator decided."""
        return _progress(self._rows(), annotator)


def _progress(rows: list[tuple[dict, dict, str]], annotator: str | None) -> dict:
    counts = dict.fromkeys(STATUSES, 0)
    for _, _, status in rows:
        counts[status] += 1
    mine = sum(annotator in decided for _, decided, _ in rows) if annotator else 0
    return {"items": len(rows), "by_status": counts, "decided_by_you": mine}


def _annotator(name) -> str:
    if not isinstance(name, str) or not name.strip():
        raise DecisionError("request", "no annotator name", "type your name in the page's header")
    return name.strip()


def _matches(summary: dict, status: str, db, category, wanted) -> bool:
    if db and summary["db_id"] != db:
        return False
    if category and (summary["category"] or ANSWERABLE) != category:
        return False
    wanted = wanted or AWAITING
    if wanted == AWAITING:
        return status in (OPEN, "conflict")
    return wanted == "any" or status == wanted


def make_server(page: ReviewPage, port: int = 8765, log: Callable[[str], None] | None = None):
    """A threading HTTP server for ``page`` on 127.0.0.1 (port 0 picks a free one)."""

    class Handler(_Handler):
        review = page
        say = staticmethod(log or (lambda _msg: None))

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


class _Handler(BaseHTTPRequestHandler):
    review: ReviewPage
    say: Callable[[str], None]
    server_version = "answerable-review"

    def log_message(self, format: str, *args) -> None:
        self.say(format % args)

    def _local(self) -> bool:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        if host in ("127.0.0.1", "localhost"):
            return True
        self._send_json({"error": "only 127.0.0.1 or localhost"}, HTTPStatus.FORBIDDEN)
        return False

    def do_GET(self) -> None:
        if not self._local():
            return
        url = urlsplit(self.path)
        if url.path == "/favicon.ico":
            self._send(b"", "image/x-icon", HTTPStatus.NO_CONTENT)
            return
        if url.path in STATIC:
            name, kind = STATIC[url.path]
            self._send((PAGE_DIR / name).read_bytes(), kind)
            return
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        routes = {
            "/api/meta": lambda: self.review.meta(),
            "/api/next": lambda: self.review.next_item(
                query.get("annotator", ""),
                *(query.get(k) for k in ("db", "category", "status", "after")),
            ),
            "/api/progress": lambda: self.review.progress(query.get("annotator")),
        }
        if url.path not in routes:
            self._send_json({"error": f"no such page: {url.path}"}, HTTPStatus.NOT_FOUND)
            return
        self._answer(routes[url.path])

    def do_POST(self) -> None:
        if not self._local():
            return
        if urlsplit(self.path).path != "/api/decisions":
            self._send_json({"error": "no such page"}, HTTPStatus.NOT_FOUND)
            return
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self._send_json({"error": "send JSON"}, HTTPStatus.UNSUPPORTED_MEDIA_TYPE)
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            payload = json.loads(self.rfile.read(length) or b"null")
        except json.JSONDecodeError as error:
            self._send_json({"error": f"not JSON: {error}"}, HTTPStatus.BAD_REQUEST)
            return
        self._answer(lambda: self.review.decide(payload), HTTPStatus.CREATED)

    def _answer(self, compute, status=HTTPStatus.OK) -> None:
        try:
            self._send_json(compute(), status)
        except DecisionError as error:
            self._send_json({"error": str(error)}, HTTPStatus.BAD_REQUEST)

    def _send_json(self, value, status=HTTPStatus.OK) -> None:
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        self._send(body, "application/json; charset=utf-8", status)

    def _send(self, body: bytes, kind: str, status=HTTPStatus.OK) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)
