"""The local review page: ``answerable review serve`` on 127.0.0.1.

Python's ``http.server`` serves one static page (``page/``: HTML, JavaScript, CSS, no
build step) and a small JSON API over the local store:

- ``GET /api/meta``: dataset, policy, databases, categories, statuses, guidelines;
- ``GET /api/next?annotator=&db=&category=&status=&after=&item=``: the next item this
  annotator has not decided (or ``item``, when undecided), with its schema excerpt, a
  preview of its result, its readings, its parent and its candidate SQL;
- ``POST /api/decisions``: record one decision (JSON body; verdict ``retract`` is the
  undo); a correction (a corrected question or SQL) is verified first; errors come back
  as ``{"error": ...}`` with status 400;
- ``POST /api/run``: run a corrected SQL on the item's database and return its first
  rows, or the error in one line (nothing is recorded);
- ``GET /api/schema?item=``: the whole schema of the item's database;
- ``GET /api/progress?annotator=``.

:class:`ReviewPage` holds the logic and is tested without HTTP. The server trusts no
other process on the machine: every API request carries the session token that
``review serve`` prints in the page's URL (as notebook servers do) in the
``X-Review-Token`` header; a browser's Origin,
when sent, must be the page's own; posts must be ``application/json`` exactly (a form
on another site cannot send one without a preflight this server never grants); and only
requests addressed to 127.0.0.1 or localhost are answered. A POST body is refused from
its headers alone when it is too long (413) or its length is missing, negative or not a
number; invalid UTF-8 is a 400; a silent client is dropped after a read timeout.
"""

from __future__ import annotations

import errno
import hmac
import json
import secrets
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from functools import cached_property
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from answerable.annotation.corrections import (
    Verifier,
    columns_elsewhere,
    is_correction,
    verified_correction,
)
from answerable.annotation.decisions import (
    TAXONOMY,
    DecisionError,
    check_decision,
    make_decision,
)
from answerable.annotation.policy import OPEN, STATUSES, Policy, resolve
from answerable.annotation.queue import RETRACT
from answerable.annotation.readings import stored_readings
from answerable.annotation.spot_check import awaits_person
from answerable.annotation.store import LocalQueue
from answerable.builders.drafting.categories import definitions
from answerable.kernel.errors import AnswerableError

PAGE_DIR = Path(__file__).parent / "page"
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/review.js": ("review.js", "text/javascript; charset=utf-8"),
    "/review.css": ("review.css", "text/css; charset=utf-8"),
}
MAX_BODY = 1_000_000  # bytes of a POST body: a decision is a few hundred
READ_TIMEOUT = 10.0  # seconds a client may stay silent before it is dropped
TOKEN_HEADER = "X-Review-Token"
LOCAL_HOSTS = ("127.0.0.1", "localhost")
AWAITING = "awaiting"  # open or in conflict: what still needs people
PREVIEW_ROWS = 10
ANSWERABLE = "answerable"
# The page's keys (outside text boxes); the recipe's review.hotkeys changes any of them.
HOTKEYS = {
    "accept": "a",
    "reject": "r",
    "relabel": "l",
    "skip": "s",
    "previous": "p",
    "undo": "u",
    "comment": "c",
    "guidelines": "g",
    "correct": "e",
    "schema": "f",
    "search": "/",
}


