"""A source database is sound before use: no pending log, no corrupt page; what a
release ships is in rollback-journal mode, so opening it read-only writes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.conftest import run_in
from tests.test_cli import seed, tiny_project
from tests.test_source_files import folder_state, to_wal

SEEDS = [
    seed("How many items are there?", "SELECT count(*) FROM item"),
    seed("What is the most expensive item?", "SELECT name FROM item ORDER BY price DESC LIMIT 1"),
]


def one_line(result) -> str:
    """The output of a refused command, which must be one line and no traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_a_source_with_commits_still_in_its_wal_is_refused_before_any_work(tmp_path):
    recipe = tiny_project(tmp_path, SEEDS)
    db = tmp_path / "dbs" / "shop.sqlite"
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("INSERT INTO item VALUES (100, 'late thing', 99.0)")
    writer.commit()
    try:
        before = folder_state(db.parent)
        assert (db.parent / "shop.sqlite-wal").stat().st_size > 0
        result = run_in(tmp_path, "build", recipe)
        assert result.exit_code == 1
        line = one_line(result)
        assert "shop.sqlite-wal beside it holds changes" in line and "wal_checkpoint" in line
        assert not (tmp_path / "releases").exists()
        assert folder_state(db.parent) == before
    finally:
        writer.close()


def test_a_wal_mode_source_is_shipped_in_rollback_journal_mode(tmp_path):
    recipe = tiny_project(tmp_path, SEEDS)
    to_wal(tmp_path / "dbs" / "shop.sqlite")
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    shipped = next((tmp_path / "releases").glob("tiny/*/databases/shop.sqlite"))
    assert shipped.read_bytes()[18:20] == b"\x01\x01"
    before = folder_state(shipped.parent)
    con = sqlite3.connect(f"{shipped.as_uri()}?mode=ro", uri=True)
    assert con.execute("SELECT count(*) FROM item").fetchone() == (39,)
    con.close()
    assert folder_state(shipped.parent) == before
    assert run_in(tmp_path, "verify", shipped.parent.parent, "--execute").exit_code == 0


def corrupt(db: Path) -> None:
    """Overwrite the middle of the table's data pages, keeping the header intact."""
    con = sqlite3.connect(db)
    con.executemany(
        "INSERT INTO item VALUES (?, ?, ?)", [(i, "x" * 300, 1.0) for i in range(50, 400)]
    )
    con.commit()
    page = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    data = bytearray(db.read_bytes())
    data[3 * page : 3 * page + 200] = b"\xff" * 200
    db.write_bytes(bytes(data))


def test_a_corrupt_source_database_is_refused_with_one_line(tmp_path):
    recipe = tiny_project(tmp_path, SEEDS)
    db = tmp_path / "dbs" / "shop.sqlite"
    corrupt(db)
    before = db.read_bytes()
    for command in ("validate", "build"):
        result = run_in(tmp_path, command, recipe)
        assert result.exit_code == 1, result.output
        assert "fails PRAGMA integrity_check" in one_line(result)
    assert not (tmp_path / "releases").exists()
    assert db.read_bytes() == before
