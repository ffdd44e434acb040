"""BiomedSQL's layout: ``<split>.csv``, one row per question with the fields its metric
code reads and the benchmark carries: ``uuid, db_id, question, SQL, answer,
execution_results, sql_category, hardness``.

``execution_results`` is the gold result as a list of records (``{column: value}``, as
BiomedSQL's CSV writes them: Python literals, read with ``ast.literal_eval``), capped at
the recipe's row cap. BiomedSQL's EX compares the sets of the rows' ``UUID`` values (its
tables give every row one, Sec. 5.1); our databases do not, so each record's ``UUID`` is
the row's identity, its values as JSON: EX is then row-wise set equality, as the text
defines it. ``answer`` is the gold natural-language answer (empty when the item has
none); ``sql_category`` lists the operation categories joined by ``;``. BiomedSQL holds
executed answerable questions only: every other item, and answerable items without a
stored result, is left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from answerable.builders.schema import DatabaseSchema
from answerable.release.export.common import Export, by_split, csv_text, result_rows
from answerable.release.reader import database_key

HEADER = ["uuid", "db_id", "question", "SQL", "answer", "execution_results", "sql_category"]
HEADER += ["hardness"]
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
    result = item.get("result") or {}
    return [
        item["id"],
        database_key(item),
        item["question"],
        item["sql"],
        item.get("answer") or "",
        repr(result_records(result.get("columns") or [], result_rows(item))),
        ";".join(meta.get("operations") or []),
        meta.get("hardness") or "",
    ]


def result_records(columns: list[str], rows: list[list]) -> list[dict]:
    """Result rows as BiomedSQL's records, each with its ``UUID``: the row's values as JSON."""
    return [
        {"UUID": json.dumps(row, ensure_ascii=False), **dict(zip(columns, row, strict=False))}
        for row in rows
    ]
