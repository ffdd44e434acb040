"""TrustSQL's three kinds of missing column, out-of-domain against small talk, and the
share of parents drafted from (drafting.rate)."""

from __future__ import annotations

from collections import Counter

import pytest

from answerable.builders.drafting import lexicon
from answerable.builders.drafting.categories.missing_column import ask_missing_column
from answerable.builders.drafting.categories.out_of_domain import ask_out_of_domain
from answerable.builders.drafting.categories.small_talk import small_talk
from answerable.builders.drafting.context import DatabaseContext, foreign_columns
from answerable.builders.drafting.drafts import OFFLINE_DRAFTER, Job
from answerable.builders.drafting.offline import linked, surface_columns
from answerable.builders.drafting.per_category import check_draft
from answerable.builders.drafting.stage import drafted_parents
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.builders.sources.common import spider_tables
from answerable.kernel.ids import rng_for
from tests.conftest import shared_data

KENNEL = DatabaseSchema(
    "dog_kennels",
    [
        Table("dogs", [Column("dog_id"), Column("age"), Column("weight")], primary_key=["dog_id"]),
        Table(
            "professionals",
            [Column("professional_id"), Column("city"), Column("cell_number")],
            primary_key=["professional_id"],
        ),
        Table(
            "treatments",
            [Column("treatment_id"), Column("dog_id"), Column("cost_of_treatment")],
            primary_key=["treatment_id"],
            foreign_keys=[("dog_id", "dogs", "dog_id")],
        ),
    ],
)
SHOP = DatabaseSchema("shop", [Table("product", [Column("id"), Column("product_category")])])


def job(sample: int, sql: str = "SELECT city FROM professionals") -> Job:
    return Job(
        {"id": "5e1f00d2c0ffee42", "db_id": "dog_kennels", "sql": sql, "question": "Which cities?"},
        "missing-column",
        sample,
    )


def context(others: tuple[str, ...] = ()) -> DatabaseContext:
    return DatabaseContext("dog_kennels", KENNEL, other_columns=others)


def test_surface_columns_come_from_tables_the_asked_one_cannot_join():
    dogs, professionals, treatments = KENNEL.tables
    # TrustSQL's own example: a professional's age, like a dog's; a dog's weight and a
    # treatment's cost come from tables of another kind, and name no attribute of a person
    assert surface_columns(professionals, KENNEL) == ["age"]
    assert linked(dogs, treatments)  # a foreign key: dogs' columns are one join away
    assert "cost of treatment" not in surface_columns(dogs, KENNEL)
    # two tables' own primary keys of one name are no join path (EHRSQL's row_id)
    a = Table("a", [Column("row_id"), Column("x")], primary_key=["row_id"])
    b = Table("b", [Column("row_id"), Column("y")], primary_key=["row_id"])
    assert not linked(a, b)
    glued = Table("c", [Column("row_id"), Column("itemid")], primary_key=["row_id"])
    assert linked(glued, Table("d", [Column("itemid"), Column("label")]))
    # a shared column that names something joins (GeoQuery's state_name); a bare name not
    state = Table("state", [Column("state_name"), Column("capital")])
    assert linked(Table("city", [Column("city_name"), Column("state_name")]), state)
    assert not linked(Table("x", [Column("name")]), Table("y", [Column("name")]))


def test_a_column_a_joined_table_has_is_no_surface_column():
    """d_icd_diagnoses joins diagnoses_icd, which has charttime: asking the charttime of
    an ICD diagnosis is answerable through that join, though labevents is not joined."""
    schema = DatabaseSchema(
        "ehr",
        [
            Table("d_icd", [Column("icd_code"), Column("long_title")]),
            Table("diagnoses", [Column("icd_code"), Column("charttime")]),
            Table("labevents", [Column("itemid"), Column("charttime"), Column("valuenum")]),
        ],
    )
    assert surface_columns(schema.tables[0], schema, any_kind=True) == ["valuenum"]
    # by default a table of no known kind takes only what any entity has: a diagnosis
    # has no lab value, though TrustSQL's own definition (any_kind) asks for it
    assert surface_columns(schema.tables[0], schema) == []


def test_a_parent_drafted_three_times_gets_each_kind_once():
    others = foreign_columns("dog_kennels", {"dog_kennels": KENNEL, "shop": SHOP})
    made = [
        ask_missing_column(job(k), context(others), rng_for(1, OFFLINE_DRAFTER, str(k)))
        for k in range(3)
    ]
    assert sorted(d.subtype for d in made) == ["related", "surface", "unrelated"]
    kinds = {d.subtype: d for d in made}
    assert kinds["unrelated"].trigger == "product_category"  # sampled from another database
    assert kinds["surface"].trigger in ("age", "cost_of_treatment", "weight")
    related = {a for pool in lexicon.ABSENT_ATTRIBUTES.values() for a in pool}
    assert kinds["related"].trigger.replace("_", " ") in related
    for draft in made:  # each passes the missing-column check, surface included
        assert check_draft(draft, context(others)) is None, draft


def test_without_another_database_unrelated_falls_back_to_related():
    subtypes = {
        ask_missing_column(job(k), context(), rng_for(1, OFFLINE_DRAFTER, str(k))).subtype
        for k in range(3)
    }
    assert "unrelated" not in subtypes


