"""The local backend: a SQLite review store in the work directory.

Two tables. ``items`` holds each pushed item (its JSON and the schema excerpt shown to
annotators) keyed by item id, so a second push updates in place. ``decisions`` is the
audit trail: every decision ever recorded, in order, never updated or deleted; the one
that counts for an annotator on an item is their latest (:func:`latest_decisions`).
Recording the exact same decision twice (an import run again) is a no-op.

The store is safe to share between the review page's threads: one connection, one lock.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from answerable.annotation.decisions import DecisionError, check_decision
from answerable.annotation.queue import (
    RETRACT,
    Progress,
    PushReport,
    count_progress,
    latest_decisions,
    latest_entries,
    queue_problem,
    queue_reject,
)
from answerable.kernel.errors import sqlite_os_errors
from answerable.kernel.ids import canonical_json

SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    id TEXT PRIMARY KEY,
    db_id TEXT NOT NULL,
    label TEXT NOT NULL,
    category TEXT,
    generator TEXT,
    body TEXT NOT NULL,
    excerpt TEXT,
    context TEXT,
    retired INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    body TEXT NOT NULL UNIQUE
);
CREATE INDEX IF NOT EXISTS decisions_by_item ON decisions (item_id, annotator);
"""


FEW = 50  # up to this many decisions, the trail is looked up by key rather than read whole


def store_path(workdir: Path, dataset: str) -> Path:
    """Where a dataset's review store lives: ``<workdir>/<dataset>/review/queue.sqlite``."""
    return Path(workdir) / dataset / "review" / "queue.sqlite"


