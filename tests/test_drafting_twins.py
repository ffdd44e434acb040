"""Answerable twins of the offline drafter's devices: the same device, an answerable
question, gold SQL built from the parent's tree and executed."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.drafts import Job
from answerable.builders.drafting.offline import shared_parent_tree
from answerable.builders.drafting.per_category import draft_offline, make_twin
from answerable.builders.drafting.settled_by_question import vague_word_settled
from answerable.builders.executor import ReadOnlyDatabase
from answerable.kernel.ids import rng_for
from answerable.kernel.records import read_parquet
from tests.conftest import REPO
from tests.test_drafting_offline import contexts_of, parents_of

SEED = 13


@pytest.fixture(scope="module")
def demo_twins(demo_dir):
    """Every twin of every demo seed, with the result of its SQL on the demo database."""
    from answerable.kernel.records import read_jsonl

    paths = {db: demo_dir / f"{db}.sqlite" for db in ("clinic", "league")}
    contexts = contexts_of(paths)
    pairs = [p for db in paths for p in read_jsonl(REPO / f"raw/demo/seeds/{db}.jsonl")]
    parents = parents_of(pairs, {db: c.schema for db, c in contexts.items()})
    made = []
    for parent in parents:
        with ReadOnlyDatabase(paths[parent["db_id"]]) as database:
            parent = {**parent, "result": database.execute(parent["sql"]).to_record()}
            for category in (name for name, c in CATEGORIES.items() if c.twin):
                job = Job(parent, category, 0)
                twin = make_twin(job, contexts[job.db_id], rng_for(SEED, "twin", job.key), database)
                if twin is not None:
                    made.append((twin, database.execute(twin.sql)))
    return made


def test_every_device_has_twins_whose_sql_runs_and_mostly_returns_rows(demo_twins):
    devices = Counter(twin.device.split("_task_")[0] for twin, _ in demo_twins)
    assert set(devices) >= {
        "aggregate_question",
        "short_question",
        "resolved_reference",
        "present_column",
        "settled_vague_word",
        "sql",
    }, devices
    non_empty = sum(result.row_count > 0 for _, result in demo_twins)
    assert non_empty / len(demo_twins) >= 0.8  # the stage rejects the others


def test_twins_are_the_same_for_the_same_seed(demo_dir, demo_twins):
    first = [(t.question, t.sql) for t, _ in demo_twins]
    twins = [t for t, _ in demo_twins]
    paths = {db: demo_dir / f"{db}.sqlite" for db in ("clinic", "league")}
    contexts = contexts_of(paths)
    again = []
    for twin in twins:
        job = twin.job
        with ReadOnlyDatabase(paths[job.db_id]) as database:
            made = make_twin(job, contexts[job.db_id], rng_for(SEED, "twin", job.key), database)
        again.append((made.question, made.sql))
    assert again == first


def test_rules_and_twins_leave_the_parents_shared_tree_as_parsed(demo_dir):
    """Every rule and twin of a parent reads one shared parse of its SQL: none of them
    may change it (a twin that edits the tree takes a copy of its own)."""
    from answerable.kernel.records import read_jsonl

    paths = {db: demo_dir / f"{db}.sqlite" for db in ("clinic", "league")}
    contexts = contexts_of(paths)
    pairs = [p for db in paths for p in read_jsonl(REPO / f"raw/demo/seeds/{db}.jsonl")]
    parents = parents_of(pairs, {db: c.schema for db, c in contexts.items()})
    assert parents
    for parent in parents:
        with ReadOnlyDatabase(paths[parent["db_id"]]) as database:
            parent = {**parent, "result": database.execute(parent["sql"]).to_record()}
            for category in CATEGORIES:
                job = Job(parent, category, 0)
                rng = rng_for(SEED, "twin", job.key)
                draft_offline(job, contexts[job.db_id], rng)
                make_twin(job, contexts[job.db_id], rng, database)
                shared = shared_parent_tree(job)
                assert shared.parent is None, (category, parent["sql"])  # in no other tree
                assert shared.sql() == sqlkit.parse(parent["sql"]).sql(), category


def test_a_settled_vague_word_carries_its_bound_in_the_question_and_the_sql(demo_twins):
    settled = [t for t, r in demo_twins if t.device == "settled_vague_word" and r.row_count]
    assert settled
    for twin in settled:
        assert vague_word_settled(twin.question, twin.trigger) is not None, twin.question
        parent = sqlkit.parse(twin.job.parent["sql"])
        tree = sqlkit.parse(twin.sql)
        assert len(list(tree.find_all(exp.Predicate))) > len(list(parent.find_all(exp.Predicate)))


def test_a_resolved_reference_names_its_referent_and_keeps_the_parents_sql(demo_twins):
    resolved = [t for t, _ in demo_twins if t.device == "resolved_reference"]
    assert resolved
    for twin in resolved:
        assert " that " in f" {twin.question.lower()}"
        assert sqlkit.parse(twin.sql) == sqlkit.parse(twin.job.parent["sql"])


def test_present_column_asks_for_a_column_that_exists_and_selects_it(demo_twins):
    present = [t for t, _ in demo_twins if t.device == "present_column"]
    assert present
    for twin in present:
        tree = sqlkit.parse(twin.sql)
        assert tree != sqlkit.parse(twin.job.parent["sql"])
        if twin.trigger == "with their":
            parent = sqlkit.parse(twin.job.parent["sql"])
            assert len(tree.expressions) == len(parent.expressions) + 1
            assert twin.question.endswith("?") and ", with their " in twin.question
        if twin.trigger == "and what":  # one row: the attribute asked of it, selected
            parent = sqlkit.parse(twin.job.parent["sql"])
            assert len(tree.expressions) == len(parent.expressions) + 1
            assert ", and what " in twin.question


def test_examples_of_each_twin():
    """The devices on hand-written parents over one small database."""
    import sqlite3
    import tempfile
    from pathlib import Path

    from answerable.builders.drafting import twins
    from answerable.builders.drafting.context import load_context
    from answerable.builders.schema import DatabaseSchema

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "league.sqlite"
        with sqlite3.connect(path) as db:
            db.execute(
                "CREATE TABLE matches (match_id INTEGER PRIMARY KEY, team TEXT, "
                "match_date TEXT, attendance INTEGER, referee TEXT)"
            )
            db.executemany(
                "INSERT INTO matches VALUES (?, ?, ?, ?, ?)",
                [
                    (
                        i,
                        ["Arsenal", "Leeds"][i % 2],
                        f"2022-0{1 + i % 9}-1{i % 10}",
                        1000 * i,
                        "Ann",
                    )
                    for i in range(1, 10)
                ],
            )
        schema = DatabaseSchema.from_sqlite(path, "league")
        with ReadOnlyDatabase(path) as database:
            context = load_context("league", schema, database)
            average = "What was the average attendance of matches played by Arsenal?"
            avg_sql = "SELECT AVG(attendance) FROM matches WHERE team = 'Arsenal'"
            listing = "Which matches did Arsenal play?"
            list_sql = "SELECT match_id, match_date FROM matches WHERE team = 'Arsenal'"
            parents = parents_of(
                [
                    {"db_id": "league", "question": average, "sql": avg_sql},
                    {"db_id": "league", "question": listing, "sql": list_sql},
                ],
                {"league": schema},
            )
            for parent in parents:
                parent["result"] = database.execute(parent["sql"]).to_record()

            def parent_tree_of(index):
                return twins.parent_select(Job(parents[index], "out-of-scope", 0))

            def rng(seed):
                return rng_for(SEED, "device", str(seed))

            def twin(parent, category):
                job = Job(parent, category, 0)
                return make_twin(job, context, rng_for(SEED, "twin", job.key), database)

            def device(rule, parent, category, *args):
                job = Job(parent, category, 0)
                return rule(job, *args)

            rounded = device(twins.rounded_average, parents[0], "out-of-scope", parent_tree_of(0))
            assert rounded.question == f"{average} Round it to two decimals."
            assert "ROUND(AVG(attendance), 2)" in rounded.sql
            reference = twin(parents[0], "ambiguous-reference")
            assert reference.question == (
                "What was the average attendance of matches played by that team, Arsenal?"
            )
            assert sqlkit.parse(reference.sql) == sqlkit.parse(avg_sql)
            vague = twin(parents[1], "vague-word")
            assert vague_word_settled(vague.question, vague.trigger)
            assert " BETWEEN " in vague.sql or " >= " in vague.sql
            assert database.execute(vague.sql).row_count > 0
            # the attribute with the one row its value picks: no match is one team's only
            assert (
                twins.attribute_question(
                    Job(parents[1], "vague-question", 0), context, rng(2), database
                )
                is None
            )
            # attendance is the table's only number: a whole-table MAX(attendance) leaves
            # a wrong candidate nothing to change, so no aggregate twin is made of it
            highest = device(
                twins.aggregate_question, parents[0], "vague-question", context, rng(0), None
            )
            assert highest is None
            # a short question that leaves nothing open: the rows holding the parent's value
            short = device(
                twins.short_question, parents[1], "vague-question", context, rng(0), None
            )
            assert short.question in {
                "How many matches with team Arsenal?",
                "Number of matches with team Arsenal, please.",
                "What about the number of matches with team Arsenal?",
            }
            assert database.execute(short.sql).rows == [[4]]
            # the whole result: counted (a listing), or shown as a table (the parent's SQL)
            counted = device(
                twins.whole_result, parents[1], "out-of-scope", parent_tree_of(1), rng(4)
            )
            shown = device(
                twins.whole_result, parents[0], "out-of-scope", parent_tree_of(0), rng(1)
            )
            assert shown.device == "sql_task_table" and shown.sql == avg_sql  # one row: a table
            assert counted.device == "sql_task_count"
            assert counted.question.endswith(("Then count them.", "there are."))
            assert database.execute(counted.sql).rows == [[4]]
            asked = twin(parents[1], "missing-column")
            assert asked.question.startswith("Which matches did Arsenal play, with their ")
            assert len(sqlkit.parse(asked.sql).expressions) == 3
            assert twin(parents[0], "out-of-domain") is None


def test_the_demo_build_ships_verified_twins(demo_build):
    cwd, _ = demo_build
    items = read_parquet(cwd / ".answerable" / "answerable-demo" / "candidates.parquet")
    twins = [i for i in items if i["provenance"]["generator"] == "offline_twin_v1"]
    assert len(twins) >= 50
    for item in twins:
        assert item["label"] == "answerable" and item["category"] is None
        assert item["result"]["row_count"] > 0
        assert item["provenance"]["params"]["verified_by"] == "execution"
        assert item["provenance"]["params"]["twin"] in {
            "attribute_question",
            "aggregate_question",
            "appended_reference",
            "resolved_reference",
            "present_column",
            "settled_vague_word",
            "sql_task_sort",
            "sql_task_rank",
            "sql_task_group",
            "sql_task_round",
            "sql_task_table",
            "sql_task_count",
            "short_question",
        }
        assert item["provenance"]["parent"] == item["provenance"]["params"]["anchor"]


def test_a_resolved_reference_to_a_kind_says_the_kind():
    from answerable.builders.drafting.twins import _kind_noun

    assert _kind_noun("admissions.admission_type", "admission") == "admission type"
    assert _kind_noun("state.state_name", "state") == "state"
    assert _kind_noun("teams.city", "city") == "city"


def test_a_resolved_reference_to_a_date_says_date_as_the_draft_does():
    from answerable.builders.drafting.twins import _kind_noun

    # the draft says "since that date": its twin "since that date, 2018-07-06"
    assert _kind_noun("admissions.admit_time", "date") == "date"
    assert _kind_noun("matches.match_date", "date") == "date"


def geography(folder):
    """A GeoQuery-like database: states (one row each), cities (springfield twice) and
    rivers whose ``traverse`` column holds the states they run through."""
    import sqlite3

    path = folder / "geo.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE state (state_name TEXT, population INTEGER, area REAL)")
        db.execute("CREATE TABLE city (city_name TEXT, population INTEGER, state_name TEXT)")
        db.execute("CREATE TABLE river (river_name TEXT, length INTEGER, traverse TEXT)")
        db.executemany(
            "INSERT INTO state VALUES (?, ?, ?)",
            [("texas", 14229000, 691030.0), ("ohio", 10798000, 106765.0), ("iowa", 2913000, 1.0)],
        )
        db.executemany(
            "INSERT INTO city VALUES (?, ?, ?)",
            [
                ("springfield", 150000, "ohio"),
                ("springfield", 99637, "illinois"),
                ("austin", 345496, "texas"),
            ],
        )
        db.executemany(
            "INSERT INTO river VALUES (?, ?, ?)",
            [("red", 1951, "texas"), ("ohio", 1569, "ohio"), ("rio grande", 3033, "texas")],
        )
    return path


def test_a_short_twin_names_the_row_a_vague_question_leaves_open(tmp_path):
    """The vague question says the attribute ("Population?"); its twin says it with the
    value that picks one row ("Texas population?"), and no twin when the value picks
    several (two cities are springfield)."""
    from answerable.builders.drafting import twins
    from answerable.builders.drafting.categories import vague_question

    path = geography(tmp_path)
    contexts, (texas, springfield) = asked_of(
        path,
        {
            "what is the population of texas": "SELECT population FROM state "
            "WHERE state_name = 'texas'",
            "how many people live in springfield": "SELECT population FROM city "
            "WHERE city_name = 'springfield'",
        },
    )
    with ReadOnlyDatabase(path) as database:
        for seed in range(6):
            rng = rng_for(SEED, "twin", str(seed))
            twin = twins.attribute_question(
                Job(texas, "vague-question", 0), contexts["geo"], rng, database
            )
            assert twin.question in {
                "Texas population?",
                "Texas population, please.",
                "What about the texas population?",
            }
            assert database.execute(twin.sql).rows == [[14229000]]
        job = Job(springfield, "vague-question", 0)
        assert twins.attribute_question(job, contexts["geo"], rng_for(SEED, "x"), database) is None
        counted = twins.short_question(job, contexts["geo"], rng_for(SEED, "x"), database)
        assert "cities with city name springfield" in counted.question  # not "city with"
        assert database.execute(counted.sql).rows == [[2]]
        draft = vague_question.cut_to_keyword(Job(texas, "vague-question", 0), contexts["geo"], rng)
        assert draft.trigger == "population"


def test_no_reference_calls_a_value_by_a_column_that_is_no_noun(tmp_path):
    """ "what rivers run through that traverse": ``traverse`` is a verb, so a value of it
    is not replaced by "that traverse" in a draft nor named so in a twin."""
    from answerable.builders.drafting import offline
    from answerable.builders.drafting.categories import ambiguous_reference
    from answerable.builders.lexical import wordnet

    if not wordnet.available():
        pytest.skip(str(wordnet.missing()))
    path = geography(tmp_path)
    asked = {
        "what rivers run through texas": "SELECT river_name FROM river WHERE traverse = 'texas'"
    }
    contexts, (parent,) = asked_of(path, asked)
    assert offline.reference_noun("river.traverse", contexts["geo"]) is None
    assert offline.reference_noun("state.state_name", contexts["geo"]) == "state"
    with ReadOnlyDatabase(path) as database:
        for seed in range(4):
            job = Job(parent, "ambiguous-reference", seed)
            draft = ambiguous_reference.replace_with_reference(
                job, contexts["geo"], rng_for(SEED, str(seed))
            )
            assert draft is None or "traverse" not in draft.question
            twin = make_twin(job, contexts["geo"], rng_for(SEED, str(seed)), database)
            assert twin is None or "traverse" not in twin.question


def test_a_twin_that_asks_what_an_earlier_twin_asks_is_a_repeat():
    """One parent gave both "How many lab events with flag abnormal?" and "What about
    the number of lab events with flag abnormal?" (the same SQL): the second is a
    reject, whatever its words; checking the first again finds no repeat."""
    from answerable.builders.drafting.twins import TwinQueries

    sql = 'SELECT COUNT(*) FROM "labevents" WHERE "labevents"."flag" = \'abnormal\''
    first = {"id": "a", "db_id": "clinic", "sql": sql}
    second = {"id": "b", "db_id": "clinic", "sql": sql.replace(" FROM", "\nFROM")}
    elsewhere = {"id": "c", "db_id": "other", "sql": sql}
    seen = TwinQueries()
    assert seen.check(first) is None
    assert seen.check(second) == ("repeated-twin", "same SQL as twin a")
    assert seen.check(elsewhere) is None
    assert seen.check(first) is None


def test_an_appended_reference_has_its_referent_beside_it(tmp_path):
    """The draft appends "for that team?" to the parent; the twin says which team, and
    its SQL joins the parent's table to the team's on their foreign key."""
    import sqlite3

    from answerable.builders.drafting import twins
    from answerable.builders.drafting.categories import ambiguous_reference

    path = tmp_path / "club.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE teams (team_id INTEGER PRIMARY KEY, team_name TEXT)")
        db.execute(
            "CREATE TABLE players (player_id INTEGER PRIMARY KEY, full_name TEXT, height "
            "INTEGER, team_id INTEGER REFERENCES teams(team_id))"
        )
        db.executemany("INSERT INTO teams VALUES (?, ?)", [(1, "Leeds"), (2, "Arsenal")])
        db.executemany(
            "INSERT INTO players VALUES (?, ?, ?, ?)",
            [(1, "Ann Lee", 190, 1), (2, "Bo Kim", 199, 2), (3, "Cy Tan", 201, 1)],
        )
    contexts = contexts_of({"club": path})
    question = "Which players are taller than 195 cm?"
    sql = "SELECT full_name FROM players WHERE height > 195"
    pairs = [{"db_id": "club", "question": question, "sql": sql}]
    (parent,) = parents_of(pairs, {"club": contexts["club"].schema})
    job = Job(parent, "ambiguous-reference", 0)
    draft = ambiguous_reference.replace_with_reference(job, contexts["club"], rng_for(SEED, "d"))
    assert draft.question == "Which players are taller than 195 cm for that team?"
    with ReadOnlyDatabase(path) as database:
        twin = ambiguous_reference.reference_twin(
            job, contexts["club"], rng_for(SEED, "t"), database
        )
        assert twin.device == "appended_reference"
        team = twin.question.removeprefix(draft.question[:-1] + ", ").rstrip("?")
        assert twin.question == f"Which players are taller than 195 cm for that team, {team}?"
        expected = {"Leeds": [["Cy Tan"]], "Arsenal": [["Bo Kim"]]}[team]
        assert database.execute(twin.sql).rows == expected
        # a question that names the team has its referent: "Which Leeds players ...
        # for that team?" is no draft, and its twin is not "... for that team, Leeds?"
        named = parents_of(
            [
                {
                    "db_id": "club",
                    "question": "Which Leeds players are taller than 195 cm?",
                    "sql": "SELECT p.full_name FROM players AS p JOIN teams AS t ON "
                    "p.team_id = t.team_id WHERE t.team_name = 'Leeds' AND p.height > 195",
                }
            ],
            {"club": contexts["club"].schema},
        )[0]
        job = Job(named, "ambiguous-reference", 0)
        draft = ambiguous_reference.replace_with_reference(
            job, contexts["club"], rng_for(SEED, "d")
        )
        assert draft is None or not draft.question.endswith("for that team?")
        assert twins.appended_reference(job, contexts["club"], rng_for(SEED, "t"), database) is None


def test_no_vague_word_before_a_figure_asked_of_named_rows_or_after_a_superlative(tmp_path):
    """ "what is the high population of austin" and "what state has the largest high
    population" leave nothing open: no vague-word draft, and no twin settling it."""
    from answerable.builders.drafting.categories import vague_word

    asked = {
        "what is the population of austin": "SELECT population FROM city "
        "WHERE city_name = 'austin'",
        "what state has the largest population": "SELECT state_name FROM state "
        "ORDER BY population DESC LIMIT 1",
    }
    neither_draft_nor_twin(geography(tmp_path), "vague-word", vague_word.insert_vague_word, asked)


