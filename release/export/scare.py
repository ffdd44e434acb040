"""SCARE's layout: ``<db>_<split>.json``, a list of records with the fields of SCARE's
correction data: ``db_id, id, type, template, question, gt_sql, pred_sql, gt_exe,
exec_acc, generator_name, sampled_category``.

One record per item, with its first candidate SQL that has a SCARE stratum
(``sampled_category``: answerable-correct, answerable-incorrect, ambiguous,
unanswerable); ``type`` is the item's category (``answerable`` for answerable items),
``template`` its subtype or ``-``, ``gt_sql``/``gt_exe`` the gold SQL and result rows as
text (``"null"`` when there is none), ``exec_acc`` whether the candidate gives the gold
result. SCARE's ``pred_exe`` (the candidate's rows) is not written: items keep only the
candidate's result hash. Items with no stratified candidate are left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from answerable.builders.schema import DatabaseSchema
from answerable.release.contents import database_key
from answerable.release.export.common import Export, by_split, json_text, result_rows

NO_ANSWER = "null"
NO_CANDIDATE = "SCARE pairs each question with candidate SQL; the item has none with a stratum"


def export(items: list[dict], _schemas: Mapping[str, DatabaseSchema]) -> Export:
    """SCARE records per database and split."""
    out = Export()
    files: dict[str, list[dict]] = {}
    for split, members in by_split(items).items():
        for item in members:
            candidate = stratified_candidate(item)
            if candidate is None:
                out.leave_out(item, NO_CANDIDATE)
                continue
            files.setdefault(f"{database_key(item)}_{split}.json", []).append(
                scare_record(item, candidate)
            )
    out.files = {name: json_text(records) for name, records in sorted(files.items())}
    return out


def stratified_candidate(item: dict) -> dict | None:
    """The item's first candidate SQL with a SCARE stratum, or None."""
    return next((c for c in item.get("candidates") or [] if c.get("stratum")), None)


def scare_record(item: dict, candidate: dict) -> dict:
    """One SCARE record of an item and its candidate."""
    answerable = item["label"] == "answerable"
    return {
        "db_id": database_key(item),
        "id": item["id"],
        "type": item.get("category") or item["label"],
        "template": item.get("subtype") or "-",
        "question": item["question"],
        "gt_sql": item["sql"] if answerable else NO_ANSWER,
        "pred_sql": candidate["sql"] or "",
        "gt_exe": json.dumps(result_rows(item), ensure_ascii=False) if answerable else NO_ANSWER,
        "exec_acc": candidate["stratum"] == "answerable-correct",
        "generator_name": candidate.get("model") or candidate["generator"],
        "sampled_category": candidate["stratum"],
    }
