"""BiomedSQL's layout: ``<split>.csv`` of question / SQL / execution-result triples with
the SQL's operation categories: ``id, db_id, question, SQL, execution_result,
sql_category, hardness``.

``execution_result`` is the gold result's stored rows as JSON (capped at the recipe's
row cap; ``row_count`` in the release has the true count); ``sql_category`` lists
BiomedSQL's operation categories joined by ``;``. BiomedSQL holds executed answerable
questions only: every other item, and answerable items without a stored result, is left
out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from answerable.builders.schema import DatabaseSchema
from answerable.release.contents import database_key
from answerable.release.export.common import Export, by_split, csv_text, result_rows

HEADER = ["id", "db_id", "question", "SQL", "execution_result", "sql_category", "hardness"]
NOT_ANSWERABLE = "BiomedSQL holds answerable questions with their execution result only"
NO_RESULT = "the item has no stored execution result"


def export(items: list[dict], _schemas: Mapping[str, DatabaseSchema]) -> Export:
    """One CSV per split."""
    out = Export()
    for split, members in by_split(items).items():
        rows = []
        for item in members:
            if item["label"] != "answerable":
                out.leave_out(item, NOT_ANSWERABLE)
            elif not item.get("result"):
                out.leave_out(item, NO_RESULT)
            else:
                rows.append(biomedsql_row(item))
        if rows:
            out.files[f"{split}.csv"] = csv_text(HEADER, rows)
    return out


def biomedsql_row(item: dict) -> list:
    """One CSV row of an answerable item."""
    meta = item.get("sql_meta") or {}
    return [
        item["id"],
        database_key(item),
        item["question"],
        item["sql"],
        json.dumps(result_rows(item), ensure_ascii=False),
        ";".join(meta.get("operations") or []),
        meta.get("hardness") or "",
    ]
