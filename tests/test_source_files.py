"""Sources are opened so that nothing is written beside them, WAL mode included."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.builders.source_files import source_uri
from tests.conftest import run_in
from tests.test_cli import seed, tiny_project


def folder_state(folder: Path) -> dict[str, bytes]:
    """Every file of ``folder`` with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def to_wal(db: Path) -> None:
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    con.close()


def test_validate_and_build_leave_a_wal_source_folder_as_it_was(tmp_path):
    recipe = tiny_project(
        tmp_path, [seed("How many items are there?", "SELECT count(*) FROM item")]
    )
    db = tmp_path / "dbs" / "shop.sqlite"
    to_wal(db)
    before = folder_state(db.parent)
    assert list(before) == ["shop.sqlite"]
    assert run_in(tmp_path, "validate", recipe).exit_code == 0
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    assert "candidates: 1 items" in result.output
    assert folder_state(db.parent) == before


def test_changes_still_in_the_wal_are_read_from_a_private_copy(tmp_path):
    db = tmp_path / "live.sqlite"
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("CREATE TABLE t (x INTEGER)")
    writer.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(10)])
    writer.commit()
    try:
        before = folder_state(tmp_path)
        assert (tmp_path / "live.sqlite-wal").stat().st_size > 0
        assert "immutable" not in source_uri(db)
        with ReadOnlyDatabase(db) as reader:
            assert reader.execute("SELECT count(*) FROM t").rows == [[10]]
        assert DatabaseSchema.from_sqlite(db).table("t") is not None
        assert folder_state(tmp_path) == before
    finally:
        writer.close()


def test_a_plain_source_is_opened_immutable(tmp_path):
    db = tmp_path / "plain.sqlite"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.close()
    assert source_uri(db).endswith("?mode=ro&immutable=1")
    with ReadOnlyDatabase(db) as reader:
        assert reader.execute("SELECT count(*) FROM t").rows == [[0]]
    assert [p.name for p in tmp_path.iterdir()] == ["plain.sqlite"]
