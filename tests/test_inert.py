"""Untrusted text stays inert: terminals, spreadsheets, URLs and remote error bodies."""

from __future__ import annotations

import csv
import json

import pytest

from answerable.annotation.transfer import read_rows, write_rows
from answerable.builders.drafting.client import LLMError
from answerable.kernel.untrusted_text import csv_cell, csv_value, printable, redact_body, redact_url
from tests.conftest import run_in
from tests.llm_server import LLMServer, Misbehave
from tests.review_helpers import fill_sheet
from tests.test_cli import assert_clean_error, seed, tiny_project
from tests.test_drafting_client import complete, settings

HOSTILE = {
    "clear screen": "\x1b[2J\x1b[H",
    "terminal title": "\x1b]0;owned\x07",
    "fake colour": "\x1b[32mOK\x1b[0m",
    "bidi override": "abc\u202edcba",
    "carriage return": "shown\rhidden",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_printable_writes_control_characters_out(name):
    shown = printable(f"note {HOSTILE[name]} end")
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or c == "\u202e" for c in shown)
    assert shown.startswith("note ") and shown.endswith(" end")


CELLS = ['=HYPERLINK("http://x","y")', "+1", "-2", "@SUM(A1)", "\tx", "\rx", "'=x", "''", "'a"]


@pytest.mark.parametrize("value", CELLS)
def test_csv_cells_are_neutralised_and_restored(value):
    cell = csv_cell(value)
    assert not str(cell).startswith(("=", "+", "-", "@", "\t", "\r"))
    assert csv_value(cell) == value


def test_export_and_import_round_trip_every_cell(tmp_path):
    rows = [{"item_id": "a" * 16, "question": v, "verdict": "accept", "comment": v} for v in CELLS]
    path = write_rows([{**r} for r in rows], tmp_path / "sheet.csv")
    with open(path, encoding="utf-8", newline="") as fh:
        written = list(csv.DictReader(fh))
    assert all(not r["question"].startswith(("=", "+", "-", "@")) for r in written)
    read = [row for _, row in read_rows(path)]
    assert [(r["question"], r["comment"]) for r in read] == [(v, v) for v in CELLS]


@pytest.fixture
def project(tmp_path):
    review = "review:\n  backend: local\n  policy: majority\n  min_annotators: 2\n"
    seeds = [
        seed(
            '=HYPERLINK("http://evil.example","open") how many items?', "SELECT count(*) FROM item"
        ),
        seed("What is the cheapest price?", "SELECT min(price) FROM item"),
    ]
    recipe = tiny_project(tmp_path, seeds, extra=review)
    assert run_in(tmp_path, "build", recipe).exit_code == 0
    return tmp_path, recipe


def test_review_export_writes_no_live_formula(project):
    cwd, recipe = project
    assert run_in(cwd, "review", "export", recipe, cwd / "s.csv").exit_code == 0
    text = (cwd / "s.csv").read_text(encoding="utf-8")
    assert "'=HYPERLINK" in text
    assert not any(line.startswith("=") for line in text.splitlines())


def test_review_conflicts_prints_comments_inert(project):
    cwd, recipe = project
    for annotator, verdict in (("ann", "accept"), ("bob", "reject")):
        sheet = cwd / f"{annotator}.csv"
        run_in(cwd, "review", "export", recipe, sheet, "--annotator", annotator)
        comment = "looks fine\x1b[2J\x1b]0;owned\x07" if annotator == "bob" else ""
        fill_sheet(
            sheet,
            {"What is the cheapest price?": {"verdict": verdict, "comment": comment}},
            key="question",
        )
        imported = run_in(cwd, "review", "import", recipe, sheet, "--annotator", annotator)
        assert imported.exit_code == 0, imported.output
    shown = run_in(cwd, "review", "conflicts", recipe)
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.output and "\x07" not in shown.output
    assert "looks fine\\x1b[2J" in shown.output


def test_an_unclosed_quote_is_one_line_and_records_nothing(project):
    cwd, recipe = project
    sheet = cwd / "s.csv"
    sheet.write_text('item_id,verdict,annotator,comment\nabc,accept,ann,"never closed\n')
    assert_clean_error(
        run_in(cwd, "review", "import", recipe, sheet), "not readable as CSV", "close the quote"
    )


def test_the_same_annotator_twice_in_one_file_is_named(project):
    cwd, recipe = project
    sheet = cwd / "s.csv"
    run_in(cwd, "review", "export", recipe, sheet, "--annotator", "ann")
    with open(sheet, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    rows = [{**rows[0], "verdict": "accept"}, {**rows[0], "verdict": "reject"}]
    with open(sheet, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    result = run_in(cwd, "review", "import", recipe, sheet, "--annotator", "ann")
    assert result.exit_code == 1
    assert "row 3: ann already decided" in result.output and "row 2 of this file" in result.output


def test_urls_and_remote_bodies_are_redacted():
    assert redact_url("https://user:s3cret@llm.example/v1") == "https://***@llm.example/v1"
    assert redact_url("http://localhost:8000/v1") == "http://localhost:8000/v1"
    body = json.dumps({"echo": {"Authorization": "Bearer sk-live-0123456789"}, "api_key": "k1"})
    shown = redact_body(body + "x" * 1000)
    assert "sk-live" not in shown and "k1" not in shown and "0123456789" not in shown
    assert len(shown) < 400 and shown.endswith("more)")


def test_an_echoing_model_server_never_puts_the_key_on_screen(tmp_path):
    echoed = b'{"error": {"message": "denied for Authorization: Bearer sk-test-SECRETSECRET"}}'
    with LLMServer() as server:
        server.then(Misbehave(status=401, body=echoed))
        url = server.base_url.replace("http://", "http://me:pa55word@")
        with pytest.raises(LLMError) as caught:
            complete(settings(server, base_url=url), tmp_path / "c.sqlite")
    message = str(caught.value)
    assert "SECRETSECRET" not in message and "pa55word" not in message
    assert "***@" in message and "HTTP 401" in message
