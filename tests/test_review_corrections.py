"""Corrections in review: an annotator fixes an item (question, SQL, label, spans) and the
fix becomes a new item, verified like every other, that supersedes the old one."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3

import pytest

from answerable.annotation.commands import review_page
from answerable.annotation.corrections import (
    GENERATOR,
    CorrectionError,
    claimed_missing,
    columns_elsewhere,
    corrected_item,
    is_correction,
)
from answerable.annotation.decisions import DecisionError, check_decision, outcome
from answerable.annotation.excerpt import schema_excerpt
from answerable.annotation.policy import ACCEPTED, Policy, apply_policy
from answerable.annotation.review import open_local_queue, superseded, verify_corrections
from answerable.annotation.server import ReviewPage
from answerable.annotation.transfer import export_rows, import_decisions, write_rows
from answerable.kernel.ids import item_id
from answerable.kernel.recipe import load_recipe
from answerable.kernel.records import read_jsonl
from tests.conftest import DEMO_RECIPE, run_in
from tests.review_helpers import (
    by_category,
    decision,
    demo_schemas,
    demo_verifier,
    fill_sheet,
    filled_queue,
    review_items,
)
from tests.test_review_page import _start, call, launched_chromium, running

ITEMS_BY = by_category(review_items())
FLUID_SQL = (
    "SELECT l.lab_event_id, d.fluid FROM lab_events AS l "
    "JOIN d_lab_items AS d ON d.item_id = l.item_id ORDER BY l.lab_event_id"
)


def missing_fluid() -> dict:
    """A drafted missing-column item whose column another table holds: lab events have
    no fluid, but each one's lab item does (d_lab_items.fluid)."""
    question = "What is the fluid of each lab event?"
    return {
        "id": item_id("clinic", question, None),
        "db_id": "clinic",
        "db_variant": None,
        "dialect": "sqlite",
        "edit": None,
        "question": question,
        "sql": None,
        "label": "unanswerable",
        "category": "missing-column",
        "subtype": "related",
        "trigger": {
            "kind": "missing-column",
            "table": "lab_events",
            "text": "fluid",
            "concept": "lab_events.fluid",
        },
        "explanation": "The database has no column for 'fluid'.",
        "spans": [{"start": 12, "end": 17, "tag": "UNK"}],
        "result": None,
        "sql_meta": None,
        "review": None,
        "provenance": {"generator": "offline_drafter_v1", "parent": "0" * 16, "seed": 13},
    }


@pytest.fixture
def browser():
    yield from launched_chromium()


@pytest.fixture
def verifier(demo_dir):
    found = demo_verifier(demo_dir)
    yield found
    found.close()


# ---- the corrected item and its verification ----------------------------------------


def test_a_correction_is_a_new_item_with_its_provenance():
    old = missing_fluid()
    new = corrected_item(old, label="answerable", category=None, sql=FLUID_SQL, by=["ana"])
    assert new["id"] == item_id("clinic", old["question"], FLUID_SQL) != old["id"]
    assert (new["label"], new["category"], new["trigger"], new["explanation"]) == (
        "answerable",
        None,
        None,
        None,
    )
    assert new["provenance"]["generator"] == GENERATOR
    assert new["provenance"]["parent"] == old["provenance"]["parent"]  # same family
    params = new["provenance"]["params"]
    assert params == {
        "corrected_from": old["id"],
        "corrected_by": ["ana"],
        "original_generator": "offline_drafter_v1",
    }
    assert old["label"] == "unanswerable"  # the old item is not changed


def test_verified_sql_gets_its_result_from_the_database(verifier, demo_dir):
    new = corrected_item(missing_fluid(), label="answerable", category=None, sql=FLUID_SQL)
    verified = verifier.verify(new)
    with sqlite3.connect(demo_dir / "clinic.sqlite") as db:
        expected = db.execute(FLUID_SQL).fetchall()
    assert verified["result"]["row_count"] == len(expected) > 0
    assert [tuple(r) for r in verified["result"]["rows"]] == expected[:100]  # the row cap
    assert verified["sql_meta"]["tables"] == ["d_lab_items", "lab_events"]


