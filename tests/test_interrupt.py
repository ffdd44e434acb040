"""Ctrl-C during a build with worker processes: one line and exit 130, no traceback from
the build or any of its workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.conftest import REPO

RECIPE = REPO / "raw" / "demo" / "recipe.yaml"


def test_ctrl_c_during_a_build_with_workers_is_one_line_and_exit_130(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(RECIPE.read_text().replace("\nsources:", "\nworkers: 2\nsources:", 1))
    for name in ("seeds", "templates"):
        (tmp_path / name).symlink_to(RECIPE.parent / name)
    build = subprocess.Popen(
        [sys.executable, "-c", "from answerable.cli import main; main()", "-q", "build", recipe],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal's job is
    )
    steps = tmp_path / ".answerable" / "answerable-demo" / "steps"
    deadline = time.monotonic() + 120
    while not (steps.is_dir() and any(steps.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # into the per-item stages, where the workers run
    assert build.poll() is None, "the build ended before it could be interrupted"
    os.killpg(build.pid, signal.SIGINT)  # what Ctrl-C does: every process of the group
    _, err = build.communicate(timeout=120)
    assert build.returncode == 130, err.decode()
    assert "Traceback" not in err.decode() and "KeyboardInterrupt" not in err.decode()
    assert err.decode().strip().splitlines() == [
        "interrupted (fix: run the same command again: finished work is kept)"
    ]


def test_a_ctrl_c_swallowed_inside_a_del_is_raised_again():
    """Python swallows an exception raised inside ``__del__`` ("Exception ignored"): a
    Ctrl-C that lands there (seen in a build's regex objects) is raised again, so the
    command still stops with its one line and exit 130."""
    import pytest

    from answerable.commands.console import insistent_interrupt

    class Dropped:
        def __del__(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), insistent_interrupt():
        Dropped()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            pass
