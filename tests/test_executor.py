"""The read-only executor: limits, hashes, and source files that are never written."""

from __future__ import annotations

import sqlite3

import pytest

from answerable.builders.executor import (
    GatedDatabase,
    Limits,
    ReadOnlyDatabase,
    ResultHasher,
    collect,
    normalize_value,
    result_hash,
)
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import sha256_file
from tests.conftest import shared_data


@pytest.fixture()
def small_db(tmp_path):
    path = tmp_path / "small.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, blob BLOB)")
    con.executemany(
        "INSERT INTO t VALUES (?, ?, ?, ?)",
        [(i, f"n{i % 7}", i * 1.5, b"\x01\x02" if i == 3 else None) for i in range(1, 251)],
    )
    con.commit()
    con.close()
    return path


def test_select_keeps_capped_rows_and_true_count(small_db):
    with ReadOnlyDatabase(small_db, Limits(row_cap=10)) as db:
        result = db.execute("SELECT id, name FROM t")
    assert result.row_count == 250
    assert len(result.rows) == 10
    assert result.truncated
    assert result.columns == ["id", "name"]


def test_values_are_json_safe(small_db):
    with ReadOnlyDatabase(small_db) as db:
        rows = db.execute("SELECT blob, score FROM t WHERE id IN (2, 3) ORDER BY id").rows
    assert rows == [[None, 3], ["0102", 4.5]]


def test_hash_ignores_row_order_without_order_by(small_db):
    with ReadOnlyDatabase(small_db) as db:
        up = db.execute("SELECT id FROM t WHERE id < 20 ORDER BY id", ordered=False)
        down = db.execute("SELECT id FROM t WHERE id < 20 ORDER BY id DESC", ordered=False)
    assert up.hash == down.hash


def test_hash_keeps_row_order_with_order_by(small_db):
    with ReadOnlyDatabase(small_db) as db:
        up = db.execute("SELECT id FROM t WHERE id < 20 ORDER BY id")
        down = db.execute("SELECT id FROM t WHERE id < 20 ORDER BY id DESC")
    assert up.ordered and down.ordered
    assert up.hash != down.hash


def test_hash_covers_rows_past_the_cap(small_db):
    with ReadOnlyDatabase(small_db, Limits(row_cap=5)) as db:
        all_rows = db.execute("SELECT id FROM t")
        fewer = db.execute("SELECT id FROM t WHERE id < 250")
    assert all_rows.rows == fewer.rows
    assert all_rows.hash != fewer.hash


def test_result_hash_matches_numbers_by_value():
    assert result_hash([(1, "a")], ordered=True) == result_hash([(1.0, "a")], ordered=True)
    assert result_hash([(1, "a")], ordered=True) != result_hash([("1", "a")], ordered=True)


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("DROP TABLE t", "not-read-only"),
        ("DELETE FROM t", "not-read-only"),
        ("UPDATE t SET name = 'x'", "not-read-only"),
        ("INSERT INTO t (name) VALUES ('x')", "not-read-only"),
        ("SELECT 1; DROP TABLE t", "multiple-statements"),
        ("SELECT * FROM t; SELECT 1", "multiple-statements"),
        ("WITH x AS (SELECT 1) DELETE FROM t", "not-read-only"),
        ("WITH x AS (SELECT 1) INSERT INTO t (name) SELECT 'a' FROM x", "not-read-only"),
        ("ATTACH DATABASE 'other.db' AS other", "not-read-only"),
        ("PRAGMA journal_mode = DELETE", "not-read-only"),
        ("SELECT * FROM pragma_table_info('t')", "not-read-only"),
        ("VACUUM", "not-read-only"),
        ("SELECT nope FROM t", "unknown-column"),
        ("SELECT * FROM nope", "unknown-table"),
        ("SELECT FROM WHERE", "parse-error"),
    ],
)
def test_refused_statements_leave_the_file_unchanged(small_db, sql, reason):
    before = sha256_file(small_db)
    with ReadOnlyDatabase(small_db) as db, pytest.raises(SQLError) as caught:
        db.execute(sql)
    assert caught.value.reason == reason
    assert sha256_file(small_db) == before
    with ReadOnlyDatabase(small_db) as db:
        assert db.execute("SELECT count(*) FROM t").rows == [[250]]


def test_time_limit_stops_a_runaway_query(small_db):
    runaway = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    )
    with ReadOnlyDatabase(small_db, Limits(timeout_s=0.2)) as db:
        with pytest.raises(SQLError) as caught:
            db.execute(runaway)
        assert caught.value.reason == "timeout"
        assert db.execute("SELECT count(*) FROM t").row_count == 1