@pytest.mark.parametrize(
    ("sql", "said"),
    [
        ("SELECT fluid FROM lab_events", "the SQL does not run"),
        ("SELECT * FROM lab_events WHERE 1 = 0", "returns no rows"),
        ("DELETE FROM lab_events", "the SQL does not run"),
    ],
)
def test_sql_that_does_not_verify_says_why_in_one_line(verifier, sql, said):
    new = corrected_item(missing_fluid(), label="answerable", category=None, sql=sql)
    with pytest.raises(CorrectionError) as caught:
        verifier.verify(new)
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_column_claim_is_checked_against_the_columns_elsewhere(verifier, demo_dir):
    schema = demo_schemas(demo_dir)["clinic"]
    item = missing_fluid()
    assert columns_elsewhere(item, schema) == ["d_lab_items.fluid"]
    assert claimed_missing(item, schema) == ["d_lab_items.fluid"]
    surface = dict(item, subtype="surface")  # asked of lab_events: the other table is fine
    assert claimed_missing(surface, schema) == []
    kept = corrected_item(
        item,
        label="unanswerable",
        category="missing-column",
        question=("What is the fluid of each lab event, in the order it was charted?"),
    )
    with pytest.raises(CorrectionError, match=r"columns elsewhere may hold it: d_lab_items\.fluid"):
        verifier.verify(kept)
    nowhere = dict(item, trigger=dict(item["trigger"], text="shoe size"))
    renamed = corrected_item(
        nowhere,
        label="unanswerable",
        category="missing-column",
        question="What is the shoe size of each lab event?",
    )
    assert verifier.verify(renamed)["question"].startswith("What is the shoe size")


def test_an_ambiguous_correction_needs_readings_that_differ(verifier):
    base = missing_fluid()
    base["trigger"] = {
        "kind": "column-ambiguous",
        "readings": ["SELECT count(*) FROM patients", "SELECT count(*) FROM admissions"],
        "candidates": ["patients", "admissions"],
    }
    question = "How many records are there?"
    differ = corrected_item(base, label="ambiguous", category="column-ambiguous", question=question)
    assert verifier.verify(differ)["label"] == "ambiguous"
    base["trigger"]["readings"] = ["SELECT count(*) FROM patients"] * 2
    same = corrected_item(base, label="ambiguous", category="column-ambiguous", question=question)
    with pytest.raises(CorrectionError, match="readings give the same result"):
        verifier.verify(same)


# ---- decisions and the policy --------------------------------------------------------


def test_a_draft_becomes_answerable_only_with_sql():
    item = missing_fluid()
    plain = decision(item["id"], "ana", "relabel", label="answerable")
    with pytest.raises(DecisionError, match="write the SQL that answers it"):
        check_decision(plain, item, "row 2")
    fixed = check_decision(dict(plain, sql=FLUID_SQL), item, "row 2")
    assert fixed["sql"] == FLUID_SQL and is_correction(fixed)
    accepted = check_decision(decision(item["id"], "ana", "accept", sql=FLUID_SQL), item, "r")
    assert (accepted["verdict"], accepted["label"]) == ("relabel", "answerable")  # SQL answers
    wrong = decision(item["id"], "ana", "relabel", category="vague-word", sql=FLUID_SQL)
    with pytest.raises(DecisionError, match="gold SQL belongs to answerable items"):
        check_decision(wrong, item, "row 3")


def test_two_annotators_agree_on_a_correction_only_with_the_same_sql():
    one = {"verdict": "relabel", "label": "answerable", "category": None, "sql": FLUID_SQL}
    spaced = dict(one, sql=FLUID_SQL.replace(" ", "  "))
    other = dict(one, sql="SELECT 1")
    assert outcome(one) == outcome(spaced) != outcome(other)


def test_the_policy_releases_the_verified_correction_and_supersedes_the_old(verifier):
    item = missing_fluid()
    fix = decision(item["id"], "ana", "relabel", label="answerable", sql=FLUID_SQL)
    result = apply_policy([item], [fix], Policy("single"))
    verify_corrections(result, verifier)
    [final] = result.accepted
    assert result.resolutions[item["id"]].status == ACCEPTED
    assert final["id"] != item["id"] and final["result"]["row_count"] > 0
    assert final["review"]["corrected_from"] == item["id"]
    assert final["provenance"]["params"]["corrected_by"] == ["ana"]
    assert superseded(result) == {item["id"]: final["id"]}


def test_a_correction_that_no_longer_verifies_is_rejected_at_build(verifier):
    item = missing_fluid()
    fix = decision(item["id"], "ana", "relabel", label="answerable", sql="SELECT nope FROM x")
    result = apply_policy([item], [fix], Policy("single"))
    verify_corrections(result, verifier)
    assert result.accepted == [] and superseded(result) == {}
    assert result.resolutions[item["id"]].status == "rejected"
    assert "does not verify: the SQL does not run" in result.resolutions[item["id"]].reason


# ---- the page's API ------------------------------------------------------------------


@pytest.fixture
def fixing(tmp_path, demo_dir, verifier):
    """The fixture queue plus the fluid draft, served with a verifier."""
    queue = filled_queue(tmp_path / "queue.sqlite", demo_dir)
    draft = missing_fluid()
    excerpt = schema_excerpt(draft, demo_schemas(demo_dir)["clinic"])
    queue.push([draft], {draft["id"]: excerpt})
    page = ReviewPage(queue, Policy("single"), "demo", verifier=verifier)
    with running(page) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", queue
    queue.close()


