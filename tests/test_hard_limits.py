"""The hard limit on untrusted work: one long engine step, a parse that grows
exponentially, a value that eats memory: each ends on a named reason, at most a second
of CPU past the configured limit, and the database answers again afterwards."""

from __future__ import annotations

import resource
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from answerable.builders import isolation, sqlkit
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.kernel.errors import SQLError
from tests.test_limits import GOOD, build_rejects
from tests.test_sql_gate import make_small_db

# About 8.5 s of CPU inside one SQLite VM step per row: the progress handler never runs.
INSTR = (
    "instr(replace(hex(zeroblob(499990)),'0','a')||x, replace(hex(zeroblob(249999)),'0','a')||'b')"
)
SLOW_STEP = f"SELECT {INSTR} FROM (SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 3)"
JOINS_24 = "SELECT count(*) FROM item " + " ".join(f"JOIN item c{i}" for i in range(24))
SLACK_S = 0.5  # CPU the test's own bookkeeping may add to the limit's one second


def _cpu() -> float:
    """CPU seconds of this process and its ended children (a stopped worker is one)."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )


@pytest.fixture(scope="module")
def small_db(tmp_path_factory):
    return make_small_db(tmp_path_factory.mktemp("hard") / "t.sqlite")


SLOW_STEP_RUN = """
import sys
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.kernel.errors import SQLError
from tests.test_hard_limits import SLOW_STEP, _cpu
with ReadOnlyDatabase(sys.argv[1], Limits(timeout_s=1.0)) as db:
    db.execute("SELECT 1")  # the worker is running before the clock starts
    before = _cpu()
    try:
        db.execute(SLOW_STEP)
        reason = None
    except SQLError as error:
        reason = error.reason
    spent = _cpu() - before
    print(reason, spent, db.execute("SELECT count(*) FROM t").rows)
"""


def _fresh(script: str, db: Path) -> str:
    """What ``script`` prints, run on ``db`` in a fresh process from the repository."""
    run = subprocess.run(
        [sys.executable, "-c", script, str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_one_slow_engine_step_is_stopped_one_second_past_the_limit(small_db):
    """The query's worker is killed by the kernel at the limit plus at most one second of
    CPU (it took 25 s under a 2 s limit when only the progress handler watched), and the
    same database answers the next query in a new worker. Measured in a fresh process:
    there the CPU of ended children is the stopped worker's alone (here, workers other
    tests left behind may be reaped inside the measured window)."""
    output = _fresh(SLOW_STEP_RUN, small_db)
    reason, spent, rows = output.split(" ", 2)
    assert reason == "timeout"
    assert float(spent) <= 1.0 + 1.0 + SLACK_S, spent
    assert rows.strip() == "[[50]]"


SLOW_BATCH_RUN = """
import sys
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.kernel.errors import SQLError
from tests.test_hard_limits import INSTR, _cpu
slow = f"SELECT {INSTR} FROM (SELECT 1 AS x)"
count = "SELECT count(*) FROM t"
with ReadOnlyDatabase(sys.argv[1], Limits(timeout_s=1.0)) as db:
    db.execute("SELECT 1")  # the worker is running before the clock starts
    before = _cpu()
    answers = db.execute_many([(sql, None) for sql in (count, slow, slow, count, slow, count)])
    spent = _cpu() - before
    print(spent, [a.reason if isinstance(a, SQLError) else a.rows for a in answers])
