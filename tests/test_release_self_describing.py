"""A release a consumer can read without us: its records validate against the shipped
``schema/record.schema.json``; the card's field table and category definitions come from
that schema and the review guidelines' taxonomy text; Croissant types every field and
iterates in mlcroissant; nothing a consumer reads names an issue."""

from __future__ import annotations

import json
import re

import jsonschema
import polars as pl
import pytest

from answerable.annotation.server import guidelines
from answerable.release.documents.record_schema import JSON_TEXT, record_schema
from answerable.release.reader import data_files, read_release_manifest
from answerable.schemas import SCHEMA_DIR

ISSUE = re.compile(r"\bissues? ?#?\d+", re.IGNORECASE)


@pytest.fixture(scope="module")
def release(demo_build):
    cwd, _ = demo_build
    return cwd / "releases" / "answerable-demo" / "0.1.0"


def _records(release):
    for files in data_files(read_release_manifest(release)).values():
        with open(release / files["jsonl"]["path"], encoding="utf-8") as fh:
            yield from (json.loads(line) for line in fh)
        yield from pl.read_parquet(release / files["parquet"]["path"]).iter_rows(named=True)


def test_every_record_validates_against_the_shipped_schema(release):
    shipped = json.loads((release / "schema" / "record.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(shipped)
    records = list(_records(release))
    assert len(records) == 2 * read_release_manifest(release)["counts"]["total"]
    for record in records:
        errors = [e.message for e in validator.iter_errors(record)]
        assert errors == [], (record["id"], errors[:3])
    with_trigger = next(r for r in records if r["trigger"] is not None)
    decoded = {**with_trigger, "trigger": json.loads(with_trigger["trigger"])}
    assert not validator.is_valid(decoded)  # JSON-text fields are text, as the schema says


def test_the_schema_states_which_fields_are_json_text():
    properties = record_schema()["properties"]
    texts = sorted(n for n, node in properties.items() if node.get("contentMediaType"))
    assert texts == ["edit", "review", "trigger"]
    assert all(properties[n]["description"].startswith(JSON_TEXT) for n in texts)
    params = properties["provenance"]["properties"]["params"]
    assert params["contentMediaType"] == "application/json"


def test_the_card_tables_come_from_the_schema_and_the_guidelines(release):
    card = (release / "README.md").read_text()
    fields = card[card.index("## Data fields") : card.index("## Labels and categories")]
    rows = [line.split(" | ") for line in fields.splitlines() if line.startswith("| `")]
    schema = record_schema()["properties"]
    assert [row[0].strip("|` ") for row in rows] == list(schema)
    for row in rows:
        name = row[0].strip("|` ")
        assert row[2] == schema[name]["description"].removeprefix(JSON_TEXT).replace("|", "\\|")
        assert row[1] and row[3].strip(" |")
    labels = card[card.index("## Labels and categories") :]
    for entry in guidelines():
        assert entry["definition"] in labels, entry["name"]
        if entry["name"] != "answerable":
            assert f"| `{entry['name']}` |" in labels
    assert "| unanswerable | `missing-column` |" in labels and "SCARE MC" in labels


def test_croissant_types_and_describes_every_field_and_iterates(release):
    mlc = pytest.importorskip("mlcroissant")
    document = json.loads((release / "croissant.json").read_text())
    for record_set in document["recordSet"]:
        for field in record_set["field"]:
            assert field.get("description"), field["@id"]
    dataset = mlc.Dataset(jsonld=release / "croissant.json")
    manifest = read_release_manifest(release)
    for split, count in manifest["counts"]["by_split"].items():
        records = list(dataset.records(record_set=split))
        assert len(records) == count
        answerable = [r for r in records if r[f"{split}/label"] == b"answerable"]
        for record in answerable:
            assert isinstance(record[f"{split}/result"][f"{split}/result/row_count"], int)
            assert isinstance(record[f"{split}/result"][f"{split}/result/ordered"], bool)
        spans = [s for r in records for s in r[f"{split}/spans"]]
        assert spans and all(isinstance(s[f"{split}/spans/start"], int) for s in spans)
        candidates = [c for r in records for c in r[f"{split}/candidates"]]
        assert candidates and all(f"{split}/candidates/stratum" in c for c in candidates)


def test_nothing_a_consumer_reads_names_an_issue(release):
    for name in ("README.md", "croissant.json", "schema/record.schema.json", "CHANGELOG.md"):
        assert not ISSUE.search((release / name).read_text()), name
    for path in sorted(SCHEMA_DIR.glob("*.schema.json")):
        assert not ISSUE.search(path.read_text()), path.name
