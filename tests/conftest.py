"""Shared fixtures: paths to the repository, the real data beside it, and the demo."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from filelock import FileLock

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


@dataclass(frozen=True)
class BuildOutput:
    """What a test reads of a command's result: its exit code and its output."""

    exit_code: int
    output: str


def shared_demo_build(tmp_path_factory) -> tuple[Path, BuildOutput]:
    """The demo recipe built once for the whole run, in a folder no test is given.

    Test workers (pytest-xdist) share it: the first to ask builds it under a file lock,
    the others wait and find it built. ``(folder, output of that build)``.
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's own folder, above each worker's
    folder, saved = root / "demo-build-shared", root / "demo-build-shared.json"
    with FileLock(f"{folder}.lock"):
        if not saved.exists():
            folder.mkdir(exist_ok=True)
            result = run_in(folder, "build", DEMO_RECIPE)
            assert result.exit_code == 0, result.output
            saved.write_text(json.dumps({"exit_code": result.exit_code, "output": result.output}))
    return folder, BuildOutput(**json.loads(saved.read_text()))


def copy_of_demo_build(tmp_path_factory, name: str) -> tuple[Path, BuildOutput]:
    """A folder of one's own holding the shared demo build, byte for byte, with that
    build's output as it would read had it run there (its folder's name in place of the
    shared one): a build of the same recipe there gives the same bytes."""
    shared, output = shared_demo_build(tmp_path_factory)
    cwd = tmp_path_factory.mktemp(name)
    shutil.copytree(shared, cwd, symlinks=True, dirs_exist_ok=True)
    return cwd, BuildOutput(output.exit_code, output.output.replace(str(shared), str(cwd)))


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory) -> tuple[Path, BuildOutput]:
    """The demo recipe built in a fresh folder: ``(cwd, result)``, once per test worker
    (a copy of the build the workers share).

    Tests may rebuild in that folder (a rerun is idempotent) but must not change it.
    """
    return copy_of_demo_build(tmp_path_factory, "demo-build")


@pytest.fixture(scope="session")
def default_build(tmp_path_factory) -> Path:
    """The demo recipe built with the default workers, shard size and backend, in a
    folder no test changes (the session's shared demo build gains reports and decisions
    from other tests): what test_shards and test_backends compare their builds with."""
    return copy_of_demo_build(tmp_path_factory, "shards-default")[0]
