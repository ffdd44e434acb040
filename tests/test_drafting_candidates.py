"""Candidate SQL: perturbations on the sqlglot tree, SCARE error types, strata by execution."""

from __future__ import annotations

import functools
import json
import os
import random

import pytest

from answerable.builders import sqlkit
from answerable.builders.drafting import candidates as made_here
from answerable.builders.drafting.candidates import (
    PERTURBATIONS,
    candidate,
    drop_distinct,
    label,
    perturbed_candidates,
    wrong_column,
    wrong_group_by,
    wrong_join,
    wrong_limit,
    wrong_operator,
    wrong_table,
    wrong_value,
)
from answerable.builders.drafting.context import load_context
from answerable.builders.drafting.error_types import ERROR_TYPES
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.records import read_jsonl
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "fixtures" / "drafting" / "candidates_demo.jsonl"


@pytest.fixture(scope="module")
def league(demo_dir):
    path = demo_dir / "league.sqlite"
    database = ReadOnlyDatabase(path)
    yield load_context("league", DatabaseSchema.from_sqlite(path, "league"), database), database
    database.close()


def perturb(function, sql, context, seed=0):
    changed = function(sqlkit.parse(sql), context, random.Random(seed))
    return None if changed is None else changed.sql("sqlite")


def test_every_perturbation_has_a_scare_error_type():
    assert {error_type for error_type, _ in PERTURBATIONS.values()} == set(ERROR_TYPES)


def test_wrong_operator_flips_one_comparison_or_the_sort(league):
    context, _ = league
    assert perturb(wrong_operator, "SELECT name FROM players WHERE height_cm > 195", context) == (
        "SELECT name FROM players WHERE height_cm >= 195"
    )
    flipped = perturb(wrong_operator, "SELECT name FROM stadiums ORDER BY capacity DESC", context)
    assert "DESC" not in flipped and "ASC" in flipped
    assert perturb(wrong_operator, "SELECT name FROM stadiums", context) is None


def test_wrong_value_takes_another_value_of_the_column(league):
    context, _ = league
    sql = perturb(
        wrong_value, "SELECT COUNT(*) FROM players WHERE position = 'Goalkeeper'", context
    )
    value = sqlkit.references(sqlkit.parse(sql)).literals[0].value
    assert value != "Goalkeeper" and value in context.column_values("players", "position")
    assert perturb(wrong_value, "SELECT name FROM players WHERE height_cm > 195", context).endswith(
        "> 390"
    )
    like = perturb(wrong_value, "SELECT name FROM teams WHERE name LIKE '%United'", context)
    assert like.startswith("SELECT name FROM teams WHERE name LIKE '%") and "United" not in like


def test_wrong_column_and_table_and_grouping_and_join(league):
    context, _ = league
    assert perturb(wrong_column, "SELECT nationality FROM players", context) != (
        "SELECT nationality FROM players"
    )
    assert perturb(wrong_table, "SELECT DISTINCT nationality FROM players", context) == (
        "SELECT DISTINCT nationality FROM coaches"
    )
    grouped = "SELECT s.name, COUNT(*) FROM matches AS m JOIN seasons AS s ON m.season_id = "
    grouped += "s.season_id GROUP BY s.name"
    assert "GROUP BY s.name" not in perturb(wrong_group_by, grouped, context)
    assert "ON m.season_id = s.season_id" not in perturb(wrong_join, grouped, context)


def test_output_granularity(league):
    context, _ = league
    assert perturb(drop_distinct, "SELECT DISTINCT nationality FROM players", context) == (
        "SELECT nationality FROM players"
    )
    assert (
        perturb(drop_distinct, "SELECT COUNT(DISTINCT nationality) FROM players", context) is None
    )
    assert perturb(wrong_limit, "SELECT name FROM stadiums LIMIT 5", context).endswith("LIMIT 10")


def gold_item(database, sql):
    return {"label": "answerable", "db_variant": None, "result": database.execute(sql).to_record()}


