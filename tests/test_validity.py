"""Issue 12: the lexical module, the plausibility gate and the hand-labelled cases."""

from __future__ import annotations

from collections import Counter

import pytest

from answerable.builders.counterfactual.gate import judge_columns, judge_value
from answerable.builders.demo import generate_demo
from answerable.builders.drafting import settled_by_question
from answerable.builders.lexical import contrasts, wordnet
from answerable.builders.lexical.inflection import plural, singular
from answerable.kernel.errors import ConfigError
from tests.conftest import SHARED_DATA
from tests.validity_cases import BLIND_ORIGIN, by_round, load_cases, round_lines, score

needs_wordnet = pytest.mark.skipif(not wordnet.available(), reason=str(wordnet.missing()))


# ---- the labelled set -----------------------------------------------------------------


def test_the_labelled_set_covers_every_source_and_both_verdicts():
    cases = load_cases()
    assert len(cases) >= 200
    assert len({c["id"] for c in cases}) == len(cases)
    by = Counter((c["source"], c["verdict"]) for c in cases)
    for source in ("spider", "geoquery", "chinook", "demo"):
        assert by[source, "accept"] and by[source, "reject"], source
    kinds = ("column-pair", "value-column", "value-reading", "draft", "dropped-column")
    assert all(c["reason"].strip() and c["kind"] in kinds for c in cases)
    by_kind = Counter((c["kind"], c["verdict"]) for c in cases)
    for kind in kinds:
        assert by_kind[kind, "accept"] and by_kind[kind, "reject"], kind
    drafts = Counter(c["category"] for c in cases if c["kind"] == "draft")
    assert drafts["vague-word"] >= 20 and drafts["ambiguous-reference"] >= 20


@pytest.fixture(scope="module")
def databases(tmp_path_factory):
    """The databases the value cases need: the demo (generated) and the real ones."""
    demo = tmp_path_factory.mktemp("demo")
    generate_demo(demo, 7)
    found = {"clinic": demo / "clinic.sqlite", "league": demo / "league.sqlite"}
    for db_id, path in (
        ("chinook", SHARED_DATA / "chinook" / "chinook.sqlite"),
        ("geography", SHARED_DATA / "geoquery" / "geography.sqlite"),
    ):
        if path.is_file():
            found[db_id] = path
    return found


@needs_wordnet
def test_the_gate_agrees_with_the_hand_labels(databases):
    found = score(load_cases(), databases)
    assert found.precision >= 0.9 and found.recall >= 0.7, "\n".join(found.misses)


def test_the_blind_cases_are_read_from_spider_geoquery_and_chinook_builds():
    blind = by_round(load_cases())["blind cases"]
    assert len(blind) >= 100
    assert {c["source"] for c in blind} == {"spider", "geoquery", "chinook"}
    assert all(c["reason"].strip() and c["origin"] == BLIND_ORIGIN for c in blind)
    assert {c["verdict"] for c in blind if c["kind"] == "dropped-column"} == {"accept", "reject"}


def test_the_checks_are_scored_per_round_and_the_figures_printed(databases, spider_schemas):
    """Run with ``-s`` to read the figures: precision and recall of the gate, the draft
    checks and the leak checks on the older cases, on those added from outside and on
    those read blind (the benchmark prints the same lines). The blind leak-check misses
    are answers the checks do not look for: a count that needs no name, a state found
    through its capital's city, a car's model as the first word of its make."""
    if len(databases) < 4 or not spider_schemas:
        pytest.skip("real data not available: the blind cases are on Spider, GeoQuery, Chinook")
    cases = load_cases()
    lines = round_lines(cases, databases, spider_schemas)
    print("\n".join(lines))
    checks = {line.split(": ")[0] for line in lines}
    assert {"gate on blind cases", "leak checks on blind cases", "gate on older cases"} <= checks
    blind = by_round(cases)["blind cases"]
    gate = score(blind, databases, spider_schemas)
    leaks = score(blind, databases, spider_schemas, kinds=("dropped-column",))
    assert gate.skipped == leaks.skipped == 0
    assert gate.precision >= 0.9 and leaks.precision >= 0.85 and leaks.recall >= 0.95


