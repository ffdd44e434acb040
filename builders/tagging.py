"""DTE's view of every item: grounding spans on answerable questions, a response on the
problematic ones.

DTE tags every question of its benchmark, answerable ones included: the words that name
a column (COL) or a value (VAL) the gold SQL uses. Generators that edit or draft a
question tag it themselves; an answerable item from a source or a template gets its
spans here, from its SQL qualified against the database's schema (the same grounding
the counterfactual edits use). A problematic item without an explanation of its own (a
source's question) gets its category's response text (:data:`explain.RESPONSES`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from answerable.builders.counterfactual.explain import response
from answerable.builders.counterfactual.grounding import ground
from answerable.builders.counterfactual.query_shapes import Shapes
from answerable.kernel.errors import SQLError


def tag_items(items: list[dict], databases: dict) -> list[dict]:
    """``items`` with spans on answerable items that had none and a response on problematic
    items that had none (new dicts where something is added; the order is kept)."""
    return list(iter_tagged(items, databases))


def iter_tagged(items: Iterable[dict], databases: dict) -> Iterator[dict]:
    """:func:`tag_items` one item at a time, for a stream of them."""
    shapes = Shapes()
    return (_tagged(item, databases, shapes) for item in items)


def _tagged(item: dict, databases: dict, shapes: Shapes) -> dict:
    if item.get("label") != "answerable":
        text = response(item)
        return item if text == item.get("explanation") else {**item, "explanation": text}
    if item.get("spans") or not item.get("sql") or item.get("db_id") not in databases:
        return item
    spans = answerable_spans(item, databases[item["db_id"]].schema, shapes)
    return {**item, "spans": spans} if spans else item


def answerable_spans(item: dict, schema, shapes: Shapes | None = None) -> list[dict]:
    """COL and VAL spans of an answerable item's question ([] when its SQL does not
    qualify against ``schema``: it was verified, so only an edited schema refuses it)."""
    try:
        query = (shapes or Shapes()).query(item["sql"], schema, item.get("dialect", "sqlite"))
    except SQLError:
        return []
    return ground(item["question"], query.refs).spans()
