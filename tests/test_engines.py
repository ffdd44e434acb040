"""The engine interface: the registry, the engine-independent result hash, DuckDB's
read-only proofs and a DuckDB copy of a SQLite file that answers as SQLite does."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
import threading
import time
import uuid
from decimal import Decimal

import pytest

from answerable.builders.engines import ENGINES, SourceSpec, engine, open_source
from answerable.builders.engines.base import Database, sqlite_cell
from answerable.builders.engines.duckdb import (
    DuckDBDatabase,
    Watchdog,
    copy_sqlite_to_duckdb,
)
from answerable.builders.executor import (
    WALL_FACTOR,
    Limits,
    ReadOnlyDatabase,
    collect,
    result_hash,
)
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import sha256_file


@pytest.fixture
def small_pair(tmp_path):
    """A SQLite file with a table ``t`` (250 rows) and ``u`` (typed cells), and its
    DuckDB copy: ``(sqlite_path, duckdb_path)``."""
    path = tmp_path / "small.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute(
        "CREATE TABLE u (id INTEGER PRIMARY KEY, t_id INTEGER REFERENCES t(id), "
        "price REAL, born DATE, note TEXT, mixed NUMERIC, raw BLOB)"
    )
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"n{i}") for i in range(250)])
    con.executemany(
        "INSERT INTO u VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (1, 3, 2.5, "2001-02-03", "a", 7, b"\x00\x01"),
            (2, 4, 10.0, "1999-12-31", None, "n/a", None),
            (3, None, None, None, "c", 1.25, b"x"),
        ],
    )
    con.commit()
    con.close()
    return path, copy_sqlite_to_duckdb(path, tmp_path / "small.duckdb")


def test_registry_names_every_engine_and_refuses_others():
    assert {"sqlite", "duckdb"} <= set(ENGINES)
    for name, kind in ENGINES.items():
        assert kind.name == name
        assert engine(name).dialect
    with pytest.raises(SQLError) as caught:
        engine("oracle")
    assert caught.value.reason == "unknown-engine"
    assert "duckdb" in str(caught.value) and "sqlite" in str(caught.value)


def test_a_spec_without_what_its_engine_needs_is_refused():
    for name in ("sqlite", "duckdb"):
        with pytest.raises(SQLError) as caught:
            open_source(SourceSpec("x", name))
        assert caught.value.reason == "bad-source"


def test_describe_never_shows_a_dsn():
    spec = SourceSpec("x", "postgres", dsn="postgresql://me:s3cret@host/db", namespace="s")
    assert "s3cret" not in spec.describe()
    assert "s3cret" not in repr(SourceSpec("x", "postgres", dsn_env="PGDSN"))


def test_both_engines_give_databases_of_the_interface(small_pair):
    sqlite_path, duck_path = small_pair
    for spec in (SourceSpec("small", path=sqlite_path), SourceSpec("small", "duckdb", duck_path)):
        with open_source(spec) as db:
            assert isinstance(db, Database)
            assert db.dialect == engine(spec.engine).dialect
            assert db.execute("SELECT count(*) FROM t").dialect == db.dialect


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM t",
        "SELECT * FROM t ORDER BY id DESC",
        "SELECT id, t_id, price, born, note, raw FROM u",
        "SELECT count(*), sum(price), avg(id) FROM u",
        "SELECT id, price * 2 FROM u WHERE price > 3",
        "SELECT name FROM t WHERE id IN (SELECT t_id FROM u) ORDER BY name",
    ],
)
def test_equal_rows_hash_equally_on_sqlite_and_duckdb(small_pair, sql):
    sqlite_path, duck_path = small_pair
    with ReadOnlyDatabase(sqlite_path) as lite, DuckDBDatabase(duck_path) as duck:
        a, b = lite.execute(sql), duck.execute(sql)
    assert (a.hash, a.row_count, a.rows) == (b.hash, b.row_count, b.rows)
    assert (a.dialect, b.dialect) == ("sqlite", "duckdb")


def test_a_column_mixing_kinds_comes_back_as_text(small_pair):
    """SQLite keeps 7, 'n/a' and 1.25 in one column; a DuckDB column has one type, so
    the copy holds their text: the one kind of value a copy cannot give back as it was."""
    sqlite_path, duck_path = small_pair
    sql = "SELECT mixed FROM u ORDER BY id"
    with ReadOnlyDatabase(sqlite_path) as lite, DuckDBDatabase(duck_path) as duck:
        assert lite.execute(sql).rows == [[7], ["n/a"], [1.25]]
        assert duck.execute(sql).rows == [["7"], ["n/a"], ["1.25"]]


def test_a_different_result_hashes_differently(small_pair):
    sqlite_path, duck_path = small_pair
    with ReadOnlyDatabase(sqlite_path) as lite, DuckDBDatabase(duck_path) as duck:
        assert lite.execute("SELECT id FROM t").hash != duck.execute("SELECT id + 1 FROM t").hash


def test_duckdb_schema_from_its_catalog_matches_sqlite(small_pair):
    sqlite_path, duck_path = small_pair
    with ReadOnlyDatabase(sqlite_path) as lite, DuckDBDatabase(duck_path) as duck:
        a, b = lite.schema("small"), duck.schema("small")
    assert [t.name for t in a.tables] == [t.name for t in b.tables] == ["t", "u"]
    for left, right in zip(a.tables, b.tables, strict=True):
        assert [c.name for c in left.columns] == [c.name for c in right.columns]
        assert left.primary_key == right.primary_key
        assert left.foreign_keys == right.foreign_keys
    assert b.table("u").foreign_keys == [("t_id", "t", "id")]
    types = {c.name: c.type for c in b.table("u").columns}
    # each column gets the type of the values SQLite holds: dates stay text, a column
    # mixing numbers and text becomes text
    assert types == {
        "id": "BIGINT", "t_id": "BIGINT", "price": "DOUBLE", "born": "VARCHAR",
        "note": "VARCHAR", "mixed": "VARCHAR", "raw": "BLOB",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        (None, None),
        (True, 1),
        (Decimal("2.50"), 2.5),
        (Decimal("3.000"), 3),
        (Decimal("12345678901234567890"), 12345678901234567890),
        (dt.date(2024, 1, 2), "2024-01-02"),
        (dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 120000), "2024-01-02 03:04:05.120000"),
        (
            dt.datetime(2024, 1, 2, 5, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "2024-01-02 03:04:05",
        ),
        (dt.time(7, 8, 9), "07:08:09"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (memoryview(b"ab"), b"ab"),
    ],
)
def test_cells_become_what_sqlite_would_give(value, cell):
    assert sqlite_cell(value) == cell
    assert type(sqlite_cell(value)) is type(cell)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (dt.timedelta(days=1), "interval"),
        ([1, 2], "array"),
        ((1, 2), "array"),
        ({"a": 1}, "JSON"),
        (Decimal("12345678901234567.12345"), "float cannot hold"),
        (object(), "does not know"),
    ],
)
def test_types_the_hash_does_not_know_are_refused_by_name(value, words):
    with pytest.raises(SQLError) as caught:
        sqlite_cell(value, "col")
    assert caught.value.reason == "unhashable-type"
    assert words in str(caught.value) and "'col'" in str(caught.value)


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("SELECT [1, 2] AS xs", "array"),
        ("SELECT {'a': 1} AS s", "struct"),
        ("SELECT INTERVAL 1 DAY AS i", "interval"),
        ("SELECT '12345678901234567.12345'::DECIMAL(38, 5) AS n", "float cannot hold"),
    ],
)
def test_duckdb_values_the_hash_does_not_know_are_a_named_error(small_pair, sql, words):
    with DuckDBDatabase(small_pair[1]) as duck, pytest.raises(SQLError) as caught:
        duck.execute(sql)
    assert caught.value.reason == "unhashable-type" and words in str(caught.value)


def test_duckdb_typed_values_hash_as_their_sqlite_text(small_pair):
    sql = (
        "SELECT DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05', true, "
        "'{\"a\":1}'::JSON, 1.50::DECIMAL(5, 2)"
    )
    with DuckDBDatabase(small_pair[1]) as duck:
        got = duck.execute(sql)
    expected = [("2024-01-02", "2024-01-02 03:04:05", 1, '{"a":1}', 1.5)]
    assert got.rows == [list(expected[0])]
    assert got.hash == result_hash(expected, ordered=False)


WRITES = [
    ("DROP TABLE t", "not-read-only"),
    ("DELETE FROM t", "not-read-only"),
    ("UPDATE t SET name = 'x'", "not-read-only"),
    ("INSERT INTO t VALUES (1000, 'x')", "not-read-only"),
    ("SELECT 1; DROP TABLE t", "multiple-statements"),
    ("SELECT * FROM t; SELECT 1", "multiple-statements"),
    ("WITH x AS (SELECT 1) DELETE FROM t", "not-read-only"),
    ("WITH x AS (SELECT 1) INSERT INTO t SELECT 1000, 'a' FROM x", "not-read-only"),
    ("ATTACH 'other.duckdb' AS other", "not-read-only"),
    ("COPY t TO 'out.csv'", "not-read-only"),
    ("EXPORT DATABASE 'exported'", "not-read-only"),
    ("INSTALL sqlite", "not-read-only"),
    ("LOAD sqlite", "not-read-only"),
    ("SET threads = 1", "not-read-only"),
    ("SET enable_external_access = true", "not-read-only"),
    ("PRAGMA threads = 1", "not-read-only"),
    ("CHECKPOINT", "not-read-only"),
    ("SELECT * FROM read_csv('/etc/passwd')", "not-read-only"),
    ("SELECT * FROM read_text('/etc/hostname')", "not-read-only"),
    ("SELECT * FROM glob('/etc/*')", "not-read-only"),
    ("SELECT random()", "function-not-allowed"),
    ("SELECT uuid()", "function-not-allowed"),
    ("SELECT now()", "function-not-allowed"),
    ("SELECT nextval('s')", "function-not-allowed"),
    ("SELECT upper(name), setseed(0.5) FROM t", "function-not-allowed"),
    ("SELECT nope FROM t", "unknown-column"),
    ("SELECT * FROM nope", "unknown-table"),
    ("SELECT FROM WHERE", "parse-error"),
]


@pytest.mark.parametrize(("sql", "reason"), WRITES)
def test_duckdb_refuses_writes_and_leaves_the_file_unchanged(
    small_pair, sql, reason, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    path = small_pair[1]
    before = sha256_file(path)
    with DuckDBDatabase(path) as duck:
        with pytest.raises(SQLError) as caught:
            duck.execute(sql)
        assert duck.execute("SELECT count(*) FROM t").rows == [[250]]
    assert caught.value.reason == reason
    assert sha256_file(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.duckdb", "small.sqlite"]


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE t",
        "INSERT INTO t VALUES (1000, 'x')",
        "COPY t TO 'out.csv'",
        "SET enable_external_access = true",
        "ATTACH 'other.duckdb' AS other",
        "INSTALL sqlite",
    ],
)
def test_duckdb_connection_refuses_writes_without_our_statement_check(
    small_pair, sql, tmp_path, monkeypatch
):
    """Each lock of the connection holds alone: the statement check is not the only one."""
    import duckdb

    monkeypatch.chdir(tmp_path)
    before = sha256_file(small_pair[1])
    with DuckDBDatabase(small_pair[1]) as duck, pytest.raises(duckdb.Error):
        duck._con.execute(sql)
    assert sha256_file(small_pair[1]) == before
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.duckdb").exists()


def test_duckdb_time_limit_interrupts_a_runaway_query(small_pair):
    runaway = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    )
    with DuckDBDatabase(small_pair[1], Limits(timeout_s=0.2)) as duck:
        with pytest.raises(SQLError) as caught:
            duck.execute(runaway)
        assert caught.value.reason == "timeout"
        assert duck.execute("SELECT count(*) FROM t").row_count == 1


def test_duckdb_time_limit_counts_cpu_time_not_the_machines_load():
    """Past its limit on the wall clock, a statement that has not used its limit of CPU
    time (the machine was busy elsewhere) is left to run; it is interrupted once it has,
    or once the wall clock passes WALL_FACTOR times the limit."""
    cpu, fired, at = [0.0], threading.Event(), []
    dog = Watchdog(lambda: (at.append(time.monotonic()), fired.set()), cpu_clock=lambda: cpu[0])
    dog.arm(time.monotonic(), 0.1)
    assert not fired.wait(0.5)  # five times the limit on the wall clock, no CPU used
    cpu[0] = 0.1  # the statement has now used its limit
    assert fired.wait(10)
    dog.disarm()
    fired.clear()
    started = time.monotonic()
    dog.arm(started, 0.05)  # a statement that never uses CPU: the wall clock stops it
    assert fired.wait(20) and at[-1] - started >= WALL_FACTOR * 0.05
    dog.close()


def test_duckdb_row_cap_keeps_the_first_rows_and_hashes_all(small_pair):
    sqlite_path, duck_path = small_pair
    with (
        ReadOnlyDatabase(sqlite_path) as lite,
        DuckDBDatabase(duck_path, Limits(row_cap=5)) as duck,
    ):
        got = duck.execute("SELECT id FROM t ORDER BY id")
        full = lite.execute("SELECT id FROM t ORDER BY id", row_cap=1000)
    assert got.rows == [[0], [1], [2], [3], [4]] and got.truncated
    assert got.row_count == 250 and got.hash == full.hash


def test_an_unordered_result_keeps_the_same_rows_whatever_order_they_come_in():
    # DuckDB's threads (PostgreSQL's parallel plans) may read an unordered result's rows
    # in another order each run: a settled result keeps its first rows by value
    rows = [(3, "c"), (None, "z"), (1.0, "a"), (1, "a"), ("x", None), (2, b"\x01"), (1, "a")]
    shuffled = random.Random(5).sample(rows, len(rows))

    def kept(stream, settled, ordered=False):
        return collect(
            iter(stream), ["a", "b"], ordered, 4, Limits(), 10**6, 0.0, "duckdb", settled
        )

    first, second = kept(rows, True), kept(shuffled, True)
    assert first.rows == second.rows == [[None, "z"], [1, "a"], [1, "a"], [1.0, "a"]]
    assert first.hash == second.hash == kept(rows, False).hash and first.row_count == 7
    assert first.truncated
    assert kept(rows, False).rows != kept(shuffled, False).rows  # as read, unsettled
    assert kept(shuffled, True, ordered=True).rows == kept(shuffled, False, True).rows
    none_kept = collect(iter(rows), ["a", "b"], False, 0, Limits(), 10**6, 0.0, "duckdb", True)
    assert none_kept.rows == [] and (none_kept.row_count, none_kept.hash) == (7, first.hash)


def test_duckdb_keeps_an_unordered_results_first_rows_by_value(small_pair):
    with DuckDBDatabase(small_pair[1], Limits(row_cap=3)) as duck:
        got = duck.execute("SELECT name FROM t WHERE id > 240 GROUP BY name")
        ordered = duck.execute("SELECT name FROM t WHERE id > 240 ORDER BY name DESC")
    assert got.rows == [["n241"], ["n242"], ["n243"]] and got.row_count == 9
    assert ordered.rows == [["n249"], ["n248"], ["n247"]]  # an ORDER BY's order stands


def test_duckdb_binds_parameters(small_pair):
    with DuckDBDatabase(small_pair[1]) as duck:
        assert duck.execute("SELECT name FROM t WHERE id = ?", (7,)).rows == [["n7"]]


def test_not_a_duckdb_file(tmp_path, small_pair):
    fake = tmp_path / "fake.duckdb"
    fake.write_text("hello")
    for path in (fake, tmp_path / "missing.duckdb", small_pair[0]):
        with pytest.raises(SQLError) as caught:
            DuckDBDatabase(path)
        assert caught.value.reason == "not-a-database"


def test_duckdb_time_zone_is_pinned_whatever_the_machines(small_pair, monkeypatch):
    """DuckDB takes its time zone from the machine; the engine pins UTC before locking
    the configuration, so timestamptz arithmetic and its text are the same everywhere."""
    import time

    import duckdb

    sql = "SELECT (TIMESTAMPTZ '2024-03-09 12:00:00+05' + INTERVAL 1 DAY)::VARCHAR"
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        plain = duckdb.connect(str(small_pair[1]), read_only=True)
        assert plain.execute(sql).fetchone() == ("2024-03-10 03:00:00-04",)  # the machine's
        plain.close()
        with DuckDBDatabase(small_pair[1]) as duck:
            assert duck.execute(sql).rows == [["2024-03-10 07:00:00+00"]]
            with pytest.raises(duckdb.Error, match="locked"):
                duck._con.execute("SET TimeZone = 'Asia/Tokyo'")
            # A second connection shares the locked instance (exports and twins read
            # the file while the engine has it open): it opens, with the same pins.
            with DuckDBDatabase(small_pair[1]) as again:
                assert again.execute(sql).rows == [["2024-03-10 07:00:00+00"]]
    finally:
        monkeypatch.undo()
        time.tzset()


def test_duckdb_statements_share_one_watchdog_thread(small_pair):
    """The time limit's thread is made once per connection, not once per statement."""
    import threading

    with DuckDBDatabase(small_pair[1], Limits(timeout_s=5)) as duck:
        duck.execute("SELECT 1")
        before = threading.active_count()
        for _ in range(50):
            duck.execute("SELECT count(*) FROM t")
        assert threading.active_count() == before
    assert threading.active_count() == before - 1  # closing stops it


