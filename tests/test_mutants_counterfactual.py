"""Counterfactual verification at its edges: the SQLite-on-copy check of an unanswerable
item, and the leak checks exactly at their thresholds (key coverage 0.9, derivable
tolerance 0.01 of the target's size, at least 5 rows).

Each test names the single-line mutant it kills (issue 18).
"""

from __future__ import annotations

import sqlite3

import pytest

from answerable.builders.counterfactual.leaks import Leak, value_leaks
from answerable.builders.counterfactual.verify import (
    Failure,
    binding_error,
    candidates_are_not_synonyms,
    candidates_differ_from_target,
    gold_does_not_bind,
    nothing_answers,
    reading_records,
    readings_differ,
    value_is_absent,
)
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sqlkit import parse


def make_db(path, script: str, rows: dict[str, list[tuple]]):
    con = sqlite3.connect(path)
    con.executescript(script)
    for table, values in rows.items():
        marks = ", ".join("?" * len(values[0]))
        con.executemany(f"INSERT INTO {table} VALUES ({marks})", values)
    con.commit()
    con.close()
    return path


# ---- gold_does_not_bind -----------------------------------------------------------------


@pytest.fixture
def edited(tmp_path):
    """An edited copy whose table ``t`` lost its column ``gone``."""
    return make_db(tmp_path / "edited.sqlite", "CREATE TABLE t (kept TEXT);", {"t": [("a",)]})


def test_a_query_sqlite_still_runs_is_not_unanswerable(edited):
    """Kills: ``gold_does_not_bind`` skipping the SQLite-on-copy check. ``rowid`` is not in
    the schema, so qualify rejects the query, but SQLite runs it: the label would be wrong."""
    schema = DatabaseSchema.from_sqlite(edited, "t")
    sql = "SELECT rowid FROM t"
    error = binding_error(parse(sql), schema)
    assert error is not None  # qualify alone would call it unanswerable
    with ReadOnlyDatabase(edited) as db:
        failure = gold_does_not_bind(sql, error, db)
    assert failure is not None and failure.reason == "still-binds"
    assert "SQLite" in failure.detail


def test_a_query_neither_qualify_nor_sqlite_binds_passes(edited):
    """The other side: both refuse, so the check passes (kills a check that always fails)."""
    schema = DatabaseSchema.from_sqlite(edited, "t")
    sql = "SELECT gone FROM t"
    with ReadOnlyDatabase(edited) as db:
        assert gold_does_not_bind(sql, binding_error(parse(sql), schema), db) is None
    assert gold_does_not_bind(sql, None, None).reason == "still-binds"


# ---- leaks through a foreign key: coverage 0.9 ------------------------------------------


def key_db(path, joined: int, total: int = 10):
    """``people.town`` (to be dropped) equals ``places.town_name`` on every joined row;
    ``joined`` of the ``total`` people have a place, the rest have none."""
    people = [(i, i if i < joined else None, f"town{i}") for i in range(total)]
    places = [(i, f"town{i}") for i in range(total)]
    script = """
        CREATE TABLE places (id INTEGER PRIMARY KEY, town_name TEXT);
        CREATE TABLE people (id INTEGER PRIMARY KEY,
                             place_id INTEGER REFERENCES places(id), town TEXT);
    """
    return make_db(path, script, {"places": places, "people": people})


@pytest.mark.parametrize(("joined", "leaks"), [(10, True), (9, True), (8, False), (5, False)])
def test_a_key_leak_needs_nine_tenths_of_the_rows_to_join(tmp_path, joined, leaks):
    """Kills: the coverage threshold 0.9 -> 0.5 (8 or 5 of 10 would leak) and the
    comparison ``<`` -> ``<=`` (9 of 10, exactly 0.9, would not)."""
    path = key_db(tmp_path / "k.sqlite", joined)
    schema = DatabaseSchema.from_sqlite(path, "k")
    with ReadOnlyDatabase(path) as db:
        found = value_leaks(db, schema, "people", "town")
    assert [(x.how, x.columns) for x in found] == (
        [("same-values-via-key", ("places.town_name",))] if leaks else []
    )


# ---- derivable: tolerance 0.01 of the target, at least 5 rows ---------------------------


def stay_db(path, gap: float, rows: int = 6):
    """``stays.los`` is 100 on every row, ``leave - arrive`` is ``100 - gap``."""
    values = [(i, 100.0 + gap, 200.0, 100.0) for i in range(rows)]
    script = "CREATE TABLE stays (id INTEGER PRIMARY KEY, arrive REAL, leave REAL, los REAL);"
    return make_db(path, script, {"stays": values})


def derivable(path) -> list:
    schema = DatabaseSchema.from_sqlite(path, "s")
    with ReadOnlyDatabase(path) as db:
        return [x.columns for x in value_leaks(db, schema, "stays", "los") if x.how == "derivable"]


@pytest.mark.parametrize(("gap", "leaks"), [(0.0, True), (1.0, True), (1.5, False), (5.0, False)])
def test_derivable_within_one_hundredth_of_the_target(tmp_path, gap, leaks):
    """Kills: the tolerance 0.01 -> 0.1 (a gap of 1.5 or 5 on 100 would leak) and ``>``
    -> ``>=`` in the far test (a gap of exactly 1.0 on 100 would not)."""
    found = derivable(stay_db(tmp_path / "s.sqlite", gap))
    assert found == ([("stays.leave", "stays.arrive")] if leaks else [])