def test_answerable_candidates_are_labelled_by_execution(league):
    context, database = league
    gold = "SELECT COUNT(*) FROM players WHERE position = 'Goalkeeper'"
    item = gold_item(database, gold)
    made = {
        c["edit"]: label(item, c, database)
        for c in perturbed_candidates(gold, context, random.Random(1), 9)
    }
    assert made["qualified_rewrite"]["stratum"] == "answerable-correct"
    assert made["wrong_operator"]["stratum"] == "answerable-incorrect"
    assert made["wrong_operator"]["error_type"] == "OL"
    assert made["qualified_rewrite"]["result_hash"] == item["result"]["hash"]
    broken = label(item, candidate("SELECT nope FROM players", "llm_sql_v1"), database)
    assert (broken["stratum"], broken["error"]) == ("answerable-incorrect", "unknown-column")
    missing = label(item, candidate(None, "llm_sql_v1", error="invalid-reply"), database)
    assert (missing["stratum"], missing["error"]) == ("answerable-incorrect", "invalid-reply")


def test_an_equivalent_perturbation_counts_as_correct(league):
    _context, database = league
    gold = "SELECT DISTINCT name FROM stadiums"  # names are unique: DISTINCT changes nothing
    found = label(
        gold_item(database, gold),
        candidate("SELECT name FROM stadiums", "perturb_sql_v1"),
        database,
    )
    assert found["stratum"] == "answerable-correct"


class Counted:
    """A database that counts the statements it runs."""

    def __init__(self, database):
        self.database, self.runs = database, []

    def execute(self, sql, **options):
        self.runs.append(sql)
        return self.database.execute(sql, **options)


def test_a_statement_runs_once_per_database(league, monkeypatch):
    _context, database = league
    item = gold_item(database, "SELECT name FROM stadiums")
    sqls = ["SELECT name FROM stadiums", "SELECT nope FROM stadiums", "SELECT city FROM stadiums"]
    expected = [label(item, candidate(sql, "llm_sql_v1"), database) for sql in sqls]
    two_kept = functools.lru_cache(maxsize=2)(made_here._run.__wrapped__)
    monkeypatch.setattr(made_here, "_run", two_kept)
    counted, other = Counted(database), Counted(database)
    for sql, wanted in zip(sqls + sqls[::-1], expected + expected[::-1], strict=True):
        assert label(item, candidate(sql, "llm_sql_v1"), counted) == wanted
    # the third statement pushed the first out (two kept): it runs again, the others not
    assert counted.runs == [*sqls, sqls[0]]
    assert label(item, candidate(sqls[2], "llm_sql_v1"), other) == expected[2]
    assert other.runs == [sqls[2]]  # another database runs it for itself
    assert expected[1]["error"] == "unknown-column" and expected[2]["result_hash"]


def test_problematic_and_unverifiable_items(league):
    _context, database = league
    sql = candidate("SELECT COUNT(*) FROM players", "perturb_sql_v1", edit="parent_sql")
    for name in ("ambiguous", "unanswerable"):
        assert label({"label": name}, sql, database)["stratum"] == name
    schema_only = {"label": "answerable", "db_variant": None, "result": None}
    assert label(schema_only, sql, None)["stratum"] is None


def test_candidates_of_the_demo_seeds_match_the_golden_file(league, demo_dir):
    """Regenerate with ANSWERABLE_UPDATE_GOLDEN=1 after a deliberate change."""
    lines = []
    for db_id in ("clinic", "league"):
        path = demo_dir / f"{db_id}.sqlite"
        with ReadOnlyDatabase(path) as database:
            context = load_context(db_id, DatabaseSchema.from_sqlite(path, db_id), database)
            for pair in read_jsonl(REPO / f"raw/demo/seeds/{db_id}.jsonl"):
                item = gold_item(database, pair["sql"])
                for found in perturbed_candidates(
                    pair["sql"], context, random.Random(pair["question"]), 3
                ):
                    found = label(item, found, database)
                    lines.append(
                        json.dumps(
                            {k: found[k] for k in ("edit", "error_type", "stratum", "sql")}
                            | {"gold": pair["sql"]},
                            sort_keys=True,
                        )
                    )
    if os.environ.get("ANSWERABLE_UPDATE_GOLDEN"):
        GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert lines == GOLDEN.read_text(encoding="utf-8").splitlines()
    strata = {json.loads(line)["stratum"] for line in lines}
    assert strata == {"answerable-correct", "answerable-incorrect"}
