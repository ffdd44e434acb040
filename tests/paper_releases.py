"""The paper recipes (raw/recipes/<paper>) built once per test session, and the papers'
own code in ../shared/reference, for the tests that compare with them.

Import :func:`paper_release` into a test module to use it. Each recipe is built the
first time a test asks for it (a few seconds for OncoMX-NAQ, minutes for the others)
and reused by every later test of the session.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO, run_in, shared_data

RECIPES = REPO / "raw" / "recipes"
REFERENCE = REPO.parent / "shared" / "reference"
# the shared data each paper recipe reads (the build is skipped without it)
RECIPE_DATA = {
    "naq": ("querycarefully", "unanswerable_questions.tsv"),
    "trustsql": ("ehrsql2024", "valid_data.json"),
    "scare": ("geoquery",),
    "biomedsql": ("restaurants",),
    "dte": ("geoquery",),
}


@pytest.fixture(scope="session")
def paper_release(tmp_path_factory):
    """``paper_release(name)``: the release folder of ``raw/recipes/<name>``, built once."""
    built: dict[str, Path] = {}

    def release(name: str) -> Path:
        shared_data(*RECIPE_DATA[name])
        if name not in built:
            cwd = tmp_path_factory.mktemp(f"paper-{name}")
            result = run_in(cwd, "build", RECIPES / name / "recipe.yaml")
            assert result.exit_code == 0, result.output
            line = next(x for x in result.output.splitlines() if x.startswith("release: "))
            built[name] = Path(line.split()[1])
        return built[name]

    return release


def reference(*parts: str) -> Path:
    """A path under ../shared/reference; skips the test with a reason when it is absent."""
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"the papers' code is not available: {path} (see shared/reference)")
    return path


def load_module(name: str, path: Path, *search: Path) -> ModuleType:
    """Import the paper's file at ``path`` unchanged, with ``search`` on ``sys.path``
    for the modules it imports by bare name; skips when one of its imports is missing."""
    for folder in reversed(search):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as error:
        pytest.skip(f"the paper's code needs {error.name} (pip install -e '.[test]')")
    return module


def evaluate_json(cwd: Path, release: Path, predictions: Path, *options: str) -> dict:
    """``answerable evaluate RELEASE PREDICTIONS OPTIONS --json`` as a user runs it."""
    result = run_in(cwd, "evaluate", release, predictions, *options, "--json", "--resamples", 1)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)
