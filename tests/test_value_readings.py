"""Issue 12: value-ambiguous items from values a source already holds in two columns
(builders/counterfactual/overlaps.py and the gate's judge_second_reading), and the gate
seeing the values a column-ambiguous item compares."""

from __future__ import annotations

import sqlite3

import pytest
from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.counterfactual.gate import (
    judge_columns,
    judge_second_reading,
    names_row,
)
from answerable.builders.counterfactual.grounding import Mention
from answerable.builders.counterfactual.overlaps import table_swapped
from answerable.builders.counterfactual.stage import Config
from answerable.builders.counterfactual.survey import survey
from answerable.builders.lexical import wordnet
from answerable.builders.lexical.person_names import looks_like_person, name_parts
from answerable.builders.schema import DatabaseSchema
from tests.benchmarks.counterfactual_counts import SOURCES
from tests.conftest import shared_data

needs_wordnet = pytest.mark.skipif(not wordnet.available(), reason=str(wordnet.missing()))
GEO_TABLES = frozenset({"state", "city", "river", "lake", "mountain", "highlow", "border_info"})


def judged(question, value, first, second, read, tables=GEO_TABLES):
    start = question.index(value)
    mention = Mention(start, start + len(value), value, first)
    return judge_second_reading(question, mention, first, second, set(read), tables)


@needs_wordnet
@pytest.mark.parametrize(
    ("question", "value", "first", "second", "read"),
    [
        ("how many people live in new york", "new york", "state.state_name", "city.city_name",
         ["state"]),
        ("Which tracks are by AC/DC?", "AC/DC", "Artist.Name", "Track.Composer",
         ["track", "album", "artist"]),
        ("Who lives in Edmonton?", "Edmonton", "Customer.City", "Employee.City", ["customer"]),
        ("Which stays were in the CCU?", "CCU", "icu_stays.first_careunit",
         "icu_stays.last_careunit", ["icu_stays"]),
    ],
)  # fmt: skip
def test_a_value_held_twice_reads_two_ways_when_the_words_leave_it_open(
    question, value, first, second, read
):
    tables = GEO_TABLES | {"Artist", "Track", "Album", "Customer", "Employee", "icu_stays"}
    assert judged(question, value, first, second, read, tables).ok


@needs_wordnet
@pytest.mark.parametrize(
    ("question", "value", "first", "second", "read", "reason"),
    [
        ("what is the population of new york city", "new york", "state.state_name",
         "city.city_name", ["state"], "resolved-by-question"),
        ("Which tracks were composed by Chris Cornell?", "Chris Cornell", "Track.Composer",
         "Track.Name", ["track"], "names-the-row"),
        ("Which tracks by Chris Cornell were composed in 1991?", "Chris Cornell",
         "Artist.Name", "Track.Composer", ["track", "album", "artist"], "resolved-by-question"),
        ("what is the population of austin", "austin", "city.city_name", "state.capital",
         ["city"], "not-a-reading"),
        ("what is the population of texas", "texas", "state.state_name", "city.state_name",
         ["state"], "not-a-reading"),
        ("how long is the mississippi", "mississippi", "river.river_name", "river.traverse",
         ["river"], "names-the-row"),
        ("How many invoices came from Brazil?", "Brazil", "Customer.Country",
         "Invoice.BillingCountry", ["customer", "invoice"], "same-meaning"),
    ],
)  # fmt: skip
def test_a_value_held_twice_is_not_ambiguous_when_a_rule_says_which(
    question, value, first, second, read, reason
):
    verdict = judged(question, value, first, second, read)
    assert not verdict.ok and verdict.reason == reason, verdict


def test_a_column_names_its_rows_by_a_generic_head_and_the_table_words():
    assert names_row("state", "state_name") and names_row("Artist", "Name")
    assert names_row("Album", "Title")
    assert not names_row("state", "capital") and not names_row("Track", "Composer")
    assert not names_row("city", "state_name")


@pytest.fixture
def geo_schema(tmp_path):
    path = tmp_path / "geo.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE state (state_name TEXT, population INT, area INT)")
        con.execute("CREATE TABLE city (city_name TEXT, state_name TEXT, population INT)")
    return DatabaseSchema.from_sqlite(path, "geo")


def _qualified(sql, schema):
    return sqlkit.qualify(sqlkit.parse(sql, "sqlite"), schema)