def test_a_size_word_qualifies_the_rows_a_question_lists_and_never_a_named_one(tmp_path):
    """ "what river runs through texas" becomes "what large river ..." or "what small
    river ...": how large is not said. Not when the rows are named ("the ohio river",
    "a city named austin") or ranked ("the longest river"), and not for one row."""
    from answerable.builders.drafting.categories import vague_word

    asked = {
        "what river runs through texas": "SELECT river_name FROM river WHERE traverse = 'texas'",
        "what states does the ohio river run through": "SELECT traverse FROM river "
        "WHERE river_name = 'ohio'",
        "what states have a city named austin": "SELECT state_name FROM city "
        "WHERE city_name = 'austin'",
        "what is the longest river in texas": "SELECT river_name FROM river "
        "WHERE traverse = 'texas' ORDER BY length DESC LIMIT 1",
    }
    contexts, parents = asked_of(geography(tmp_path), asked)
    for seed in range(4):
        drafts = [
            vague_word.insert_vague_word(
                Job(p, "vague-word", seed), contexts["geo"], rng_for(SEED, str(seed))
            )
            for p in parents
        ]
        assert drafts[0].question in (
            "what large river runs through texas",
            "what small river runs through texas",
        )
        assert drafts[0].trigger in ("large", "small")
        assert drafts[1:] == [None, None, None]


