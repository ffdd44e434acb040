"""SCARE's layout: ``<db>_<split>.json``, a list of (question, candidate SQL) instances,
the unit SCARE scores (Sec. 3.3: "we select 1,400 instances" per database across four
strata), with the fields ``db_id, id, instance_id, type, category, template, question,
gt_sql, pred_sql, gt_exe, pred_exe, exec_acc, generator_name, sampled_category``.

One record per candidate with a SCARE stratum (``sampled_category``: answerable-correct,
answerable-incorrect, ambiguous, unanswerable); an ambiguous or unanswerable question
without a candidate is one instance with an empty ``pred_sql`` (any SQL is invalid for
it). ``type`` is the question's hardness (easy, medium, hard; ``extra`` counted as
hard; ``-`` when it has no SQL), ``category`` its label or category, ``template`` its
subtype or ``-``, ``gt_sql`` the gold SQL (``"null"`` when there is none), ``exec_acc``
whether the candidate gives the gold result.

``gt_exe`` and ``pred_exe`` are the execution results of the gold SQL and of the
candidate (the "Execution Result" SCARE's methods are shown beside the candidate, Appx.
F) in the processed text form SCARE compares, as the EHRSQL scorer its authors
share writes it: every cell as text, floats rounded to 3 places, rows sorted, the first
100 rows. Two results are the same answer when these texts are equal. ``gt_exe`` is
``"null"`` for a question that is not answerable; ``pred_exe`` is ``"null"`` for an
instance without candidate SQL or when the release does not ship the item's database,
and ``"error: <reason>"`` when the candidate does not run.
:func:`run_candidates` executes the candidates on the release's databases first.
An answerable question without a stratified candidate is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from answerable.builders.executor import Limits
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import SQLError
from answerable.release.evaluate.compare import ehrsql_answer
from answerable.release.export.common import Export, by_split, json_text, result_rows
from answerable.release.reader import database_key, shipped

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
        "gt_exe": ehrsql_answer(result_rows(item)) if answerable else NO_ANSWER,
        "pred_exe": execution_text(candidate.get("executed")),
        "exec_acc": candidate["stratum"] == "answerable-correct",
        "generator_name": candidate.get("model") or candidate["generator"],
        "sampled_category": candidate["stratum"],
    }


def execution_text(executed: list | str | None) -> str:
    """A candidate's execution result as SCARE compares it: the processed rows, an
    ``error: <reason>`` line, or ``"null"`` when it was not run."""
    if executed is None:
        return NO_ANSWER
    if isinstance(executed, str):
        return f"error: {executed}"
    return ehrsql_answer(executed)


def run_candidates(folder: Path, items: list[dict], limits: Limits) -> list[dict]:
    """The items with each candidate's ``executed``: every row its SQL gives on the
    item's database in the release at ``folder``, or the executor's reason when it does
    not run (under ``limits``); and the gold result's rows in full where the stored
    ones stop at the row cap, since SCARE's processed form keeps the first 100 rows
    in its own sort order. Candidates without SQL, and items whose database the
    release does not ship, are left as they are."""
    from answerable.release.databases import ItemDatabases

    with ItemDatabases(folder, limits) as opened:
        done = []
        for item in items:
            if not any(c.get("sql") for c in item.get("candidates") or []) or not shipped(
                item, folder
            ):
                done.append(item)
                continue
            done.append(_executed(item, opened.of(item)))
        return done


def _executed(item: dict, database) -> dict:
    """``item`` with its candidates' rows (or reasons) and its gold rows in full."""
    candidates = [
        dict(c, executed=_rows_or_reason(database, c["sql"])) if c.get("sql") else c
        for c in item["candidates"]
    ]
    result = item.get("result")
    if item.get("sql") and result and result.get("truncated"):
        rows = _rows_or_reason(database, item["sql"])
        if isinstance(rows, list):
            result = dict(result, rows=rows)
    return dict(item, candidates=candidates, result=result)


def _rows_or_reason(database, sql: str) -> list | str:
    """Every row ``sql`` gives (run again without the row cap when it cut them), or
    the executor's reason when it does not run."""
    from answerable.release.evaluate.run import reason

    try:
        result = database.execute(sql)
        if result.truncated:
            result = database.execute(sql, row_cap=result.row_count)
        return result.rows
    except SQLError as error:
        return reason(error, sql)
