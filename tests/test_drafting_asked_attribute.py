"""The attribute a missing-column draft asks, read off real schemas: whose rows it is
asked of, whether its slot takes a figure, after how many rows, and whether a join
reaches it. Each case is one a reader found in a built release."""

from __future__ import annotations

import random
import re

import pytest
import sqlglot
from sqlglot import exp

from answerable.builders.drafting import lexicon, offline
from answerable.builders.drafting.categories.missing_column import (
    ask_missing_column,
    present_column,
)
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import OFFLINE_DRAFTER, Job
from answerable.builders.drafting.offline import one_result, surface_columns
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import spider_tables, sqlite_schema
from answerable.kernel.ids import rng_for
from tests.conftest import shared_data


@pytest.fixture(scope="module")
def geography() -> DatabaseContext:
    path = shared_data("geoquery", "geography.sqlite")
    return DatabaseContext("geography", sqlite_schema(path, "geography"))


@pytest.fixture(scope="module")
def mimic() -> DatabaseContext:
    entry = next(iter(spider_tables(shared_data("ehrsql2024", "tables.json")).values()))
    return DatabaseContext("mimic_iv", DatabaseSchema.from_spider(entry), surface_any_kind=True)


def parent_job(db_id, question, sql, tables, sample=0, rows=None) -> Job:
    """A parent as a build has it: its SQL's tables and (qualified) columns."""
    parent = {"id": "3a0c9e17c0ffee42", "db_id": db_id, "question": question, "sql": sql}
    read = {f"{c.table or tables[0]}.{c.name}" for c in sqlglot.parse_one(sql).find_all(exp.Column)}
    parent["sql_meta"] = {"tables": tables, "columns": sorted(read)}
    if rows is not None:
        parent["result"] = {"row_count": rows}
    return Job(parent, "missing-column", sample)


def drafts(job: Job, context: DatabaseContext) -> list:
    """The job's draft for each of its three kinds and a few seeds, Nones left out."""
    made = []
    for sample in range(3):
        for seed in range(4):
            again = Job(job.parent, job.category, sample)
            rng = rng_for(seed, OFFLINE_DRAFTER, str(sample))
            made.append(ask_missing_column(again, context, rng))
    return [d for d in made if d is not None]


STATE_ATTRIBUTES = {"state_name", "population", "area", "country_name", "capital", "density"}


@pytest.mark.parametrize(
    ("question", "sql", "tables"),
    [
        (
            "what are the states that the potomac run through",
            "SELECT traverse FROM river WHERE river_name = 'potomac'",
            ["river"],
        ),
        (
            "which states border the missouri river",
            "SELECT traverse FROM river WHERE river_name = 'missouri'",
            ["river"],
        ),
        (
            "what states have cities named plano",
            "SELECT state_name FROM city WHERE city_name = 'plano'",
            ["city"],
        ),
    ],
)
def test_the_attribute_beside_listed_rows_is_the_rows_entitys(geography, question, sql, tables):
    """ "what are the states that the potomac run through, with their mouth?", "which
    states border the missouri river, with their discharge?", "what states have cities
    named plano, and what is its mayor?": the rows are states, held in a river's or a
    city's column; the attribute asked beside them is a state's."""
    made = drafts(parent_job("geography", question, sql, tables), geography)
    assert made
    for draft in made:
        assert draft.details["table"] == "state", draft.question
        assert draft.question.lower().startswith(question)
        assert draft.trigger not in STATE_ATTRIBUTES
    twin = present_column(
        parent_job("geography", question, sql, tables), geography, random.Random(1), None
    )
    assert twin is None  # a river's length beside states would be no answer to ask


@pytest.mark.parametrize(
    ("question", "sql", "tables"),
    [
        (
            "what state has the smallest population",
            "SELECT state_name FROM state WHERE population = (SELECT MIN(population) FROM state)",
            ["state"],
        ),
        (
            "which state has the greatest population",
            "SELECT state_name FROM state WHERE population = (SELECT MAX(population) FROM state)",
            ["state"],
        ),
        (
            "Which cities have a population above 40817?",
            "SELECT city_name FROM city WHERE population > 40817",
            ["city"],
        ),
    ],
)
def test_a_ranked_or_compared_column_becomes_a_figure(geography, question, sql, tables):
    """ "what state has the smallest official language?", "which state has the greatest
    official language?", "pitch surface above 40817": a text attribute in a slot that
    ranks or compares by size means nothing; only a figure takes its place."""
    made = drafts(parent_job("geography", question, sql, tables), geography)
    assert made
    for draft in made:
        assert draft.trigger.replace("_", " ") in lexicon.NUMERIC_ATTRIBUTES, draft.question