def test_api_runs_sql_before_saving_and_refuses_what_does_not_verify(fixing):
    url, queue = fixing
    target = missing_fluid()["id"]
    status, shown = call(f"{url}/api/run", {"item_id": target, "sql": FLUID_SQL})
    assert status == 200 and shown["columns"] == ["lab_event_id", "fluid"]
    assert len(shown["rows"]) == 10 and shown["row_count"] > 10
    status, failed = call(f"{url}/api/run", {"item_id": target, "sql": "SELECT fluid FROM x"})
    assert status == 200 and failed["error"].startswith("the SQL does not run")
    bad = {
        "item_id": target,
        "annotator": "ana",
        "verdict": "relabel",
        "label": "answerable",
        "sql": "SELECT * FROM lab_events WHERE 0",
    }
    status, refused = call(f"{url}/api/decisions", bad)
    assert status == 400 and "returns no rows" in refused["error"]
    assert queue.history(target) == []  # nothing recorded
    _, viewed = call(f"{url}/api/next?annotator=ana&category=missing-column&q=Fluid+EVENT")
    assert viewed["item"]["elsewhere"] == ["d_lab_items.fluid"]
    _, schema = call(f"{url}/api/schema?item={target}")
    tables = {t["name"]: t["columns"] for t in schema["tables"]}
    assert len(tables) == 8  # the clinic database's, not only the excerpt's lab_events
    assert {"name": "fluid", "type": "TEXT"} in tables["d_lab_items"]


# ---- in the browser ------------------------------------------------------------------


def test_a_correction_in_the_page_makes_the_draft_answerable(fixing, browser, tmp_path):
    url, queue = fixing
    target = missing_fluid()["id"]
    page = _start(browser, url, "ana")
    page.fill("#filter-q", "fluid")
    page.wait_for_selector(f"#item-id:text('{target}')")
    assert "d_lab_items.fluid" in page.text_content("#elsewhere")
    page.fill("#fix-sql", "SELECT fluid FROM lab_events")
    page.click("#run-sql")
    page.wait_for_selector("#run-result .error")
    error = page.text_content("#run-result .error")
    assert error.startswith("the SQL does not run") and "\n" not in error
    page.fill("#fix-sql", FLUID_SQL)
    page.click("#run-sql")
    page.wait_for_selector("#run-result table")
    assert page.locator("#run-result th").all_text_contents() == ["lab_event_id", "fluid"]
    page.screenshot(path=str(tmp_path / "correction-run.png"), full_page=True)
    page.click("#save-fix")
    page.wait_for_selector("#message:text('Saved: relabel')")
    assert "a correction" in page.text_content("#message")
    page.screenshot(path=str(tmp_path / "correction-saved.png"), full_page=True)
    [kept] = queue.pull()
    assert (kept["item_id"], kept["verdict"], kept["label"], kept["sql"]) == (
        target,
        "relabel",
        "answerable",
        FLUID_SQL,
    )
    assert page.errors == []


def test_the_whole_schema_opens_with_one_key_and_is_searched(fixing, browser, tmp_path):
    url, _ = fixing
    page = _start(browser, url, "ana")
    page.fill("#filter-q", "fluid")
    page.wait_for_selector(f"#item-id:text('{missing_fluid()['id']}')")
    assert page.locator("#schema .table-name").all_text_contents() == ["lab_events"]
    page.locator("#card h2").first.click()
    page.keyboard.press("f")
    page.wait_for_selector("#full-schema-tables .table-name")
    assert page.locator("#full-schema-tables .table-name").count() == 8
    page.fill("#schema-search", "fluid")
    page.wait_for_function(
        "document.querySelectorAll('#full-schema-tables .table-name').length === 1"
    )
    assert page.text_content("#full-schema-tables .table-name") == "d_lab_items"
    assert page.text_content("#full-schema-tables .col.used").startswith("fluid")
    page.screenshot(path=str(tmp_path / "full-schema.png"), full_page=True)
    assert page.errors == []


# ---- end to end: built, corrected on the page, released in the next version ----------


