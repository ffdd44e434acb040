"""Counterfactual verification at its edges: the SQLite-on-copy check of an unanswerable
item, and the leak checks exactly at their thresholds (key coverage 0.9, derivable
tolerance 0.01 of the target's size, at least 5 rows).

Each test names the single-line mutant it kills (issue 18).
"""

from __future__ import annotations

import sqlite3

import pytest

from answerable.builders.counterfactual.leaks import value_leaks
from answerable.builders.counterfactual.verify import binding_error, gold_does_not_bind
from answerable.builders.executor import ReadOnlyDatabase
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
