"""The suite's time limits: a hanging test fails by name; a slow one gets longer."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.conftest import REPO

INNER = """\
import time

import pytest


def test_hangs():
    time.sleep(60)


@pytest.mark.slow
def test_slow_but_within_its_limit():
    time.sleep(2)


@pytest.mark.slow
@pytest.mark.timeout(1)
def test_its_own_limit_wins():
    time.sleep(60)
"""


def test_a_hang_fails_with_its_name_and_slow_tests_get_longer(tmp_path):
    """Runs the project's pytest configuration (with the default limit lowered to 1 s)
    on three tests: the hang fails by timeout, the slow test passes on its longer limit,
    and an explicit marker beats the slow limit."""
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(INNER), encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(REPO / "pyproject.toml"),
            "-o",
            "timeout=1",
            "-m",
            "slow or not slow",  # the inner tests marked slow too (the default run skips them)
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "-q",
            str(tmp_path / "test_inner.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "300"},  # summary lines are cut at the terminal width
        timeout=120,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "::test_hangs - Failed: Timeout (>1.0s)" in out, out
    assert "::test_its_own_limit_wins - Failed: Timeout (>1.0s)" in out, out
    assert "2 failed, 1 passed" in out, out
