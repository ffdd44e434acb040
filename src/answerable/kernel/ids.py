"""Content-hash ids and seeded randomness.

Every id is a hash of the fields that define a record, so the same input always gets
the same id. Every random choice draws from a generator derived from
(recipe seed, step name, item id), never from global state, time or process id.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the one byte form we hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(value: Any, length: int = 16) -> str:
    """Hex sha256 of ``value``'s canonical JSON, cut to ``length`` characters.

    >>> content_hash({"b": 1, "a": 2}) == content_hash({"a": 2, "b": 1})
    True
    """
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:length]


def item_id(
    db_id: str, question: str, sql: str | None, db_variant: str | None = None, edit: Any = None
) -> str:
    """The id of an item: a hash of the database, question, SQL and schema edit."""
    return content_hash(
        {"db_id": db_id, "db_variant": db_variant, "question": question, "sql": sql, "edit": edit}
    )


def rng_for(seed: int, step: str, key: str = "") -> random.Random:
    """A ``random.Random`` private to (seed, step, key).

    >>> rng_for(1, "sample", "x").random() == rng_for(1, "sample", "x").random()
    True
    """
    digest = hashlib.sha256(f"{seed}\x1f{step}\x1f{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sha256_file(path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
