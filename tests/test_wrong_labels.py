"""Labels a blinded reading found wrong, each from the case as the reading wrote it:
they are now rejects with a reason (the person-name and country pairs are in
``test_validity.py``, beside the gate's other rules)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from answerable.builders.counterfactual.gate import judge_named_column
from answerable.builders.counterfactual.generators.calculation import textbook_identity
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.lexical import wordnet
from answerable.builders.numeric_text import text_number_failure
from answerable.builders.schema import DatabaseSchema

GEOGRAPHY = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "geoquery" / "geography.sqlite"
)
needs_wordnet = pytest.mark.skipif(not wordnet.available(), reason=str(wordnet.missing()))
needs_geography = pytest.mark.skipif(not GEOGRAPHY.is_file(), reason="no GeoQuery database")


@needs_wordnet
@pytest.mark.parametrize(
    ("question", "value", "first", "second"),
    [
        # "with Private coverage" can only mean insurance, yet 'Private' was written
        # into ethnicity
        (
            "How many patients with Private coverage were admitted in 2021?",
            "Private",
            "patients.insurance",
            "patients.ethnicity",
        ),
        # "discharged to Long Term Care Hospital" names the column
        (
            "How many admissions were discharged to Long Term Care Hospital?",
            "Long Term Care Hospital",
            "admissions.discharge_location",
            "admissions.admission_location",
        ),
    ],
)
def test_a_value_whose_question_names_its_column_is_no_ambiguity(question, value, first, second):
    verdict = judge_named_column(question, value, first, second)
    assert not verdict.ok and verdict.reason == "named-column", verdict


@needs_wordnet
def test_a_value_the_words_leave_open_stays_ambiguous():
    question = "How many admissions came from Emergency Room?"
    first, second = "admissions.admission_location", "admissions.discharge_location"
    assert judge_named_column(question, "Emergency Room", first, second).ok


@pytest.mark.parametrize(
    ("target", "operands"),
    [
        ("state.area", ("state.population", "state.density")),  # area = population / density
        ("state.population", ("state.area", "state.density")),  # population = area x density
        ("state.density", ("state.population", "state.area")),
    ],
)
def test_a_column_a_textbook_identity_restores_is_no_calculation_item(target, operands):
    assert textbook_identity(target, operands) == "area, density, population"


def test_a_formula_no_textbook_gives_stays_a_calculation_item():
    assert (
        textbook_identity("icu_stays.length_of_stay", ("icu_stays.out_time", "s.in_time")) is None
    )


@needs_geography
def test_the_highest_point_compared_as_text_is_rejected():
    """GeoQuery's highlow elevations are TEXT: MAX compares strings, and "the highest
    point in the united states" returns mount davis."""
    database = ReadOnlyDatabase(GEOGRAPHY)
    schema = DatabaseSchema.from_sqlite(GEOGRAPHY, "geography")
    sql = (
        "SELECT HIGHLOWalias0.HIGHEST_POINT FROM HIGHLOW AS HIGHLOWalias0 WHERE "
        "HIGHLOWalias0.HIGHEST_ELEVATION = ( SELECT MAX( HIGHLOWalias1.HIGHEST_ELEVATION ) "
        "FROM HIGHLOW AS HIGHLOWalias1 )"
    )
    result = database.execute(sql)
    assert result.rows == [["mount davis"]]  # the strings' answer
    reason, detail = text_number_failure(sql, schema, database, result)
    assert reason == "text-as-number" and "highlow.highest_elevation" in detail.lower()
    names = "SELECT STATE_NAME FROM HIGHLOW ORDER BY STATE_NAME LIMIT 3"
    assert text_number_failure(names, schema, database, database.execute(names)) is None
    population = "SELECT STATE_NAME FROM STATE ORDER BY POPULATION DESC LIMIT 1"
    assert text_number_failure(population, schema, database, database.execute(population)) is None


REFERENCE_DB = """
CREATE TABLE coaches (coach_id INTEGER PRIMARY KEY, name TEXT, team TEXT,
                      start_date TEXT, end_date TEXT);
CREATE TABLE lake (lake_name TEXT, area REAL, state_name TEXT);
CREATE TABLE lab_tests (row_id INTEGER PRIMARY KEY, hadm_id INTEGER, label TEXT,
                        category TEXT, flag TEXT);
INSERT INTO coaches VALUES (1, 'Ann Lee', 'Robinsonberg Athletic', '2021-07-01', '2023-06-30');
INSERT INTO lake VALUES ('superior', 82000, 'michigan'), ('erie', 25700, 'ohio');
INSERT INTO lab_tests VALUES (1, 100714, 'Sodium', 'Chemistry', 'abnormal'),
                             (2, 100714, 'Potassium', 'Chemistry', 'normal');
"""


@pytest.mark.parametrize(
    ("question", "sql", "wrong"),
    [
        (  # "On that coach, who coached Robinsonberg Athletic?"
            "On 2022-07-16, who coached Robinsonberg Athletic?",
            "SELECT name FROM coaches WHERE team = 'Robinsonberg Athletic' AND "
            "start_date <= '2022-07-16' AND end_date >= '2022-07-16'",
            "that coach",
        ),
        (  # "name the major lakes in that lake"
            "name the major lakes in michigan",
            "SELECT lake_name FROM lake WHERE state_name = 'michigan'",
            "that lake",
        ),
        (  # "..., which Chemistry lab tests came back that event?"
            "During admission 100714, which Chemistry lab tests came back abnormal?",
            "SELECT label FROM lab_tests WHERE hadm_id = 100714 AND category = 'Chemistry' "
            "AND flag = 'abnormal'",
            "came back that",
        ),
    ],
)
def test_a_reference_keeps_a_referent_and_its_grammar(tmp_path, question, sql, wrong):
    """Whichever value a seed picks, the reference names what the value was (a date is
    "that date", michigan "that state") and never stands where no noun can (the lab
    question has no value a reference may take, and no draft)."""
    import sqlite3

    from answerable.builders.drafting.categories.ambiguous_reference import replace_with_reference
    from answerable.builders.drafting.drafts import Job
    from tests.test_drafting_offline import contexts_of, parents_of

    path = tmp_path / "refs.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(REFERENCE_DB)
    context = contexts_of({"refs": path})["refs"]
    (parent,) = parents_of(
        [{"db_id": "refs", "question": question, "sql": sql}], {"refs": context.schema}
    )
    made = set()
    for seed in range(12):
        draft = replace_with_reference(
            Job(parent, "ambiguous-reference", 0), context, random.Random(seed)
        )
        made.add(draft.question if draft else None)
    if "abnormal" not in question:  # nothing there takes a reference: no draft is right
        assert made - {None}, "no reference drafted"
    assert not any(wrong in text for text in made - {None}), made
