"""Per-test time limits (pytest-timeout): a hang fails the test that hangs, by name.

Every test has the default limit that pyproject.toml sets (``timeout``). Tests marked
``slow`` get :data:`SLOW_LIMIT` instead: the Argilla contract tests start a server whose
fixture builds its own virtual environment on first use. A test's own
``@pytest.mark.timeout(...)`` always wins. Loaded with ``-p tests.timeouts``.
"""

from __future__ import annotations

import pytest

SLOW_LIMIT = 1200  # seconds: a cold venv build plus the server's start on a loaded machine


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give slow tests the longer limit unless they set their own."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_LIMIT))
