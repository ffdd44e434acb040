"""The schema excerpt: each column's mark, joined tables, and the Markdown for Argilla."""

from __future__ import annotations

import json

from answerable.annotation import excerpt as excerpt_module
from answerable.annotation.excerpt import KnownReads, excerpt_markdown, schema_excerpt
from tests.review_helpers import by_category, demo_schemas, review_items

ITEMS = by_category(review_items())


def marks(excerpt: list[dict]) -> dict[str, str | None]:
    return {f"{t['name']}.{c['name']}": c["mark"] for t in excerpt for c in t["columns"]}


def test_a_drafted_missing_column_is_absent_not_added(demo_dir):
    clinic = demo_schemas(demo_dir)["clinic"]
    item = {
        "id": "0" * 16,
        "db_id": "clinic",
        "question": "What is the lucky number of each icu stay?",
        "trigger": {"kind": "missing-column", "concept": "icu_stays.lucky_number"},
        "sql": None,
    }
    shown = marks(schema_excerpt(item, clinic))
    assert shown["icu_stays.lucky_number"] == "absent"
    assert "added" not in shown.values()
    assert "~~" not in excerpt_markdown(schema_excerpt(item, clinic))


def test_edited_values_dropped_and_added_columns_each_have_their_mark(demo_dir):
    clinic = demo_schemas(demo_dir)["clinic"]
    value_edit = {
        "sql": None,
        "trigger": {
            "kind": "value-ambiguous",
            "columns": ["patients.insurance", "patients.gender"],
        },
        "edit": {"ops": [{"op": "set_value", "table": "patients", "column": "gender"}]},
    }
    shown = marks(schema_excerpt(value_edit, clinic))
    assert shown["patients.gender"] == "edited"  # values changed: still there
    assert shown["patients.insurance"] == "used"  # named by the trigger
    column_edit = ITEMS["column-ambiguous"]  # {"drop": [...], "add": [...]}
    shown = marks(schema_excerpt(column_edit, clinic))
    assert shown["icu_stays.length_of_stay"] == "dropped"
    assert shown["icu_stays.length_days"] == shown["icu_stays.length_hours"] == "added"


def test_joined_tables_and_the_columns_the_readings_read(demo_dir):
    clinic = demo_schemas(demo_dir)["clinic"]
    readings = [
        "SELECT AVG(i.length_of_stay) FROM icu_stays AS i JOIN patients AS p "
        f"ON i.subject_id = p.subject_id WHERE p.{column} = 'Medicaid'"
        for column in ("insurance", "ethnicity")
    ]
    item = {
        "sql": None,
        "trigger": {
            "kind": "value-ambiguous",
            "columns": ["patients.insurance", "patients.ethnicity"],
            "readings": readings,
        },
        "edit": {"ops": [{"op": "set_value", "table": "patients", "column": "ethnicity"}]},
    }
    excerpt = schema_excerpt(item, clinic)
    tables = {t["name"]: t for t in excerpt}
    assert set(tables) == {"icu_stays", "patients"}
    assert tables["icu_stays"].get("joined") and not tables["patients"].get("joined")
    shown = marks(excerpt)
    assert shown["icu_stays.length_of_stay"] == shown["icu_stays.subject_id"] == "used"
    assert shown["patients.ethnicity"] == "edited"
    assert "**icu_stays** *(joined)*" in excerpt_markdown(excerpt)


def test_a_drafts_parent_sql_marks_what_it_reads(demo_dir):
    league = demo_schemas(demo_dir)["league"]
    item = {"sql": None, "trigger": {"kind": "vague-word", "text": "many"}}
    parent_sql = "SELECT name FROM players WHERE preferred_foot = 'Left'"
    shown = marks(schema_excerpt(item, league, parent_sql))
    assert shown["players.name"] == shown["players.preferred_foot"] == "used"
    assert {name.split(".")[0] for name in shown} == {"players"}


def test_a_rebuild_looks_up_what_its_sql_reads_instead_of_parsing_it(
    demo_dir, tmp_path, monkeypatch
):
    """The excerpts a review queue shows come out the same from the stored reads, with
    no SQL parsed; a file of other versions is read afresh, and only the texts the last
    build used stay in the file."""
    league = demo_schemas(demo_dir)["league"]
    item = {"sql": None, "trigger": {"kind": "vague-word", "text": "many"}}
    parents = ["SELECT name FROM players WHERE preferred_foot = 'Left'", "SELEC broken"]
    file = tmp_path / "sql-reads.json"
    with KnownReads(file) as known:
        first = [schema_excerpt(item, league, sql, known) for sql in parents]
    assert first == [schema_excerpt(item, league, sql) for sql in parents]
    parsed = []
    real = excerpt_module.reads_or_none
    monkeypatch.setattr(excerpt_module, "reads_or_none", lambda *a: parsed.append(a) or real(*a))
    with KnownReads(file) as known:
        assert [schema_excerpt(item, league, sql, known) for sql in parents] == first
    assert parsed == []
    with KnownReads(file) as known:  # the next build shows one text only
        schema_excerpt(item, league, parents[0], known)
    assert list(json.loads(file.read_text())["reads"]) == [f"sqlite\n{parents[0]}"]
    stored = json.loads(file.read_text())
    stored["stamp"]["sqlglot"] = "0.0.0"
    file.write_text(json.dumps(stored))
    with KnownReads(file) as known:
        schema_excerpt(item, league, parents[0], known)
    assert parsed == [(parents[0], "sqlite")]
