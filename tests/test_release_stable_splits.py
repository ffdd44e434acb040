"""Splits stay put across versions: an item released in a split stays there in every
later version of the dataset; new members of a released family join its split (or are
held back when their label may not go there); moving a released item needs
``release.resplit`` and a new major version, and the changelog then lists every move."""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path
from string import Template

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from answerable.kernel.errors import ConfigError
from answerable.release.cut.publish import cut_release
from answerable.release.documents.card import About
from answerable.release.reader import data_files, read_release_manifest
from tests.conftest import REPO, run_in, shared_data
from tests.release_helpers import config, hex_id, make_item

RATIOS = {"train": 0.6, "dev": 0.2, "test": 0.2}
SPLIT = {"ratios": RATIOS, "test_only": ["unanswerable", "ambiguous"]}
CHINOOK_QUESTIONS = REPO / "tests" / "fixtures" / "counterfactual" / "chinook.jsonl"
CHINOOK_RECIPE = REPO / "tests" / "fixtures" / "chinook" / "recipe.yaml.tmpl"


def _pool(families: int = 12) -> list[dict]:
    """Per family: a seed, an answerable child, an unanswerable draft of the seed; every
    fourth family's seed asks the question of the one before (so groups join)."""
    items = []
    for i in range(families):
        question = f"What about seed{i - 1}?" if i % 4 == 3 else None
        items.append(make_item(f"seed{i}", parent=f"example{i}", question=question))
        items.append(make_item(f"child{i}", parent=f"seed{i}"))
        items.append(make_item(f"draft{i}", parent=f"seed{i}", label="unanswerable", sql=None))
    return items


def _cut(items: list[dict], out: Path, version: str, seed: int = 5, **section):
    """Cut version ``version`` of the dataset ``stable`` (``section``: the release
    settings besides the split, or a split of its own)."""
    return cut_release(
        items,
        out=out,
        dataset="stable",
        version=version,
        seed=seed,
        recipe_signature="0" * 16,
        inputs=[],
        config=config(**{"split": SPLIT, **section}),
        about=About(description="Stable splits.", recipe="recipe.yaml", license="MIT"),
    )


def release_splits(folder: Path) -> dict[str, str]:
    """id -> split of every item of a release folder."""
    placed = {}
    for split, files in data_files(read_release_manifest(folder)).items():
        for item_id in pl.read_parquet(folder / files["parquet"]["path"], columns=["id"])["id"]:
            placed[item_id] = split
    return placed


def _moved(before: dict[str, str], after: dict[str, str]) -> dict[str, tuple[str, str]]:
    return {i: (s, after[i]) for i, s in before.items() if i in after and after[i] != s}


def test_released_items_keep_their_split_and_new_members_join_or_wait(tmp_path):
    pool = _pool(30)
    seeds = pool[0::3]  # each family's seed alone
    first = release_splits(_cut(seeds, tmp_path, "0.1.0").path)
    assert {"train", "dev", "test"} <= set(first.values())
    second = _cut(pool, tmp_path, "0.2.0")
    after = release_splits(second.path)
    assert _moved(first, after) == {}
    for i in range(30):  # a new answerable child joins its seed's split
        assert after[hex_id(f"child{i}")] == after[hex_id(f"seed{i}")]
    held = json.loads((second.path / "report.json").read_text())["splits"]["kept"]["held_back"]
    for i in range(30):  # a draft may only go to test: it waits when its family is elsewhere
        draft = hex_id(f"draft{i}")
        assert (draft in held) == (after[hex_id(f"seed{i}")] != "test")
        assert (draft in after) == (draft not in held)
    changelog = (second.path / "CHANGELOG.md").read_text()
    assert f"### Held back ({len(held)} items)" in changelog and held[0] in changelog


def test_items_absent_now_still_hold_the_split_their_family_and_question_were_given(tmp_path):
    """Seeds released in 0.1.0 and absent from 0.2.0: their children, and new items
    asking a departed seed's question, land where the seed was released; a seed's draft
    (test only) waits when the seed was released elsewhere."""
    pool = _pool(30)
    first = release_splits(_cut(pool[0::3], tmp_path, "0.1.0").path)
    echoes = [make_item(f"echo{i}", question=pool[3 * i]["question"]) for i in range(30)]
    second = _cut(pool[1::3] + pool[2::3] + echoes, tmp_path, "0.2.0")
    after = release_splits(second.path)
    assert not set(first) & set(after)  # no seed is released again
    for i in range(30):
        seed = first[hex_id(f"seed{i}")]
        assert after[hex_id(f"child{i}")] == seed
        assert after[hex_id(f"echo{i}")] == seed
        assert (hex_id(f"draft{i}") in after) == (seed == "test")
    kept = json.loads((second.path / "report.json").read_text())["splits"]["kept"]
    assert kept["drawn"] == 0 and kept["released_before"] == 0


