"""Releases for the evaluate tests, in the release contract's layout.

``tiny_release`` writes a hand-made release: one small database, items whose gold
results come from the executor, written by the release's own typed writer.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from answerable.builders.executor import ReadOnlyDatabase
from answerable.kernel.ids import item_id
from answerable.kernel.typed_items import to_frame
from answerable.release.cut.write import write_data
from answerable.release.reader import count_items, file_entry

TINY_TABLES = """
CREATE TABLE labs (id INTEGER PRIMARY KEY, patient TEXT, value REAL, unit TEXT);
INSERT INTO labs VALUES (1, 'ann', 1.23449, 'mg'), (2, 'bob', 2.0, NULL),
                        (3, 'ann', 0.5, 'mg'), (4, 'cid', NULL, 'g'), (5, 'bob', 2.0, NULL);
"""


def write_items(release: Path, items: list[dict]) -> list[dict]:
    """Write items as the release writer does: typed ``data/<split>.jsonl`` files; their
    manifest entries."""
    return write_data(to_frame(items), release, ["jsonl"])


def tiny_item(question: str, sql: str | None, label: str = "answerable", **extra) -> dict:
    """An item over the tiny database (result filled in by :func:`tiny_release`)."""
    category = extra.pop("category", None if label == "answerable" else "missing-column")
    return {
        "id": item_id("tiny", question, sql),
        "db_id": "tiny",
        "question": question,
        "sql": sql,
        "label": label,
        "category": category,
        "split": extra.pop("split", "test"),
        "provenance": {"generator": extra.pop("generator", "seed_v1")},
        "database": {"base": "databases/tiny.sqlite", "delta": None},
        **extra,
    }


def tiny_release(folder: Path, items: list[dict]) -> Path:
    """A release of ``items`` over one small database; returns its folder."""
    release = folder / "tiny" / "1.0.0"
    (release / "databases").mkdir(parents=True)
    database = release / "databases" / "tiny.sqlite"
    con = sqlite3.connect(database)
    con.executescript(TINY_TABLES)
    con.commit()
    con.close()
    with ReadOnlyDatabase(database) as db:
        for item in items:
            item["result"] = db.execute(item["sql"]).to_record() if item["sql"] else None
    files = write_items(release, items)
    files.append(file_entry(release, "databases/tiny.sqlite"))
    manifest = {
        "dataset": "tiny",
        "version": "1.0.0",
        "tool": {"name": "answerable", "version": "0"},
        "recipe_signature": "0" * 16,
        "seed": 0,
        "counts": count_items(items),
        "files": files,
    }
    (release / "manifest.json").write_text(json.dumps(manifest))
    return release


def write_lines(path: Path, records: list) -> Path:
    """A JSON Lines file of ``records`` (strings are written as they are)."""
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path