def test_one_named_test_takes_its_and_not_with_their(mimic):
    """ "What was the name of the lab test that patient 10026255 had received first
    since 04/2100?" names one test (EHRSQL's ``itemid IN (SELECT itemid ... WHERE
    charttime = (SELECT ... LIMIT 1))``, whose outer SELECT is not ``LIMIT 1``): ",
    and what was its ...?", not ", with their ...?"."""
    question = (
        "What was the name of the lab test that patient 10026255 had received first since 04/2100?"
    )
    sql = (
        "SELECT DISTINCT d_labitems.label FROM d_labitems WHERE d_labitems.itemid IN ( "
        "SELECT labevents.itemid FROM labevents WHERE labevents.hadm_id IN ( SELECT "
        "admissions.hadm_id FROM admissions WHERE admissions.subject_id = 10026255 ) AND "
        "strftime('%Y-%m',labevents.charttime) >= '2100-04' AND labevents.charttime = ( "
        "SELECT DISTINCT labevents.charttime FROM labevents WHERE labevents.hadm_id IN ( "
        "SELECT admissions.hadm_id FROM admissions WHERE admissions.subject_id = 10026255 ) "
        "AND strftime('%Y-%m',labevents.charttime) >= '2100-04' ORDER BY "
        "labevents.charttime ASC LIMIT 1 ) )"
    )
    job = parent_job("mimic_iv", question, sql, ["d_labitems", "labevents", "admissions"])
    assert one_result(job, mimic)
    for draft in drafts(job, mimic):
        assert "with their" not in draft.question, draft.question
    # the drugs of one (the first) hospital visit are many rows: a foreign key's column
    # taken from a one-row subquery keeps many rows
    many = parent_job(
        "mimic_iv",
        "What drugs were prescribed to patient 10020944 in their first hospital visit?",
        "SELECT prescriptions.drug FROM prescriptions WHERE prescriptions.hadm_id IN ( "
        "SELECT admissions.hadm_id FROM admissions WHERE admissions.subject_id = 10020944 "
        "AND admissions.dischtime IS NOT NULL ORDER BY admissions.admittime ASC LIMIT 1 )",
        ["prescriptions", "admissions"],
    )
    assert not one_result(many, mimic)


def test_a_diagnosis_cost_is_reached_through_the_cost_table(mimic):
    """ "Show me the five most common diagnoses since 2100, with their cost?" was labelled
    unanswerable, yet EHRSQL records each diagnosis's cost (``cost.event_id`` points to
    ``diagnoses_icd.row_id``, which joins ``d_icd_diagnoses`` by its code)."""
    schema = mimic.schema
    for name in ("d_icd_diagnoses", "d_icd_procedures"):
        found = surface_columns(schema.table(name), schema, any_kind=True)
        assert "cost" not in found and "chargetime" not in found, name
        assert "drug" in found  # a prescription's column stays a surface one
    question = "Show me the five most common diagnoses since 2100?"
    sql = (
        "SELECT d_icd_diagnoses.long_title FROM d_icd_diagnoses WHERE d_icd_diagnoses.icd_code "
        "IN ( SELECT T1.icd_code FROM ( SELECT diagnoses_icd.icd_code, DENSE_RANK() OVER ( "
        "ORDER BY COUNT(*) DESC ) AS C1 FROM diagnoses_icd WHERE "
        "strftime('%Y',diagnoses_icd.charttime) >= '2100' GROUP BY diagnoses_icd.icd_code ) "
        "AS T1 WHERE T1.C1 <= 5 )"
    )
    job = parent_job("mimic_iv", question, sql, ["d_icd_diagnoses", "diagnoses_icd"])
    for draft in drafts(job, mimic):
        assert draft.trigger != "cost", draft.question


def test_the_draft_and_its_twin_swap_the_same_phrase(mimic):
    """The draft asks first for the phrase its question asks as an attribute of a column
    the SQL returns, else for a read column's name; the twin looked in the other order.
    Both now take ``swapped_phrase``'s one answer."""
    question = "What was the dose of the drug glucagon prescribed to patient 10004235?"
    sql = (
        "SELECT prescriptions.dose_val_rx FROM prescriptions WHERE prescriptions.hadm_id IN "
        "( SELECT admissions.hadm_id FROM admissions WHERE admissions.subject_id = 10004235 )"
        " AND prescriptions.drug = 'glucagon'"
    )
    job = parent_job("mimic_iv", question, sql, ["prescriptions", "admissions"])
    table = mimic.schema.table("prescriptions")
    span, _owner, column, _aggregated = offline.swapped_phrase(job, mimic, table)
    assert question[span[0] : span[1]] == "dose" and column.name == "dose_val_rx"
    draft = ask_missing_column(job, mimic, rng_for(1, OFFLINE_DRAFTER, "0"))
    twin = present_column(job, mimic, random.Random(1), None)
    # the twin looked for "drug" first, the noun of the value glucagon, and made none
    assert twin is not None and draft is not None
    for made in (draft.question, twin.question):
        assert made.startswith("What was the ") and made.endswith(question[17:])
        assert "dose" not in made.split(" of the drug")[0]


