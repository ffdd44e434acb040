"""EHRSQL 2024's layout, one folder per database (the single-database
setting): ``<db>/<split>_data.json`` (``{"version", "data": [{"id", "question"}]}``),
``<db>/<split>_label.json`` (id -> gold SQL, or ``"null"`` for an unanswerable question)
and ``<db>/tables.json`` (Spider-style schema).

The layout has no ambiguous label, so ambiguous items are left out. Items over an edited
variant go to the variant's own folder, since they are (un)answerable on it, not on the
source database.
"""

from __future__ import annotations

from collections.abc import Mapping

from answerable.builders.schema import DatabaseSchema
from answerable.release.export.common import Export, by_split, json_text
from answerable.release.export.spider import NO_SCHEMA, tables_json
from answerable.release.reader import database_key

NO_ANSWER = "null"
VERSION = "answerable"  # EHRSQL files name their release here; ours is in the manifest
AMBIGUOUS = (
    "EHRSQL 2024 labels a question answerable (SQL) or unanswerable (null); it has no ambiguous"
    " label"
)


def export(items: list[dict], schemas: Mapping[str, DatabaseSchema]) -> Export:
    """Data and label files per database and split, and each database's ``tables.json``."""
    out = Export()
    folders: dict[str, list[dict]] = {}
    for item in items:
        key = database_key(item)
        if item["label"] == "ambiguous":
            out.leave_out(item, AMBIGUOUS)
        elif key not in schemas:
            out.leave_out(item, NO_SCHEMA)
        else:
            folders.setdefault(key, []).append(item)
    for key in sorted(folders):
        for split, members in by_split(folders[key]).items():
            data = [{"id": item["id"], "question": item["question"]} for item in members]
            labels = {item["id"]: item.get("sql") or NO_ANSWER for item in members}
            out.files[f"{key}/{split}_data.json"] = json_text({"version": VERSION, "data": data})
            out.files[f"{key}/{split}_label.json"] = json_text(labels)
        out.files[f"{key}/tables.json"] = tables_json([schemas[key]])
    return out
