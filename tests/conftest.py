"""Shared fixtures: paths to the repository, the real data beside it, and the demo."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


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
