"""Export profiles: a golden file set per format, round trips through the project's own
loaders, and the items each layout leaves out (named, never dropped silently)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from answerable.builders.sources.ehrsql import load_ehrsql
from answerable.builders.sources.spider import load_spider
from answerable.release.export import FORMATS
from answerable.release.export.run import LEFT_OUT, export_release
from tests.conftest import run_in, shared_data
from tests.release_fixture import FIXTURES, default_splits, fixture_items, write_release

GOLDEN = FIXTURES / "export"


@pytest.fixture(scope="module")
def release(tmp_path_factory, demo_dir) -> Path:
    folder = tmp_path_factory.mktemp("release") / "fixture" / "0.1.0"
    databases = {name: demo_dir / f"{name}.sqlite" for name in ("clinic", "league")}
    return write_release(folder, default_splits(fixture_items()), databases)


def files_under(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_export_matches_its_golden_files(fmt, release, tmp_path):
    """Each format's files for the fixture release, byte for byte (``UPDATE_GOLDEN=1``
    rewrites them; review the diff before committing)."""
    export_release(release, fmt, tmp_path / fmt)
    made = files_under(tmp_path / fmt)
    golden = GOLDEN / fmt
    if os.environ.get("UPDATE_GOLDEN") == "1" or not golden.is_dir():
        for name, text in made.items():
            (golden / name).parent.mkdir(parents=True, exist_ok=True)
            (golden / name).write_text(text, encoding="utf-8")
    assert made == files_under(golden)


def exported_questions(folder: Path) -> list[str]:
    """The question of every record an export wrote, whatever its layout (once per
    question where a layout writes several instances of one, as SCARE's does)."""
    questions = []
    for path in sorted(folder.rglob("*")):
        if path.suffix in (".csv", ".tsv"):
            with open(path, encoding="utf-8") as fh:
                delimiter = "\t" if path.suffix == ".tsv" else ","
                questions += [row["question"] for row in csv.DictReader(fh, delimiter=delimiter)]
        elif path.suffix == ".json" and path.name != "tables.json":
            if path.name.endswith("_label.json"):
                continue
            document = json.loads(path.read_text())
            records = document["data"] if isinstance(document, dict) else document
            questions += [
                r["question"] for r in records if r.get("instance_id", "-0").endswith("-0")
            ]
    return questions


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_item_is_exported_or_left_out_with_a_reason(fmt, release, tmp_path):
    result = export_release(release, fmt, tmp_path)
    left = {item_id for item_id, _ in result.left_out}
    kept = [i["question"] for i in fixture_items() if i["id"] not in left]
    assert sorted(exported_questions(tmp_path)) == sorted(kept)
    if left:
        listed = (tmp_path / LEFT_OUT).read_text().splitlines()
        assert {json.loads(line)["id"] for line in listed} == left
        assert all(json.loads(line)["reason"] for line in listed)


def test_ehrsql_round_trips_through_the_ehrsql_loader(release, tmp_path):
    export_release(release, "ehrsql", tmp_path)
    items = {i["id"]: i for i in fixture_items()}
    seen = 0
    for folder in sorted(p for p in tmp_path.iterdir() if p.is_dir()):
        for data in sorted(folder.glob("*_data.json")):
            labels = data.with_name(data.name.replace("_data", "_label"))
            loaded = load_ehrsql(data, labels, folder / "tables.json", "back", db_id=folder.name)
            assert not loaded.rejects
            for example in loaded.examples:
                item = items[example["external_id"]]
                assert (example["question"], example["sql"]) == (item["question"], item["sql"])
                assert example["db_id"] == item["db_id"]
                seen += 1
            assert set(loaded.databases) == {folder.name}
    assert seen == sum(1 for i in items.values() if i["label"] != "ambiguous")


def test_spider_round_trips_through_the_spider_loader(release, tmp_path):
    export_release(release, "spider", tmp_path)
    items = fixture_items()
    back = []
    for split in ("train", "test"):
        loaded = load_spider(tmp_path / "tables.json", tmp_path / f"{split}.json", "back", None)
        back += [(e["db_id"], e["question"], e["sql"]) for e in loaded.examples]
        for db_id, ref in loaded.databases.items():
            assert {t.name for t in ref.schema.tables} >= {"patients"} or db_id == "league"
    wanted = [(i["db_id"], i["question"], i["sql"]) for i in items if i["label"] == "answerable"]
    assert sorted(back) == sorted(wanted)


def test_spider_tables_keep_keys_of_the_real_schema(release, tmp_path):
    """Primary and foreign keys survive tables.json: the schema read back names them."""
    from answerable.builders.schema import DatabaseSchema

    export_release(release, "spider", tmp_path)
    entries = {e["db_id"]: e for e in json.loads((tmp_path / "tables.json").read_text())}
    original = DatabaseSchema.from_sqlite(release / "databases" / "clinic.sqlite", "clinic")
    back = DatabaseSchema.from_spider(entries["clinic"])
    assert [t.name for t in back.tables] == [t.name for t in original.tables]
    for mine, theirs in zip(back.tables, original.tables, strict=True):
        assert [c.name for c in mine.columns] == [c.name for c in theirs.columns]
        assert mine.primary_key == theirs.primary_key
        assert sorted(mine.foreign_keys) == sorted(theirs.foreign_keys)


def test_naq_reads_like_the_real_onco_mx_naq_file(release, tmp_path):
    """The TSV parses the way the real OncoMX-NAQ file does, with its category names."""
    real = shared_data("querycarefully", "unanswerable_questions.tsv")
    with open(real, encoding="utf-8") as fh:
        names = {row["category"].strip() for row in csv.DictReader(fh, delimiter="\t")}
    export_release(release, "naq", tmp_path)
    with open(tmp_path / "test.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert rows and {"question", "category", "sql", "db_id"} == set(rows[0])
    assert {r["category"] for r in rows} - {"Answerable"} <= names


def test_export_command_prints_what_it_left_out(release, tmp_path):
    result = run_in(tmp_path, "export", release, "--format", "spider", "--out", tmp_path / "s")
    assert result.exit_code == 0, result.output
    assert "left out" in result.output and "Spider holds answerable questions only" in result.output


def test_unknown_format_is_a_usage_error_listing_the_formats(release, tmp_path):
    result = run_in(tmp_path, "export", release, "--format", "bird", "--out", tmp_path / "b")
    assert result.exit_code == 2
    assert "'bird' is not one of" in result.output and "'trustsql'" in result.output
    assert not (tmp_path / "b").exists()


def test_a_format_that_holds_none_of_the_labels_is_exit_1(tmp_path, demo_dir):
    drafts = [i for i in fixture_items() if i["label"] != "answerable"]
    folder = write_release(tmp_path / "r", {"test": drafts}, {"clinic": demo_dir / "clinic.sqlite"})
    result = run_in(tmp_path, "export", folder, "--format", "biomedsql", "--out", tmp_path / "o")
    assert result.exit_code == 1
    assert "can hold none of the" in result.output and "answerable questions" in result.output
    assert not (tmp_path / "o").exists()


def test_export_of_a_folder_that_is_not_a_release(tmp_path):
    result = run_in(tmp_path, "export", tmp_path, "--format", "dte", "--out", tmp_path / "o")
    assert result.exit_code == 1
    assert "not a release: no manifest.json" in result.output
