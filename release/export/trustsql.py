"""TrustSQL's own layout: ``<db>_<split>.json``, a list of records per database and split
with the fields its ``evaluate.py`` reads: ``id``, ``db_id``, ``question``, ``query`` (the
gold SQL, or ``"null"``), ``type``, ``note`` and ``template``.

``type`` and ``note`` are TrustSQL's (Sec. 3, Table 1): an answerable question is
``seen-sql`` when its SQL template also occurs among the train split's questions, else
``unseen-sql``, with its hardness as the note (``extra`` counted as ``hard``, the
hardest level TrustSQL names); a question that is not answerable is ``inf`` with one of
the five unanswerable types as the note. Ambiguous questions, and unanswerable ones of a
category TrustSQL does not name (a missing value), are not answerable for TrustSQL too
(gold ``"null"``): they are ``inf`` with their own category as the note, so every item is
exported (TrustSQL's printed table totals its five types; its per-question scores cover
every record). ``db_id`` is the database the question is asked over: an edited
variant's id for an item over a variant (give TrustSQL a whole copy of it, from
``answerable materialize --full``). No database is needed to export: a schema-only
release exports too.
"""

from __future__ import annotations

from collections.abc import Mapping

from answerable.builders.schema import DatabaseSchema
from answerable.release.export.common import Export, by_split, json_text
from answerable.release.reader import database_key

NO_ANSWER = "null"
ANSWERABLE_NOTES = ("easy", "medium", "hard")
# our (category, subtype) -> TrustSQL's unanswerable type (the note of an "inf" record)
UNANSWERABLE_NOTES = {
    ("missing-column", "surface"): "column-surface",
    ("missing-column", "related"): "column-related",
    ("missing-column", "unrelated"): "column-unrelated",
    ("out-of-scope", None): "non-sql",
    ("out-of-domain", None): "ext-know",
}


def export(items: list[dict], _schemas: Mapping[str, DatabaseSchema]) -> Export:
    """One record list per database and split."""
    out = Export()
    seen = {template(i) for i in items if i.get("split") == "train" and template(i)}
    files: dict[str, list[dict]] = {}
    for split, members in by_split(items).items():
        for item in members:
            kind, note = type_and_note(item, seen)
            files.setdefault(f"{database_key(item)}_{split}.json", []).append(
                {
                    "id": item["id"],
                    "db_id": database_key(item),
                    "question": item["question"],
                    "query": item.get("sql") or NO_ANSWER,
                    "type": kind,
                    "note": note,
                    "template": template(item) or "",
                }
            )
    out.files = {name: json_text(records) for name, records in sorted(files.items())}
    return out


def template(item: dict) -> str | None:
    """The item's SQL template: its skeleton (values replaced), None without SQL."""
    return (item.get("sql_meta") or {}).get("skeleton") if item.get("sql") else None


def type_and_note(item: dict, seen: set[str]) -> tuple[str, str]:
    """TrustSQL's ``type`` and ``note`` of an item."""
    if item["label"] == "answerable":
        hardness = (item.get("sql_meta") or {}).get("hardness") or "hard"
        note = hardness if hardness in ANSWERABLE_NOTES else "hard"
        return ("seen-sql" if template(item) in seen else "unseen-sql"), note
    ours = (item.get("category"), item.get("subtype"))
    return "inf", UNANSWERABLE_NOTES.get(ours) or item.get("category") or item["label"]


def from_trustsql(note: str) -> tuple[str, str | None] | None:
    """Our ``(category, subtype)`` for one of TrustSQL's unanswerable types."""
    return next((ours for ours, theirs in UNANSWERABLE_NOTES.items() if theirs == note), None)
