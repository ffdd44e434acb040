"""Review in a spreadsheet: export the queue to CSV or JSON Lines, import decisions back.

An export row holds what an annotator needs (id, database, label, category, question,
SQL, trigger, explanation, generator), the context the page shows beside it (the parent
question and SQL of a draft, the candidate SQL, each reading's SQL and first rows,
whether it is a spot check, the schema excerpt as text) and empty decision columns:
``annotator``, ``verdict`` (accept, reject, relabel), ``new_category`` (and ``new_label``
when the category does not say it, i.e. ``answerable``), ``corrected_question`` and
``comment``. Import reads the same columns back; a row with an empty verdict is not
decided yet and is skipped. The format follows the file's suffix (``.csv``, ``.jsonl``).

A correction is made in place: edit the ``question`` or ``sql`` cell (or fill
``corrected_question``). SQL written for an item that is not answerable relabels it to
answerable unless another category is given. Each correction is verified on import as
on the page (:mod:`.corrections`); one that does not verify is a bad row.

Bad input never loses work: a file that cannot be read at all, or lacks a needed column,
is refused as a whole; a bad row is reported by its number (the spreadsheet's row, the
header being row 1; the line for JSON Lines) and every good row is still recorded.
A decision equal to the annotator's current one on that item (time aside) is not
recorded again, so importing the same file twice records nothing new.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

from answerable.annotation.corrections import Verifier, is_correction, verified_correction
from answerable.annotation.decisions import DecisionError, check_decision, make_decision
from answerable.annotation.readings import pending_readings, stored_readings
from answerable.annotation.store import LocalQueue
from answerable.kernel.errors import AnswerableError
from answerable.kernel.ids import canonical_json
from answerable.kernel.records import atomic_path
from answerable.kernel.untrusted_text import csv_cell, csv_value

ITEM_COLUMNS = (
    "item_id",
    "db_id",
    "label",
    "category",
    "question",
    "sql",
    "trigger",
    "explanation",
    "generator",
)
CONTEXT_COLUMNS = (
    "parent_question",
    "parent_sql",
    "candidate_sql",
    "readings",
    "spot_check",
    "schema_excerpt",
)
DECISION_COLUMNS = (
    "annotator",
    "verdict",
    "new_label",
    "new_category",
    "corrected_question",
    "comment",
)
COLUMNS = ITEM_COLUMNS + CONTEXT_COLUMNS + DECISION_COLUMNS
NEEDED = ("item_id", "verdict")
FORMATS = (".csv", ".jsonl")
EXPORT_START = {".csv": b"item_id,db_id,", ".jsonl": b'{"item_id": '}  # how exports begin


class TransferError(AnswerableError):
    """An export or import file that cannot be used as a whole (names the file and fix)."""


def file_format(path: Path) -> str:
    """``.csv`` or ``.jsonl`` from the file name; a clear error otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise TransferError(
            f"{path}: unknown format '{suffix}' (fix: name the file .csv or .jsonl)"
        )
    return suffix


def export_rows(queue: LocalQueue, skip: set[str] = frozenset()) -> list[dict]:
    """One row per queued item not in ``skip``, by id, with empty decision columns."""
    rows = []
    for item in queue.items():
        if item["id"] in skip:
            continue
        trigger = item.get("trigger")
        row = {
            "item_id": item["id"],
            "db_id": item["db_id"],
            "label": item["label"],
            "category": item.get("category") or "",
            "question": item["question"],
            "sql": item.get("sql") or "",
            "trigger": canonical_json(trigger) if trigger else "",
            "explanation": item.get("explanation") or "",
            "generator": (item.get("provenance") or {}).get("generator") or "",
        }
        row.update(context_cells(item, queue.context(item["id"]), queue.excerpt(item["id"])))
        row.update(dict.fromkeys(DECISION_COLUMNS, ""))
        rows.append(row)
    return rows


def context_cells(item: dict, context: dict | None, excerpt: list | None) -> dict:
    """The context columns of an item's export row, as text a spreadsheet shows."""
    context = context or {}
    parent = context.get("parent") or {}
    candidates = [c.get("sql") for c in item.get("candidates") or [] if c.get("sql")]
    readings, _ = stored_readings(item)
    if not readings:
        readings = [{"name": name, "sql": sql} for name, sql in pending_readings(item)]
    return {
        "parent_question": parent.get("question") or "",
        "parent_sql": parent.get("sql") or "",
        "candidate_sql": "\n\n".join(candidates),
        "readings": "\n\n".join(_reading_text(r) for r in readings),
        "spot_check": "yes" if context.get("spot_check") else "",
        "schema_excerpt": excerpt_text(excerpt or []),
    }


def _reading_text(reading: dict) -> str:
    lines = [f"{reading['name']}: {reading['sql']}"]
    if reading.get("columns"):
        lines.append(" | ".join(map(str, reading["columns"])))
        lines += [
            " | ".join("NULL" if v is None else str(v) for v in row) for row in reading["rows"]
        ]
        lines.append(f"({reading.get('row_count')} rows)")
    return "\n".join(lines)


