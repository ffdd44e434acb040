"""Shared pieces of the review tests: the fixture items, a filled queue, decisions."""

from __future__ import annotations

import csv
from pathlib import Path

from answerable.annotation.corrections import Verifier
from answerable.annotation.decisions import make_decision
from answerable.annotation.excerpt import schema_excerpt
from answerable.annotation.store import LocalQueue
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef
from answerable.kernel.records import read_jsonl
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "review"


def review_items() -> list[dict]:
    """Six items over the demo databases: two answerable (seed_v1), a dropped column,
    added synonym columns, a vague word and an out-of-scope request."""
    return list(read_jsonl(FIXTURES / "items.jsonl"))


def by_category(items: list[dict]) -> dict[str, dict]:
    """The fixture items keyed by category (``answerable-clinic`` / ``-league`` for the two
    answerable ones)."""
    keyed = {}
    for item in items:
        key = item["category"] or f"answerable-{item['db_id']}"
        keyed[key] = item
    return keyed


def demo_schemas(demo_dir: Path) -> dict[str, DatabaseSchema]:
    """The schemas of the demo databases."""
    return {
        db_id: DatabaseSchema.from_sqlite(demo_dir / f"{db_id}.sqlite", db_id)
        for db_id in ("clinic", "league")
    }


def demo_verifier(demo_dir: Path, variants: Path | None = None) -> Verifier:
    """A verifier of corrections over the demo databases (as ``review serve`` makes one)."""
    refs = {
        db_id: DatabaseRef(db_id, demo_dir / f"{db_id}.sqlite", schema)
        for db_id, schema in demo_schemas(demo_dir).items()
    }
    return Verifier(refs, variants)


def filled_queue(path: Path, demo_dir: Path) -> LocalQueue:
    """A local queue holding the fixture items with their schema excerpts."""
    items, schemas = review_items(), demo_schemas(demo_dir)
    queue = LocalQueue(path)
    queue.push(items, {i["id"]: schema_excerpt(i, schemas[i["db_id"]]) for i in items})
    return queue


def decision(item_id: str, annotator: str, verdict: str, minute: int = 0, **fields) -> dict:
    """A decision at a fixed time (2026-03-01 10:<minute>)."""
    return make_decision(
        item_id, annotator, verdict, time=f"2026-03-01T10:{minute:02d}:00Z", **fields
    )


def fill_sheet(path: Path, cells: dict[str, dict], key: str = "item_id") -> None:
    """Fill an exported CSV as a spreadsheet would: rows whose ``key`` column is in
    ``cells`` get those cells."""
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    for row in rows:
        row.update(cells.get(row[key], {}))
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
