"""The executor's locks one at a time, its row cap at the boundary, and NULL hashing.

Each test names the single-line mutant of ``builders/executor.py`` it kills (issue 18):
the other tests pass with the mutant in place because the remaining locks still hold.
"""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from answerable.builders.executor import (
    Limits,
    ReadOnlyDatabase,
    normalize_value,
    open_read_only,
    result_hash,
    row_digest,
)
from answerable.kernel.errors import SQLError


@pytest.fixture
def db_path(tmp_path):
    path = tmp_path / "numbers.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE n (x INTEGER)")
    con.executemany("INSERT INTO n VALUES (?)", [(i,) for i in range(10)])
    con.commit()
    con.close()
    return path


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- each lock on its own ---------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "WITH v AS (SELECT 99) INSERT INTO n SELECT * FROM v",
        "WITH v AS (SELECT 1) DELETE FROM n",
        "WITH v AS (SELECT 1) UPDATE n SET x = 0",
    ],
)
def test_the_authorizer_alone_refuses_writes_that_pass_the_keyword_gate(db_path, sql):
    """Kills: the authorizer allowing INSERT/DELETE/UPDATE. A WITH statement passes the
    first-keyword gate, and the refusal must come from the authorizer ("not authorized"),
    before the read-only file or query_only would see the write."""
    before = digest(db_path)
    with ReadOnlyDatabase(db_path) as db, pytest.raises(SQLError) as caught:
        db.execute(sql)
    assert caught.value.reason == "not-read-only"
    assert "not authorized" in str(caught.value)
    assert digest(db_path) == before


@pytest.mark.parametrize(
    "sql",
    ["INSERT INTO n VALUES (1)", "ATTACH DATABASE ':memory:' AS other", "PRAGMA query_only = OFF"],
)
def test_the_authorizer_refuses_at_prepare_time_on_the_raw_connection(db_path, sql):
    """Kills: an authorizer that allows INSERT, ATTACH or PRAGMA (the connection that
    ``open_read_only`` returns must refuse them as not authorized)."""
    con = open_read_only(db_path)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            con.execute(sql)
    finally:
        con.close()


def test_query_only_alone_refuses_a_temp_table(db_path):
    """Kills: dropping ``PRAGMA query_only = ON``. With the authorizer removed, only
    query_only stops a TEMP table (the read-only file does not cover the temp schema)."""
    con = open_read_only(db_path)
    try:
        con.set_authorizer(None)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            con.execute("CREATE TEMP TABLE scratch (y)")
    finally:
        con.close()


def test_the_read_only_uri_alone_refuses_a_write(db_path):
    """Kills: opening the file without ``mode=ro``. With the authorizer removed and
    query_only switched off, the read-only open is the last lock and must hold."""
    before = digest(db_path)
    con = open_read_only(db_path)
    try:
        con.set_authorizer(None)
        con.execute("PRAGMA query_only = OFF")
        con.execute("CREATE TEMP TABLE scratch (y)")  # the temp schema is writable: lock off
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            con.execute("INSERT INTO n VALUES (42)")
    finally:
        con.close()
    assert digest(db_path) == before


def test_one_statement_at_a_time(db_path):
    """Kills: a second statement slipping through (or being classified as anything but
    ``multiple-statements``)."""
    before = digest(db_path)
    with ReadOnlyDatabase(db_path) as db, pytest.raises(SQLError) as caught:
        db.execute("SELECT 1; DELETE FROM n")
    assert caught.value.reason == "multiple-statements"
    assert digest(db_path) == before


def test_the_keyword_gate_refuses_a_plain_write(db_path):
    """Kills: the first-keyword gate accepting other statements."""
    with ReadOnlyDatabase(db_path) as db, pytest.raises(SQLError) as caught:
        db.execute("  DELETE FROM n")
    assert caught.value.reason == "not-read-only"
    assert "only SELECT" in str(caught.value)


# ---- row cap at the boundary ------------------------------------------------------------


@pytest.mark.parametrize(("rows", "truncated"), [(4, False), (5, False), (6, True)])
def test_truncated_only_above_the_row_cap(db_path, rows, truncated):
    """Kills: ``truncated = count >= cap`` (a result of exactly ``row_cap`` rows is whole)."""
    with ReadOnlyDatabase(db_path, Limits(row_cap=5)) as db:
        result = db.execute(f"SELECT x FROM n ORDER BY x LIMIT {rows}")
    assert result.truncated is truncated
    assert result.row_count == rows
    assert result.rows == [[i] for i in range(min(rows, 5))]


def test_a_per_call_row_cap_overrides_the_limit(db_path):
    """Kills: ``execute(row_cap=...)`` being ignored, or a cap of 0 read as "no cap"."""
    with ReadOnlyDatabase(db_path, Limits(row_cap=5)) as db:
        none_kept = db.execute("SELECT x FROM n", row_cap=0)
        exact = db.execute("SELECT x FROM n", row_cap=10)
    assert (none_kept.rows, none_kept.row_count, none_kept.truncated) == ([], 10, True)
    assert (len(exact.rows), exact.truncated) == (10, False)