def test_table_checksums_are_the_same_on_both_engines_and_follow_the_data(small_pair, tmp_path):
    """What pins a server source in the manifest: equal data, equal checksums on every
    engine; one changed row changes its table's."""
    from answerable.builders.engines.pinning import table_checksums
    from answerable.builders.schema import DatabaseSchema

    sqlite_path, duck_path = small_pair
    schema = DatabaseSchema.from_sqlite(sqlite_path, "small")
    with ReadOnlyDatabase(sqlite_path) as lite, DuckDBDatabase(duck_path) as duck:
        on_file, on_duck = table_checksums(lite, schema), table_checksums(duck, schema)
    assert on_file["t"] == on_duck["t"] and on_file["t"]["rows"] == 250
    # u's column mixing 7 and 'n/a' is text in the DuckDB copy: other data, other checksum
    assert on_file["u"] != on_duck["u"]
    changed = tmp_path / "changed.sqlite"
    changed.write_bytes(sqlite_path.read_bytes())
    con = sqlite3.connect(changed)
    con.execute("UPDATE t SET name = 'other' WHERE id = 7")
    con.commit()
    con.close()
    with ReadOnlyDatabase(changed) as lite:
        after = table_checksums(lite, schema)
    assert after["t"]["hash"] != on_file["t"]["hash"] and after["u"] == on_file["u"]
