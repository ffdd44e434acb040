"""SCARE's layout: ``<db>_<split>.json``, a list of (question, candidate SQL) instances,
the unit SCARE scores (Sec. 3.3: "we select 1,400 instances" per database across four
strata), with the fields ``db_id, id, instance_id, type, category, template, question,
gt_sql, pred_sql, gt_exe, exec_acc, generator_name, sampled_category``.

One record per candidate with a SCARE stratum (``sampled_category``: answerable-correct,
answerable-incorrect, ambiguous, unanswerable); an ambiguous or unanswerable question
without a candidate is one instance with an empty ``pred_sql`` (any SQL is invalid for
it). ``type`` is the question's hardness (easy, medium, hard; ``extra`` counted as
hard; ``-`` when it has no SQL), ``category`` its label or category, ``template`` its
subtype or ``-``, ``gt_sql``/``gt_exe`` the gold SQL and result rows as text
(``"null"`` when there is none), ``exec_acc`` whether the candidate gives the gold
result. The candidate's own rows are not written: items keep only their result hash.
An answerable question without a stratified candidate is left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from answerable.builders.schema import DatabaseSchema
from answerable.release.contents import database_key
from answerable.release.export.common import Export, by_split, json_text, result_rows

# SCARE's six categories (Sec. 3.1, Table 5's abbreviations): ours, and the label SCARE
# expects as the model's answer for each
CATEGORIES = {
    "vague-question": ("VQ", "ambiguous"),
    "vague-word": ("VW", "ambiguous"),
    "ambiguous-reference": ("AR", "ambiguous"),
    "small-talk": ("ST", "unanswerable"),
    "out-of-scope": ("OS", "unanswerable"),
    "missing-column": ("MC", "unanswerable"),
}
FROM_SCARE = {short: ours for ours, (short, _) in CATEGORIES.items()}
NO_ANSWER = "null"
NO_CANDIDATE = "SCARE pairs an answerable question with candidate SQL; the item has none"


def export(items: list[dict], _schemas: Mapping[str, DatabaseSchema]) -> Export:
    """SCARE instances per database and split."""
    out = Export()
    files: dict[str, list[dict]] = {}
    for split, members in by_split(items).items():
        for item in members:
            candidates = instances(item)
            if not candidates:
                out.leave_out(item, NO_CANDIDATE)
                continue
            records = files.setdefault(f"{database_key(item)}_{split}.json", [])
            records += [scare_record(item, c, n) for n, c in enumerate(candidates)]
    out.files = {name: json_text(records) for name, records in sorted(files.items())}
    return out


def instances(item: dict) -> list[dict]:
    """The item's candidates with a SCARE stratum; for a question that is not
    answerable and has none, one empty candidate in its label's stratum."""
    found = [c for c in item.get("candidates") or [] if c.get("stratum")]
    if found or item["label"] == "answerable":
        return found
    return [{"sql": "", "stratum": item["label"], "generator": "none"}]


def hardness(item: dict) -> str:
    """SCARE's easy / medium / hard of the question's gold SQL (``-`` without SQL)."""
    level = (item.get("sql_meta") or {}).get("hardness")
    if not item.get("sql") or not level:
        return "-"
    return level if level in ("easy", "medium", "hard") else "hard"


def scare_record(item: dict, candidate: dict, number: int = 0) -> dict:
    """One SCARE instance: an item and one of its candidates."""
    answerable = item["label"] == "answerable"
    return {
        "db_id": database_key(item),
        "id": item["id"],
        "instance_id": f"{item['id']}-{number}",
        "type": hardness(item),
        "category": item.get("category") or item["label"],
        "template": item.get("subtype") or "-",
        "question": item["question"],
        "gt_sql": item["sql"] if answerable else NO_ANSWER,
        "pred_sql": candidate["sql"] or "",
        "gt_exe": json.dumps(result_rows(item), ensure_ascii=False) if answerable else NO_ANSWER,
        "exec_acc": candidate["stratum"] == "answerable-correct",
        "generator_name": candidate.get("model") or candidate["generator"],
        "sampled_category": candidate["stratum"],
    }