def test_a_chinook_draft_is_its_parents_question_with_one_attribute():
    """ "List the album together with their reports to." and "Which employees work as
    Bianca Smith?": a template's words, another table's column (an employee's manager
    asked of an album) and a name written where a job title was. A draft now keeps
    every word of its parent's question and asks one attribute of the rows it names."""
    from tests.test_drafting_offline import contexts_of, parents_of

    context = contexts_of({"chinook": shared_data("chinook", "chinook.sqlite")})["chinook"]
    pairs = [
        (
            "List the albums of the artist AC/DC.",
            "SELECT Album.Title FROM Album JOIN Artist ON Album.ArtistId = Artist.ArtistId "
            "WHERE Artist.Name = 'AC/DC'",
        ),
        (
            "Which employees work as IT Staff?",
            "SELECT FirstName FROM Employee WHERE Title = 'IT Staff'",
        ),
    ]
    parents = parents_of(
        [{"db_id": "chinook", "question": q, "sql": s} for q, s in pairs],
        {"chinook": context.schema},
    )
    made = []
    for parent in parents:
        for sample in range(3):
            for seed in range(6):
                job = Job(parent, "missing-column", sample)
                made.append(ask_missing_column(job, context, rng_for(seed, OFFLINE_DRAFTER, "c")))
    made = [d for d in made if d is not None]
    assert made
    for draft in made:
        text, parent = draft.question, draft.job.parent["question"]
        assert text.startswith(parent.rstrip("?.")), text
        assert "together with their" not in text and " of each " not in text, text
        assert draft.trigger != "reports_to", text


def test_a_twin_names_its_column_in_spoken_words(mimic):
    """ "When did patient 10009628 receive the last lab test, in 10/this year, and what
    was its valueuom?" (also "its itemid?", "its totalamountuom?"): the twin asked a
    column by a name no one says, and a key; the drafts' names are spoken words."""
    question = "When did patient 10009628 receive the last lab test, in 10/this year?"
    sql = (
        "SELECT labevents.charttime FROM labevents WHERE labevents.hadm_id IN ( SELECT "
        "admissions.hadm_id FROM admissions WHERE admissions.subject_id = 10009628 ) AND "
        "strftime('%m',labevents.charttime) = '10' ORDER BY labevents.charttime DESC LIMIT 1"
    )
    job = parent_job("mimic_iv", question, sql, ["labevents", "admissions"])
    for seed in range(8):
        twin = present_column(job, mimic, random.Random(seed), None)
        if twin is not None:
            asked = twin.question[len(question) - 1 :]
            assert not {"valueuom", "valuenum", "itemid"} & set(asked.strip(" ,?").split())
    admissions = parent_job(
        "mimic_iv",
        "When did patient 10015860 get discharged from the hospital for the first time?",
        "SELECT admissions.dischtime FROM admissions WHERE admissions.subject_id = 10015860 "
        "AND admissions.dischtime IS NOT NULL ORDER BY admissions.admittime ASC LIMIT 1",
        ["admissions"],
    )
    made = [present_column(admissions, mimic, random.Random(s), None) for s in range(4)]
    assert any(made)  # an admission's insurance or language is asked as it is said


def test_an_unrelated_column_is_no_table_of_the_schema(mimic):
    """ "When did patient 10022880 first receive his or her chloride lab test in
    04/this year, and what was its patient?": Spider's column "patient", sampled as an
    unrelated one, names the patients the schema holds (the test's patient is known)."""
    from dataclasses import replace

    from answerable.builders.drafting.offline import absent_columns

    context = replace(mimic, other_columns=("patient", "admissions", "tie", "supplier name"))
    found = absent_columns("unrelated", mimic.schema.table("labevents"), context)
    assert "patient" not in found and "admissions" not in found
    assert "supplier name" in found


def test_a_microbiology_test_is_asked_nothing_its_specimen_says(mimic):
    """ "What was the collection site of the organism to be found in the first blood
    culture test of patient 10007818 ...?": the specimen's type (``spec_type_desc``:
    blood culture, sputum, urine) says where it was collected, so the question is no
    missing column's."""
    from answerable.builders.drafting.offline import entity_attributes

    found = entity_attributes(mimic.schema.table("microbiologyevents"))
    assert found and "collection site" not in found