def test_a_surface_draft_of_a_column_its_own_table_has_is_rejected():
    draft = ask_missing_column(job(0), context(), rng_for(1, OFFLINE_DRAFTER, "0"))
    own = draft.__class__(
        **{**draft.__dict__, "trigger": "city", "subtype": "surface"},
    )
    assert check_draft(own, context())[0] == "column-in-schema"


@pytest.mark.parametrize("seed", range(40))
def test_out_of_domain_is_a_question_of_fact_and_small_talk_is_chat(seed):
    ood = ask_out_of_domain(job(0), context(), rng_for(seed, "ood"))
    chat = small_talk(job(0), context(), rng_for(seed, "chat"))
    assert ood.transform == "general_question" and chat.transform == "small_talk"
    second_person = {"you", "your", "me", "i", "thanks"}
    assert not second_person & set(ood.question.lower().replace("?", "").split())
    assert ood.trigger in {topic for topic, _ in lexicon.OUT_OF_DOMAIN}
    # years come from the seeded draw, never from Faker's year() (which draws up to today)
    years = [int(w.strip("?")) for w in ood.question.split() if w.strip("?").isdigit()]
    assert all(1950 <= year <= 2020 for year in years)
    assert chat.trigger in {topic for topic, _ in lexicon.SMALL_TALK}


@pytest.mark.parametrize("topic", ["joke", "poem", "recommendation"])
def test_small_talk_is_about_something_a_person_would_name(topic):
    """Never "Tell me a joke about any." (Faker's lorem words include function words)."""
    pattern = dict(lexicon.SMALL_TALK)[topic]
    head = pattern.split("{")[0]
    subjects = set()
    for seed in range(300):
        chat = small_talk(job(0), context(), rng_for(seed, "chat"))
        if chat.question.startswith(head):
            subjects.add(chat.question[len(head) :].rstrip("?."))
    assert subjects and subjects <= set(lexicon.SMALL_TALK_SUBJECTS), subjects


def test_drafting_rate_keeps_a_stable_seeded_share_of_parents():
    items = [
        {"id": f"{i:016x}", "label": "answerable", "sql": "SELECT 1", "db_variant": None}
        for i in range(400)
    ]
    few = {p["id"] for p in drafted_parents(items, 0.2, seed=3)}
    more = {p["id"] for p in drafted_parents(items, 0.5, seed=3)}
    assert few < more  # a parent chosen at 0.2 is still chosen at 0.5
    assert 50 < len(few) < 110 and 160 < len(more) < 240
    assert len(drafted_parents(items, 1.0, seed=3)) == 400
    assert Counter(p["id"] in few for p in drafted_parents(items, 0.2, seed=4))[True] != len(few)


GEO = DatabaseSchema(
    "geo",
    [
        Table("state", [Column("state_name"), Column("capital"), Column("population", "int")]),
        Table("river", [Column("river_name"), Column("length", "int"), Column("traverse")]),
        Table("city", [Column("city_name"), Column("population", "int"), Column("state_name")]),
        Table("border_info", [Column("state_name"), Column("border")]),
    ],
)


def geo_job(question: str, sql: str, tables: list[str], sample: int = 1) -> Job:
    parent = {"id": "00000000c0ffee42", "db_id": "geo", "sql": sql, "question": question}
    parent["sql_meta"] = {"tables": tables, "columns": []}
    return Job(parent, "missing-column", sample)


def test_a_table_of_no_known_kind_takes_no_attribute_of_a_product():
    """GeoQuery's border_info (a state and a state it borders) was given a 'last review
    date', a 'supplier' and a 'customer rating': the fallback list of a table of no
    known kind was a product's."""
    from answerable.builders.drafting.offline import entity_attributes

    assert entity_attributes(GEO.table("border_info")) == ()
    assert "last review date" not in entity_attributes(GEO.table("border_info"))
    assert "severity" in entity_attributes(Table("diagnoses_icd", [Column("icd_code")]))


def test_with_their_is_not_attached_to_rows_of_another_entity():
    """ "states that the potomac run through, with their mouth?": the SQL reads only the
    rivers (their traverse column holds states), so a river's attribute would be asked
    of states; the draft asks a state's. A question about the rivers themselves asks a
    river's."""
    context = DatabaseContext("geo", GEO)
    states = geo_job(
        "states that the potomac run through",
        "SELECT traverse FROM river WHERE river_name = 'potomac'",
        ["river"],
    )
    made = ask_missing_column(states, context, rng_for(1, OFFLINE_DRAFTER, "s"))
    assert made is not None and made.details["table"] == "state"
    rivers = geo_job("which rivers are longer than 1000", "SELECT river_name FROM river", ["river"])
    made = ask_missing_column(rivers, context, rng_for(1, OFFLINE_DRAFTER, "r"))
    assert made is not None and made.question.startswith("which rivers are longer than 1000")