def test_a_one_table_query_is_asked_of_a_table_of_the_same_shape(geo_schema):
    tree = _qualified("SELECT population FROM state WHERE state_name = 'new york'", geo_schema)
    swapped = table_swapped(tree, "state.state_name", "new york", "city.city_name", geo_schema)
    assert swapped is not None
    found = sqlkit.parse(swapped, "sqlite")
    assert [t.name for t in found.find_all(exp.Table)] == ["city"]
    assert {c.name for c in found.find_all(exp.Column)} == {"population", "city_name"}


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT area FROM state WHERE state_name = 'new york'",  # a city has no area
        "SELECT c.population FROM city AS c JOIN state AS s ON c.state_name = s.state_name "
        "WHERE s.state_name = 'new york'",  # two tables: not one shape
    ],
)
def test_no_table_swap_when_a_column_is_missing_or_the_query_reads_two_tables(geo_schema, sql):
    tree = _qualified(sql, geo_schema)
    assert table_swapped(tree, "state.state_name", "new york", "city.city_name", geo_schema) is None


# ---- the gate sees the compared values ------------------------------------------------


def test_person_name_parts_come_from_the_name_lists():
    assert name_parts("Kyle") == {"first"} and name_parts("Smith") == {"last"}
    assert name_parts("Jordan") == {"first", "last"} and not name_parts("Aerosmith")
    assert looks_like_person("Eric Clapton") and not looks_like_person("AC/DC")


@needs_wordnet
@pytest.mark.parametrize(
    ("column", "candidates", "compared", "known", "reason"),
    [
        # a person's name split in two is parts of one name, whatever the values say
        ("name", ["first_name", "last_name"], ["Kyle"], [], "parts-of-name"),
        ("name", ["first_name", "last_name"], ["Smith"], [], "parts-of-name"),
        ("grade", ["school_grade", "letter_grade"], ["9", "10"], [], "value-decides"),
        ("grade", ["school_grade", "letter_grade"], ["B"], [], "value-decides"),
        ("name", ["first_name", "last_name"], [], ["AC/DC", "Aerosmith", "Queen", "Eric Clapton"],
         "parts-of-name"),
    ],
)  # fmt: skip
def test_the_gate_sees_the_compared_values(column, candidates, compared, known, reason):
    table = "Highschooler"
    verdict = judge_columns("Show them.", column, table, column, candidates, compared, known)
    assert not verdict.ok and verdict.reason == reason, verdict


@needs_wordnet
def test_a_persons_name_split_stays_closed_even_when_either_column_could_hold_the_value():
    """First/last name of a person was kept when the values fit either part ("Jordan");
    a careful reader takes the full name, so the split is never two readings."""
    pair = ["first_name", "last_name"]
    names = ["Eric Clapton", "James Brown", "Marvin Gaye", "Queen"]
    for compared, known in ((["Jordan"], ()), ((), names)):
        verdict = judge_columns("Show them.", "name", "Highschooler", "name", pair, compared, known)
        assert not verdict.ok and verdict.reason == "parts-of-name", verdict


# ---- on real data ---------------------------------------------------------------------

ONLY_VALUES = Config(rate=1.0, control_rate=0.0, every_edit=True, edits=("value_ambiguous_v1",))


def _value_items(name, tmp_path):
    spec, _ = SOURCES[name]
    found = survey(spec, shared_data(name), tmp_path, config=ONLY_VALUES)
    return {i["question"]: i for i in found.edited.items}, found


@needs_wordnet
def test_chinook_names_held_as_artist_and_composer_make_items_on_the_source(tmp_path):
    items, _ = _value_items("chinook", tmp_path)
    item = items["Which tracks are by AC/DC?"]
    assert item["trigger"]["columns"] == ["Artist.Name", "Track.Composer"]
    assert item["trigger"]["in_source"] and item["db_variant"] is None
    first, second = item["readings"]
    assert first["row_count"] == 18 and second["row_count"] == 8  # performed / credited
    assert items["Who lives in Edmonton?"]["trigger"]["columns"][1] == "Employee.City"
    assert "Which tracks were composed by Chris Cornell?" not in items  # the words say which


@needs_wordnet
def test_geoquery_new_york_the_state_and_the_city(tmp_path):
    items, found = _value_items("geoquery", tmp_path)
    item = items["how many people live in new york"]
    assert item["trigger"]["columns"] == ["state.state_name", "city.city_name"]
    assert [r["rows"] for r in item["readings"]] == [[[17558000]], [[7071639]]]
    for other in items.values():  # every one is a state and a city of one name
        assert other["trigger"]["columns"] == ["state.state_name", "city.city_name"], other
    reasons = {r["reason"] for r in found.edited.rejects}
    assert {"implausible-not-a-reading", "implausible-names-the-row"} <= reasons