@pytest.mark.slow
def test_a_draft_corrected_on_the_page_is_released_in_the_next_version(browser, tmp_path):
    project = tmp_path / "demo"
    shutil.copytree(DEMO_RECIPE.parent, project)
    recipe_file = project / "recipe.yaml"
    built = run_in(tmp_path, "build", recipe_file)
    assert built.exit_code == 0, built.output
    recipe = load_recipe(recipe_file, tmp_path)
    with open_local_queue(recipe) as queue:
        draft = next(
            i
            for i in queue.items()
            if i.get("category") == "missing-column" and i["db_id"] == "clinic"
        )
        table = draft["trigger"]["table"]
        sql = f"SELECT count(*) FROM {table}"
        page = review_page(recipe, queue)
        try:
            with running(page) as server:
                shown = _start(browser, f"http://127.0.0.1:{server.server_address[1]}", "ana")
                shown.fill("#filter-q", draft["question"])
                shown.wait_for_selector("#progress-text:text('0 done, 1 left')")  # searched
                assert shown.text_content("#item-id") == draft["id"]
                shown.fill("#corrected", f"How many rows does {table} hold?")
                shown.fill("#fix-sql", sql)
                shown.click("#run-sql")
                shown.wait_for_selector("#run-result table")
                shown.click("#save-fix")
                shown.wait_for_selector("#message:text('Saved: relabel')")
                shown.screenshot(path=str(tmp_path / "e2e-saved.png"), full_page=True)
                assert shown.errors == []
        finally:
            page.verifier.close()
    recipe_file.write_text(recipe_file.read_text().replace("version: 0.1.0", "version: 0.2.0"))
    rebuilt = run_in(tmp_path, "build", recipe_file)
    assert rebuilt.exit_code == 0, rebuilt.output
    releases = tmp_path / "releases" / "answerable-demo"
    before = released(releases / "0.1.0")
    after = released(releases / "0.2.0")
    [new] = [i for i in after if i["provenance"]["generator"] == GENERATOR]
    assert not any(i["provenance"]["generator"] == GENERATOR for i in before)
    assert draft["id"] not in {i["id"] for i in after}  # superseded
    assert (new["label"], new["category"], new["sql"]) == ("answerable", None, sql)
    assert new["question"] == f"How many rows does {table} hold?"
    params = json.loads(new["provenance"]["params"])  # nested objects are JSON text
    assert (params["corrected_from"], params["corrected_by"]) == (draft["id"], ["ana"])
    review = json.loads(new["review"])
    assert review["corrected_from"] == draft["id"]
    assert review["decisions"][0]["sql"] == sql
    with sqlite3.connect(tmp_path / ".answerable" / "demo" / "clinic.sqlite") as db:
        [(count,)] = db.execute(sql).fetchall()
    assert json.loads(new["result"]["rows"]) == [[count]]
    report = json.loads(
        (tmp_path / ".answerable" / "answerable-demo" / "reports" / "review.json").read_text()
    )
    assert report["superseded"] == {draft["id"]: new["id"]}


def released(folder) -> list[dict]:
    """Every item of a release, from its JSON Lines files."""
    return [item for path in sorted((folder / "data").glob("*.jsonl")) for item in read_jsonl(path)]


# ---- in a spreadsheet ----------------------------------------------------------------


def test_a_spreadsheet_correction_is_verified_on_import(tmp_path, demo_dir, verifier):
    queue = filled_queue(tmp_path / "queue.sqlite", demo_dir)
    draft = missing_fluid()
    excerpt = schema_excerpt(draft, demo_schemas(demo_dir)["clinic"])
    context = {"parent": {"id": "0" * 16, "question": "List the lab events.", "sql": "SELECT 1"}}
    draft["candidates"] = [{"sql": "SELECT fluid FROM d_lab_items", "stratum": "incorrect"}]
    queue.push([draft], {draft["id"]: excerpt}, {draft["id"]: context})
    path = write_rows(export_rows(queue), tmp_path / "review.csv")
    with open(path, encoding="utf-8", newline="") as sheet:
        rows = {r["item_id"]: r for r in csv.DictReader(sheet)}
    row = rows[draft["id"]]
    assert (row["parent_question"], row["parent_sql"]) == ("List the lab events.", "SELECT 1")
    assert row["candidate_sql"] == "SELECT fluid FROM d_lab_items"
    assert row["schema_excerpt"].startswith("lab_events: lab_event_id INTEGER, ")
    assert "fluid (absent)" in row["schema_excerpt"]
    other = ITEMS_BY["out-of-scope"]["id"]
    fill_sheet(
        path,
        {
            draft["id"]: {"annotator": "ana", "verdict": "accept", "sql": FLUID_SQL},
            other: {
                "annotator": "ana",
                "verdict": "relabel",
                "new_label": "answerable",
                "sql": "SELECT * FROM patients WHERE 0",
            },
        },
    )
    done = import_decisions(queue, path, verifier=verifier)
    assert done["recorded"] == 1, done["problems"]
    [problem] = done["problems"]
    assert problem.startswith(f"row {list(rows).index(other) + 2}: the correction does not")
    assert "returns no rows" in problem
    [kept] = queue.pull()
    assert (kept["item_id"], kept["verdict"], kept["label"], kept["sql"]) == (
        draft["id"],
        "relabel",
        "answerable",
        FLUID_SQL,
    )
    queue.close()