def test_a_diagnosis_gets_no_lab_tests_normal_high_as_a_surface_column():
    """ "diagnoses ..., with their normal high?": lab items and diagnoses are both tables
    of no known kind, which is no evidence they hold alike things."""
    clinic = DatabaseSchema(
        "clinic",
        [
            Table("diagnoses", [Column("icd_code"), Column("title")]),
            Table("lab_items", [Column("item_id"), Column("normal_high"), Column("age")]),
        ],
    )
    assert surface_columns(clinic.table("diagnoses"), clinic) == ["age"]
    assert "normal high" in surface_columns(clinic.table("diagnoses"), clinic, any_kind=True)


def test_a_column_named_as_the_kind_of_a_value_is_not_swapped():
    """ "What drug was first prescribed via neb route?" gave "via neb prescribing doctor",
    and "What does it cost to have ...?" gave "What does it billing clerk to have ...?"."""
    from answerable.builders.drafting.offline import beside_a_value

    question = "What drug was first prescribed to patient 1 via neb route since 2100?"
    start = question.index("route")
    neb = question.index("neb")
    values = [("neb", "prescriptions.route", (neb, neb + 3))]
    assert beside_a_value((start, start + 5), values, question)
    assert not beside_a_value((start, start + 5), [], question)
    verb = "What does it cost to have an x-ray?"
    at = verb.index("cost")
    assert beside_a_value((at, at + 4), [], verb)


def test_no_attribute_is_added_to_a_yes_or_no_or_to_one_worked_out_figure():
    """ "Is the value ... greater than that second to last measured ..., with their
    apid?" and "Calculate the difference between the total input and output ..., with
    their infusion pump?": neither has rows to add an attribute to."""
    context = DatabaseContext("geo", GEO)
    rng = rng_for(1, OFFLINE_DRAFTER, "y")
    asks = geo_job("Is the potomac longer than 500?", "SELECT river_name FROM river", ["river"])
    assert ask_missing_column(asks, context, rng) is None
    figure = geo_job(
        "Calculate the difference between the longest and the shortest river",
        "SELECT (SELECT MAX(length) FROM river) - (SELECT MIN(length) FROM river)",
        ["river"],
    )
    assert ask_missing_column(figure, context, rng) is None


def test_a_question_that_already_asks_with_their_gets_no_second():
    """ "List the hospital admissions of patient 10082 since 2020-08-11, with their type,
    with their total charges?": one "with their" is the parent's own."""
    context = DatabaseContext("geo", GEO)
    listed = geo_job(
        "List the rivers, with their names?", "SELECT river_name FROM river", ["river"]
    )
    made = ask_missing_column(listed, context, rng_for(1, OFFLINE_DRAFTER, "w"))
    # the parent's own "with their names" may become another attribute in place
    assert made is None or made.question.lower().count("with their") == 1


def test_no_attribute_is_added_to_a_value_read_off_a_derived_table():
    """ "What is the percentile of 2.71 in the laboratory red blood cells test ..., with
    their turnaround time?": the SQL reads a PERCENT_RANK off a subquery, one figure."""
    figure = geo_job(
        "What is the percentile of 500 among the rivers",
        "SELECT DISTINCT t.c FROM (SELECT length, PERCENT_RANK() OVER (ORDER BY length) AS c"
        " FROM river) AS t WHERE t.length = 500",
        ["river"],
    )
    rng = rng_for(1, OFFLINE_DRAFTER, "p")
    assert ask_missing_column(figure, DatabaseContext("geo", GEO), rng) is None


@pytest.mark.parametrize(
    ("sql", "left"),
    [
        (
            "SELECT (SELECT MAX(length) FROM river) - (SELECT MIN(length) FROM river)",
            {"prediction", "explanation"},
        ),
        ("SELECT river_name FROM river ORDER BY length DESC LIMIT 1", {"explanation"}),
        (
            "SELECT DISTINCT river_name FROM river WHERE length = (SELECT length FROM river"
            " ORDER BY length DESC LIMIT 1)",
            {"explanation"},
        ),
        (
            "SELECT river_name FROM river WHERE length = (SELECT MAX(length) FROM river)",
            {"explanation"},
        ),
    ],
)
def test_one_figure_or_one_row_is_never_asked_to_be_clustered_or_charted(sql, left):
    """ "Tell me the difference between the total input and output ... Then cluster them
    with k-means." and "When was the first time ...? Then cluster them with k-means.":
    whatever the draw, a single result gets another out-of-scope request (nor a chart:
    "what is the population of california Show the result as a pie chart."); a
    forecast only of a figure, not of a river's name."""
    parent = {"id": "00000000c0ffee42", "db_id": "geo", "sql": sql, "question": "Which one?"}
    assert out_of_scope_tasks_of(parent) == left


def test_a_column_labelling_a_number_before_it_is_not_swapped():
    """ "List the goals of match 287 scored after the 47th minute." gave "... after the
    47th shot distance.": the minute labels the ordinal before it."""
    from answerable.builders.drafting.offline import said_column

    question = "List the goals of match 287 scored after the 47th minute."
    assert said_column(question, ["minute"]) is None
    assert said_column("List the goals and their minute.", ["minute"]) is not None


