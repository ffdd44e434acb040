"""The item model: an item's fields and their types, derived once from
``schemas/item.schema.json``.

Every place that needs the list of fields or their types reads it here:

- :func:`polars_schema`: one typed column per top-level field, as a release stores it
  (a closed object is a struct of its declared properties, an array a list of its
  items' type, an enum of strings a string). Only the fields in :data:`OPEN_FIELDS` stay
  JSON text, because their keys or cell types vary from item to item.
- :data:`FIELDS`: the top-level fields, the plain ones (:data:`PLAIN_FIELDS`: a single
  value, stored as it is) before the nested ones (:data:`NESTED_FIELDS`: objects and
  lists, stored as JSON text in a build's work files), each in the schema's order.

A field added to the schema is thereby a column of the candidates and of the release,
with its type, and a field the schema cannot type is an error naming it.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

# The one list of fields kept as JSON text: the card says these are open.
OPEN_FIELDS = (
    "trigger",  # keys differ by the kind of trigger
    "edit",  # the edit script's operations take different parameters
    "review",  # decisions as the review backend recorded them
    "provenance.params",  # each generator records its own parameters
    "result.rows",  # cells of any SQL type
    "readings.rows",  # cells of any SQL type (the readings of an ambiguous item)
)

_SCALARS = {"string": pl.String, "integer": pl.Int64, "number": pl.Float64, "boolean": pl.Boolean}


_REQUIRED: dict[str, frozenset] = {}  # struct path -> keys the schema requires (kept when null)


class SchemaShapeError(ValueError):
    """The item schema has an open field that :data:`OPEN_FIELDS` does not list."""


@cache
def item_schema() -> dict:
    """The item JSON Schema (read from the package's ``schemas`` folder without importing
    its validators: every reader of items needs the fields, few need validation)."""
    folder = importlib.util.find_spec("answerable.schemas").submodule_search_locations[0]
    return json.loads((Path(folder) / "item.schema.json").read_text(encoding="utf-8"))


@cache
def polars_schema() -> pl.Schema:
    """The polars schema of a release's data files, one column per item field."""
    schema = item_schema()
    return pl.Schema(
        {name: _dtype(node, name, schema) for name, node in schema["properties"].items()}
    )


def open_fields() -> list[str]:
    """The dotted paths of the item fields stored as JSON text (for the card)."""
    return [path for path in OPEN_FIELDS if _exists(path)]


def _exists(path: str) -> bool:
    head, _, rest = path.partition(".")
    node = item_schema()["properties"].get(head)
    while node is not None and rest:
        node = resolve(node)[0]
        node = node.get("items", node)
        node = resolve(node)[0]
        head, _, rest = rest.partition(".")
        node = (node.get("properties") or {}).get(head)
    return node is not None


def resolve(node: dict) -> tuple[dict, bool]:
    """``(shape, nullable)`` of a node of the item schema: each ``$ref`` inlined and a
    ``oneOf``/``anyOf`` of null and one shape unwrapped to that shape, the node's own
    keys (its description) kept over the shape's; ``nullable`` when null is allowed
    there (a null branch, ``"null"`` among its types, null in its enum).

    >>> shape, nullable = resolve(item_schema()["properties"]["result"])
    >>> nullable, shape["type"], "row_count" in shape["properties"]
    (True, 'object', True)
    """
    nullable = False
    while True:
        own = {k: v for k, v in node.items() if k not in ("$ref", "oneOf", "anyOf")}
        if "$ref" in node:
            node = {**item_schema()["$defs"][node["$ref"].rsplit("/", 1)[-1]], **own}
            continue
        key = next((k for k in ("oneOf", "anyOf") if k in node), None)
        if key is None:
            break
        shapes = [n for n in node[key] if n.get("type") != "null"]
        nullable = nullable or len(shapes) < len(node[key])
        if len(shapes) != 1:
            break
        node = {**shapes[0], **own}
    types = node.get("type")
    nullable = nullable or (isinstance(types, list) and "null" in types)
    return node, nullable or None in node.get("enum", ())


def _dtype(node: dict, path: str, schema: dict) -> pl.DataType:
    if path in OPEN_FIELDS:
        return pl.String
    node = resolve(node)[0]
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else [k for k in kinds or () if k != "null"]
    if not kinds and "enum" in node:
        kinds = sorted({_json_type(v) for v in node["enum"] if v is not None})
    if kinds == ["object"] and node.get("properties"):
        _REQUIRED[path] = frozenset(node.get("required", ()))
        return pl.Struct(
            {k: _dtype(v, f"{path}.{k}", schema) for k, v in node.get("properties", {}).items()}
        )
    if kinds == ["array"] and "items" in node:
        return pl.List(_dtype(node["items"], path, schema))
    if len(kinds) == 1 and kinds[0] in _SCALARS:
        return _SCALARS[kinds[0]]
    raise SchemaShapeError(
        f"item field {path!r} has no fixed shape in schemas/item.schema.json "
        "(fix: declare its properties with additionalProperties, or add it to "
        "OPEN_FIELDS in src/answerable/kernel/item_model.py)"
    )


def _json_type(value: Any) -> str:
    return {str: "string", bool: "boolean", int: "integer", float: "number"}[type(value)]


def required_keys(path: str) -> frozenset:
    """The keys the schema requires in the struct at the dotted ``path`` (kept, as null,
    when an item leaves them out)."""
    polars_schema()  # fills the table on first use
    return _REQUIRED.get(path, frozenset())


def _is_plain(name: str, dtype: pl.DataType) -> bool:
    return name not in OPEN_FIELDS and not isinstance(dtype, pl.Struct | pl.List)


PLAIN_FIELDS = tuple(name for name, kind in polars_schema().items() if _is_plain(name, kind))
NESTED_FIELDS = tuple(name for name in polars_schema() if name not in PLAIN_FIELDS)
FIELDS = PLAIN_FIELDS + NESTED_FIELDS