class ReviewPage:
    """What the review page asks of the store, without HTTP.

    The page keeps an index of the queue (every item's summary, current decisions and
    status) so that the next item and a decision cost a scan of small in-memory rows,
    not a re-resolution of every item from the store. A decision made here updates the
    index for its item; a commit by another process (an import, a build) is noticed
    through the store's data version and rebuilds it.
    """

    def __init__(
        self,
        queue: LocalQueue,
        policy: Policy,
        dataset: str,
        readings: Callable[[dict], tuple[list, str]] | None = None,
        verifier: Verifier | None = None,
        hotkeys: dict[str, str] | None = None,
    ):
        self.queue, self.policy, self.dataset = queue, policy, dataset
        self.hotkeys = {**HOTKEYS, **(hotkeys or {})}
        self.readings = readings or stored_readings
        self.verifier = verifier
        self._lock = threading.Lock()
        self._index: _Index | None = None
        self._version: int | None = None

    def _rows(self) -> _Index:
        """The index, rebuilt when the store changed under another connection."""
        version = self.queue.data_version()
        if self._index is None or version != self._version:
            self._index = _Index(self.queue, self.policy)
            self._version = version
        return self._index

    def meta(self) -> dict:
        """What the page needs once: names, filters, categories and keys."""
        with self._lock:
            summaries = self._rows().summaries
        return {
            "dataset": self.dataset,
            "policy": self.policy.describe(),
            "databases": sorted({s["db_id"] for s in summaries}),
            "categories": sorted({s["category"] or ANSWERABLE for s in summaries}),
            "labels": sorted({s["label"] for s in summaries}),
            "generators": sorted({s["generator"] or "" for s in summaries} - {""}),
            "statuses": [AWAITING, *STATUSES, "any"],
            "taxonomy": {label: [c for c in cats if c] for label, cats in TAXONOMY.items()},
            "guidelines": guidelines(),
            "hotkeys": self.hotkeys,
        }

    def next_item(
        self,
        annotator: str,
        db=None,
        category=None,
        status=None,
        after=None,
        item=None,
        filters: Filters | None = None,
    ) -> dict:
        """The first matching item (after ``after``, wrapping) the annotator has not decided;
        ``item`` asks for that one, decided or not (the page's undo and its previous
        button show an item again). ``filters`` combine every filter and the search;
        ``db``, ``category`` and ``status`` are the same filters given one by one."""
        annotator = _annotator(annotator)
        filters = filters or Filters(db=db, category=category, status=status)
        with self._lock:
            index = self._rows()
            chosen, remaining = index.next(annotator, after, filters)
            if item in index.decided:
                chosen = item
            progress = index.progress(annotator)
            state = None if chosen is None else (index.status[chosen], len(index.decided[chosen]))
            yours = None if chosen is None else index.decided[chosen].get(annotator)
        view = None if chosen is None else self.view(chosen, *state)
        if view is not None:
            view["yours"] = None if yours is None else yours["verdict"]
        return {"item": view, "remaining": remaining, "progress": progress}

    def bulk(self, payload: dict) -> dict:
        """Accept or reject every item that matches the filters and the annotator has not
        decided: one decision per item (its comment says it was a bulk decision), all in
        one transaction. Returns the ids, which the page's undo retracts as one step."""
        if not isinstance(payload, dict):
            raise DecisionError("request", "the body is not a JSON object")
        annotator = _annotator(payload.get("annotator"))
        verdict = payload.get("verdict")
        if verdict not in ("accept", "reject"):
            raise DecisionError("request", f"bulk verdict {verdict!r}", "use accept or reject")
        filters = Filters.from_query(payload.get("filters") or {})
        with self._lock:
            index = self._rows()
            ids = index.matching(annotator, filters)
            comment = f"bulk {verdict} of {len(ids)} items ({filters.describe()})"
            made = [
                (f"item {i}", make_decision(i, annotator, verdict, comment=comment)) for i in ids
            ]
            self.queue.record_many(made, known=set(index.ids))
            self._refresh(index, ids)
            progress = index.progress(annotator)
        return {"item_ids": ids, "verdict": verdict, "progress": progress}

    def bulk_undo(self, payload: dict) -> dict:
        """Take back a bulk decision as one step: a retraction for each of its items on
        which the annotator's current decision is still the one it made."""
        if not isinstance(payload, dict):
            raise DecisionError("request", "the body is not a JSON object")
        annotator = _annotator(payload.get("annotator"))
        ids = payload.get("item_ids") or []
        with self._lock:
            index = self._rows()
            live = [i for i in ids if i in index.decided and annotator in index.decided[i]]
            made = [(f"item {i}", make_decision(i, annotator, RETRACT)) for i in live]
            self.queue.record_many(made, known=set(index.ids))
            self._refresh(index, live)
            progress = index.progress(annotator)
        return {"item_ids": live, "progress": progress}

    def _refresh(self, index: _Index, ids: list[str]) -> None:
        """Bring the index up to date after recording on ``ids`` (called under the lock)."""
        current = self.queue.current_many(ids)
        for item_id in ids:
            index.update(item_id, current.get(item_id, []))
        self._version = self.queue.data_version()

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
        if item.get("category") == "missing-column" and self.verifier is not None:
            shown["elsewhere"] = columns_elsewhere(item, self.verifier.schema(item))
        readings, source = self.readings(item)
        context = self.queue.context(item_id) or {}
        shown.update(
            readings=readings,
            readings_source=source,
            parent=context.get("parent"),
            spot_check=bool(context.get("spot_check")),
            candidates=[_candidate(c) for c in item.get("candidates") or []],
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
        """Record one decision from the page; :class:`DecisionError` when it is wrong.

        The verdict ``retract`` takes the annotator's latest decision on the item back
        (the page's undo); the trail keeps both.
        """
        if not isinstance(payload, dict):
            raise DecisionError("request", "the body is not a JSON object")
        names = ("label", "category", "question", "sql", "spans", "comment")
        given = {k: payload.get(k) for k in names}
        decision = make_decision(
            payload.get("item_id"),
            _annotator(payload.get("annotator")),
            payload.get("verdict"),
            **given,
        )
        where = f"decision on item {payload.get('item_id')}"
        if is_correction(decision):
            checked = check_decision(decision, self.queue.item(str(decision["item_id"])), where)
            verified_correction(self.verifier, self.queue.item(checked["item_id"]), checked, where)
        with self._lock:
            index = self._rows()
            kept = self.queue.record(decision, where=where)
            index.update(kept["item_id"], self.queue.current(kept["item_id"]))
            progress = index.progress(kept["annotator"])
            if self.queue.data_version() != self._version:
                self._index = None  # another process committed meanwhile: rebuild next time
        return {"decision": kept, "progress": progress}

    def run(self, payload: dict) -> dict:
        """The first rows of a corrected SQL on the item's database, or its error in one
        line; nothing is recorded."""
        if not isinstance(payload, dict):
            raise DecisionError("request", "the body is not a JSON object")
        item = self.queue.item(str(payload.get("item_id")))
        if item is None:
            raise DecisionError("request", f"unknown item id {payload.get('item_id')!r}")
        sql = payload.get("sql")
        if not isinstance(sql, str) or not sql.strip():
            return {"error": "write a query first"}
        if self.verifier is None:
            return {"error": "the databases are not available to this page"}
        return self.verifier.preview(item, sql)

    def schema(self, item_id: str | None) -> dict:
        """The whole schema of an item's database (its edited one for an edit): every
        table with its columns and types."""
        item = self.queue.item(str(item_id))
        if item is None:
            raise DecisionError("request", f"unknown item id {item_id!r}")
        found = None if self.verifier is None else self.verifier.schema(item)
        if found is None:
            return {"db_id": item["db_id"], "tables": self.queue.excerpt(item["id"]) or []}
        tables = [
            {"name": t.name, "columns": [{"name": c.name, "type": c.type} for c in t.columns]}
            for t in found.tables
        ]
        return {"db_id": item["db_id"], "tables": tables}

    def progress(self, annotator: str | None = None) -> dict:
        """Items per status, and how many this annotator decided."""
        with self._lock:
            return self._rows().progress(annotator)


class _Index:
    """Every queued item's summary, current decisions by annotator and status, by id."""

    def __init__(self, queue: LocalQueue, policy: Policy):
        self.policy = policy
        self.summaries = queue.summaries(text=True)
        for summary in self.summaries:  # what the search box looks in, lower-cased once
            summary["text"] = f"{summary.pop('question') or ''}\n{summary.pop('sql') or ''}".lower()
        self.ids = [s["id"] for s in self.summaries]
        self.decided: dict[str, dict[str, dict]] = {i: {} for i in self.ids}
        for decision in queue.pull():
            if decision["item_id"] in self.decided:
                self.decided[decision["item_id"]][decision["annotator"]] = decision
        self.generator = {s["id"]: s["generator"] for s in self.summaries}
        self.spot_checks = {s["id"] for s in self.summaries if s["spot_check"]}
        self.status = {i: self._resolve(i) for i in self.ids}
        self.counts = Counter(self.status.values())
        self.spot_waiting = sum(self._spot_waits(i) for i in self.spot_checks)
        self.mine = Counter(a for decided in self.decided.values() for a in decided)

    def _resolve(self, item_id: str) -> str:
        """The item's status; a spot check nobody decided yet awaits a person here (the
        build counts it as accepted meanwhile)."""
        item = {"id": item_id, "provenance": {"generator": self.generator[item_id]}}
        resolution = resolve(item, list(self.decided[item_id].values()), self.policy)
        waiting = awaits_person(resolution, item_id in self.spot_checks)
        return OPEN if waiting else resolution.status

    def _spot_waits(self, item_id: str) -> bool:
        """Whether a spot check still waits for a person (open or in conflict)."""
        return item_id in self.spot_checks and self.status[item_id] in (OPEN, "conflict")

    def update(self, item_id: str, decisions: list[dict]) -> None:
        """Replace one item's current decisions and status."""
        self.mine.subtract(list(self.decided[item_id]))
        self.counts[self.status[item_id]] -= 1
        self.spot_waiting -= self._spot_waits(item_id)
        self.decided[item_id] = {d["annotator"]: d for d in decisions}
        self.status[item_id] = self._resolve(item_id)
        self.mine.update(list(self.decided[item_id]))
        self.counts[self.status[item_id]] += 1
        self.spot_waiting += self._spot_waits(item_id)

    def next(self, annotator: str, after, filters: Filters) -> tuple[str | None, int]:
        """The id of the first matching undecided item after ``after`` (wrapping), and
        how many match."""
        start = bisect_right(self.ids, after) if after else 0
        first, remaining = None, 0
        for summary in self.summaries[start:] + self.summaries[:start]:
            item_id = summary["id"]
            if annotator in self.decided[item_id]:
                continue
            if filters.match(summary, self.status[item_id]):
                remaining += 1
                first = first or item_id
        return first, remaining

    def matching(self, annotator: str, filters: Filters) -> list[str]:
        """Ids of every matching item the annotator has not decided, in queue order."""
        return [
            s["id"]
            for s in self.summaries
            if annotator not in self.decided[s["id"]] and filters.match(s, self.status[s["id"]])
        ]

    def progress(self, annotator: str | None) -> dict:
        """Items per status, and how many this annotator decided; ``awaiting`` counts the
        items that still wait for a person: open or in conflict, plus the spot checks
        nobody decided (the build counts those as accepted meanwhile, so its own
        "await review" figure leaves them out)."""
        counts = {s: self.counts.get(s, 0) for s in STATUSES}
        mine = self.mine.get(annotator, 0) if annotator else 0
        waiting = counts[OPEN] + counts["conflict"]
        spot = self.spot_waiting
        awaiting = {"items": waiting, "spot_checks": spot, "build": waiting - spot}
        return {
            "items": len(self.ids),
            "by_status": counts,
            "decided_by_you": mine,
            "awaiting": awaiting,
        }


def guidelines() -> list[dict]:
    """Every category's definition and example (the drafting prompts' text), in the
    order of the page's relabel list; the first nine carry the keys 1-9."""
    return [
        {**asdict(d), "key": str(n) if n <= 9 else None}
        for n, d in enumerate(definitions(), start=1)
    ]


def _candidate(found: dict) -> dict:
    return {k: found.get(k) for k in ("sql", "generator", "stratum", "error")}


def _annotator(name) -> str:
    if not isinstance(name, str) or not name.strip():
        raise DecisionError("request", "no annotator name", "type your name in the page's header")
    return name.strip()


@dataclass(frozen=True)
class Filters:
    """The page's filters, which combine: database, category, label, generator, status,
    spot check (``yes`` or ``no``) and a search over question and SQL (``q``, every
    word must appear, case aside). Empty means any; the status defaults to awaiting."""

    db: str | None = None
    category: str | None = None
    label: str | None = None
    generator: str | None = None
    status: str | None = None
    spot: str | None = None
    q: str | None = None

    @classmethod
    def from_query(cls, query: dict) -> Filters:
        """The filters named in a query string or a JSON body (other keys ignored)."""
        return cls(**{f.name: (query.get(f.name) or None) for f in fields(cls)})

    def describe(self) -> str:
        """The filters set, for a bulk decision's comment: ``status awaiting, label ...``."""
        shown = {"status": AWAITING, **{k: v for k, v in asdict(self).items() if v}}
        return ", ".join(f"{k} {v}" for k, v in shown.items())

    @cached_property
    def words(self) -> tuple[str, ...]:
        """The search's words, lower-cased."""
        return tuple((self.q or "").lower().split())

    def match(self, summary: dict, status: str) -> bool:
        """Whether an item (its summary and status) passes every filter; the cheap,
        most selective tests first (it runs over the whole queue on every request)."""
        wanted = self.status or AWAITING
        if wanted == AWAITING:
            if status != OPEN and status != "conflict":
                return False
        elif wanted != "any" and status != wanted:
            return False
        if self.db and summary["db_id"] != self.db:
            return False
        if self.label and summary["label"] != self.label:
            return False
        if self.generator and summary["generator"] != self.generator:
            return False
        if self.category and (summary["category"] or ANSWERABLE) != self.category:
            return False
        if self.spot and summary["spot_check"] != (self.spot == "yes"):
            return False
        text = summary["text"]
        for word in self.words:  # noqa: SIM110 (a loop, not all(): no generator per item)
            if word not in text:
                return False
        return True


def make_server(
    page: ReviewPage,
    port: int = 8765,
    log: Callable[[str], None] | None = None,
    token: str | None = None,
    max_body: int = MAX_BODY,
    timeout: float = READ_TIMEOUT,
):
    """A threading HTTP server for ``page`` on 127.0.0.1 (port 0 picks a free one).

    The API answers only requests that carry ``token`` (a fresh random one when not
    given; the server's ``token`` attribute) in the ``X-Review-Token`` header; the page
    itself reads it from the URL that :func:`page_url` prints. A POST body may hold at
    most ``max_body`` bytes; a client that sends nothing for ``timeout`` seconds is
    dropped. Raises :class:`ReviewServerError` (one line) when the port is taken.
    """
    secret = token or secrets.token_urlsafe(24)

    class Handler(_Handler):
        review = page
        say = staticmethod(log or (lambda _msg: None))
        expected = secret
        limit = max_body

    Handler.timeout = timeout
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as error:
        raise ReviewServerError(port, error) from None
    server.token = secret
    return server


def page_url(server) -> str:
    """The address a person opens: the page with the session token."""
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/?{urlencode({'token': server.token})}"


class ReviewServerError(AnswerableError):
    """The review server cannot start: the port is taken or not ours to use."""

    def __init__(self, port: int, error: OSError):
        if error.errno == errno.EADDRINUSE:
            problem = f"port {port} on 127.0.0.1 is already in use"
        else:
            problem = f"cannot listen on 127.0.0.1:{port}: {error.strerror or error}"
        super().__init__(f"{problem} (fix: pass another --port, or stop what listens there)")


class _Refused(Exception):
    """A request refused before it reaches the page: an HTTP status and a reason."""

    def __init__(self, status: HTTPStatus, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


class _Handler(BaseHTTPRequestHandler):
    review: ReviewPage
    say: Callable[[str], None]
    expected: str
    limit: int
    server_version = "answerable-review"

    def log_message(self, format: str, *args) -> None:
        self.say(format % args)

    def _check_local(self) -> None:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        if host not in LOCAL_HOSTS:
            raise _Refused(HTTPStatus.FORBIDDEN, "only 127.0.0.1 or localhost")

    def _check_api(self) -> None:
        """Token, and Origin (when a browser sends one) must be the page's own."""
        given = self.headers.get(TOKEN_HEADER) or ""
        if not hmac.compare_digest(given.encode(), self.expected.encode()):
            raise _Refused(
                HTTPStatus.FORBIDDEN,
                "missing or wrong session token: open the URL `answerable review serve` printed",
            )
        origin = self.headers.get("Origin")
        port = self.server.server_address[1]
        if origin is not None and origin not in {f"http://{h}:{port}" for h in LOCAL_HOSTS}:
            raise _Refused(HTTPStatus.FORBIDDEN, f"requests from {origin} are not accepted")

    def do_GET(self) -> None:
        self._guarded(self._get)

    def do_POST(self) -> None:
        self._guarded(self._post)

    def _guarded(self, handle) -> None:
        """Run ``handle``; a refusal or an unexpected error becomes a one-line JSON reply."""
        try:
            self._check_local()
            handle()
        except _Refused as refused:
            self._send_json({"error": refused.reason}, refused.status)
        except DecisionError as error:
            self._send_json({"error": str(error)}, HTTPStatus.BAD_REQUEST)
        except TimeoutError:
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as error:  # one line for the person, never a traceback
            self.say(f"error answering {self.command} {self.path}: {error!r}")
            self.close_connection = True
            self._send_json({"error": f"internal error: {error}"}, HTTPStatus.INTERNAL_SERVER_ERROR)

    def _get(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/favicon.ico":
            self._send(b"", "image/x-icon", HTTPStatus.NO_CONTENT)
            return
        if url.path in STATIC:
            name, kind = STATIC[url.path]
            self._send((PAGE_DIR / name).read_bytes(), kind)
            return
        self._check_api()
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        routes = {
            "/api/meta": lambda: self.review.meta(),
            "/api/next": lambda: self.review.next_item(
                query.get("annotator", ""),
                after=query.get("after"),
                item=query.get("item"),
                filters=Filters.from_query(query),
            ),
            "/api/progress": lambda: self.review.progress(query.get("annotator")),
            "/api/schema": lambda: self.review.schema(query.get("item")),
        }
        if url.path not in routes:
            raise _Refused(HTTPStatus.NOT_FOUND, f"no such page: {url.path}")
        self._send_json(routes[url.path]())

    def _post(self) -> None:
        # Everything is decided from the headers before a byte of the body is read; a
        # refused body is never read, so the connection is closed after the reply.
        self.close_connection = True
        self._check_api()
        path = urlsplit(self.path).path
        posts = {
            "/api/decisions": (self.review.decide, HTTPStatus.CREATED),
            "/api/bulk": (self.review.bulk, HTTPStatus.CREATED),
            "/api/bulk-undo": (self.review.bulk_undo, HTTPStatus.CREATED),
            "/api/run": (self.review.run, HTTPStatus.OK),
        }
        if path not in posts:
            raise _Refused(HTTPStatus.NOT_FOUND, "no such page")
        if not _is_json(self.headers.get("Content-Type")):
            raise _Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send application/json")
        length = _content_length(self.headers, self.limit)
        body = self.rfile.read(length)
        if len(body) < length:
            raise _Refused(HTTPStatus.BAD_REQUEST, "the body is shorter than Content-Length")
        self.close_connection = False
        try:
            payload = json.loads(body.decode("utf-8") or "null")
        except UnicodeDecodeError:
            raise _Refused(HTTPStatus.BAD_REQUEST, "the body is not valid UTF-8") from None
        except json.JSONDecodeError as error:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"not JSON: {error}") from None
        except RecursionError:
            raise _Refused(HTTPStatus.BAD_REQUEST, "JSON nested too deeply") from None
        handle, status = posts[path]
        self._send_json(handle(payload), status)

    def _send_json(self, value, status=HTTPStatus.OK) -> None:
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        self._send(body, "application/json; charset=utf-8", status)

    def _send(self, body: bytes, kind: str, status=HTTPStatus.OK) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


def _is_json(content_type: str | None) -> bool:
    """True for ``application/json``, optionally with ``charset=utf-8``, and nothing else.

    >>> [_is_json(t) for t in ("application/json", "application/json; charset=UTF-8",
    ...                        "application/jsonp", "text/plain", None)]
    [True, True, False, False, False]
    """
    kind, *params = [part.strip().lower() for part in (content_type or "").split(";")]
    return kind == "application/json" and all(p == "charset=utf-8" for p in params)


def _content_length(headers, limit: int) -> int:
    """The declared body length, or a refusal: missing, chunked, not a number, negative,
    or beyond ``limit`` bytes."""
    if headers.get("Transfer-Encoding"):
        raise _Refused(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
    text = headers.get("Content-Length")
    if text is None:
        raise _Refused(HTTPStatus.LENGTH_REQUIRED, "a POST needs a Content-Length")
    if not text.strip().isdigit():
        raise _Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {text!r} is not a byte count")
    length = int(text)
    if length > limit:
        raise _Refused(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"the body has {length} bytes; at most {limit} are accepted",
        )
    return length
