"""The released record: ``schema/record.schema.json`` in every release, and the field
descriptions the card's table and Croissant take from it.

A released record is an item (``schemas/item.schema.json``) as the data files hold it:
every field and every key of a nested object is present (null when the item has none),
and the fields in :data:`answerable.kernel.item_model.OPEN_FIELDS` are JSON text, said so by
``contentMediaType: application/json`` and their description. It is made from the item
schema, so the two cannot drift apart.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path

from answerable.kernel.item_model import OPEN_FIELDS, item_schema, resolve

RECORD_SCHEMA = "schema/record.schema.json"
JSON_TEXT = "JSON text (decode it with a JSON parser): "


@cache
def record_schema() -> dict:
    """The JSON Schema (draft 2020-12) of one released record (shared: do not change
    it)."""
    item = item_schema()
    properties = {name: _released(node, name) for name, node in item["properties"].items()}
    return {
        "$schema": item["$schema"],
        "$id": "record.schema.json",
        "title": "Released record",
        "description": (
            "One item of a release, as data/<split>.jsonl and data/<split>.parquet hold it: "
            "every field present (null when the item has none); the fields marked JSON text "
            "are strings holding JSON."
        ),
        "type": "object",
        "additionalProperties": False,
        "required": list(properties),
        "properties": properties,
        "allOf": copy.deepcopy(item.get("allOf", [])),
    }


def _released(node: dict, path: str) -> dict:
    """A field's node as released: resolved, JSON text where open, nested objects with
    every key present, and null allowed where the item may lack it."""
    node = resolve(node)[0]
    if path in OPEN_FIELDS:
        text = node.get("description", "").strip()
        return {
            "type": ["string", "null"],
            "contentMediaType": "application/json",
            "description": JSON_TEXT + (text or "see the item schema"),
        }
    node = copy.deepcopy(node)
    if "properties" in node:
        node["properties"] = {
            key: _released(child, f"{path}.{key}") for key, child in node["properties"].items()
        }
        node["required"] = list(node["properties"])
        node["additionalProperties"] = False
    if isinstance(node.get("items"), dict):
        node["items"] = _released(node["items"], path)
    return _nullable(node)


def _nullable(node: dict) -> dict:
    """``node`` with null allowed (a released record holds null for what is absent)."""
    kinds = node.get("type")
    if isinstance(kinds, str):
        node["type"] = [kinds, "null"] if kinds != "null" else kinds
    elif isinstance(kinds, list) and "null" not in kinds:
        node["type"] = [*kinds, "null"]
    if "enum" in node and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]
    return node


def field_descriptions() -> dict[str, str]:
    """Each released field's description, by name (the card's table and Croissant)."""
    return {
        name: node.get("description", "") for name, node in record_schema()["properties"].items()
    }


def write_record_schema(folder: Path) -> Path:
    """Write ``schema/record.schema.json`` into a release folder; its path."""
    path = Path(folder) / RECORD_SCHEMA
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record_schema(), indent=2, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return path
