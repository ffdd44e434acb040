"""Errors from the operating system are one line with the path and the fix, exit 1, no
traceback, and leave no half-written file: a read-only work folder or release folder, a
full disk, a path that is a folder."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_in
from tests.test_cli import assert_clean_error, seed, tiny_project


def mount_tmpfs(target: Path, size: str) -> None:
    """Mount a small tmpfs on ``target``, or skip: only a runner allowed to mount can."""
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"this runner may not mount a small file system: {done.stderr.strip()}")


@pytest.fixture()
def small_fs(tmp_path):
    """A 12 KiB file system of our own, unmounted afterwards."""
    target = tmp_path / "small"
    mount_tmpfs(target, "12k")
    yield target
    subprocess.run(["umount", "--lazy", str(target)], check=False)


def read_only(folder: Path) -> None:
    """Make ``folder`` unwritable: a read-only remount when we are root (root writes
    through permissions), else the permission bits."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return
    mount_tmpfs(folder, "1m")
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)


def big_project(tmp_path: Path, extra: str) -> Path:
    seeds = [
        seed(f"Which names are past {i}?", f"SELECT name FROM item WHERE id > {i}")
        for i in range(30)
    ]
    recipe = tiny_project(tmp_path, seeds, extra=extra)
    return recipe


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


def test_a_full_disk_is_one_line_and_leaves_no_half_file(tmp_path, small_fs):
    recipe = big_project(tmp_path, f"workdir: {json.dumps(str(small_fs / 'work'))}\n")
    result = run_in(tmp_path, "build", recipe)
    assert_clean_error(result, str(small_fs), "No space left on device", "fix: free some disk")
    assert leftovers(small_fs) == []


@pytest.mark.parametrize("key", ["workdir", "out"])
def test_a_read_only_folder_is_one_line(tmp_path, key):
    locked = tmp_path / "locked"
    read_only(locked)
    try:
        recipe = big_project(tmp_path, f"{key}: {json.dumps(str(locked / 'x'))}\n")
        result = run_in(tmp_path, "build", recipe)
        assert_clean_error(result, str(locked), "fix:")
        assert not (locked / "x").exists()
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", "--lazy", str(locked)], check=False)
        else:
            locked.chmod(0o755)


def test_a_path_that_is_a_folder_is_one_line(tmp_path):
    recipe = big_project(tmp_path, "")
    assert run_in(tmp_path, "build", recipe).exit_code == 0
    folder = tmp_path / "sheet.csv"
    folder.mkdir()
    result = run_in(tmp_path, "review", "export", recipe, folder, "--all")
    assert_clean_error(result, "sheet.csv", "fix:")
    assert leftovers(tmp_path) == []


def test_a_file_where_a_folder_should_be_is_one_line(tmp_path):
    (tmp_path / "taken").write_text("mine")
    result = run_in(tmp_path, "demo", "init", "--dir", "taken")
    assert_clean_error(result, "taken", "fix:")
    assert (tmp_path / "taken").read_text() == "mine"


def test_a_work_folder_gone_read_only_after_the_build_is_one_line(tmp_path):
    work = tmp_path / "work"
    if os.geteuid() == 0:
        mount_tmpfs(work, "4m")
    else:
        work.mkdir()
    try:
        review = f"workdir: {json.dumps(str(work))}\nreview:\n  backend: local\n"
        recipe = big_project(tmp_path, review)
        assert run_in(tmp_path, "build", recipe).exit_code == 0
        if os.geteuid() == 0:
            subprocess.run(["mount", "-o", "remount,ro", str(work)], check=True)
        else:
            for folder in [work, *work.rglob("*")]:
                if folder.is_dir():
                    folder.chmod(0o555)
        export = ["review", "export", recipe, tmp_path / "s.csv"]
        assert_clean_error(run_in(tmp_path, *export), "queue.sqlite", "fix:")
        # a rebuild from cached steps leaves the candidates file as it is: its first write
        # is the work folder's build lock, taken before any step runs
        assert_clean_error(run_in(tmp_path, "build", recipe), "build.lock", "fix:")
        assert not (tmp_path / "s.csv").exists()
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", "--lazy", str(work)], check=False)
        else:
            for folder in [work, *work.rglob("*")]:
                if folder.is_dir():
                    folder.chmod(0o755)