def asked_of(path, asked: dict) -> tuple[dict, list[dict]]:
    """The drafting contexts of the database at ``path`` (its id: the file's stem) and
    the parents of ``asked`` (question -> SQL) over it."""
    db_id = path.stem
    contexts = contexts_of({db_id: path})
    pairs = [{"db_id": db_id, "question": q, "sql": sql} for q, sql in asked.items()]
    return contexts, parents_of(pairs, {db_id: contexts[db_id].schema})


def neither_draft_nor_twin(path, category, rule, asked: dict) -> None:
    """Each question (-> its SQL) of ``asked`` over the database at ``path`` gets no
    draft of ``category`` from ``rule`` and no twin."""
    db_id = path.stem
    contexts, parents = asked_of(path, asked)
    with ReadOnlyDatabase(path) as database:
        for parent in parents:
            job = Job(parent, category, 0)
            draft = rule(job, contexts[db_id], rng_for(SEED, "d"))
            assert draft is None, draft.question
            assert make_twin(job, contexts[db_id], rng_for(SEED, "t"), database) is None


def test_references_need_a_noun_a_whole_value_and_an_owner(tmp_path):
    """ "had that long as their principal diagnosis" (``long_title``), "a name ending in
    that team" (a LIKE pattern's part) and "stadiums ... for that match" (a stadium has
    many matches) are no references a reader could resolve."""
    import sqlite3

    from answerable.builders.drafting import offline
    from answerable.builders.drafting.categories import ambiguous_reference
    from answerable.builders.lexical import wordnet

    if not wordnet.available():
        pytest.skip(str(wordnet.missing()))
    assert offline._never_a_noun("long") and not offline._never_a_noun("state")
    path = tmp_path / "league.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE stadiums (stadium_id INTEGER PRIMARY KEY, capacity INTEGER)")
        db.execute(
            "CREATE TABLE matches (match_id INTEGER PRIMARY KEY, "
            "stadium_id INTEGER REFERENCES stadiums(stadium_id))"
        )
        db.execute("CREATE TABLE teams (team_id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("CREATE TABLE diagnoses (icd_code TEXT, long_title TEXT)")
        db.executemany("INSERT INTO teams VALUES (?, ?)", [(1, "Leeds United"), (2, "Arsenal")])
        db.executemany("INSERT INTO stadiums VALUES (?, ?)", [(1, 30000), (2, 50000)])
        db.executemany("INSERT INTO matches VALUES (?, ?)", [(1, 1), (2, 2)])
    context = contexts_of({"league": path})["league"]
    assert offline.reference_noun("diagnoses.long_title", context) == "diagnosis"
    asked = {
        "Which teams have a name ending in United?": "SELECT name FROM teams "
        "WHERE name LIKE '%United'",
        "What are the capacities of the two largest stadiums?": "SELECT capacity FROM "
        "stadiums ORDER BY capacity DESC LIMIT 2",
    }
    neither_draft_nor_twin(
        path, "ambiguous-reference", ambiguous_reference.replace_with_reference, asked
    )


def test_a_greeting_around_a_real_question_is_its_answerable_twin(tmp_path):
    """Small talk is conversation that asks for no data; "Good morning! What rivers run
    through texas?" asks for the parent's data, in small talk's own greetings and
    thanks, so the greeting alone does not tell the label. The gold SQL is the parent's."""
    from answerable.builders.drafting import lexicon
    from answerable.builders.drafting.categories import small_talk
    from answerable.builders.drafting.text import words

    path = geography(tmp_path)
    sql = "SELECT river_name FROM river WHERE traverse = 'texas'"
    contexts, (parent,) = asked_of(path, {"what rivers run through texas": sql})
    chat_words = {w for _topic, text in lexicon.SMALL_TALK for w in words(text)}
    seen = set()
    with ReadOnlyDatabase(path) as database:
        for seed in range(30):
            rng = rng_for(SEED, "twin", str(seed))
            twin = small_talk.courtesy_question(
                Job(parent, "small-talk", 0), contexts["geo"], rng, database
            )
            assert "What rivers run through texas?" in twin.question
            assert twin.sql == parent["sql"] and database.execute(twin.sql).row_count == 2
            assert set(words(twin.trigger)) - {"first", "name"} <= chat_words, twin.trigger
            seen.add(twin.trigger)
    assert len(seen) >= 4


def test_a_present_column_twin_follows_a_question_without_a_question_mark(tmp_path):
    """GeoQuery's questions end in no "?" ("what rivers run through texas"), and the
    drafter appends its absent attribute to them ("..., with their gdp?"); the twin
    appends a column the table has, selected in the SQL."""
    from answerable.builders.drafting.categories import missing_column

    path = geography(tmp_path)
    sql = "SELECT river_name FROM river WHERE traverse = 'texas'"
    contexts, (parent,) = asked_of(path, {"what rivers run through texas": sql})
    with ReadOnlyDatabase(path) as database:
        job = Job(parent, "missing-column", 0)
        twin = missing_column.present_column(job, contexts["geo"], rng_for(SEED, "t"), database)
        assert twin.question == "what rivers run through texas, with their length?"
        assert sorted(database.execute(twin.sql).rows) == [["red", 1951], ["rio grande", 3033]]


def pharmacy(folder):
    """Prescriptions of two drugs by two routes."""
    import sqlite3

    path = folder / "pharmacy.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE prescriptions (prescription_id INTEGER PRIMARY KEY, drug TEXT, "
            "dose_value REAL, route TEXT, start_date TEXT)"
        )
        db.executemany(
            "INSERT INTO prescriptions VALUES (?, ?, ?, ?, ?)",
            [
                (i, ["Heparin", "Insulin"][i % 2], i, ["IV", "SC"][i % 3 // 2], f"2020-01-{10 + i}")
                for i in range(9)
            ],
        )
    return path


def test_no_absent_attribute_is_asked_of_groups_of_a_value(tmp_path):
    """ "On average, how much Enoxaparin was prescribed per order via SC ..., with their
    prescribing doctor?" (grouped by dose unit) and "the mean Potassium per ethnicity
    ..., with their body weight?": a group of a value has no attribute to add."""
    from answerable.builders.drafting.categories.missing_column import ask_missing_column

    sql = "SELECT AVG(dose_value), route FROM prescriptions WHERE drug = 'Heparin' GROUP BY route"
    asked = {"On average, how much Heparin was prescribed per order?": sql}
    neither_draft_nor_twin(pharmacy(tmp_path), "missing-column", ask_missing_column, asked)


def test_no_absent_attribute_replaces_the_kind_of_a_referent(tmp_path):
    """ "had a dose above that cost's average dose": "drug" after "that" names the kind
    of the drug the question names, not an attribute asked for, so no missing-column
    draft swaps it, and no twin."""

    from answerable.builders.drafting.categories.missing_column import ask_missing_column

    path = pharmacy(tmp_path)
    sql = (
        "SELECT prescription_id FROM prescriptions WHERE drug = 'Heparin' AND dose_value > "
        "(SELECT AVG(dose_value) FROM prescriptions WHERE drug = 'Heparin')"
    )
    asked = {"Which Heparin orders were above that drug's average dose?": sql}
    neither_draft_nor_twin(path, "missing-column", ask_missing_column, asked)


def one_table_club(folder, create: str, rows: list[tuple]):
    """``club.sqlite`` in ``folder`` with the one table ``create`` makes, holding ``rows``."""
    import sqlite3

    path = folder / "club.sqlite"
    table = create.split()[2]
    with sqlite3.connect(path) as db:
        db.execute(create)
        marks = ", ".join("?" * len(rows[0]))
        db.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    return path


def test_no_amount_word_before_a_flag_the_question_says_as_a_verb(tmp_path):
    """An appearance's first figure is ``started`` (0 or 1), no amount: "Who high started
    for East Jodieshire Town in match 618?" is no sentence, so no vague-word draft."""
    from answerable.builders.drafting.categories import vague_word
    from answerable.builders.lexical import wordnet

    if not wordnet.available():
        pytest.skip("WordNet is not installed (apt-get install wordnet-base)")
    path = one_table_club(
        tmp_path,
        "CREATE TABLE appearances (match_id INTEGER, player_name TEXT, team_name TEXT, "
        "started INTEGER, minutes_played INTEGER)",
        [(618, "Ann Lee", "East Jodieshire Town", 1, 90), (618, "Bo Kim", "Lisatown", 0, 12)],
    )
    asked = {
        "Who started for East Jodieshire Town in match 618?": "SELECT player_name FROM "
        "appearances WHERE team_name = 'East Jodieshire Town' AND match_id = 618 AND started = 1"
    }
    neither_draft_nor_twin(path, "vague-word", vague_word.insert_vague_word, asked)


class FirstChoice:
    """An rng whose choice is always the first: the word a seeded draw could give."""

    def choice(self, options):
        return options[0]


def test_a_vague_word_twin_takes_another_word_of_its_kind_when_the_first_meets_no_row(tmp_path):
    """ "young players (born after 1980-...)" of players born before 1960 counts none; the
    twin then says "elderly" with its bound, which the question settles and rows meet."""
    from answerable.builders.drafting.categories import vague_word

    born = ["1950-03-01", "1955-06-01", "1980-01-01", "1985-01-01", "1990-01-01"]
    path = one_table_club(
        tmp_path,
        "CREATE TABLE players (player_name TEXT, birth_date TEXT)",
        [(f"p{i}", d) for i, d in enumerate(born)],
    )
    asked = {
        "How many players born before 1960-01-01 are there?": "SELECT COUNT(*) FROM players "
        "WHERE birth_date < '1960-01-01'"
    }
    contexts, parents = asked_of(path, asked)
    with ReadOnlyDatabase(path) as database:
        job = Job(parents[0], "vague-word", 0)
        twin = vague_word.settled_vague_word(job, contexts["club"], FirstChoice(), database)
        assert twin is not None and twin.trigger == "elderly", twin
        assert "elderly players (born before 1980-01-01)" in twin.question
        assert database.execute(twin.sql).rows == [[2]]


def test_no_vague_word_describes_the_one_row_a_question_picks_by_its_conditions(tmp_path):
    """ "Who was the elderly coach of Lisatown Olympic on 2022-07-08?" asks for the one
    coach then: the word restricts nothing, so no draft and no twin. The coaches a
    question lists still get one ("Which young coaches of Lisatown Olympic ...")."""
    from answerable.builders.drafting.categories import vague_word

    path = one_table_club(
        tmp_path,
        "CREATE TABLE coaches (name TEXT, team_name TEXT, birth_date TEXT, "
        "start_date TEXT, end_date TEXT)",
        [
            ("Ann Lee", "Lisatown Olympic", "1950-01-01", "2021-01-01", "2022-12-31"),
            ("Bo Kim", "Lisatown Olympic", "1980-01-01", "2023-01-01", "2024-12-31"),
            ("Cy Dunn", "Lisatown Olympic", "1990-01-01", "2019-01-01", "2020-12-31"),
        ],
    )
    one = {
        "Who was the coach of Lisatown Olympic on 2022-07-08?": "SELECT name FROM coaches "
        "WHERE team_name = 'Lisatown Olympic' AND start_date <= '2022-07-08' "
        "AND end_date >= '2022-07-08'"
    }
    neither_draft_nor_twin(path, "vague-word", vague_word.insert_vague_word, one)
    listed = {
        "Which coaches of Lisatown Olympic started after 2018-01-01?": "SELECT name FROM "
        "coaches WHERE team_name = 'Lisatown Olympic' AND start_date > '2018-01-01'"
    }
    contexts, parents = asked_of(path, listed)
    job = Job(parents[0], "vague-word", 0)
    draft = vague_word.insert_vague_word(job, contexts["club"], rng_for(SEED, "d"))
    assert draft is not None and draft.trigger in ("young", "elderly"), draft


def test_a_vague_question_about_a_date_has_its_earliest_or_latest_as_twin(tmp_path):
    """The vague question "Birth date?" says the date alone; its twin in the same frames
    asks the earliest or latest of it, with the table's noun when another table has a
    birth date too ("Earliest player birth date?"), its SQL a MIN or MAX of the column."""
    import sqlite3

    path = tmp_path / "club.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE players (player_name TEXT, birth_date TEXT, height_cm INTEGER)")
        db.execute("CREATE TABLE coaches (coach_name TEXT, birth_date TEXT)")
        db.executemany(
            "INSERT INTO players VALUES (?, ?, ?)",
            [("Ann", "1985-02-01", 170), ("Bo", "1992-05-06", 181), ("Cy", "1999-09-09", 175)],
        )
        db.execute("INSERT INTO coaches VALUES ('Di', '1960-01-01')")
    asked = {
        "How many players were born after 1990-01-01?": "SELECT COUNT(*) FROM players "
        "WHERE birth_date > '1990-01-01'"
    }
    from answerable.builders.drafting import twins

    contexts, parents = asked_of(path, asked)
    with ReadOnlyDatabase(path) as database:
        job = Job(parents[0], "vague-question", 0)
        twin = twins.aggregate_question(job, contexts["club"], rng_for(SEED, "t"), database)
        assert twin is not None
        word = twin.trigger
        assert word in ("earliest", "latest")
        assert f"{word} player birth date" in twin.question.lower(), twin.question
        expected = "1985-02-01" if word == "earliest" else "1999-09-09"
        assert database.execute(twin.sql).rows == [[expected]]


def test_a_short_twin_never_calls_a_value_by_a_column_that_is_no_noun(tmp_path):
    """ "Number of rivers with traverse texas, please." names the value by a verb
    (GeoQuery's ``river.traverse``): no short twin says it."""
    from answerable.builders.drafting import twins
    from answerable.builders.lexical import wordnet

    if not wordnet.available():
        pytest.skip("WordNet is not installed (apt-get install wordnet-base)")
    path = geography(tmp_path)
    asked = {
        "what rivers run through texas": "SELECT river_name FROM river WHERE traverse = 'texas'"
    }
    contexts, parents = asked_of(path, asked)
    with ReadOnlyDatabase(path) as database:
        for seed in range(4):
            job = Job(parents[0], "vague-question", seed)
            made = twins.short_question(job, contexts["geo"], rng_for(SEED, str(seed)), database)
            assert made is None or "traverse" not in made.question, made.question


@pytest.mark.parametrize("result", [{"row_count": 1}, None])
def test_one_value_or_unknown_rows_are_never_asked_as_a_list(result):
    """ "Find the number of patients who received aortography procedures. Show the
    result as a list.": a count is one value, and an EHRSQL parent (no data) has rows no
    one has seen; both are shown as a table, never "as a list"."""
    from answerable.builders.drafting import twins

    parent = {"id": "00000000c0ffee42", "db_id": "ehr", "question": "How many patients?"}
    parent["sql"] = "SELECT COUNT(DISTINCT patients.subject_id) FROM patients"
    if result is not None:
        parent["result"] = result
    select = sqlkit.parse(parent["sql"])
    asked = set()
    for seed in range(30):
        job = Job(parent, "out-of-scope", 0)
        twin = twins.whole_result(job, select, rng_for(seed, "twins", "t"))
        asked.add(twin.trigger)
    assert asked and not any("as a list" in request for request in asked), asked
    assert asked <= set(twins.RESULT_REQUESTS["table"])
