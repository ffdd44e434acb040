"""Template expansion at its edges: the row cap exactly, a NULL first row, and dates and
datetimes written as SQLite stores them (a space, not ``T``).

Each test names the single-line mutant it kills (issue 18).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import textwrap

import pytest
import sqlglot

from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef
from answerable.builders.templates import Settings, expand_templates, load_templates
from answerable.builders.templates.expand import expand_template
from answerable.builders.templates.model import plain
from answerable.builders.templates.writing import SQLWriter, bound_value, value_node, words


@pytest.fixture
def numbers(tmp_path) -> DatabaseRef:
    """``n``: x = 0..9, y NULL where x = 0 and x otherwise."""
    path = tmp_path / "numbers.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE n (x INTEGER, y INTEGER)")
    con.executemany("INSERT INTO n VALUES (?, ?)", [(i, i or None) for i in range(10)])
    con.commit()
    con.close()
    return DatabaseRef("numbers", path, DatabaseSchema.from_sqlite(path, "numbers"))


def outcomes(ref, tmp_path, sql: str, values: list, **settings) -> dict:
    """``{k: "kept" | reject reason}`` for one template over the values of ``k``."""
    template = write_template(tmp_path, sql, values)
    quota = len(values)
    made = expand_templates(
        [template], {ref.db_id: ref}, Settings(seed=1, quota=quota, attempts=1, **settings)
    )
    found = {i["provenance"]["params"]["values"]["k"]: "kept" for i in made.items}
    found.update({r["values"]["k"]: r["reason"] for r in made.rejects})
    return found


def test_a_result_of_exactly_row_cap_rows_is_kept(numbers, tmp_path):
    """Kills: too-many-rows ``row_count > row_cap`` -> ``>=`` (4 rows with a cap of 4 is
    within the cap)."""
    found = outcomes(numbers, tmp_path, "SELECT x FROM n WHERE x < :k", [3, 4, 5], row_cap=4)
    assert found == {3: "kept", 4: "kept", 5: "too-many-rows"}


def test_null_result_is_judged_on_every_row(numbers, tmp_path):
    """Kills: null-result judged on the first row only (a NULL first row followed by a
    value is an answer; only all-NULL is not)."""
    sql = "SELECT y FROM n WHERE x < :k ORDER BY x"
    found = outcomes(numbers, tmp_path, sql, [1, 2, 3])
    assert found == {1: "null-result", 2: "kept", 3: "kept"}


def test_null_result_is_judged_on_every_column(numbers, tmp_path):
    """Kills: null-result judged on the first column only."""
    sql = "SELECT y, x FROM n WHERE x < :k ORDER BY x"
    assert outcomes(numbers, tmp_path, sql, [1]) == {1: "kept"}


MOMENT = dt.datetime(2024, 1, 2, 3, 4, 5)


def test_datetimes_are_written_with_a_space_everywhere():
    """Kills: a datetime printed by ``isoformat()`` with its ``T`` in any of the four
    places a value is written (SQL literal, bound parameter, question words, YAML
    loading); SQLite's text datetimes have a space, and '2024-01-02T03:04:05' compares
    greater than every '2024-01-02 ...' value."""
    text = "2024-01-02 03:04:05"
    assert value_node(MOMENT).sql() == f"'{text}'"
    assert bound_value(MOMENT) == text
    assert words(MOMENT) == text
    assert plain({"at": [MOMENT]}) == {"at": [text]}


def test_dates_and_times_keep_their_iso_form():
    """Kills: dates or times sent through the datetime branch (a date has no time part)."""
    day, clock = dt.date(2024, 1, 2), dt.time(3, 4, 5)
    assert value_node(day).sql() == "'2024-01-02'" and value_node(clock).sql() == "'03:04:05'"
    assert (bound_value(day), bound_value(clock)) == ("2024-01-02", "03:04:05")
    assert (words(day), plain(day)) == ("2024-01-02", "2024-01-02")


def test_a_construct_the_dialect_lacks_is_written_as_sqlglot_writes_it():
    """Kills: the generator's list of unsupported messages not reset before each write
    (set to None, the first construct SQLite lacks, here TABLESAMPLE, would crash the
    writer instead of being left out as sqlglot leaves it out)."""
    tree = sqlglot.parse_one("SELECT a FROM t TABLESAMPLE (10 PERCENT) WHERE b = :b", read="duckdb")
    writer = SQLWriter(tree)
    assert writer.param_sql == tree.sql("sqlite") == "SELECT a FROM t WHERE b = :b"
    assert [writer.sql({"b": n}) for n in (1, 2)] == [
        "SELECT a FROM t WHERE b = 1",
        "SELECT a FROM t WHERE b = 2",
    ]


def write_template(tmp_path, sql: str, values: list):
    """One template ``t.edge`` over the values of ``k`` on ``numbers``."""
    path = tmp_path / "t.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            db_id: numbers
            templates:
              - id: t.edge
                questions: ["Which rows are below {{k}}?"]
                sql: {sql}
                placeholders: {{k: {{values: {values}}}}}
            """
        ),
        encoding="utf-8",
    )
    loaded = load_templates([path])
    assert loaded.rejects == []
    return loaded.templates[0]


def test_a_template_never_gives_more_than_its_own_quota(numbers, tmp_path):
    """Kills: the quota of ``expand_template`` ignored (the settings' quota used), and the
    cut ``len(items) >= quota`` -> ``>`` (a second round of draws, asked for after
    rejects, can make more pairs than the quota; only the first ``quota`` are kept).
    Draws are with replacement, so a seed may also fall short of the quota."""
    template = write_template(tmp_path, "SELECT x FROM n WHERE x < :k", list(range(-5, 10)))
    counts = []
    for seed in range(6):
        settings = Settings(seed=seed, quota=8, attempts=3)
        made = expand_template(template, numbers, settings, quota=3)
        counts.append(len(made.items))
        assert all(r["reason"] for r in made.rejects)
    assert max(counts) == 3