def excerpt_text(excerpt: list[dict]) -> str:
    """The schema excerpt as plain text: one line per table, each column's mark after it.

    >>> excerpt_text([{"name": "t", "columns": [{"name": "a", "type": "INT", "mark": "used"},
    ...                                         {"name": "b", "type": "", "mark": None}]}])
    't: a INT (used), b'
    """
    lines = []
    for table in excerpt:
        columns = []
        for column in table["columns"]:
            text = f"{column['name']} {column['type']}".strip()
            columns.append(text + (f" ({column['mark']})" if column.get("mark") else ""))
        joined = " (joined)" if table.get("joined") else ""
        lines.append(f"{table['name']}{joined}: " + ", ".join(columns))
    return "\n".join(lines)


def write_rows(rows: list[dict], path: Path) -> Path:
    """Write export rows as CSV (with header) or JSON Lines, atomically."""
    fmt = file_format(path)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        if fmt == ".csv":
            writer = csv.DictWriter(fh, fieldnames=COLUMNS)
            writer.writeheader()
            # A question may start with "=HYPERLINK(...": a spreadsheet must show it as text.
            writer.writerows({k: csv_cell(v) for k, v in row.items()} for row in rows)
        else:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return Path(path)


def read_rows(path: Path) -> Iterator[tuple[str, dict]]:
    """``(where, row)`` for every row of an import file; a :class:`TransferError` when the
    file as a whole cannot be read (missing, not UTF-8, no header, a needed column absent).
    A JSON line that does not parse is yielded as ``(where, None)``: a bad row."""
    fmt = file_format(path)
    if not Path(path).is_file():
        raise TransferError(f"{path}: file not found (fix: give the file you filled in)")
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")  # a CR inside a cell stays a CR
    except UnicodeDecodeError:
        raise TransferError(f"{path}: not UTF-8 text (fix: save it as UTF-8 CSV)") from None
    if fmt == ".csv":
        yield from _csv_rows(path, text)
    else:
        yield from _jsonl_rows(text)


def _csv_rows(path: Path, text: str) -> Iterator[tuple[str, dict]]:
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
    if missing:
        raise TransferError(
            f"{path}: row 1 (header) lacks the column(s) {', '.join(missing)} "
            "(fix: keep the header of the exported file)"
        )
    try:
        for number, row in enumerate(reader, start=2):
            if None in row:  # more cells than header columns
                yield f"row {number}", None
            else:
                yield f"row {number}", {k: csv_value(v) for k, v in row.items()}
    except csv.Error as error:
        raise TransferError(
            f"{path}: not readable as CSV near line {reader.line_num}: {error} (fix: close the "
            "quote or save the sheet again as CSV); nothing was recorded"
        ) from None


def _jsonl_rows(text: str) -> Iterator[tuple[str, dict]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            row = None
        yield f"line {number}", row if isinstance(row, dict) else None


def row_decision(row: dict, annotator: str | None, item: dict | None = None) -> dict:
    """The decision a filled-in row holds; the row's annotator wins over the default.

    With the queued ``item``, an edited ``question`` or ``sql`` cell is a correction
    (an accept with SQL of an item that is not answerable relabels it to answerable:
    :func:`check_decision`).
    """
    get = lambda name: (str(row.get(name) or "")).strip() or None  # noqa: E731
    verdict = get("verdict") and get("verdict").lower()
    label, category = get("new_label"), get("new_category")
    question, sql = get("corrected_question"), None
    if item is not None:
        question = question or _edited(get("question"), item.get("question"))
        sql = _edited(get("sql"), item.get("sql"))
    return make_decision(
        get("item_id"),
        get("annotator") or annotator,
        verdict,
        label=label,
        category=category,
        question=question,
        sql=sql,
        comment=get("comment"),
        time=get("time"),
    )


def _edited(cell: str | None, original: str | None) -> str | None:
    """The cell's text when it differs from the item's (spacing at the ends aside)."""
    return cell if cell and cell != (original or "").strip() else None


def import_decisions(
    queue: LocalQueue, path: Path, annotator: str | None = None, verifier: Verifier | None = None
) -> dict:
    """Record the decisions of a filled-in export file; returns what happened.

    ``{"recorded": n, "already": n, "undecided": n, "problems": ["row 3: ...", ...]}``.
    Corrections are verified with ``verifier`` (without one, a correction is a bad row).
    """
    pairs, problems, undecided, seen = [], [], 0, {}
    for where, row in read_rows(path):
        if row is None:
            problems.append(
                f"{where}: cannot be read (fix: one JSON object per line, or as many "
                "cells as the header)"
            )
            continue
        if not str(row.get("verdict") or "").strip():
            undecided += 1
            continue
        item = queue.item(str(row.get("item_id") or "").strip())
        decision = row_decision(row, annotator, item)
        if not decision["annotator"]:
            problems.append(
                f"{where}: no annotator (fix: fill the annotator column or pass --annotator)"
            )
            continue
        first = seen.setdefault((decision["item_id"], decision["annotator"]), where)
        if first != where:
            problems.append(
                f"{where}: {decision['annotator']} already decided {decision['item_id']} in "
                f"{first} of this file (fix: keep one of the two rows)"
            )
            continue
        if item is not None and is_correction(decision):
            try:
                checked = check_decision(decision, item, where)
                verified_correction(verifier, item, checked, where)
            except DecisionError as error:
                problems.append(str(error))
                continue
        pairs.append((where, decision))
    recorded, invalid = queue.record_many(pairs)
    problems += invalid
    already = len(pairs) - len(invalid) - recorded
    return {"recorded": recorded, "already": already, "undecided": undecided, "problems": problems}
