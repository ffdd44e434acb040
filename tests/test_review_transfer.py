"""Spreadsheet review: export to CSV/JSONL, import decisions back, malformed files."""

from __future__ import annotations

import csv
import json
import re

import pytest

from answerable.annotation.transfer import (
    TransferError,
    export_rows,
    import_decisions,
    write_rows,
)
from tests.review_helpers import by_category, fill_sheet, filled_queue, review_items

ITEMS = by_category(review_items())


@pytest.fixture
def queue(tmp_path, demo_dir):
    with filled_queue(tmp_path / "queue.sqlite", demo_dir) as queue:
        yield queue


def test_export_csv_has_every_item_and_empty_decision_columns(queue, tmp_path):
    path = write_rows(export_rows(queue), tmp_path / "review.csv")
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["item_id"] for r in rows] == sorted(i["id"] for i in review_items())
    assert all(r["verdict"] == "" and r["annotator"] == "" for r in rows)
    missing = next(r for r in rows if r["item_id"] == ITEMS["missing-column"]["id"])
    assert json.loads(missing["trigger"])["column"] == "patients.insurance"
    assert missing["generator"] == "drop_column_v1"


def test_csv_round_trip_records_the_decisions(queue, tmp_path):
    path = write_rows(export_rows(queue), tmp_path / "review.csv")
    fill_sheet(
        path,
        {
            ITEMS["vague-word"]["id"]: {"verdict": "Relabel", "new_category": "vague-question"},
            ITEMS["out-of-scope"]["id"]: {"verdict": "reject", "comment": "not, really\nout"},
            ITEMS["answerable-clinic"]["id"]: {"verdict": "accept", "annotator": "ben"},
        },
    )
    done = import_decisions(queue, path, annotator="ana")
    assert done == {"recorded": 3, "already": 0, "undecided": 3, "problems": []}
    got = {(d["item_id"], d["annotator"]): d for d in queue.pull()}
    relabel = got[(ITEMS["vague-word"]["id"], "ana")]
    assert (relabel["label"], relabel["category"]) == ("ambiguous", "vague-question")
    assert got[(ITEMS["out-of-scope"]["id"], "ana")]["comment"] == "not, really\nout"
    assert (ITEMS["answerable-clinic"]["id"], "ben") in got
    assert import_decisions(queue, path, annotator="ana")["recorded"] == 0  # idempotent
    assert len(queue.history()) == 3


def test_jsonl_round_trip(queue, tmp_path):
    path = write_rows(export_rows(queue), tmp_path / "review.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0].update(verdict="accept", annotator="cy")
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert import_decisions(queue, path)["recorded"] == 1


# ---- malformed import files: a clear message naming the row, nothing lost ----------


def test_bad_rows_are_named_and_the_good_rows_are_kept(queue, tmp_path):
    path = write_rows(export_rows(queue), tmp_path / "review.csv")
    fill_sheet(
        path,
        {
            ITEMS["vague-word"]["id"]: {"verdict": "accept", "annotator": "ana"},
            ITEMS["out-of-scope"]["id"]: {"verdict": "relabel", "new_category": "vague-ish"},
            ITEMS["missing-column"]["id"]: {"verdict": "maybe", "annotator": "ana"},
        },
    )
    text = path.read_text(encoding="utf-8").replace(ITEMS["answerable-league"]["id"], "0" * 16)
    path.write_text(text.replace(",,,,,,\n", ",ana,accept,,,,\n", 1), encoding="utf-8")
    done = import_decisions(queue, path)
    order = sorted(i["id"] for i in review_items())
    row = {item_id: n + 2 for n, item_id in enumerate(order)}  # header is row 1
    problems = "\n".join(done["problems"])
    assert f"row {row[ITEMS['out-of-scope']['id']]}: no annotator" in problems
    assert f"row {row[ITEMS['missing-column']['id']]}: unknown verdict 'maybe'" in problems
    assert "unknown item id '0000000000000000'" in problems
    assert done["recorded"] == 1
    assert [d["item_id"] for d in queue.pull()] == [ITEMS["vague-word"]["id"]]


def test_relabel_to_an_unknown_category_names_the_row(queue, tmp_path):
    path = write_rows(export_rows(queue), tmp_path / "review.csv")
    fill_sheet(
        path,
        {ITEMS["vague-word"]["id"]: {"verdict": "relabel", "new_category": "vague-ish"}},
    )
    done = import_decisions(queue, path, annotator="ana")
    [problem] = done["problems"]
    assert problem.startswith("row ") and "relabel to unknown category 'vague-ish'" in problem
    assert queue.history() == []


def test_unreadable_jsonl_line_and_extra_cells_are_named(queue, tmp_path):
    jsonl = tmp_path / "review.jsonl"
    good = {"item_id": ITEMS["vague-word"]["id"], "verdict": "accept", "annotator": "ana"}
    jsonl.write_text(json.dumps(good) + "\n{not json\n\n[1, 2]\n")
    done = import_decisions(queue, jsonl)
    assert done["recorded"] == 1
    assert [p.split(":")[0] for p in done["problems"]] == ["line 2", "line 4"]
    extra = tmp_path / "review.csv"
    extra.write_text("item_id,verdict,annotator\n" + f"{good['item_id']},reject,ben,surplus\n")
    assert import_decisions(queue, extra)["problems"][0].startswith("row 2: cannot be read")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "review.csv",
            "id,decision\nx,accept\n",
            "row 1 (header) lacks the column(s) item_id, verdict",
        ),
        ("review.xlsx", "", "unknown format '.xlsx'"),
        ("missing.csv", None, "file not found"),
        ("review.csv", b"\xff\xfe\x00bad", "not UTF-8"),
    ],
)
def test_files_that_cannot_be_read_are_refused_whole(queue, tmp_path, name, content, message):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(TransferError, match=re.escape(message)):
        import_decisions(queue, path, annotator="ana")
    assert queue.history() == []
