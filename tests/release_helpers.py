"""Synthetic items for the release step tests: valid items with just the fields a
release looks at (ids, database, question, SQL, skeleton, label, parent, result)."""

from __future__ import annotations

import hashlib

from answerable.kernel.typed_items import to_frame
from answerable.release.cut.config import release_config


def hex_id(name: str) -> str:
    """A 16-hex-digit item id made from a readable name."""
    return hashlib.sha256(name.encode()).hexdigest()[:16]


def make_item(
    name: str,
    *,
    db_id: str = "shop",
    question: str | None = None,
    sql: str | None = "SELECT 1",
    skeleton: str | None = None,
    label: str = "answerable",
    parent: str | None = None,
    split: str | None = None,
    result_hash: str | None = None,
    hardness: str = "easy",
    generator: str = "seed_v1",
    stratum: str | None = None,
) -> dict:
    """One valid item; ``parent`` is the name of another item (or of a source example)."""
    answerable = label == "answerable"
    item = {
        "id": hex_id(name),
        "db_id": db_id,
        "question": question or f"What about {name}?",
        "sql": sql if answerable else None,
        "label": label,
        "category": None if answerable else "missing-column",
        "provenance": {"generator": generator, "parent": hex_id(parent) if parent else None},
    }
    if answerable:
        item["sql_meta"] = {
            "skeleton": skeleton or f"SELECT _ FROM {name}",
            "hardness": hardness,
            "operations": ["Select"],
        }
        item["result"] = {
            "row_count": 1,
            "columns": ["x"],
            "rows": [[1]],
            "hash": result_hash or hashlib.sha256(name.encode()).hexdigest(),
        }
    if split:
        item["split"] = split
    if stratum:
        item["candidates"] = [
            {"sql": "SELECT 2", "generator": "perturb_sql_v1", "stratum": stratum}
        ]
    return item


def frame_of(items: list[dict]):
    """The typed frame the release steps take."""
    return to_frame(items)


def config(**section):
    """Release settings from a ``release`` section given as keywords."""
    return release_config(section, "recipe.yaml")
