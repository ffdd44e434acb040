"""The on-disk cache of model replies: one SQLite file in WAL mode, one commit per reply.

Every reply is stored under a hash of the model, the messages, the request parameters
and the sample index, the moment it arrives. A process killed at any point loses only
the requests still in flight: each committed reply is in the write-ahead log, which
SQLite replays on the next open. A rerun finds every finished reply and sends nothing
for it.

>>> import tempfile, pathlib
>>> cache = ReplyCache(pathlib.Path(tempfile.mkdtemp()) / "replies.sqlite")
>>> key = cache_key("m", [{"role": "user", "content": "hi"}], {"temperature": 0}, 0)
>>> cache.get(key) is None
True
>>> cache.put(key, {"text": "hello", "input_tokens": 1, "output_tokens": 1})
>>> cache.get(key)["text"]
'hello'
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from answerable.kernel.errors import sqlite_os_errors
from answerable.kernel.ids import canonical_json, content_hash


def cache_key(model: str, messages: list[dict], params: dict, sample: int) -> str:
    """The key of one request: a hash of everything that decides its reply."""
    return content_hash(
        {"model": model, "messages": messages, "params": params, "sample": sample}, length=64
    )


class ReplyCache:
    """Replies by key in a SQLite file; safe to kill, cheap to reopen."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite_os_errors(self.path):
            self._con = sqlite3.connect(self.path, isolation_level=None)
            self._con.execute("PRAGMA journal_mode = WAL")
            self._con.execute("PRAGMA synchronous = NORMAL")
            self._con.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, model TEXT, reply TEXT)"
            )

    def get(self, key: str) -> dict | None:
        """The stored reply for ``key``, or None."""
        row = self._con.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, reply: dict, model: str = "") -> None:
        """Store one reply and commit it at once."""
        self._con.execute(
            "INSERT OR REPLACE INTO replies (key, model, reply) VALUES (?, ?, ?)",
            (key, model, canonical_json(reply)),
        )

    def __len__(self) -> int:
        return self._con.execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def close(self) -> None:
        """Close the file (every reply is committed already)."""
        self._con.close()

    def __enter__(self) -> ReplyCache:
        return self

    def __exit__(self, *_) -> None:
        self.close()