EHR = DatabaseSchema(
    "ehr",
    [
        Table("patients", [Column("row_id"), Column("subject_id"), Column("gender")]),
        Table(
            "prescriptions",
            [
                Column("row_id"),
                Column("subject_id"),
                Column("drug"),
                Column("dose_val_rx"),
                Column("route"),
                Column("starttime", "TIME"),
            ],
        ),
        Table(
            "cost",
            [Column("row_id"), Column("event_type"), Column("event_id"), Column("cost", "REAL")],
        ),
        Table("d_items", [Column("itemid"), Column("label"), Column("linksto")]),
        Table("icustays", [Column("stay_id"), Column("first_careunit")]),
    ],
)


def ehr_job(question: str, sql: str, tables: list[str], sample: int = 1) -> Job:
    parent = {"id": "00000000c0ffee42", "db_id": "ehr", "sql": sql, "question": question}
    parent["sql_meta"] = {"tables": tables, "columns": []}
    return Job(parent, "missing-column", sample)


def test_the_phrase_the_question_uses_for_its_column_is_swapped_in_place():
    """ "What was the dose of glucagon ...?" names dose_val_rx by "dose", which no
    humanized column name matches: the draft was the parent with ", with their ..."
    appended; now the phrase itself is swapped (a minimal pair)."""
    question = "What was the dose of glucagon that patient 1 was prescribed?"
    sql = (
        "SELECT prescriptions.dose_val_rx FROM prescriptions WHERE "
        "prescriptions.subject_id = 1 AND prescriptions.drug = 'glucagon'"
    )
    context = DatabaseContext("ehr", EHR)
    for sample in range(3):
        job = ehr_job(question, sql, ["prescriptions"], sample)
        made = ask_missing_column(job, context, rng_for(sample, OFFLINE_DRAFTER, "d"))
        assert made is not None and "with their" not in made.question
        assert made.question.startswith("What was the ")
        assert made.question.endswith(" of glucagon that patient 1 was prescribed?")
        assert "dose" not in made.question


@pytest.mark.parametrize(
    ("question", "phrase", "slot"),
    [
        ("What was the dose of glucagon?", "dose", True),
        ("Do you know patient 10005866's gender?", "gender", True),
        ("What is the total amount of input?", "amount", True),
        ("Tell me the drug that was prescribed to patient 1.", "drug", False),
        ("What was the name of the drug, which was prescribed last?", "drug", False),
        ("What was the name of patient 1's insurance?", "insurance", False),
        ("Which drugs were prescribed most often?", "drugs", False),
        ("What is the maximum total hospital cost?", "cost", False),
    ],
)
def test_only_an_attribute_asked_of_something_is_swapped(question, phrase, slot):
    """The phrase of a column the SQL returns is swapped only where the question asks it
    as an attribute: the drug's noun in "the drug that was prescribed" names the rows
    listed, and "eye colour that was prescribed" is no question."""
    from answerable.builders.drafting.offline import attribute_slot

    start = question.index(phrase)
    assert attribute_slot(question, (start, start + len(phrase))) is slot


def test_an_attribute_asked_of_another_tables_value_is_the_values_tables():
    """ "Can you tell me the cost of the drug named lactulose?": the cost table's absent
    attribute ("billing clerk") would be asked of a drug; the drug's table's is."""
    from answerable.builders.drafting.offline import asked_column_phrase

    question = "Can you tell me the cost of the drug named lactulose?"
    sql = (
        "SELECT DISTINCT cost.cost FROM cost WHERE cost.event_type = 'prescriptions' AND "
        "cost.event_id IN (SELECT prescriptions.row_id FROM prescriptions WHERE "
        "prescriptions.drug = 'lactulose')"
    )
    job = ehr_job(question, sql, ["cost", "prescriptions"])
    span, table, column, _aggregated = asked_column_phrase(job, DatabaseContext("ehr", EHR))
    assert question[span[0] : span[1]] == "cost" and column == "cost"
    assert table.name == "prescriptions"
    made = ask_missing_column(job, DatabaseContext("ehr", EHR), rng_for(1, OFFLINE_DRAFTER, "c"))
    assert made.details["table"] == "prescriptions"
    assert made.question.endswith(" of the drug named lactulose?")


def test_column_names_no_one_would_type_are_not_asked_for():
    """ "..., with their linksto?", "with their f2?", "patient 10005866's num of staff":
    raw column names as surface and unrelated columns."""
    from answerable.builders.drafting.offline import absent_columns
    from answerable.builders.lexical import wordnet

    if not wordnet.available():
        pytest.skip(str(wordnet.missing()))
    others = ("eye colour", "f2", "glf", "num of staff", "linksto")
    context = DatabaseContext("ehr", EHR, other_columns=others, surface_any_kind=True)
    patients = EHR.table("patients")
    assert absent_columns("unrelated", patients, context) == ["eye colour"]
    surface = absent_columns("surface", patients, context)
    assert "first careunit" not in surface and "first care unit" not in surface
    assert "linksto" not in surface


