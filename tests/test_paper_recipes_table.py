"""docs/reference/paper-recipes.md: its composition table is what the paper recipes
build, count for count."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO
from tests.paper_releases import paper_release

__all__ = ["paper_release"]  # the session fixture, used by name

PAGE = REPO / "docs" / "reference" / "paper-recipes.md"
COLUMNS = ("items", "answerable", "ambiguous", "unanswerable", "train", "dev", "test")


def table_rows() -> dict[str, dict[str, str]]:
    """The composition table's rows by recipe name (``naq``, ``trustsql``, ...)."""
    lines = [x for x in PAGE.read_text(encoding="utf-8").splitlines() if x.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[1:]:
        cells = dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=False))
        if "recipe" in cells and cells["recipe"].startswith("`raw/recipes/"):
            rows[cells["recipe"].split("/")[2]] = cells
    return rows


def test_the_page_lists_every_paper_recipe():
    assert set(table_rows()) == {p.name for p in (REPO / "raw" / "recipes").iterdir()}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["naq", "trustsql", "scare", "biomedsql", "dte"])
def test_the_composition_table_is_what_the_recipe_builds(paper_release, name):
    row = table_rows()[name]
    release = paper_release(name)
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    counts = manifest["counts"]
    built = {
        "items": counts["total"],
        **{label: counts["by_label"].get(label, 0) for label in COLUMNS[1:4]},
        **{split: counts["by_split"].get(split, 0) for split in COLUMNS[4:]},
    }
    assert {column: int(row[column]) for column in COLUMNS} == built
    assert row["dataset"] == manifest["dataset"]
    assert row["profile"] == f"`{manifest['scoring']['profile']}`"
    shipped = (release / "databases").is_dir()
    databases = f"{len(counts['by_db'])}" + ("" if shipped else " (schema only)")
    assert row["databases"] == databases
