"""``answerable diff`` and the changelog: items added, removed and changed (with their
fields), counts before and after, files changed; two datasets warn; a non-release fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from answerable.release.diff import (
    changelog_section,
    diff_releases,
    previous_version,
    version_key,
)
from tests.conftest import run_in
from tests.release_fixture import default_splits, fixture_items, write_release


@pytest.fixture
def pair(tmp_path) -> tuple[Path, Path, dict]:
    """Version 0.1.0 and 0.2.0: one item removed, one added, one question edited, one
    item moved from train to test."""
    items = fixture_items()
    old = write_release(tmp_path / "d" / "0.1.0", default_splits(items[:-1]), version="0.1.0")
    splits = default_splits(items[1:])
    edited = splits["test"][0]["id"]
    splits["test"][0] = {**splits["test"][0], "question": "An edited question?"}
    moved = splits["train"].pop()
    splits["test"].append(moved)
    new = write_release(tmp_path / "d" / "0.2.0", splits, version="0.2.0")
    expected = {
        "added": [items[-1]["id"]],
        "removed": [items[0]["id"]],
        "edited": edited,
        "moved": moved["id"],
    }
    return old, new, expected


def test_diff_finds_added_removed_and_changed_items_by_id(pair):
    old, new, expected = pair
    found = diff_releases(old, new)
    assert found.added == expected["added"]
    assert found.removed == expected["removed"]
    assert found.changed == {expected["edited"]: ["question"]} | (
        {expected["moved"]: ["split"]} if expected["moved"] != expected["edited"] else {}
    )
    data = ["data/test.jsonl", "data/test.parquet", "data/train.jsonl", "data/train.parquet"]
    assert found.files == {"added": [], "removed": [], "changed": data}
    assert found.counts["by_split"] == {
        "old": {"test": 8, "train": 2},
        "new": {"test": 9, "train": 1},
    }
    assert found.warnings == []


def test_diff_of_a_release_with_itself_is_empty(pair):
    old, _, _ = pair
    found = diff_releases(old, old)
    assert (found.added, found.removed, found.changed) == ([], [], {})
    assert found.files == {"added": [], "removed": [], "changed": []}


def test_diff_command_text_and_json(pair, tmp_path):
    old, new, expected = pair
    result = run_in(tmp_path, "diff", old, new)
    assert result.exit_code == 0, result.output
    assert "fixture 0.1.0 -> fixture 0.2.0: 1 added, 1 removed, 2 changed" in result.output
    assert "changed fields: question 1, split 1" in result.output
    result = run_in(tmp_path, "diff", old, new, "--json")
    data = json.loads(result.output)
    assert data["added"] == expected["added"] and data["removed"] == expected["removed"]
    assert data["changed"][expected["edited"]] == ["question"]


def test_two_datasets_are_compared_with_a_warning(pair, tmp_path):
    old, _, _ = pair
    other = write_release(tmp_path / "other", default_splits(fixture_items()), dataset="other")
    result = run_in(tmp_path, "diff", old, other)
    assert result.exit_code == 0
    assert result.output.startswith("warning: comparing two datasets (fixture and other)")


def test_a_release_and_a_non_release_is_one_line_and_exit_1(pair, tmp_path):
    old, _, _ = pair
    (tmp_path / "empty").mkdir()
    result = run_in(tmp_path, "diff", old, tmp_path / "empty")
    assert result.exit_code == 1
    assert result.output.strip().endswith(
        "not a release: no manifest.json (fix: give the "
        "folder of a release (<out>/<dataset>/<version>/, "
        "holding manifest.json))"
    )
    assert len(result.output.strip().splitlines()) == 1


def test_changelog_section_from_a_diff(pair):
    old, new, _ = pair
    manifest = json.loads((new / "manifest.json").read_text())
    text = changelog_section(manifest, diff_releases(old, new))
    assert text.startswith(
        "## 0.2.0\n\nfixture 0.1.0 -> fixture 0.2.0: 1 added, 1 removed, 2 changed; now 10"
    )
    assert "- by split: test 8 -> 9, train 2 -> 1\n" in text
    assert "- changed fields: question 1, split 1\n" in text
    first = changelog_section(json.loads((old / "manifest.json").read_text()), None)
    assert first.startswith("## 0.1.0\n\nFirst release: 10 items")


def test_previous_version_orders_numerically(tmp_path):
    for version in ("0.9.0", "0.10.0", "0.2.0"):
        write_release(tmp_path / version, {"test": fixture_items()[:1]}, version=version)
    assert previous_version(tmp_path, "0.10.0").name == "0.9.0"
    assert previous_version(tmp_path, "0.11.0").name == "0.10.0"
    assert previous_version(tmp_path, "0.2.0") is None
    assert version_key("1.0.0") > version_key("0.99.1")