def test_an_abbreviation_is_no_column_anyone_asks_for():
    """ "What is the sep of the drug vitamin e?": WordNet knows "Sep" only as a way to
    write September, as it knows "GDP" only as gross domestic product; and "so"
    (baseball's strikeouts: "When did patient 10022880 first receive his or her chloride
    lab test in 04/this year, and what was its so?") is a function word alone. The
    unrelated column drawn for the drug is a word of its own ("eye colour", "dosage")."""
    from answerable.builders.drafting.offline import absent_columns
    from answerable.builders.lexical import wordnet

    if not wordnet.available():
        pytest.skip(str(wordnet.missing()))
    others = ("sep", "gdp", "apr", "so", "eye colour", "dosage", "english name")
    context = DatabaseContext("ehr", EHR, other_columns=others)
    prescriptions = EHR.table("prescriptions")
    unrelated = absent_columns("unrelated", prescriptions, context)
    assert unrelated == ["eye colour", "dosage", "english name"]
    sql = "SELECT DISTINCT prescriptions.route FROM prescriptions WHERE drug = 'vitamin e'"
    job = ehr_job("What is the route of the drug vitamin e?", sql, ["prescriptions"], sample=2)
    for n in range(12):  # the third sample of a parent asks for an unrelated column
        made = ask_missing_column(job, context, rng_for(n, OFFLINE_DRAFTER, "u"))
        assert made.subtype == "unrelated"
        assert not {"sep", "gdp", "apr", "so"} & set(made.question[:-1].split()), made.question


def test_a_yes_or_no_question_is_never_asked_to_be_plotted():
    """ "Has patient 1 been prescribed glucagon? Plot the result as a histogram.": a yes
    or a no has nothing to draw, whatever the draw, nothing to forecast, and no cause to
    explain (one event looked up): no out-of-scope draft."""
    parent = {
        "id": "00000000c0ffee42",
        "db_id": "ehr",
        "sql": "SELECT COUNT(*) > 0 FROM prescriptions WHERE prescriptions.subject_id = 1",
        "question": "Has patient 1 been prescribed glucagon?",
    }
    assert out_of_scope_tasks_of(parent, EHR) == set()


@pytest.mark.parametrize(
    ("question", "sql", "asked"),
    [
        (
            "How much glucagon was patient 1 given last time?",
            "SELECT prescriptions.dose_val_rx FROM prescriptions WHERE prescriptions.drug ="
            " 'glucagon' ORDER BY prescriptions.starttime DESC LIMIT 1",
            "How much glucagon was patient 1 given last time, and what was its ",
        ),
        (
            "When was the last time patient 1 was prescribed glucagon?",
            "SELECT prescriptions.starttime FROM prescriptions WHERE prescriptions.subject_id"
            " = 1 AND prescriptions.drug = 'glucagon' ORDER BY prescriptions.starttime DESC"
            " LIMIT 1",
            "When was the last time patient 1 was prescribed glucagon, and what was its ",
        ),
        (
            "What drug was first prescribed to patient 1?",
            "SELECT prescriptions.drug FROM prescriptions WHERE prescriptions.subject_id = 1"
            " ORDER BY prescriptions.starttime LIMIT 1",
            "What drug was first prescribed to patient 1, and what was its ",
        ),
        (
            "What number of hours have elapsed since patient 1 got glucagon?",
            "SELECT 24 * (strftime('%J', current_time) - strftime('%J', "
            "prescriptions.starttime)) FROM prescriptions WHERE prescriptions.subject_id = 1",
            None,
        ),
    ],
)
def test_their_is_said_only_of_listed_rows(question, sql, asked):
    """ "How much does patient 10009628 weigh ..., with their measurement device?", "When
    was the last time ..., with their long title?", "What number of hours have elapsed since ...,
    with their long title?": "their" had no rows to stand for. One row, a time or a value
    read off a row is asked "and what was its ...?"; a calculation gets no attribute."""
    job = ehr_job(question, sql, ["prescriptions"])
    context = DatabaseContext("ehr", EHR)
    made = ask_missing_column(job, context, rng_for(1, OFFLINE_DRAFTER, "f"))
    if asked is None:
        assert made is None
    else:
        assert made is not None and made.question.startswith(asked), made.question


def test_rows_named_by_a_column_still_get_an_attribute_beside_them():
    """The drugs a patient was given are things: ", with their <attribute>?" asks of them."""
    question = "Which drugs were prescribed to patient 1?"
    sql = "SELECT prescriptions.drug FROM prescriptions WHERE prescriptions.subject_id = 1"
    job = ehr_job(question, sql, ["prescriptions"])
    made = ask_missing_column(job, DatabaseContext("ehr", EHR), rng_for(1, OFFLINE_DRAFTER, "f"))
    assert made is not None
    assert made.question.startswith("Which drugs were prescribed to patient 1, with their ")


def test_the_appended_question_agrees_with_a_plural_attribute():
    """ "In match 88, how long was player 392 on the pitch, and what is its yellow
    cards?": the verb takes the attribute's number."""
    from answerable.builders.drafting.offline import agreeing

    assert agreeing(", and what was its ", "red cards") == ", and what were its "
    assert agreeing(", and what is their ", "blood type") == ", and what is their "
    assert agreeing(", with their ", "red cards") == ", with their "