class LocalQueue:
    """The review queue kept in one SQLite file.

    >>> import tempfile, pathlib
    >>> queue = LocalQueue(pathlib.Path(tempfile.mkdtemp()) / "q.sqlite")
    >>> queue.push([{"id": "0" * 16, "db_id": "x", "question": "q?", "label": "answerable",
    ...              "category": None, "provenance": {"generator": "seed_v1"}}]).added
    1
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite_os_errors(self.path):
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            _add_missing_columns(self._db)
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> LocalQueue:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    # ---- items ---------------------------------------------------------------------

    def push(
        self,
        items: Iterable[dict],
        excerpts: Mapping[str, list] | None = None,
        contexts: Mapping[str, dict] | None = None,
    ) -> PushReport:
        """Add or update items by id; decisions already recorded are kept.

        ``contexts`` holds what the page shows beside an item but is not part of it (a
        draft's parent question and SQL, whether it is a spot check).
        """
        excerpts, contexts = excerpts or {}, contexts or {}
        report, rows = PushReport(), []
        for item in items:
            problem = queue_problem(item)
            if problem:
                report.rejects.append(queue_reject(item, problem))
                continue
            excerpt, context = excerpts.get(item["id"]), contexts.get(item["id"])
            rows.append((*_item_row(item, _json_or_none(excerpt)), _json_or_none(context)))
        with self._lock, self._transaction():
            known = self._known_bodies([row[0] for row in rows])
            for row in rows:
                before = known.get(row[0])
                if before is None:
                    report.added += 1
                elif before == (row[5], row[6], row[7]):
                    report.unchanged += 1
                else:
                    report.updated += 1
            self._db.executemany(
                "INSERT INTO items (id, db_id, label, category, generator, body, excerpt, context) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "db_id=excluded.db_id, label=excluded.label, category=excluded.category, "
                "generator=excluded.generator, body=excluded.body, excerpt=excluded.excerpt, "
                "context=excluded.context, retired=0",
                rows,
            )
        return report

    def _known_bodies(self, ids: list[str]) -> dict[str, tuple]:
        known = {}
        for start in range(0, len(ids), 900):
            chunk = ids[start : start + 900]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT id, body, excerpt, context FROM items WHERE id IN ({marks})"
            known.update({i: (b, e, c) for i, b, e, c in self._db.execute(query, chunk)})
        return known

    def retire(self, keep: set[str]) -> int:
        """Retire every queued item whose id is not in ``keep`` (no longer a candidate):
        it leaves the page, progress and pulls, and its decisions stay in the trail; a
        later push brings it back. Returns how many were retired now."""
        with self._lock, self._transaction():
            live = [i for (i,) in self._db.execute("SELECT id FROM items WHERE retired = 0")]
            gone = [(i,) for i in live if i not in keep]
            self._db.executemany("UPDATE items SET retired = 1 WHERE id = ?", gone)
        return len(gone)

    def items(self) -> list[dict]:
        """Every item in the queue (retired ones aside), by id."""
        with self._lock:
            rows = self._db.execute(
                "SELECT body FROM items WHERE retired = 0 ORDER BY id"
            ).fetchall()
        return [json.loads(body) for (body,) in rows]

    def item(self, item_id: str) -> dict | None:
        """One item, or None when the queue does not hold it (or it was retired)."""
        with self._lock:
            row = self._db.execute(
                "SELECT body FROM items WHERE id = ? AND retired = 0", (item_id,)
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def excerpt(self, item_id: str) -> list | None:
        """The schema excerpt stored with an item, or None."""
        return self._stored("excerpt", item_id)

    def context(self, item_id: str) -> dict | None:
        """The context stored with an item (parent, spot check), or None."""
        return self._stored("context", item_id)

    def _stored(self, column: str, item_id: str):
        with self._lock:
            row = self._db.execute(
                f"SELECT {column} FROM items WHERE id = ?", (item_id,)
            ).fetchone()
        return None if row is None or row[0] is None else json.loads(row[0])

    def summaries(self, text: bool = False) -> list[dict]:
        """id, db_id, label, category, generator and whether it is a spot check, of every
        item (retired ones aside), by id (no JSON parsing in Python); with ``text``, its
        question and SQL too (what the page's search looks in)."""
        keys = ["id", "db_id", "label", "category", "generator", "spot_check"]
        columns = "id, db_id, label, category, generator, "
        columns += "coalesce(json_extract(context, '$.spot_check'), 0) = 1"
        if text:
            keys += ["question", "sql"]
            columns += ", json_extract(body, '$.question'), json_extract(body, '$.sql')"
        with self._lock:
            rows = self._db.execute(
                f"SELECT {columns} FROM items WHERE retired = 0 ORDER BY id"
            ).fetchall()
        return [dict(zip(keys, row, strict=True)) for row in rows]

    # ---- decisions -----------------------------------------------------------------

    def record(self, decision: dict, where: str = "decision") -> dict:
        """Check one decision and add it to the audit trail; returns it as kept.

        A retraction (verdict ``retract``) needs a decision of the same annotator to take
        back; it is appended like any decision, so the trail keeps what was retracted.
        """
        checked = check_decision(decision, self.item(str(decision.get("item_id"))), where)
        with self._lock, self._transaction():
            if checked["verdict"] == RETRACT and not self._has_decision(checked):
                raise DecisionError(
                    where,
                    f"{checked['annotator']} has no decision on item {checked['item_id']} "
                    "to take back",
                    "undo only a decision that was recorded",
                )
            self._insert([checked])
        return checked

    def _has_decision(self, decision: dict) -> bool:
        key = (decision["item_id"], decision["annotator"])
        return bool(latest_decisions(self._entries([key]).values()))

    def current(self, item_id: str) -> list[dict]:
        """The decisions that count on one item (each annotator's latest), by annotator."""
        return latest_decisions(self.history(item_id))

    def data_version(self) -> int:
        """A number that changes when another connection (an import, a build) commits to
        the store: the review page rebuilds its index then."""
        with self._lock:
            return self._db.execute("PRAGMA data_version").fetchone()[0]

    def current_many(self, item_ids: Iterable[str]) -> dict[str, list[dict]]:
        """The decisions that count on each of ``item_ids`` (each annotator's latest), by
        item id; items without one are left out. One query per 900 ids."""
        ids, rows = list(dict.fromkeys(item_ids)), []
        with self._lock:
            for start in range(0, len(ids), 900):
                chunk = ids[start : start + 900]
                marks = ",".join("?" * len(chunk))
                query = f"SELECT body FROM decisions WHERE item_id IN ({marks}) ORDER BY seq"
                rows += self._db.execute(query, chunk).fetchall()
        found: dict[str, list[dict]] = {}
        for decision in latest_decisions(json.loads(body) for (body,) in rows):
            found.setdefault(decision["item_id"], []).append(decision)
        return found

    def record_many(
        self, decisions: Iterable[tuple[str, dict]], known: set[str] | None = None
    ) -> tuple[int, list[str]]:
        """Record ``(where, decision)`` pairs: the valid ones are kept, each invalid one is
        reported by its ``where``. Returns ``(kept, problems)``; nothing valid is dropped.
        ``known``: the ids the queue holds, when the caller has them at hand."""
        known = known if known is not None else {s["id"] for s in self.summaries()}
        kept, problems = [], []
        for where, decision in decisions:
            item = self.item(decision.get("item_id")) if decision.get("item_id") in known else None
            try:
                kept.append(check_decision(decision, item, where))
            except DecisionError as error:
                problems.append(str(error))
        with self._lock, self._transaction():
            added = self._insert(kept)
        return added, problems

    def _insert(self, decisions: list[dict]) -> int:
        """Append decisions to the trail, except those that restate the annotator's
        current decision on the item (time aside); returns how many were added."""
        keys = {(d["item_id"], d["annotator"]) for d in decisions}
        current = {key: _content(d) for key, d in self._entries(keys).items()}
        fresh = []
        for decision in decisions:
            key = (decision["item_id"], decision["annotator"])
            if current.get(key) != _content(decision):
                fresh.append(decision)
                current[key] = _content(decision)
        before = self._db.total_changes
        self._db.executemany(
            "INSERT OR IGNORE INTO decisions (item_id, annotator, body) VALUES (?, ?, ?)",
            [(d["item_id"], d["annotator"], canonical_json(d)) for d in fresh],
        )
        return self._db.total_changes - before

    def _entries(self, keys) -> dict[tuple[str, str], dict]:
        """The latest trail entry (retractions included) of each (item, annotator) key:
        looked up by key for a few (one decision from the page), read whole for many."""
        keys = set(keys)
        if len(keys) <= FEW:
            rows = []
            for item_id, annotator in keys:
                rows += self._db.execute(
                    "SELECT body FROM decisions WHERE item_id = ? AND annotator = ? ORDER BY seq",
                    (item_id, annotator),
                ).fetchall()
        else:
            rows = self._db.execute("SELECT body FROM decisions ORDER BY seq").fetchall()
        latest = latest_entries(json.loads(body) for (body,) in rows)
        return {(d["item_id"], d["annotator"]): d for d in latest}

    def history(self, item_id: str | None = None) -> list[dict]:
        """The audit trail, oldest first: every decision recorded (of one item, if given)."""
        query, args = "SELECT body FROM decisions", ()
        if item_id is not None:
            query, args = query + " WHERE item_id = ?", (item_id,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY seq", args).fetchall()
        return [json.loads(body) for (body,) in rows]

    def pull(self) -> list[dict]:
        """The decisions that count: each annotator's latest on each item (not retired)."""
        live = {s["id"] for s in self.summaries()}
        return [d for d in latest_decisions(self.history()) if d["item_id"] in live]

    def progress(self) -> Progress:
        """Items, items with a decision, and decisions per annotator."""
        return count_progress((s["id"] for s in self.summaries()), self.pull())

    def _transaction(self):
        return _Transaction(self._db)


class _Transaction:
    """BEGIN ... COMMIT around a block (ROLLBACK on error), on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *_) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _content(decision: dict) -> str:
    return canonical_json({k: v for k, v in decision.items() if k != "time"})


def _json_or_none(value) -> str | None:
    return None if value is None else canonical_json(value)


def _add_missing_columns(db: sqlite3.Connection) -> None:
    """Bring a store made by an earlier version up to the current items table."""
    have = {row[1] for row in db.execute("PRAGMA table_info(items)")}
    added = {"context": "TEXT", "retired": "INTEGER NOT NULL DEFAULT 0"}
    for column, kind in added.items():
        if column not in have:
            db.execute(f"ALTER TABLE items ADD COLUMN {column} {kind}")


def _item_row(item: dict, excerpt: str | None) -> tuple:
    generator = (item.get("provenance") or {}).get("generator")
    identity = (item["id"], item["db_id"], item["label"], item.get("category"), generator)
    return (*identity, canonical_json(item), excerpt)