@pytest.mark.parametrize(("rows", "leaks"), [(4, False), (5, True)])
def test_derivable_needs_five_rows(tmp_path, rows, leaks):
    """Kills: the minimum of 5 rows moved by one either way."""
    found = derivable(stay_db(tmp_path / "s.sqlite", 0.0, rows))
    assert found == ([("stays.leave", "stays.arrive")] if leaks else [])


def test_decimal_columns_are_numbers_for_the_derivable_check(tmp_path):
    """Kills: ``DEC`` dropped from the numeric type names (a DECIMAL length of stay that
    equals ``leave - arrive`` would not be looked at)."""
    values = [(i, 100.0, 200.0, 100.0) for i in range(6)]
    script = """CREATE TABLE stays (id INTEGER PRIMARY KEY, arrive DECIMAL(10, 2),
                                    leave DECIMAL(10, 2), los DECIMAL(10, 2));"""
    found = derivable(make_db(tmp_path / "s.sqlite", script, {"stays": values}))
    assert found == [("stays.leave", "stays.arrive")]


def test_dates_are_compared_as_julian_days(tmp_path):
    """Kills: the date role left out of the operands (a length of stay that is the
    difference of two DATE columns would not be found)."""
    days = [(i, f"2024-01-{1 + i:02d}", f"2024-02-{10 + i:02d}", 40) for i in range(6)]
    script = """CREATE TABLE stays (id INTEGER PRIMARY KEY, admitted DATE, discharged DATE,
                                    los INTEGER);"""
    found = derivable(make_db(tmp_path / "s.sqlite", script, {"stays": days}))
    assert found == [("stays.discharged", "stays.admitted")]


# ---- the other checks' verdicts (their reason codes end up in the rejects report) -------


def test_nothing_answers_names_the_first_leak_kind():
    """Kills: ``if not leaks`` inverted (an item with no leak rejected, or a crash), and
    the reason read from the second leak instead of the first."""
    synonym = Leak("synonym", ("t.sex",))
    values = Leak("values", ("t.a", "t.b"))
    assert nothing_answers([]) is None
    assert nothing_answers([synonym]) == Failure("synonym-remains", "t.sex (synonym)")
    assert nothing_answers([values, synonym]).reason == "answer-remains"
    assert nothing_answers([synonym, values]) == Failure(
        "synonym-remains", "t.sex (synonym); t.a and t.b (values)"
    )


def test_a_candidate_that_means_the_target_is_rejected_by_name():
    """Kills: another reason code for an added column that is the target renamed."""
    failure = candidates_are_not_synonyms("players", "player_name", ["name"])
    assert failure == Failure("candidate-is-synonym", "name means player_name")
    assert candidates_are_not_synonyms("players", "player_name", ["team"]) is None


@pytest.fixture
def columns(tmp_path):
    """A table whose ``copy`` repeats ``target`` row for row and whose ``other`` does not;
    every cell is longer than the cell cap used below."""
    rows = [("long value one", "long value one", "long value two"), ("x" * 20, "x" * 20, "y" * 20)]
    script = "CREATE TABLE t (target TEXT, copy TEXT, other TEXT);"
    return make_db(tmp_path / "columns.sqlite", script, {"t": rows})


def test_a_candidate_copying_the_target_is_found_whatever_the_cell_size(columns):
    """Kills: the target's hash left out (``target = None``: no copy ever found), and the
    column hash keeping a row (``row_cap=1``: a column of long texts, past the cell cap,
    could not be compared at all)."""
    with ReadOnlyDatabase(columns, Limits(cell_bytes=10)) as db:
        failure = candidates_differ_from_target(db, db, "t", "target", ["other", "copy"])
        assert failure == Failure("candidate-equals-target", "t.copy copies target")
        assert candidates_differ_from_target(db, db, "t", "target", ["other"]) is None


def test_readings_that_run_differ_and_are_recorded_with_their_hash(columns):
    """Kills: the empty-reading detail reworded, and another key than ``result_hash`` in
    the item's readings (the item schema and the release's readers use that name)."""
    readings = ["SELECT target FROM t", "SELECT other FROM t"]
    empty = "SELECT target FROM t WHERE 0"
    with ReadOnlyDatabase(columns) as db:
        kept = []
        assert readings_differ(readings, db, ordered=False, keep=kept) is None
        failure = readings_differ([readings[0], empty], db, ordered=False)
    assert failure == Failure("reading-empty", f"a reading finds nothing: {empty}")
    records = reading_records(["a", "b"], readings, kept)
    assert [r["result_hash"] for r in records] == [r.hash for r in kept]
    assert sorted(records[0]) == ["columns", "name", "result_hash", "row_count", "rows", "sql"]


def test_a_replaced_value_found_in_its_column_is_rejected():
    """Kills: another reason code for a replacement value that is already in the data."""
    assert value_is_absent(False, "t.city", "Oslo") is None
    assert value_is_absent(True, "t.city", "Oslo") == Failure(
        "value-present", "'Oslo' occurs in t.city"
    )
