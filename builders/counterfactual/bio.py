"""BIO tags: DTE's token-level view of an item's spans (COL, VAL, AMB, UNK, O).

A question is split into words and punctuation marks; a token inside a span gets
``B-<tag>`` when it starts the span and ``I-<tag>`` after, any other token ``O``.

>>> item = {"id": "x", "question": "What is the home score?",
...         "spans": [{"start": 12, "end": 22, "tag": "UNK"}]}
>>> bio_tags(item)["tags"]
['O', 'O', 'O', 'B-UNK', 'I-UNK', 'O']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from answerable.kernel.records import guard_replace, write_jsonl

TAGS = ("COL", "VAL", "AMB", "UNK")
_TOKEN = re.compile(r"\w+|[^\w\s]")


def bio_tags(item: dict) -> dict:
    """``{id, tokens, tags}`` for one item."""
    tokens, tags = [], []
    spans = sorted(item.get("spans") or [], key=lambda s: (s["start"], s["end"]))
    for match in _TOKEN.finditer(item["question"]):
        tokens.append(match.group())
        tags.append(_tag(match.start(), match.end(), spans))
    return {"id": item["id"], "tokens": tokens, "tags": tags}


def _tag(start: int, end: int, spans: list[dict]) -> str:
    for span in spans:
        if start < span["end"] and span["start"] < end:
            inside = start > span["start"]
            return f"{'I' if inside else 'B'}-{span['tag']}"
    return "O"


def write_bio(items: Iterable[dict], path: Path, force: bool = False) -> Path:
    """Write one ``{id, tokens, tags}`` line per item, sorted by id; a file already at
    ``path`` is replaced only when it is a BIO file too, or with ``force``."""
    guard_replace(path, force, ours=b'{"id":')
    return write_jsonl(sorted((bio_tags(i) for i in items), key=lambda r: r["id"]), path)
