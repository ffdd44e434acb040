"""SCARE's error types from the tree diff: one pair per type, model candidates typed in
labelling, and the perturbations typed as the error they imitate."""

from __future__ import annotations

import random

import pytest

from answerable.builders import sqlkit
from answerable.builders.drafting.candidates import PERTURBATIONS, candidate, label
from answerable.builders.drafting.context import load_context
from answerable.builders.drafting.error_types import ERROR_TYPES, error_type
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.records import read_jsonl
from tests.conftest import REPO

GOLD = (
    "SELECT t.name, COUNT(*) FROM players AS p JOIN teams AS t ON p.team_id = t.team_id "
    "WHERE p.position = 'Forward' AND p.height_cm > 180 GROUP BY t.name"
)


@pytest.mark.parametrize(
    ("candidate_sql", "expected"),
    [
        # T/C: a wrong column in the select list, or a wrong table in FROM
        (GOLD.replace("SELECT t.name", "SELECT t.city"), "T/C"),
        (GOLD.replace("p.position =", "p.nationality ="), "T/C"),
        ("SELECT name FROM coaches", "T/C"),  # against SELECT name FROM teams (below)
        # J/G: the join condition or the grouping
        (GOLD.replace("p.team_id = t.team_id", "p.player_id = t.team_id"), "J/G"),
        (GOLD.replace("GROUP BY t.name", "GROUP BY t.city"), "J/G"),
        # PV: a value in a condition
        (GOLD.replace("'Forward'", "'Goalkeeper'"), "PV"),
        (GOLD.replace("> 180", "> 190"), "PV"),
        # OL: one local change of another kind (operator, function, DISTINCT)
        (GOLD.replace("> 180", ">= 180"), "OL"),
        (GOLD.replace("COUNT(*)", "SUM(p.height_cm)"), "OL"),
        (GOLD.replace("SELECT t.name", "SELECT DISTINCT t.name"), "OL"),
        # OG: the logic as a whole (a clause gone, a subquery instead)
        (GOLD.split(" WHERE ")[0] + " GROUP BY t.name", "OG"),
        ("SELECT name FROM teams WHERE team_id IN (SELECT team_id FROM players)", "OG"),
    ],
)
def test_each_error_type_from_the_diff(candidate_sql, expected):
    gold = "SELECT name FROM teams" if candidate_sql.startswith("SELECT name") else GOLD
    assert error_type(gold, candidate_sql) == expected


def test_same_tree_or_unparsable_sql_has_no_type():
    assert error_type(GOLD, GOLD) is None
    assert error_type(GOLD, "SELECT FROM WHERE (") is None
    assert set(ERROR_TYPES) == {"T/C", "J/G", "PV", "OL", "OG"}
    assert ERROR_TYPES["OL"] == "other local error" and ERROR_TYPES["OG"] == "other global error"


def test_the_values_steer_the_type_so_no_cache_by_shape():
    """Two pairs of one shape (the same edit, the same values equal) get different types:
    the diff matches clauses by the likeness of their SQL text, values included, and a
    long value makes the changed WHERE unlike its gold. So the type cannot be kept per
    shape of pair (issue 14): a shape seen first with one value would type the others."""
    both = "SELECT drug FROM prescriptions WHERE route = '{}' INTERSECT " + (
        "SELECT drug FROM prescriptions WHERE route = 'IV'"
    )
    types = [error_type(both.format(value), both.format("IV")) for value in ("PO", "P" * 60)]
    assert types == ["PV", "OL"]


@pytest.fixture(scope="module")
def league(demo_dir):
    path = demo_dir / "league.sqlite"
    with ReadOnlyDatabase(path) as database:
        yield load_context("league", DatabaseSchema.from_sqlite(path, "league"), database), database


def test_a_model_candidate_gets_its_type_when_incorrect(league):
    _context, database = league
    gold = "SELECT COUNT(*) FROM players WHERE position = 'Goalkeeper'"
    item = {
        "label": "answerable",
        "sql": gold,
        "db_variant": None,
        "result": database.execute(gold).to_record(),
    }
    wrong = label(item, candidate(gold.replace("Goalkeeper", "Forward"), "llm_sql_v1"), database)
    assert (wrong["stratum"], wrong["error_type"]) == ("answerable-incorrect", "PV")
    same = "select count(*) from players where position = 'Goalkeeper'"
    right = label(item, candidate(same, "llm_sql_v1"), database)
    assert (right["stratum"], right["error_type"]) == ("answerable-correct", None)
    broken = label(item, candidate(gold.replace("position", "nope"), "m"), database)
    assert (broken["error"], broken["error_type"]) == ("unknown-column", "T/C")


def test_demo_perturbations_are_typed_as_the_error_they_imitate(league, demo_dir):
    """Every perturbation of every demo seed gets its intended type from the diff, except
    a table swapped inside a JOIN, which SCARE counts as a join error (J/G)."""
    seen, off = 0, []
    for db_id in ("clinic", "league"):
        path = demo_dir / f"{db_id}.sqlite"
        with ReadOnlyDatabase(path) as database:
            context = load_context(db_id, DatabaseSchema.from_sqlite(path, db_id), database)
            for pair in read_jsonl(REPO / f"raw/demo/seeds/{db_id}.jsonl"):
                tree = sqlkit.parse(pair["sql"])
                for name, (intent, perturb) in PERTURBATIONS.items():
                    changed = perturb(tree, context, random.Random(pair["question"]))
                    if changed is None:
                        continue
                    seen += 1
                    found = error_type(pair["sql"], changed.sql("sqlite"))
                    joined = name == "wrong_table" and found == "J/G" and " JOIN " in pair["sql"]
                    if found != intent and not joined:
                        off.append((name, intent, found, changed.sql("sqlite")))
    assert seen > 100
    assert off == [], off