def test_the_appended_attribute_is_of_the_rows_the_answer_lists():
    """ "What medication was prescribed to patient 10018081 ... after the diagnosis of
    hyposmolality ..., with their diagnosing doctor?": the question says a diagnosis
    first, but the answer lists prescriptions' drugs."""
    schema = DatabaseSchema(
        "ehr", [*EHR.tables, Table("diagnoses", [Column("row_id"), Column("icd_code")])]
    )
    question = "What medication was prescribed to patient 1 after the diagnosis of sepsis?"
    sql = (
        "SELECT prescriptions.drug FROM prescriptions WHERE prescriptions.subject_id = 1 "
        "AND prescriptions.row_id IN (SELECT diagnoses.row_id FROM diagnoses)"
    )
    job = ehr_job(question, sql, ["prescriptions", "diagnoses"], sample=1)
    context = DatabaseContext("ehr", schema)
    made = ask_missing_column(job, context, rng_for(1, OFFLINE_DRAFTER, "m"))
    assert made is not None and made.details["table"] == "prescriptions", made.question


def test_no_attribute_is_added_to_groups_of_an_attribute():
    """ "For tests taken after 2022-06-29, give the mean Potassium per ethnicity ...,
    with their body weight?": the rows are ethnicities, which have no body weight;
    groups of a named thing (a team) keep theirs."""
    from answerable.builders.drafting.offline import groups_by_attribute
    from answerable.builders.sqlkit import parse

    assert groups_by_attribute(parse("SELECT ethnicity, AVG(v) FROM p GROUP BY ethnicity"))
    assert not groups_by_attribute(parse("SELECT team_id, COUNT(*) FROM m GROUP BY team_id"))
    assert not groups_by_attribute(parse("SELECT long_title, COUNT(*) FROM d GROUP BY long_title"))
    question = "Give the average amount per kind of delivery."
    sql = "SELECT prescriptions.route, AVG(prescriptions.dose_val_rx) FROM prescriptions"
    job = ehr_job(question, sql + " GROUP BY prescriptions.route", ["prescriptions"])
    context = DatabaseContext("ehr", EHR)
    assert ask_missing_column(job, context, rng_for(1, OFFLINE_DRAFTER, "g")) is None


def test_a_derived_tables_column_is_of_the_table_it_reads():
    """ "What was the name of the drug ... after receiving a ... procedure ..., with
    their anaesthesia type?": EHRSQL's SELECT T2.drug FROM (procedures) AS T1 JOIN
    (prescriptions) AS T2 returns drugs, though the question says the procedure first."""
    from answerable.builders.drafting.offline import returned_table

    schema = DatabaseSchema(
        "ehr", [*EHR.tables, Table("procedures", [Column("row_id"), Column("icd_code")])]
    )
    sql = (
        "SELECT T2.drug FROM (SELECT procedures.row_id FROM procedures) AS T1 JOIN "
        "(SELECT prescriptions.row_id, prescriptions.drug FROM prescriptions) AS T2 "
        "ON T1.row_id = T2.row_id"
    )
    question = "What was the name of the drug given after the procedure?"
    job = ehr_job(question, sql, ["procedures", "prescriptions"])
    assert returned_table(job, DatabaseContext("ehr", schema)).name == "prescriptions"


def test_no_attribute_is_added_beside_the_distinct_figures_of_one_thing():
    """ "What is the selling rate of the drug acetaminophen-caff-butalbital, with their
    long title?": DISTINCT cost.cost lists the prices of one drug, which have no title."""
    question = "What is the selling rate of the drug vitamin e?"
    sql = (
        "SELECT DISTINCT cost.cost FROM cost WHERE cost.event_id IN (SELECT "
        "prescriptions.row_id FROM prescriptions WHERE prescriptions.drug = 'vitamin e')"
    )
    job = ehr_job(question, sql, ["cost", "prescriptions"])
    made = ask_missing_column(job, DatabaseContext("ehr", EHR), rng_for(1, OFFLINE_DRAFTER, "s"))
    assert made is None


def test_the_price_of_one_thing_is_never_charted():
    """ "What is the price of diagnosis of dependence on respirator [ventilator] status?
    Draw it as a bar chart.": DISTINCT cost.cost is one thing's price."""
    parent = {
        "id": "00000000c0ffee42",
        "db_id": "ehr",
        "sql": "SELECT DISTINCT cost.cost FROM cost WHERE cost.event_type = 'diagnoses_icd'",
        "question": "What is the price of diagnosis of sepsis?",
    }
    assert out_of_scope_tasks_of(parent, EHR) == {"prediction", "explanation"}


def test_a_question_whose_verified_result_is_one_row_is_never_asked_to_be_clustered():
    """ "how big is alaska Then cluster them with k-means.": no COUNT and no LIMIT 1,
    but the parent's verified result is one row (one figure), so nothing to cluster or
    to chart ("how many people are there in iowa Draw it as a bar chart.")."""
    parent = {
        "id": "00000000c0ffee42",
        "db_id": "geo",
        "sql": "SELECT length FROM river WHERE river_name = 'potomac'",
        "question": "how long is the potomac",
        "result": {"row_count": 1, "columns": ["length"], "rows": [[462]]},
    }
    tasks = out_of_scope_tasks_of(parent)
    assert "clustering" not in tasks and "chart" not in tasks and len(tasks) == 2


