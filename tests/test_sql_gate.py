"""The SQL gate: every path's untrusted SQL runs under one function allow-list, the
connection limits and the byte caps, and the security probe's queries end fast, small
and with a named reason."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from answerable.builders.executor import (
    PURE_FUNCTIONS,
    WALL_FACTOR,
    Limits,
    ReadOnlyDatabase,
    install_gate,
)
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import sha256_file
from tests.conftest import REPO
from tests.test_cli import seed
from tests.test_limits import build_rejects

PROBE_TIMEOUT_S = 1.0
PROBE_RSS_MB = 400  # python + sqlite + polars imports stay well under this

# The security probe's queries (issue 16), each with the reason it must end on.
PROBES = {
    "string-doubling CTE": (
        "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) "
        "SELECT length(s) FROM r",
        "too-big",
    ),
    "printf 2e9 wide": ("SELECT printf('%.*c', 2e9, 'x')", "too-big"),
    "printf wide literal": ("SELECT printf('%2000000000d', 1)", "too-big"),
    "zeroblob 400 MB": ("SELECT zeroblob(400000000)", "too-big"),
    "fts3_tokenizer leak": ("SELECT fts3_tokenizer('simple')", "function-not-allowed"),
    "fts3_tokenizer plant": (
        "SELECT fts3_tokenizer('simple', x'0000000000000000')",
        "function-not-allowed",
    ),
    "big cells forever": (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
        "SELECT max(printf('%.*c', 100000, 'x')) FROM r",
        "timeout",
    ),
    "load_extension": ("SELECT load_extension('/tmp/evil.so')", "function-not-allowed"),
}

_PROBE_SCRIPT = textwrap.dedent("""\
    import json, sqlite3, sys, time
    from answerable.builders.executor import Limits, ReadOnlyDatabase
    from answerable.kernel.errors import SQLError
    path, sql, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with ReadOnlyDatabase(path, Limits(timeout_s=timeout)) as db:
        started, cpu_started = time.monotonic(), time.thread_time()
        try:
            db.execute(sql)
            reason = None
        except SQLError as error:
            reason = error.reason
        seconds = time.monotonic() - started
        cpu_seconds = time.thread_time() - cpu_started
        after = db.execute("SELECT count(*) FROM t").rows
    # VmHWM is this process's own peak: ru_maxrss would carry over the parent's peak
    # through fork and exec, so a large test run would fail the probe.
    with open("/proc/self/status") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    rss_mb = int(hwm.split()[1]) / 1024
    print(json.dumps({"reason": reason, "seconds": seconds, "cpu_seconds": cpu_seconds,
                      "rss_mb": rss_mb, "after": after}))
""")


def make_small_db(path):
    """A table ``t`` of 50 rows (id, name) at ``path``."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"n{i}") for i in range(50)])
    con.commit()
    con.close()
    return path


@pytest.fixture()
def small_db(tmp_path):
    return make_small_db(tmp_path / "small.sqlite")


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe_ends_within_twice_the_limit_with_bounded_memory(small_db, name):
    sql, reason = PROBES[name]
    before = sha256_file(small_db)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE_SCRIPT, str(small_db), sql, str(PROBE_TIMEOUT_S)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["reason"] == reason, report
    # The limit counts the query's CPU time, so a loaded machine does not change the
    # verdict; the wall clock only has to stay under the gate's backstop.
    assert report["cpu_seconds"] < 2 * PROBE_TIMEOUT_S, report
    assert report["seconds"] < WALL_FACTOR * PROBE_TIMEOUT_S, report
    assert report["rss_mb"] < PROBE_RSS_MB, report
    assert report["after"] == [[50]]  # the connection still works
    assert sha256_file(small_db) == before


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT random()",
        "SELECT randomblob(8)",
        "SELECT sqlite_version()",
        "SELECT sqlite_compileoption_get(0)",
        "SELECT changes()",
        "SELECT last_insert_rowid()",
        "SELECT sqlite_source_id()",
        "SELECT rtreenode(2, x'00')",
    ],
)
def test_functions_outside_the_allow_list_are_refused(small_db, sql):
    with ReadOnlyDatabase(small_db) as db, pytest.raises(SQLError) as caught:
        db.execute(sql)
    assert caught.value.reason == "function-not-allowed"
    assert "only pure SQL functions" in str(caught.value)


