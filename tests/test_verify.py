"""``answerable verify``: a sound release passes; a changed byte, a missing or unlisted
file, a wrong count, an item off the schema or a wrong gold result is named; and the
build refuses to call a damaged release "already published"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from answerable.kernel.records import write_json
from answerable.release.reader import read_frame
from answerable.release.verify import check_items, verify_release
from tests.conftest import DEMO_RECIPE, run_in
from tests.release_fixture import default_splits, fixture_items, write_release


@pytest.fixture
def release(tmp_path, demo_dir) -> Path:
    databases = {name: demo_dir / f"{name}.sqlite" for name in ("clinic", "league")}
    return write_release(tmp_path / "fixture" / "0.1.0", default_splits(fixture_items()), databases)


def rewrite_manifest(folder: Path, change) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    change(manifest)
    write_json(manifest, folder / "manifest.json")


def test_a_sound_release_passes_with_a_one_line_summary(release, tmp_path):
    result = run_in(tmp_path, "verify", release, "--execute")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and ": ok: " in lines[0]
    assert "11 items" in lines[0] and "4 gold queries re-executed" in lines[0]


def test_one_changed_byte_is_named(release, tmp_path):
    path = release / "data" / "test.jsonl"
    data = bytearray(path.read_bytes())
    data[10] = ord("X") if data[10] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))
    result = run_in(tmp_path, "verify", release)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: {release}: 1 problems: data/test.jsonl: sha256 differs from the manifest"
    ]


def test_a_missing_and_an_unlisted_file_are_named(release, tmp_path):
    (release / "databases" / "league.sqlite").unlink()
    (release / "data" / "extra.jsonl").write_text("{}\n")
    found = verify_release(release)
    assert "databases/league.sqlite: missing" in found.problems
    assert "data/extra.jsonl: not in the manifest" in found.problems
    result = run_in(tmp_path, "verify", release)
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert "databases/league.sqlite: missing" in result.output


def test_many_problems_are_listed_one_per_line(release, tmp_path):
    for path in sorted((release / "data").iterdir()):
        path.write_bytes(path.read_bytes() + b"\n")
        path.with_name(path.name + ".bak").write_bytes(b"")
    result = run_in(tmp_path, "verify", release)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 9 and lines[-1].endswith("8 problems (listed above)")
    assert "data/test.jsonl.bak: not in the manifest" in lines


def test_counts_and_rows_that_differ_from_the_manifest(release):
    def change(manifest):
        manifest["counts"]["by_label"]["answerable"] += 1
        manifest["files"][0]["rows"] += 1

    rewrite_manifest(release, change)
    problems = verify_release(release).problems
    assert any(p.startswith("counts.by_label: manifest says") for p in problems)
    assert any("items, the manifest says" in p for p in problems)


def test_an_item_off_the_schema_is_named_by_id(release):
    """A release re-hashed after an edit (so the file check passes) is still caught by
    the item check: a bad label, a bad id, an answerable item without SQL."""
    items = fixture_items()
    answerable = next(i for i in items if i["label"] == "answerable")
    bad = [
        {**items[0], "label": "maybe"},
        {**answerable, "sql": None},
        *[i for i in items[1:] if i["id"] != answerable["id"]],
    ]
    folder = write_release(release.parent / "bad", {"test": bad})
    problems = verify_release(folder).problems
    assert any("/label: not one of" in p and items[0]["id"] in p for p in problems), problems
    assert any("/sql: must be a string when label is answerable" in p for p in problems), problems


def test_typed_nested_columns_are_checked_inside_structs_and_lists():
    frame = pl.DataFrame(
        {
            "id": ["0123456789abcdef", "nothex"],
            "db_id": ["a", "a"],
            "question": ["q", ""],
            "sql": ["SELECT 1", None],
            "label": ["answerable", "unanswerable"],
            "category": [None, "missing-column"],
            "provenance": [{"generator": "seed_v1"}, {"generator": None}],
            "spans": [
                [{"start": 0, "end": 1, "tag": "COL"}],
                [{"start": 0, "end": 1, "tag": "BAD"}],
            ],
        }
    )
    problems = check_items(frame)
    for rule in (
        "/id: does not match",
        "/question: shorter than 1",
        "/provenance/generator: must",
        "/spans/*/tag: not one of",
    ):
        assert any(rule in p and "nothex" in p for p in problems), (rule, problems)
    assert not any("0123456789abcdef" in p for p in problems)


def test_execute_names_an_item_whose_gold_result_differs(release):
    items = fixture_items()
    target = next(i for i in items if i["label"] == "answerable" and i.get("result"))
    changed = [
        {**i, "result": {**i["result"], "hash": "0" * 64}} if i["id"] == target["id"] else i
        for i in items
    ]
    splits = default_splits(changed)
    folder = write_release(
        release.parent / "other",
        splits,
        {n: release / "databases" / f"{n}.sqlite" for n in ("clinic", "league")},
    )
    found = verify_release(folder, execute=True)
    assert [p for p in found.problems if "gold result differs" in p] == [
        p for p in found.problems if target["id"] in p
    ]
    assert len(found.problems) == 1
    assert verify_release(folder).problems == []


def test_not_a_release_and_a_manifest_that_is_not_json(tmp_path):
    result = run_in(tmp_path, "verify", tmp_path)
    assert result.exit_code == 1 and "not a release: no manifest.json" in result.output
    (tmp_path / "manifest.json").write_text("{not json")
    result = run_in(tmp_path, "verify", tmp_path)
    assert result.exit_code == 1 and "manifest.json: not JSON" in result.output
    assert len(result.output.strip().splitlines()) == 1
    result = run_in(tmp_path, "verify", tmp_path / "nowhere")
    assert result.exit_code == 1 and "not a folder" in result.output


def test_read_frame_gives_every_item_its_split(release):
    frame = read_frame(release)
    assert frame.get_column("split").value_counts().sort("split").rows() == [
        ("test", 9),
        ("train", 2),
    ]


def test_the_build_refuses_a_damaged_release(demo_build, tmp_path):
    cwd, _ = demo_build
    copy = tmp_path / "copy"
    shutil.copytree(cwd, copy)
    release = next((copy / "releases" / "answerable-demo").iterdir())
    manifest = json.loads((release / "manifest.json").read_text())
    victim = release / manifest["files"][0]["path"]
    victim.write_bytes(victim.read_bytes()[:-1] + b"!")
    result = run_in(copy, "build", DEMO_RECIPE)
    assert result.exit_code == 1
    assert "differs from its manifest" in result.output
    assert manifest["files"][0]["path"] in result.output
    assert "already published" not in result.output
    victim.unlink()
    result = run_in(copy, "build", DEMO_RECIPE)
    assert result.exit_code == 1 and f"{manifest['files'][0]['path']}: missing" in result.output
