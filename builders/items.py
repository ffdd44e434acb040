"""The record of an item over an unedited database, as the answerable generators make it."""

from __future__ import annotations

from answerable import __version__
from answerable.kernel.ids import item_id


def plain_item(
    db_id: str,
    question: str,
    sql: str | None,
    *,
    result: dict | None,
    sql_meta: dict | None,
    provenance: dict,
    label: str = "answerable",
    category: str | None = None,
    dialect: str = "sqlite",
    subtype: str | None = None,
) -> dict:
    """An item on ``db_id`` as it is (no schema edit), its id a hash of its content.

    ``provenance`` names the generator and what it was made from; the tool's version is
    added to it.

    >>> item = plain_item("shop", "How many items?", "SELECT count(*) FROM item",
    ...                   result=None, sql_meta=None, provenance={"generator": "seed_v1"})
    >>> item["label"], item["db_variant"], sorted(item["provenance"])
    ('answerable', None, ['generator', 'tool_version'])
    """
    return {
        "id": item_id(db_id, question, sql),
        "db_id": db_id,
        "db_variant": None,
        "question": question,
        "sql": sql,
        "dialect": dialect,
        "label": label,
        "category": category,
        "subtype": subtype,
        "result": result,
        "sql_meta": sql_meta,
        "provenance": {**provenance, "tool_version": __version__},
    }
