"""DTE / NoisySP's layout: ``<split>.json``, a list of records with the database schema,
the question, its tokens with BIO tags (COL, VAL, AMB, UNK, O: the paper's Table 3), the
bindings of its spans to schema concepts (the grounding of Sec. 4.2), the label and
category, and the response text a system should give.

Fields: ``id, db_id, schema`` (``{table: [column, ...]}``), ``question, tokens, tags,
bindings`` (per tagged span: first and last token index, text, class and the concept
it is grounded to, ``table.column`` or null; an AMB or UNK span names the source
database's column the edit made ambiguous or removed), ``label, category, dte_category`` (the
paper's name for the category, Sec. 2.1: column ambiguity, value ambiguity, column
unanswerable, value unanswerable, calculation unanswerable, out-of-scope), ``sql``
(null unless answerable) and ``response`` (the item's explanation; empty for an
answerable item, whose answer is its SQL). Items over a database the release does not
ship are left out, since the schema is part of the input.
"""

from __future__ import annotations

from collections.abc import Mapping

from answerable.builders.counterfactual.bio import bio_tags
from answerable.builders.schema import DatabaseSchema
from answerable.release.export.common import Export, by_split, json_text
from answerable.release.export.spider import NO_SCHEMA
from answerable.release.reader import database_key

# Sec. 2.1 and Table 1: the six sub-categories, in the paper's words
CATEGORIES = {
    "column-ambiguous": "column ambiguity",
    "value-ambiguous": "value ambiguity",
    "missing-column": "column unanswerable",
    "missing-value": "value unanswerable",
    "calculation": "calculation unanswerable",
    "out-of-scope": "out-of-scope",
}
FROM_DTE = {dte: ours for ours, dte in CATEGORIES.items()}


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
        "bindings": bindings(tagged["tags"], tagged["tokens"], item.get("spans") or []),
        "label": item["label"],
        "category": item.get("category"),
        "dte_category": CATEGORIES.get(item.get("category") or ""),
        "sql": item.get("sql"),
        "response": item.get("explanation") or "",
    }


def bindings(tags: list[str], tokens: list[str], spans: list[dict]) -> list[dict]:
    """Each tagged run of tokens (a ``B-`` tag and its ``I-`` tags), with the concept of
    the span it comes from: the next span of the same class in question order, as the
    tags were made."""
    found: list[dict] = []
    for index, tag in enumerate(tags):
        if tag.startswith("B-"):
            found.append({"start": index, "end": index, "tag": tag[2:]})
        elif tag.startswith("I-") and found:
            found[-1]["end"] = index
    left = sorted(spans, key=lambda s: (s["start"], s["end"]))
    for binding in found:
        span = next((s for s in left if s["tag"] == binding["tag"]), None)
        if span is not None:
            left.remove(span)
        binding["text"] = " ".join(tokens[binding["start"] : binding["end"] + 1])
        binding["concept"] = span.get("concept") if span else None
    return found