"""


def test_three_slow_statements_in_one_batch_cost_at_most_their_limits(small_db):
    """In one exchange with the worker, each slow statement is a ``timeout`` stopped at
    its own limit plus at most a second of CPU, and the statements after it run in a new
    worker with their answers in place."""
    output = _fresh(SLOW_BATCH_RUN, small_db)
    spent, answers = output.split(" ", 1)
    assert answers.strip() == "[[[50]], 'timeout', 'timeout', [[50]], 'timeout', [[50]]]"
    assert float(spent) <= 3 * (1.0 + 1.0 + SLACK_S), spent


def test_the_limit_holds_in_other_threads_too(small_db):
    """Each thread has its own worker, stopped the same way."""
    found = []

    def run():
        with ReadOnlyDatabase(small_db, Limits(timeout_s=1.0)) as db:
            db.execute("SELECT 1")
            before = _cpu()
            try:
                db.execute(SLOW_STEP)
            except SQLError as error:
                found.append((error.reason, _cpu() - before))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    [(reason, spent)] = found
    assert reason == "timeout" and spent <= 1.0 + 1.0 + SLACK_S, found


def test_a_parse_that_grows_exponentially_is_a_named_reject():
    """sqlglot's parse of a chain of bare JOINs doubles with each join: 24 would take
    minutes; it stops at the parse limit."""
    with pytest.raises(SQLError) as caught:
        sqlkit.parse(JOINS_24)
    assert caught.value.reason == "too-complex"


def test_a_text_of_many_joins_is_parsed_in_the_worker_first(monkeypatch):
    """sqlglot's compiled build runs a parse on to its end before the CPU timer is heard,
    so a text of many JOINs (the chain whose parse doubles with each join) is parsed in
    the worker first, even in the main thread; a text of few is not."""
    probed = []
    real = isolation.current_worker

    def counted(*args):
        probed.append(True)
        return real(*args)

    monkeypatch.setattr(isolation, "current_worker", counted)
    sqlkit.parse("SELECT count(*) FROM item JOIN item AS c ON item.a = c.a")
    assert probed == []
    with pytest.raises(SQLError) as caught:
        sqlkit.parse(JOINS_24)
    assert caught.value.reason == "too-complex" and probed == [True]


def test_work_in_c_that_the_timer_cannot_stop_is_stopped_in_the_worker():
    """C code (a compiled parser; ``sum`` over a range here) does not hear the CPU timer
    until it returns. Probed first, it runs in the worker, which the kernel stops at the
    next whole second of CPU past the limit: a ``too-complex``, and the work never runs."""
    ran = []
    with pytest.raises(SQLError) as caught:
        isolation.cpu_bounded(
            lambda: ran.append(True), 0.2, "a sum", (sum, (range(10**12),)), probe_first=True
        )
    assert caught.value.reason == "too-complex" and ran == []


def test_a_stop_swallowed_inside_the_work_is_sent_again():
    """Python swallows an exception raised inside a garbage collector's callback or a
    ``__del__``: the first stop lands in such a place here, and the work still ends at
    the next tick instead of running on (a parse of 24 JOINs would take minutes)."""
    swallowed = []

    def work():
        deadline = time.process_time() + 3
        while time.process_time() < deadline:
            try:
                while time.process_time() < deadline:
                    pass
            except isolation._OutOfTime:  # what Python does inside a gc callback
                if swallowed:
                    raise
                swallowed.append(True)
        return "ran to its end"

    with pytest.raises(SQLError) as caught:
        isolation.cpu_bounded(work, 0.2, "a busy loop", (print, ()))
    assert swallowed and caught.value.reason == "too-complex"


def test_a_parse_in_another_thread_is_bounded_in_the_worker():
    found = []

    def run():
        try:
            sqlkit.parse(JOINS_24)
        except SQLError as error:
            found.append(error.reason)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert found == ["too-complex"]


def test_sql_nested_past_the_recursion_limit_is_a_named_reject():
    with pytest.raises(SQLError) as caught:
        sqlkit.parse("SELECT " + "(" * 3000 + "1" + ")" * 3000)
    assert caught.value.reason == "too-deep"


def test_a_value_past_the_memory_cap_fails_the_statement(small_db):
    """The worker's address space may grow by ``memory_bytes``; past it the statement
    fails with a named reason and the worker goes on (or is replaced)."""
    limits = Limits(value_bytes=900_000_000, memory_bytes=200_000_000, timeout_s=5.0)
    with ReadOnlyDatabase(small_db, limits) as db:
        with pytest.raises(SQLError) as caught:
            db.execute("SELECT length(zeroblob(300000000) || zeroblob(300000000))")
        assert caught.value.reason in ("too-big", "worker-died"), caught.value
        assert db.execute("SELECT count(*) FROM t").rows == [[50]]


def test_hostile_seeds_in_a_build_are_named_rejects_within_the_limit(tmp_path):
    """A seed whose gold SQL is one slow engine step, and one whose parse grows
    exponentially: both named rejects, the build goes on."""
    seeds = [
        GOOD,
        {"db_id": "shop", "question": "Slow?", "sql": f"SELECT {INSTR} FROM (SELECT 1 AS x)"},
        {"db_id": "shop", "question": "Joins?", "sql": JOINS_24},
    ]
    rejects = build_rejects(tmp_path, seeds, extra="execution:\n  timeout_s: 1.0\n")
    reasons = {r["external_id"]: r["reason"] for r in rejects}
    assert reasons == {"2": "timeout", "3": "too-complex"}, rejects


def test_a_relative_path_names_the_file_in_the_folder_of_the_caller(tmp_path, monkeypatch):
    """The worker was forked earlier, in another folder: a database opened later by a
    relative path is still the one in the caller's folder at the time it is opened."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        with sqlite3.connect(tmp_path / name / "db.sqlite") as con:
            con.execute("CREATE TABLE t (v TEXT)")
            con.execute("INSERT INTO t VALUES (?)", (name,))
        con.close()
    monkeypatch.chdir(tmp_path / "a")
    with ReadOnlyDatabase("db.sqlite", Limits()) as db:
        assert db.execute("SELECT v FROM t").rows == [["a"]]  # the worker now runs here
    monkeypatch.chdir(tmp_path / "b")
    with ReadOnlyDatabase("db.sqlite", Limits()) as db:
        assert db.execute("SELECT v FROM t").rows == [["b"]]
