"""Shared fixtures: paths to the repository, the real data beside it, and the demo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from answerable.cli import main

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
DEMO_RECIPE = REPO / "raw" / "demo" / "recipe.yaml"


def run_in(cwd: Path, *args) -> Result:
    """Run the CLI with ``cwd`` as the current directory."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [str(a) for a in args])
    finally:
        os.chdir(old)


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data; skips the test with a reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path} (clone the project beside shared/)")
    return path


@pytest.fixture(autouse=True)
def no_model_endpoint(monkeypatch):
    """No test reaches a real model: the environment's endpoint and key are hidden."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory) -> Path:
    """The demo databases, generated once per test session with the default seed."""
    from answerable.builders.demo import generate_demo

    target = tmp_path_factory.mktemp("demo")
    generate_demo(target, 7)
    return target


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory) -> tuple[Path, Result]:
    """The demo recipe built once per test session in a fresh folder: ``(cwd, result)``.

    Tests may rebuild in that folder (a rerun is idempotent) but must not change it.
    """
    cwd = tmp_path_factory.mktemp("demo-build")
    result = run_in(cwd, "build", DEMO_RECIPE)
    assert result.exit_code == 0, result.output
    return cwd, result


@pytest.fixture(scope="session")
def default_build(tmp_path_factory) -> Path:
    """The demo recipe built with the default workers, shard size and backend, in a
    folder no test changes (the session's shared demo build gains reports and decisions
    from other tests): what test_shards and test_backends compare their builds with."""
    cwd = tmp_path_factory.mktemp("shards-default")
    result = run_in(cwd, "build", DEMO_RECIPE)
    assert result.exit_code == 0, result.output
    return cwd
