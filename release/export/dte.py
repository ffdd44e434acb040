"""DTE / NoisySP's layout: ``<split>.json``, a list of records with the database schema,
the question, its tokens with BIO tags (COL, VAL, AMB, UNK), the label and category, and
the response text a system should give.

Fields: ``id, db_id, schema`` (``{table: [column, ...]}``), ``question, tokens, tags,
label, category, sql`` (null unless answerable) and ``response`` (the item's explanation;
empty for an answerable item, whose answer is its SQL). Items over a database the release
does not ship are left out, since the schema is part of the input.
"""

from __future__ import annotations

from collections.abc import Mapping

from answerable.builders.counterfactual.bio import bio_tags
from answerable.builders.schema import DatabaseSchema
from answerable.release.contents import database_key
from answerable.release.export.common import Export, by_split, json_text
from answerable.release.export.spider import NO_SCHEMA


def export(items: list[dict], schemas: Mapping[str, DatabaseSchema]) -> Export:
    """One JSON file per split."""
    out = Export()
    for split, members in by_split(items).items():
        records = []
        for item in members:
            schema = schemas.get(database_key(item))
            if schema is None:
                out.leave_out(item, NO_SCHEMA)
            else:
                records.append(dte_record(item, schema))
        if records:
            out.files[f"{split}.json"] = json_text(records)
    return out


def dte_record(item: dict, schema: DatabaseSchema) -> dict:
    """One NoisySP-style record."""
    tagged = bio_tags(item)
    return {
        "id": item["id"],
        "db_id": database_key(item),
        "schema": {t.name: [c.name for c in t.columns] for t in schema.tables},
        "question": item["question"],
        "tokens": tagged["tokens"],
        "tags": tagged["tags"],
        "label": item["label"],
        "category": item.get("category"),
        "sql": item.get("sql"),
        "response": item.get("explanation") or "",
    }