@pytest.fixture(scope="module")
def spider_schemas():
    """Spider dev's schemas (from tables.json), or none when the data is absent."""
    from tests.benchmarks.counterfactual_counts import SOURCES

    spec, base = SOURCES["spider"]
    if not (base / "tables.json").is_file():
        return {}
    from answerable.builders.sources import load_source

    return {k: v.schema for k, v in load_source(spec, base, None).databases.items()}


def test_the_draft_checks_agree_with_the_hand_labels(databases):
    """Measured: precision 0.931, recall 1.000 (the misses: 'small' yellow cards, 'that
    patient' against a plural question)."""
    found = score(load_cases(), databases, kinds=("draft",))
    assert found.skipped == 0
    assert found.precision >= 0.9 and found.recall >= 0.95, "\n".join(found.misses)


def test_the_leak_checks_agree_with_the_hand_labels_of_dropped_columns(databases, spider_schemas):
    """Measured: precision 0.918, recall 1.000 (the misses, all in the blind cases, are
    answers the leak checks do not try: a count that needs no name, a row found through
    another table, a name inside another column's values)."""
    if len(databases) < 4 or not spider_schemas:
        pytest.skip(
            "real data not available: most dropped-column cases are on Spider, GeoQuery and Chinook"
        )
    found = score(load_cases(), databases, spider_schemas, kinds=("dropped-column",))
    assert found.skipped == 0
    assert found.tp + found.fp + found.fn + found.tn >= 10
    assert found.precision >= 0.8 and found.recall >= 0.95, "\n".join(found.misses)


@needs_wordnet
def test_column_pairs_alone_meet_the_targets():
    pairs = [c for c in load_cases() if c["kind"] == "column-pair"]
    found = score(pairs, {})
    assert found.skipped == 0
    assert found.precision >= 0.9 and found.recall >= 0.7, "\n".join(found.misses)


# ---- the gate's rules -----------------------------------------------------------------


@needs_wordnet
@pytest.mark.parametrize(
    ("table", "column", "candidates", "question", "reason"),
    [
        (
            "players",
            "position",
            ["primary_position", "secondary_position"],
            "Positions?",
            "default-marked",
        ),
        ("players", "age", ["first_age", "second_age"], "Ages?", "ordinal"),
        ("people", "height", ["minimum_height", "maximum_height"], "Heights?", "range"),
        ("country", "area", ["land_area", "water_area"], "Area?", "parts-of-total"),
        ("battle", "year", ["registered_year", "reported_year"], "Year?", "default-marked"),
        ("tracks", "name", ["short_name", "long_name"], "Names?", "no-contrast"),
        ("tracks", "name", ["first_name", "last_name"], "Names?", "ordinal"),
        (
            "matches",
            "score",
            ["home_score", "away_score"],
            "Goals at home?",
            "resolved-by-question",
        ),
        ("students", "LName", ["FirstLName", "LastLName"], "Names?", "already-qualified"),
        ("players", "name", ["name_a", "name_a"], "Names?", "same-meaning"),
    ],
)
def test_the_gate_names_the_rule_a_pair_breaks(table, column, candidates, question, reason):
    verdict = judge_columns(question, column, table, column, candidates)
    assert not verdict.ok and verdict.reason == reason, verdict


@needs_wordnet
@pytest.mark.parametrize(
    ("table", "column", "candidates"),
    [
        ("icu_stays", "careunit", ["first_careunit", "last_careunit"]),
        ("matches", "score", ["home_score", "away_score"]),
        ("poker_player", "Earnings", ["GrossEarnings", "NetEarnings"]),
        ("country", "Name", ["ShortName", "LongName"]),
        ("ship", "tonnage", ["gross_tonnage", "net_tonnage"]),
        ("cars_data", "MPG", ["CITY_MPG", "HIGHWAY_MPG"]),
        ("rankings", "ranking_points", ["singles_ranking_points", "doubles_ranking_points"]),
        ("Highschooler", "grade", ["school_grade", "letter_grade"]),  # a year, or a mark
        ("singer", "Country", ["Birth_Country", "Residence_Country"]),
        ("country", "GNP", ["NOMINAL_GNP", "PPP_GNP"]),
    ],
)
def test_the_gate_passes_genuine_pairs(table, column, candidates):
    assert judge_columns("Show them.", column, table, column, candidates).ok