def test_common_pure_functions_still_run(small_db):
    sql = (
        "SELECT count(*), sum(id), avg(id), max(lower(name)), group_concat(id), "
        "round(1.25, 1), substr('abc', 2), strftime('%Y', '2024-05-01'), "
        "json_extract('{\"a\": 1}', '$.a'), '{\"b\": 2}' ->> '$.b', coalesce(NULL, 1), "
        "iif(1, 'y', 'n'), typeof(1), abs(-2), instr('abc', 'c') FROM t"
    )
    with ReadOnlyDatabase(small_db) as db:
        rows = db.execute(sql).rows
        ranked = db.execute(
            "SELECT id, rank() OVER (ORDER BY id DESC) FROM t ORDER BY id LIMIT 1"
        ).rows
    assert rows[0][:3] == [50, 1225, 24.5]
    assert rows[0][5:] == [1.3, "bc", "2024", 1, 2, 1, "y", "integer", 2, 3]
    assert ranked == [[0, 50]]


def test_every_allowed_function_exists_in_sqlite():
    con = sqlite3.connect(":memory:")
    known = {row[0] for row in con.execute("PRAGMA function_list")}
    assert known >= PURE_FUNCTIONS
    assert not {"fts3_tokenizer", "load_extension", "random", "randomblob"} & PURE_FUNCTIONS


def test_gate_denies_attach_but_keeps_what_our_code_attached_first(tmp_path, small_db):
    con = sqlite3.connect(":memory:")
    con.execute("ATTACH DATABASE ? AS base", (f"{small_db.as_uri()}?mode=ro",))
    install_gate(con)
    assert con.execute("SELECT count(*) FROM base.t").fetchone() == (50,)
    with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
        con.execute("ATTACH DATABASE ? AS other", (str(tmp_path / "other.sqlite"),))
    assert not (tmp_path / "other.sqlite").exists()


@pytest.mark.parametrize(
    ("sql", "limits", "reason"),
    [
        ("SELECT printf('%.*c', 2000, 'x')", Limits(cell_bytes=1000), "result-too-large"),
        ("SELECT printf('%.*c', 600, 'x') FROM t", Limits(result_bytes=5000), "result-too-large"),
        ("SELECT " + " + ".join(["1"] * 400), Limits(), "too-big"),
        (" UNION ALL ".join(["SELECT 1"] * 100), Limits(), "too-big"),
        ("SELECT '" + "x" * 2000 + "'", Limits(sql_bytes=1000), "too-big"),
        ("SELECT length(zeroblob(5000))", Limits(value_bytes=4000), "too-big"),
        ("SELECT printf('%.*c', 5000, 'x')", Limits(value_bytes=4000), "too-big"),
    ],
)
def test_caps_and_connection_limits_give_named_reasons(small_db, sql, limits, reason):
    with ReadOnlyDatabase(small_db, limits) as db, pytest.raises(SQLError) as caught:
        db.execute(sql)
    assert caught.value.reason == reason, caught.value


def test_caps_count_only_the_kept_rows(small_db):
    with ReadOnlyDatabase(small_db, Limits(row_cap=2, result_bytes=5000)) as db:
        result = db.execute("SELECT printf('%.*c', 600, 'x') FROM t")
    assert result.row_count == 50 and len(result.rows) == 2


def test_hostile_seeds_are_named_rejects_and_the_build_goes_on(tmp_path):
    seeds = [seed("How many items are there?", "SELECT count(*) FROM item")]
    seeds += [seed(f"Probe {name}?", sql) for name, (sql, _) in sorted(PROBES.items())]
    seeds.append(seed("Lucky?", "SELECT name FROM item ORDER BY random() LIMIT 1"))
    rejects = build_rejects(tmp_path, seeds, extra="execution:\n  timeout_s: 1.0\n")
    reasons = sorted(r["reason"] for r in rejects)
    assert len(rejects) == len(PROBES) + 1, reasons
    assert set(reasons) == {"too-big", "function-not-allowed", "timeout"}
    items = tmp_path / ".answerable" / "tiny"
    assert max(p.stat().st_size for p in items.rglob("*.jsonl")) < 200_000