def test_the_time_limit_counts_the_query_cpu_time_not_the_wall_clock(small_db, monkeypatch):
    """A loaded machine must not change a verdict: once the limit has passed on the wall
    clock, the CPU clock decides (here one that runs fast stops the query, with the wall
    clock's own deadline put out of reach); before that it is not even read (a thread's
    CPU time grows no faster than the wall clock), but once when the query starts."""
    from answerable.builders import executor

    counted = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) "
        "SELECT count(*) FROM c"
    )
    real_cpu, reads = executor.time.thread_time, []
    monkeypatch.setattr(
        executor.time, "thread_time", lambda: reads.append(1) or real_cpu() * 10_000
    )
    monkeypatch.setattr(executor, "WALL_FACTOR", 10**9)
    with GatedDatabase(small_db, Limits(timeout_s=1e-4)) as db:
        with pytest.raises(SQLError) as caught:
            db.execute(counted)
        assert caught.value.reason == "timeout"
    reads.clear()
    with GatedDatabase(small_db, Limits(timeout_s=3600)) as db:
        assert db.execute(counted).rows == [[200000]]
    assert len(reads) == 1


def test_a_query_whose_cpu_clock_stands_still_is_stopped_by_the_wall_clock(small_db, monkeypatch):
    from answerable.builders import executor

    runaway = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    )
    monkeypatch.setattr(executor.time, "thread_time", lambda: 0.0)
    with GatedDatabase(small_db, Limits(timeout_s=0.02)) as db:
        with pytest.raises(SQLError) as caught:
            db.execute(runaway)
        assert caught.value.reason == "timeout"
        assert db.execute("SELECT count(*) FROM t").row_count == 1


def test_not_a_database(tmp_path):
    fake = tmp_path / "fake.sqlite"
    fake.write_text("hello")
    with pytest.raises(SQLError) as caught:
        ReadOnlyDatabase(fake)
    assert caught.value.reason == "not-a-database"
    with pytest.raises(SQLError):
        ReadOnlyDatabase(tmp_path / "missing.sqlite")


def test_real_database_is_never_written():
    chinook = shared_data("chinook", "chinook.sqlite")
    before = sha256_file(chinook)
    with ReadOnlyDatabase(chinook) as db:
        assert db.execute("SELECT count(*) FROM Track").rows == [[3503]]
        for sql in ("DROP TABLE Track", "SELECT 1; DROP TABLE Track", "DELETE FROM Invoice"):
            with pytest.raises(SQLError):
                db.execute(sql)
    assert sha256_file(chinook) == before


def _one_by_one(rows, ordered):
    hasher = ResultHasher(ordered)
    for row in rows:
        hasher.add(row)
    return hasher


@pytest.mark.parametrize("ordered", [True, False])
def test_hashing_rows_in_bulk_equals_one_at_a_time(ordered):
    cells = [None, 0, 7, -3, 2.0, 2.5, float("inf"), float("nan"), 1e300, "", "x", "é", b"\x00"]
    rows = [tuple(cells[(i * 5 + j * 3) % len(cells)] for j in range(3)) for i in range(400)]
    bulk = ResultHasher(ordered)
    bulk.add(rows[0])
    bulk.add_all(iter(rows[1:]))
    one = _one_by_one(rows, ordered)
    assert (bulk.count, bulk.hexdigest(3)) == (one.count, one.hexdigest(3))
    assert bulk.hexdigest(3) != _one_by_one(rows[:-1], ordered).hexdigest(3)


@pytest.mark.parametrize("cap", [0, 1, 99, 400, 1000])
@pytest.mark.parametrize("ordered", [True, False])
def test_collect_hashes_and_keeps_as_before_at_every_cap(cap, ordered):
    rows = [(i, f"n{i % 7}", i * 1.5 if i % 3 else None) for i in range(400)]
    result = collect(iter(rows), ["a", "b", "c"], ordered, cap, Limits(), 10**6, 0.0)
    assert result.hash == _one_by_one(rows, ordered).hexdigest(3)
    assert result.row_count == 400 and result.truncated == (cap < 400)
    assert result.rows == [[a, b, normalize_value(c)] for a, b, c in rows[:cap]]
    shuffled = rows if ordered else rows[::-1]  # settled keeps an ordered result as read
    settled = collect(
        iter(shuffled), ["a", "b", "c"], ordered, cap, Limits(), 10**6, 0.0, settled=True
    )
    assert (settled.hash, settled.row_count) == (result.hash, 400)
