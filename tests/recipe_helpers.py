"""Building a paper's recipe in a test: the data it needs, the build, the released items."""

from __future__ import annotations

from pathlib import Path

from answerable.release.reader import read_items
from tests.conftest import REPO, run_in, shared_data

RECIPES = REPO / "raw" / "recipes"


def built_release(cwd: Path, recipe: str, release: str, data: tuple[str, ...]) -> list[dict]:
    """Build ``raw/recipes/<recipe>/recipe.yaml`` in ``cwd`` (skipping when a folder of
    ``data`` is absent from ../shared/data) and read the items of ``releases/<release>``."""
    for folder in data:
        shared_data(folder)
    result = run_in(cwd, "build", RECIPES / recipe / "recipe.yaml")
    assert result.exit_code == 0, result.output
    return read_items(cwd / "releases" / release)