def test_only_a_figure_is_asked_to_be_forecast():
    """ "what state is dallas in And tell me what it will be next year.": the answer is
    a name, and a name has no forecast; a figure has ("what is the population of
    mississippi And forecast it for next year.")."""
    for columns, rows, forecast in (
        (["state_name"], [["texas"]], False),
        (["subject_id"], [[10017]], False),  # "Which patients ...?": ids, no figure
        (["population"], [[2520000]], True),
    ):
        parent = {
            "id": "00000000c0ffee42",
            "db_id": "geo",
            "sql": "SELECT length FROM river WHERE river_name = 'potomac'",
            "question": "how long is the potomac",
            "result": {"row_count": 1, "columns": columns, "rows": rows},
        }
        assert ("prediction" in out_of_scope_tasks_of(parent)) == forecast, parent["result"]


EHRSQL_FORECASTS = [
    # "Did patient 10022017 have foley on 10/03/this year? And forecast it for next
    # year.": a yes/no has no forecast
    (
        "SELECT COUNT(*)>0 FROM outputevents WHERE outputevents.stay_id IN ( SELECT "
        "icustays.stay_id FROM icustays WHERE icustays.hadm_id IN ( SELECT admissions.hadm_id "
        "FROM admissions WHERE admissions.subject_id = 10022017 ) ) AND outputevents.itemid "
        "IN ( SELECT d_items.itemid FROM d_items WHERE d_items.label = 'foley' )",
        False,
    ),
    # "What microbiology test did patient 10004720 undergo for the last time since
    # 01/2100? And forecast it for next year.": a test's name has none
    (
        "SELECT DISTINCT microbiologyevents.test_name FROM microbiologyevents WHERE "
        "microbiologyevents.hadm_id IN ( SELECT admissions.hadm_id FROM admissions WHERE "
        "admissions.subject_id = 10004720 )",
        False,
    ),
    # "Provide the top five most common microbiology tests in this year. Then
    # extrapolate it to next year.": names again
    (
        "SELECT T1.test_name FROM ( SELECT microbiologyevents.test_name, DENSE_RANK() OVER "
        "( ORDER BY COUNT(*) DESC ) AS C1 FROM microbiologyevents GROUP BY "
        "microbiologyevents.test_name ) AS T1 WHERE T1.C1 <= 5",
        False,
    ),
    # a count, a figure of a numeric column and arithmetic are figures
    ("SELECT COUNT(DISTINCT admissions.subject_id) FROM admissions", True),
    ("SELECT MAX(labevents.valuenum) FROM labevents WHERE labevents.subject_id = 1", True),
    (
        "SELECT 24 * (STRFTIME('%J', CURRENT_TIME) - STRFTIME('%J', icustays.intime)) "
        "FROM icustays WHERE icustays.subject_id = 1",
        True,
    ),
]


@pytest.mark.parametrize(("sql", "forecast"), EHRSQL_FORECASTS)
def test_a_parent_with_no_run_result_is_forecast_only_when_its_sql_returns_figures(sql, forecast):
    """EHRSQL ships no data, so its parents have no result to tell a figure by: what
    the SQL returns decides, over the real EHRSQL 2024 schema."""
    entry = next(iter(spider_tables(shared_data("ehrsql2024", "tables.json")).values()))
    parent = {"id": "00000000c0ffee42", "db_id": "mimic_iv", "sql": sql, "question": "Q?"}
    tasks = out_of_scope_tasks_of(parent, DatabaseSchema.from_spider(entry))
    assert ("prediction" in tasks) == forecast


NAMES = "SELECT river_name FROM river WHERE traverse = 'texas'"
LENGTHS = "SELECT river_name, length FROM river WHERE traverse = 'texas'"


@pytest.mark.parametrize(
    ("sql", "result", "charted"),
    [
        # "Which teams have a name ending in United? Draw it as a bar chart.": names only
        (NAMES, {"row_count": 2, "columns": ["river_name"], "rows": [["red"], ["pecos"]]}, False),
        # ids are no figure either ("Which Self Pay patients ...? Draw it as a bar chart.")
        (NAMES, {"row_count": 2, "columns": ["river_id"], "rows": [[3], [4]]}, False),
        (
            LENGTHS,
            {"row_count": 2, "columns": ["river_name", "length"], "rows": [["red", 1638]]},
            True,
        ),
    ],
)
def test_only_an_answer_holding_a_figure_is_asked_for_a_chart(sql, result, charted):
    """A chart draws figures: a list of names or ids has none to draw."""
    parent = {"id": "00000000c0ffee42", "db_id": "geo", "sql": sql, "question": "Which?"}
    parent["result"] = result
    assert ("chart" in out_of_scope_tasks_of(parent)) == charted


@pytest.mark.parametrize(
    ("sql", "charted"),
    [
        ("SELECT DISTINCT cost.event_type FROM cost", False),
        ("SELECT cost.event_type, cost.cost FROM cost", True),
    ],
)
def test_with_no_run_result_the_sql_tells_whether_there_is_a_figure_to_chart(sql, charted):
    """EHRSQL ships no data: a REAL column returned is a figure, a text one is not."""
    parent = {"id": "00000000c0ffee42", "db_id": "ehr", "sql": sql, "question": "Which?"}
    assert ("chart" in out_of_scope_tasks_of(parent, EHR)) == charted