def test_a_recipe_that_would_move_released_items_stops_naming_them(tmp_path):
    pool = [item for item in _pool(30) if item["label"] == "answerable"]
    first = release_splits(_cut(pool, tmp_path, "0.1.0").path)
    dev = sorted(i for i, s in first.items() if s == "dev")
    with pytest.raises(ConfigError) as raised:
        _cut(pool, tmp_path, "0.2.0", split={"ratios": {"train": 0.8, "test": 0.2}})
    line = str(raised.value)
    assert "\n" not in line and "release.split" in line and "resplit" in line
    assert all(f"{i} (dev)" in line for i in dev)
    assert not (tmp_path / "stable" / "0.2.0").exists()


def test_resplit_needs_a_new_major_version_and_the_changelog_lists_every_move(tmp_path):
    pool = [item for item in _pool(30) if item["label"] == "answerable"]
    first = release_splits(_cut(pool, tmp_path, "0.1.0").path)
    with pytest.raises(ConfigError, match=r"release\.resplit.*raise the major version"):
        _cut(pool, tmp_path, "0.2.0", resplit=True)
    moved_release = _cut(pool, tmp_path, "1.0.0", seed=6, resplit=True)  # seed 6 moves items
    moved = _moved(first, release_splits(moved_release.path))
    assert moved
    changelog = (moved_release.path / "CHANGELOG.md").read_text()
    assert f"### Moved between splits ({len(moved)} items)" in changelog
    for item_id, (old, new) in moved.items():
        assert f"- {item_id}: {old} -> {new}" in changelog


def test_previous_names_the_release_whose_splits_are_kept(tmp_path):
    pool = [item for item in _pool(30) if item["label"] == "answerable"]
    first = release_splits(_cut(pool, tmp_path / "elsewhere", "0.1.0").path)
    previous = str(tmp_path / "elsewhere" / "stable" / "0.1.0")
    again = _cut(pool, tmp_path / "out", "0.2.0", previous=previous)
    assert release_splits(again.path) == first
    with pytest.raises(ConfigError, match=r"release\.previous"):
        _cut(pool, tmp_path / "out", "0.3.0", previous=str(tmp_path / "missing"))


POOL = _pool(12)
# released in every version, so that no split is too small for a family of three
BASE = [make_item(f"base{i}", parent=f"base-example{i}") for i in range(20)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(0, len(POOL) - 1), st.sampled_from(["accept", "reject"])),
            min_size=1,
            max_size=20,
        ),
        min_size=2,
        max_size=4,
    )
)
# a seed released, then rejected while its child is accepted (the child must join the
# seed's split though the seed is absent), then accepted again
@example(rounds=[[(12, "accept")], [(12, "reject"), (13, "accept")], [(12, "accept")]])
def test_no_released_item_ever_changes_split(rounds):
    """Rounds of review decisions, a version cut after each: an item keeps the split it
    was first released in, in every later version (even after leaving one)."""
    decided: dict[int, str] = {}
    first_split: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as out:
        for number, decisions in enumerate(rounds):
            decided.update(dict(decisions))
            accepted = [POOL[i] for i, verdict in sorted(decided.items()) if verdict == "accept"]
            placed = release_splits(_cut(BASE + accepted, Path(out), f"0.{number}.0").path)
            assert _moved(first_split, placed) == {}
            for item_id, split in placed.items():
                first_split.setdefault(item_id, split)


def test_the_chinook_case_no_released_item_moves(tmp_path):
    """A recipe over Chinook that releases while drafts await review: built, some
    drafts reviewed, the version bumped and built again; no item of 0.1.0 moves."""
    chinook = shared_data("chinook", "chinook.sqlite").parent
    (tmp_path / "seeds.jsonl").write_text(CHINOOK_QUESTIONS.read_text())
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(_chinook_recipe(chinook, "0.1.0"))
    built = run_in(tmp_path, "build", recipe)
    assert built.exit_code == 0, built.output
    queue = tmp_path / "queue.csv"
    assert run_in(tmp_path, "review", "export", recipe, queue).exit_code == 0
    _decide(queue, every=3)
    assert run_in(tmp_path, "review", "import", recipe, queue).exit_code == 0
    recipe.write_text(_chinook_recipe(chinook, "0.2.0"))
    rebuilt = run_in(tmp_path, "build", recipe)
    assert rebuilt.exit_code == 0, rebuilt.output
    releases = tmp_path / "releases" / "chinook-bench"
    before, after = release_splits(releases / "0.1.0"), release_splits(releases / "0.2.0")
    assert {"train", "dev"} <= set(before.values())
    assert set(before) <= set(after) and len(after) > len(before)
    assert _moved(before, after) == {}
    assert "Moved between splits" not in (releases / "0.2.0" / "CHANGELOG.md").read_text()


def _decide(queue: Path, every: int) -> None:
    """Accept every ``every``-th row of an exported queue and reject the next one."""
    with open(queue, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    for number, row in enumerate(rows):
        if number % every in (0, 1):
            row.update(annotator="ann", verdict="accept" if number % every == 0 else "reject")
    with open(queue, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def _chinook_recipe(databases: Path, version: str) -> str:
    template = Template(CHINOOK_RECIPE.read_text(encoding="utf-8"))
    return template.substitute(databases=databases, version=version)