def test_rows_not_known_are_not_counted():
    """ "What's the date of birth for patient 10004457? Then count them." and "What
    number of hours have elapsed since patient 10039831 was admitted to the ICU? And
    tell me how many there are.": EHRSQL's parents are verified without running, so
    their rows are not known, and a count of one value is no question."""
    from answerable.builders.drafting.twins import whole_result

    question = "What's the date of birth for patient 10004457?"
    sql = "SELECT patients.dob FROM patients WHERE patients.subject_id = 10004457"
    job = parent_job("mimic_iv", question, sql, ["patients"])
    for seed in range(12):
        twin = whole_result(job, sqlglot.parse_one(sql), random.Random(seed))
        assert "COUNT" not in twin.sql.upper() and "count" not in twin.question.lower()


def test_the_name_of_a_column_swapped_goes_with_it(mimic):
    """ "What was the name of the assets in billion of patient ...?": the insurance's
    name is the insurance column's value, so the swapped attribute takes the place of
    "name of the insurance", in the draft ("What was the eye colour of patient
    10018328 ...?") as in its twin."""
    from dataclasses import replace

    question = (
        "What was the name of the insurance of patient 10018328 during their last hospital "
        "encounter?"
    )
    sql = (
        "SELECT admissions.insurance FROM admissions WHERE admissions.subject_id = 10018328 "
        "AND admissions.dischtime IS NOT NULL ORDER BY admissions.admittime DESC LIMIT 1"
    )
    context = replace(mimic, other_columns=("assets in billion",))
    job = parent_job("mimic_iv", question, sql, ["admissions"])
    made = drafts(job, context)
    assert {d.subtype for d in made} >= {"related", "unrelated"}
    for draft in made:
        assert draft.question.startswith("What was the "), draft.question
        assert "name of" not in draft.question, draft.question
    assert any(d.question.startswith("What was the assets in billion of patient") for d in made)
    twins = [present_column(job, mimic, random.Random(s), None) for s in range(4)]
    assert twins and all(t.question.startswith("What was the ") for t in twins)
    assert not any("name of" in t.question for t in twins)  # "the language of patient ..."


def test_the_article_before_a_swapped_column_agrees_with_it():
    """ "List Lake Paigeton Wanderers home games with an ticket price above 16898,
    biggest crowd first.", read among the demo's drafts: the parent's "an attendance"
    became "an ticket price"; the draft says "a ticket price", and its twin drops the
    article before a plural ("with home goals above 16898")."""
    from answerable.builders.schema import Column, Table

    columns = [("match_id", "INTEGER"), ("home_team", "TEXT"), ("attendance", "INTEGER")]
    table = Table("matches", [Column(n, t) for n, t in [*columns, ("home_goals", "INTEGER")]])
    context = DatabaseContext("league", DatabaseSchema("league", [table]))
    question = (
        "List Lake Paigeton Wanderers home games with an attendance above 16898, biggest "
        "crowd first."
    )
    sql = (
        "SELECT match_id, attendance FROM matches WHERE home_team = 'Lake Paigeton Wanderers'"
        " AND attendance > 16898 ORDER BY attendance DESC"
    )
    job = parent_job("league", question, sql, ["matches"])
    made = drafts(job, context)
    assert made
    for draft in made:
        assert re.search(r"with a [^aeiou]", draft.question), draft.question
    twin = present_column(job, context, random.Random(0), None)
    assert twin.question.startswith("List Lake Paigeton Wanderers home games with home goals")


def test_one_patient_picked_by_key_takes_its_and_not_with_their(mimic):
    """ "What's the date of birth for patient 10004457, with their abbreviation?" was read
    in the TrustSQL release: ``patients.subject_id = 10004457`` picks one patient (other
    tables' foreign keys point to ``subject_id``, so it is unique), though EHRSQL's
    parents carry no result to count. The same key over a join, or a column no key
    points to, may keep many rows."""
    question = "What's the date of birth for patient 10004457?"
    sql = "SELECT patients.dob FROM patients WHERE patients.subject_id = 10004457"
    job = parent_job("mimic_iv", question, sql, ["patients"])
    assert one_result(job, mimic)
    made = drafts(job, mimic)
    assert made and all("with their" not in d.question for d in made), made
    many = [
        (
            "SELECT admissions.admittime FROM admissions WHERE admissions.subject_id = 10004457",
            ["admissions"],
        ),
        (
            "SELECT admissions.admittime FROM admissions JOIN patients ON "
            "patients.subject_id = admissions.subject_id WHERE patients.subject_id = 10004457",
            ["admissions", "patients"],
        ),
    ]
    for text, tables in many:
        assert not one_result(parent_job("mimic_iv", question, text, tables), mimic), text