@needs_wordnet
@pytest.mark.parametrize(
    ("table", "column", "candidates", "reason"),
    [
        ("stadium", "MPG", ["CITY_MPG", "HIGHWAY_MPG"], "no-contrast"),  # only of cars
        ("player", "tonnage", ["gross_tonnage", "net_tonnage"], "no-contrast"),
        ("course", "grade", ["school_grade", "letter_grade"], "no-contrast"),  # not students
    ],
)
def test_the_new_contrasts_hold_only_where_they_apply(table, column, candidates, reason):
    verdict = judge_columns("Show them.", column, table, column, candidates)
    assert not verdict.ok and verdict.reason == reason, verdict


def test_a_default_marked_pair_is_live_only_when_the_question_says_either():
    pair = ("primary", "secondary")
    assert contrasts.both_live(pair, {"either", "position"})
    assert not contrasts.both_live(pair, {"both", "position"})
    assert not contrasts.both_live(pair, {"either", "primary"})


@needs_wordnet
def test_a_value_must_fit_the_kind_of_the_column():
    states = ["alabama", "alaska", "arizona", "texas", "ohio", "utah"]
    assert judge_value("montana", "state.state_name", states).ok
    misfit = judge_value("austin", "state.state_name", states)
    assert not misfit.ok and misfit.reason == "vocabulary-misfit"
    assert judge_value("Medicare", "patients.insurance", ["Medicaid", "Private", "Other"]).ok
    assert not judge_value("Widowed", "admissions.location", ["Home", "Rehab", "Hospice"]).ok
    assert judge_value("12", "t.name", ["Ann", "Bob"]).reason == "format-misfit"


# ---- the lexical module ---------------------------------------------------------------


def test_singular_and_plural_through_inflect():
    words = ("patients", "diagnoses", "cities", "matches", "criteria", "status", "class", "data")
    assert [singular(w) for w in words] == [
        "patient",
        "diagnosis",
        "city",
        "match",
        "criterion",
        "status",
        "class",
        "data",
    ]
    assert [plural(w) for w in ("city", "diagnosis", "person")] == ["cities", "diagnoses", "people"]


def test_lexnames_is_the_45_line_table_of_the_man_page():
    lines = wordnet.lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1"
    assert lines[44] == "44\tadj.ppl\t3"


def test_without_the_debian_packages_the_message_names_them(tmp_path):
    with pytest.raises(ConfigError) as raised:
        wordnet.corpus_folder(tmp_path / "absent", tmp_path / "cache")
    message = str(raised.value)
    assert "wordnet-base" in message and "wordnet-sense-index" in message
    assert "\n" not in message


@needs_wordnet
def test_wordnet_3_0_from_the_debian_files(tmp_path, monkeypatch):
    folder = wordnet.corpus_folder(cache=tmp_path)
    assert (folder / "lexnames").read_text() == wordnet.lexnames_text()
    assert wordnet.wordnet().get_version() == "3.0"
    assert {"net income", "profit", "salary"} <= wordnet.synonyms("earnings")
    assert wordnet.relation("date", "due date") == "hyponym"
    assert wordnet.relation("prague", "city") == "hypernym"


# ---- drafts whose problem the question settles ----------------------------------------


@pytest.mark.parametrize(
    ("question", "trigger", "settled_by"),
    [
        ("Which recent admissions were in the last 30 days?", "recent", "in the last 30 days"),
        ("List the recent matches between 2021-08-01 and 2021-09-01.", "recent", "2021-08-01"),
        ("Which early matches were played in October?", "early", None),  # a month is wide
        ("Which recent matches were in the 2021-22 season?", "recent", None),
        ("Which early stays began after 2021-12-02?", "early", None),  # an open span
        ("Which early stays were between 2021-12-02 and 2021-12-30?", "early", "between"),
        ("How many elderly patients are older than 65?", "elderly", "older than 65"),
        ("Which large stadiums hold more than 40000 people?", "large", "more than 40000"),
        ("Which young players are over 174 centimetres tall?", "young", None),  # a height
        ("Which young players are under 23?", "young", "under 23"),
        ("Which young players born after 1994-08-02 are tall?", "young", "born after"),
        ("Which recent admissions were urgent?", "recent", None),
        ("How many young players are goalkeepers?", "young", None),
        ("Which large stadiums are in Leeds?", "large", None),
        ("Which typical patients were admitted in 2021?", "typical", None),  # not a time word
        ("Which recent admissions may be urgent?", "recent", None),  # 'may' is the verb
    ],
)
def test_a_vague_word_is_settled_only_by_what_it_leaves_open(question, trigger, settled_by):
    found = settled_by_question.vague_word_settled(question, trigger)
    assert found == settled_by or (settled_by and found and found.startswith(settled_by))


