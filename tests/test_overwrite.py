"""Nothing the project writes replaces a user's file: `demo init` needs --force."""

from __future__ import annotations

from tests.conftest import run_in
from tests.test_cli import assert_clean_error


def test_demo_init_refuses_to_replace_an_existing_file(tmp_path):
    mine = tmp_path / "D" / "clinic.sqlite"
    mine.parent.mkdir()
    mine.write_bytes(b"my own clinic data")
    result = run_in(tmp_path, "demo", "init", "--dir", "D")
    assert_clean_error(result, "clinic.sqlite", "already exists", "--force")
    assert mine.read_bytes() == b"my own clinic data"
    assert sorted(p.name for p in mine.parent.iterdir()) == ["clinic.sqlite"]


def test_demo_init_with_force_replaces_and_a_new_folder_needs_nothing(tmp_path):
    mine = tmp_path / "D" / "clinic.sqlite"
    mine.parent.mkdir()
    mine.write_bytes(b"old")
    assert run_in(tmp_path, "demo", "init", "--dir", "D", "--force").exit_code == 0
    assert mine.read_bytes()[:16] == b"SQLite format 3\x00"
    fresh = run_in(tmp_path, "demo", "init", "--dir", "E")
    assert fresh.exit_code == 0, fresh.output
    assert sorted(p.name for p in (tmp_path / "E").iterdir()) == ["clinic.sqlite", "league.sqlite"]