def out_of_scope_tasks_of(parent: dict, schema: DatabaseSchema = GEO) -> set[str]:
    """The tasks the out-of-scope rule asks of ``parent`` over 40 seeded draws (none
    when it drafts nothing)."""
    from answerable.builders.drafting.categories.out_of_scope import rewrite_out_of_scope

    context = DatabaseContext(schema.db_id, schema)
    job = Job(parent, "out-of-scope", 0)
    draws = (rng_for(n, OFFLINE_DRAFTER, "c") for n in range(40))
    drafts = [rewrite_out_of_scope(job, context, rng) for rng in draws]
    return {draft.details["task"] for draft in drafts if draft is not None}


LOOKUPS = [
    # "where is new orleans And tell me why.": a place looked up
    (
        "SELECT state_name FROM city WHERE city_name = 'new orleans'",
        {"row_count": 1, "columns": ["state_name"], "rows": [["louisiana"]]},
        set(),
    ),
    # "Who was the coach of Lisatown Olympic on 2022-07-08? Explain why it is so.": a name
    (
        "SELECT name FROM coaches WHERE team = 'Lisatown Olympic' AND start_date <= "
        "'2022-07-08' AND end_date >= '2022-07-08'",
        {"row_count": 1, "columns": ["name"], "rows": [["Ann Lee"]]},
        set(),
    ),
    # the rivers of a state are listed: they can be clustered, not explained
    (
        "SELECT river_name FROM river WHERE traverse = 'texas'",
        {"row_count": 2, "columns": ["river_name"], "rows": [["red"], ["pecos"]]},
        {"clustering"},
    ),
    # "what is the biggest city in georgia": a ranking by a figure has its reasons
    (
        "SELECT city_name FROM city WHERE population = (SELECT MAX(population) FROM city "
        "WHERE state_name = 'georgia') AND state_name = 'georgia'",
        {"row_count": 1, "columns": ["city_name"], "rows": [["atlanta"]]},
        {"explanation"},
    ),
    # "how long is the potomac": a figure
    (
        "SELECT length FROM river WHERE river_name = 'potomac'",
        {"row_count": 1, "columns": ["length"], "rows": [[462]]},
        {"prediction", "explanation"},
    ),
]


@pytest.mark.parametrize(("sql", "result", "tasks"), LOOKUPS)
def test_only_an_answer_with_a_cause_is_asked_to_be_explained(sql, result, tasks):
    """An explanation asks for the causes of figures, rankings and comparisons: one
    place, name or date looked up has none, so a lookup gets another out-of-scope
    task, or none when no task fits one row of names."""
    schema = DatabaseSchema(
        "geo", [*GEO.tables, Table("coaches", [Column(c) for c in ("name", "team")])]
    )
    parent = {"id": "00000000c0ffee42", "db_id": "geo", "sql": sql, "question": "Which?"}
    parent["result"] = result
    assert out_of_scope_tasks_of(parent, schema) == tasks


def test_a_count_of_ids_is_a_figure():
    """ "How many Government patients were prescribed Polyethylene Glycol on or after
    2023-01-30?": the result's column is labelled ``COUNT(DISTINCT p.subject_id)``, a
    figure, not the key it counts, so it is forecast and explained (no other task fits
    one figure); a column of ids is no figure."""
    sql = "SELECT COUNT(DISTINCT subject_id) FROM river WHERE traverse = 'texas'"
    parent = {"id": "00000000c0ffee42", "db_id": "geo", "sql": sql, "question": "How many?"}
    parent["result"] = {"row_count": 1, "columns": ["COUNT(DISTINCT p.subject_id)"], "rows": [[2]]}
    assert out_of_scope_tasks_of(parent) == {"prediction", "explanation"}
    parent["result"] = {"row_count": 1, "columns": ["p.subject_id"], "rows": [[2]]}
    assert "prediction" not in out_of_scope_tasks_of(parent)


@pytest.mark.parametrize(
    ("sql", "explained"),
    [
        # "What was patient 10029484's last hospital discharge time? And explain the
        # reasons.": the latest of a date
        (
            "SELECT admissions.dischtime FROM admissions WHERE admissions.subject_id = "
            "10029484 ORDER BY admissions.dischtime DESC LIMIT 1",
            False,
        ),
        # "Provide the top five most common microbiology tests in this year.": ranked by
        # a count
        (
            "SELECT T1.test_name FROM ( SELECT microbiologyevents.test_name, DENSE_RANK() "
            "OVER ( ORDER BY COUNT(*) DESC ) AS C1 FROM microbiologyevents GROUP BY "
            "microbiologyevents.test_name ) AS T1 WHERE T1.C1 <= 5",
            True,
        ),
        ("SELECT COUNT(DISTINCT admissions.subject_id) FROM admissions", True),
    ],
)
def test_with_no_run_result_the_sql_tells_whether_there_is_a_cause_to_explain(sql, explained):
    """EHRSQL ships no data: a date or a name picked by date has no cause to explain, a
    count or a ranking by a count has, over the real EHRSQL 2024 schema."""
    entry = next(iter(spider_tables(shared_data("ehrsql2024", "tables.json")).values()))
    parent = {"id": "00000000c0ffee42", "db_id": "mimic_iv", "sql": sql, "question": "Q?"}
    tasks = out_of_scope_tasks_of(parent, DatabaseSchema.from_spider(entry))
    assert ("explanation" in tasks) == explained