def test_a_reference_is_determined_when_the_draft_still_names_the_referent(demo_dir):
    from answerable.builders.schema import DatabaseSchema

    schema = DatabaseSchema.from_sqlite(demo_dir / "league.sqlite", "league")
    parent = {
        "question": "How many players does Arsenal have?",
        "sql": "SELECT COUNT(*) FROM players JOIN teams ON players.team_id = teams.team_id "
        "WHERE teams.name = 'Arsenal'",
    }
    named = settled_by_question.reference_determined(
        "How many players does Arsenal have for that team?", "that team", parent, schema
    )
    assert named == "Arsenal"
    by_other_column = settled_by_question.reference_determined(
        "How many players does Arsenal have in that position?",
        "that position",
        parent,
        schema,
        "players.position",
    )
    assert by_other_column is None  # a team's name does not say which position
    replaced = settled_by_question.reference_determined(
        "How many players does that team have?", "that team", parent, schema, "teams.name"
    )
    assert replaced is None
    other_table = settled_by_question.reference_determined(
        "How many players does Arsenal have for that stadium?", "that stadium", parent, schema
    )
    assert other_table is None


def test_a_key_that_picks_one_row_determines_the_row_it_points_to(demo_dir):
    from answerable.builders.schema import DatabaseSchema

    schema = DatabaseSchema.from_sqlite(demo_dir / "clinic.sqlite", "clinic")
    parent = {
        "question": "Which drug and route does prescription 300954 have?",
        "sql": "SELECT drug, route FROM prescriptions WHERE prescription_id = 300954",
    }
    draft = "Which drug and route does prescription 300954 have in that admission?"
    found = settled_by_question.reference_determined(
        draft, "that admission", parent, schema, "admissions"
    )
    assert found == "300954"  # a prescription belongs to one admission
    admission = {
        "question": "Which drugs were given in admission 120431?",
        "sql": "SELECT drug FROM prescriptions WHERE hadm_id = 120431",
    }
    draft = "Which drugs were given in admission 120431 by that route?"
    concept = "prescriptions.route"
    route = settled_by_question.reference_determined(
        draft, "that route", admission, schema, concept
    )
    assert route is None  # an admission has many prescriptions: the route stays open


@needs_wordnet
@pytest.mark.parametrize(
    ("question", "table", "column", "candidates", "reason"),
    [
        # a blinded reading found 0 of 21 first/last splits of a person's name genuinely
        # ambiguous: the natural answer is the full name
        (
            "What are the names of conductors?",
            "conductor",
            "Name",
            ["FirstName", "LastName"],
            "parts-of-name",
        ),
        (
            "Show the ID of the high schooler named Jordan.",
            "Highschooler",
            "name",
            ["first_name", "last_name"],
            "parts-of-name",
        ),
        (
            "What are the names of the players of each team?",
            "players",
            "name",
            ["first_name", "last_name"],
            "parts-of-name",
        ),
        # birth/residence country is right for a singer, wrong for a car maker
        (
            "What is the country of each car maker?",
            "car_makers",
            "Country",
            ["Birth_Country", "Residence_Country"],
            "not-born",
        ),
    ],
)
def test_the_gate_rejects_the_wrong_labels_a_blinded_reading_found(
    question, table, column, candidates, reason
):
    verdict = judge_columns(question, column, table, column, candidates)
    assert not verdict.ok and verdict.reason == reason, verdict
