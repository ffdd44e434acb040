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


def test_review_export_replaces_an_earlier_export_but_not_a_users_file(tmp_path):
    from tests.test_cli import seed, tiny_project

    seeds = [seed("How many items are there?", "SELECT count(*) FROM item")]
    recipe = tiny_project(tmp_path, seeds, extra="review:\n  backend: local\n")
    assert run_in(tmp_path, "build", recipe).exit_code == 0
    for name in ("sheet.csv", "sheet.jsonl"):
        assert run_in(tmp_path, "review", "export", recipe, name).exit_code == 0
        again = run_in(tmp_path, "review", "export", recipe, name)
        assert again.exit_code == 0, again.output
    mine = tmp_path / "notes.csv"
    mine.write_text("my,own,notes\n")
    result = run_in(tmp_path, "review", "export", recipe, mine)
    assert_clean_error(result, "notes.csv", "already exists", "--force")
    assert mine.read_text() == "my,own,notes\n"
    assert run_in(tmp_path, "review", "export", recipe, mine, "--force").exit_code == 0
    assert mine.read_text().startswith("item_id,db_id,")


def test_bio_replaces_its_own_file_but_not_a_users_file(demo_build, tmp_path):
    cwd, _ = demo_build
    release = next((cwd / "releases").glob("*/*"))
    out = tmp_path / "bio.jsonl"
    assert run_in(tmp_path, "bio", release, "--out", out).exit_code == 0
    assert run_in(tmp_path, "bio", release, "--out", out).exit_code == 0
    out.write_text("mine\n")
    assert_clean_error(run_in(tmp_path, "bio", release, "--out", out), "bio.jsonl", "--force")
    assert out.read_text() == "mine\n"