# ---- hashing ----------------------------------------------------------------------------


@pytest.mark.parametrize("ordered", [True, False])
def test_null_does_not_hash_like_the_text_none(ordered):
    """Kills: NULL hashed as ``str(None)``: a NULL cell and the text 'None' (or '' or 0)
    are different answers."""
    null = result_hash([(None,)], ordered)
    for other in ("None", "", 0, "\x00"):
        assert result_hash([(other,)], ordered) != null, other


def test_null_cells_hash_the_same_through_the_executor(db_path):
    """The executor's hash of a NULL result equals :func:`result_hash` of NULL, and differs
    from the text 'None' run through the same path."""
    with ReadOnlyDatabase(db_path) as db:
        null = db.execute("SELECT NULL")
        text = db.execute("SELECT 'None'")
    assert null.hash == result_hash([(None,)], ordered=False, columns=1)
    assert null.hash != text.hash


def test_a_stored_row_hash_keeps_its_format():
    """Kills: another separator between a row's cell tokens. The scorer compares a
    prediction's hash with the gold hash stored in a release cut by an earlier version,
    so the digest is fixed: sha256 of the cells' tokens joined by the unit separator."""
    row = ("ann", 3, 1.5, 2.0, None, b"\x01")
    tokens = ["sann", "n3", "n1.5", "n2", "\x00", "b01"]
    assert row_digest(row) == hashlib.sha256("\x1f".join(tokens).encode()).digest()


# ---- numbers and printf -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kept"),
    [(150.0, 150), (-(2.0**53) + 1, -(2**53) + 1), (2.0**53 - 1, 2**53 - 1), (2.0**53, 2.0**53)],
)
def test_integral_floats_print_as_ints_only_below_two_to_the_53(value, kept):
    """Kills: the bound ``abs(value) < 2**53`` moved (``<=``, ``2*53``, ``3**53``,
    ``2**54``). An average of 150.0 is kept as 150; from 2**53 on a float no longer
    holds every integer, so it stays a float rather than claim digits it has not got."""
    assert normalize_value(value) == kept
    assert type(normalize_value(value)) is type(kept)


def test_printf_formats_as_sqlite_does(db_path):
    """Kills: the width check breaking printf (its pattern gone), or a ``%%`` taken for
    a conversion that uses up an argument."""
    with ReadOnlyDatabase(db_path, Limits(value_bytes=1000)) as db:
        assert db.execute("SELECT printf('%5.2f|%-4d|%s', 3.14159, 7, 'x')").rows == [
            [" 3.14|7   |x"]
        ]
        assert db.execute("SELECT printf('%%|%*d|%d', 4, 7, 5000)").rows == [["%|   7|5000"]]


def test_a_star_width_is_read_from_its_own_argument(db_path):
    """Kills: the argument count starting at 1 (a ``*`` reads the wrong argument): a
    small ``*`` width before a large value runs, a large one after a value is refused."""
    with ReadOnlyDatabase(db_path, Limits(value_bytes=1000)) as db:
        assert db.execute("SELECT printf('%*d', 5, 2000000000)").rows == [["2000000000"]]
        with pytest.raises(SQLError, match="printf width or precision") as caught:
            db.execute("SELECT printf('%d|%*d', 1, 5000, 2)")
    assert caught.value.reason == "too-big"


@pytest.mark.parametrize("pattern", ["%{}d", "%.{}c", "%-{}s"])
def test_a_printf_width_or_precision_is_checked_exactly_at_the_value_limit(db_path, pattern):
    """Kills: only the precision (or only the width) being checked, and the check moved
    off the limit: up to the limit the check lets printf run (at the limit SQLite's own
    length limit makes it NULL), one past it the check refuses it itself rather than
    leaving it to SQLite, which can loop for seconds on a huge width first."""
    with ReadOnlyDatabase(db_path, Limits(value_bytes=1000)) as db:
        assert len(db.execute(f"SELECT printf('{pattern.format(999)}', 'x')").rows[0][0]) == 999
        assert db.execute(f"SELECT printf('{pattern.format(1000)}', 'x')").rows == [[None]]
        with pytest.raises(SQLError, match="printf width or precision") as caught:
            db.execute(f"SELECT printf('{pattern.format(1001)}', 'x')")
    assert caught.value.reason == "too-big"


# ---- byte caps at the boundary ----------------------------------------------------------


def test_the_kept_rows_may_fill_the_byte_cap_exactly(db_path):
    """Kills: ``so_far + size > cap`` -> ``>=`` or ``so_far - size``: rows of exactly
    the cap are kept, one byte more is ``result-too-large``."""
    with ReadOnlyDatabase(db_path) as db:
        exact = db.execute("SELECT 'abcde' UNION ALL SELECT 'fghij'", byte_cap=10)
        assert exact.rows == [["abcde"], ["fghij"]]
        with pytest.raises(SQLError) as caught:
            db.execute("SELECT 'abcde' UNION ALL SELECT 'fghijk'", byte_cap=10)
    assert caught.value.reason == "result-too-large"
