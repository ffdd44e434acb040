"""The demo databases: deterministic, big enough, coherent, and the seeds run on them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import sqlglot

from answerable.builders.demo import DEMO_DATABASES, generate_demo, generate_one
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.ids import sha256_file

SEEDS_DIR = Path(__file__).resolve().parents[1] / "raw" / "demo" / "seeds"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict[str, Path]:
    """The seed-7 demo databases, generated once for the module."""
    return generate_demo(tmp_path_factory.mktemp("demo"), seed=7)


def read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def scalar(path: Path, sql: str):
    con = read_only(path)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def row_counts(path: Path) -> dict[str, int]:
    schema = DatabaseSchema.from_sqlite(path)
    return {t.name: scalar(path, f"SELECT COUNT(*) FROM {t.name}") for t in schema.tables}


def seed_pairs() -> list[dict]:
    pairs = []
    for db_id in DEMO_DATABASES:
        lines = (SEEDS_DIR / f"{db_id}.jsonl").read_text(encoding="utf-8").splitlines()
        pairs += [json.loads(line) for line in lines if line.strip()]
    return pairs


def test_generate_demo_writes_every_database(demo):
    assert set(demo) == set(DEMO_DATABASES)
    for db_id, path in demo.items():
        assert path.name == f"{db_id}.sqlite" and path.is_file()
    assert not list(next(iter(demo.values())).parent.glob("*.tmp"))


def test_same_seed_gives_identical_bytes(demo, tmp_path):
    again = generate_demo(tmp_path, seed=7)
    for db_id, path in demo.items():
        assert sha256_file(again[db_id]) == sha256_file(path), db_id


def test_other_seed_gives_other_data(demo, tmp_path):
    other = generate_demo(tmp_path, seed=8)
    for db_id, path in demo.items():
        assert sha256_file(other[db_id]) != sha256_file(path), db_id
    first_birth = "SELECT date_of_birth FROM patients WHERE subject_id = 10001"
    assert scalar(other["clinic"], first_birth) != scalar(demo["clinic"], first_birth)


def test_existing_file_is_replaced(tmp_path):
    target = tmp_path / "league.sqlite"
    target.write_bytes(b"not a database")
    path = generate_one("league", tmp_path, seed=7)
    assert path == target
    assert scalar(path, "SELECT COUNT(*) FROM teams") == 16
    assert [p.name for p in tmp_path.iterdir()] == ["league.sqlite"]


def test_clinic_is_big_enough_with_keys(demo):
    counts = row_counts(demo["clinic"])
    assert sum(counts.values()) >= 20_000
    schema = DatabaseSchema.from_sqlite(demo["clinic"])
    assert len(schema.tables) >= 6
    assert all(t.primary_key for t in schema.tables)
    assert sum(bool(t.foreign_keys) for t in schema.tables) >= 5
    assert all(count > 0 for count in counts.values())


def test_league_is_big_enough_with_keys(demo):
    counts = row_counts(demo["league"])
    assert sum(counts.values()) >= 3_000
    schema = DatabaseSchema.from_sqlite(demo["league"])
    assert len(schema.tables) >= 5
    assert all(t.primary_key for t in schema.tables)
    matches = schema.table("matches")
    assert {fk[0] for fk in matches.foreign_keys} >= {"home_team_id", "away_team_id"}


@pytest.mark.parametrize(
    ("db_id", "column"),
    [
        ("clinic", "patients.date_of_death"),
        ("clinic", "admissions.language"),
        ("clinic", "admissions.marital_status"),
        ("clinic", "lab_events.flag"),
        ("league", "players.height_cm"),
        ("league", "matches.attendance"),
    ],
)
def test_some_values_are_null(demo, db_id, column):
    table, name = column.split(".")
    nulls = scalar(demo[db_id], f"SELECT COUNT(*) FROM {table} WHERE {name} IS NULL")
    total = scalar(demo[db_id], f"SELECT COUNT(*) FROM {table}")
    assert 0 < nulls < total


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(*) FROM admissions WHERE discharge_time < admit_time",
        "SELECT COUNT(*) FROM admissions a JOIN patients p USING (subject_id)"
        " WHERE p.date_of_birth >= a.admit_time OR p.date_of_death < date(a.discharge_time)",
        "SELECT COUNT(*) FROM icu_stays i JOIN admissions a USING (hadm_id)"
        " WHERE i.in_time < a.admit_time OR i.out_time > a.discharge_time"
        " OR i.out_time <= i.in_time OR i.subject_id != a.subject_id",
        "SELECT COUNT(*) FROM prescriptions p JOIN admissions a USING (hadm_id)"
        " WHERE p.start_date < date(a.admit_time) OR p.stop_date > date(a.discharge_time)"
        " OR p.stop_date < p.start_date",
        "SELECT COUNT(*) FROM lab_events l JOIN admissions a USING (hadm_id)"
        " WHERE l.chart_time < a.admit_time OR l.chart_time > a.discharge_time",
        "SELECT COUNT(*) FROM lab_events l JOIN d_lab_items d USING (item_id)"
        " WHERE (l.flag IS NULL) = (l.value < d.normal_low OR l.value > d.normal_high)",
    ],
)
def test_clinic_dates_and_flags_are_coherent(demo, sql):
    assert scalar(demo["clinic"], sql) == 0


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(*) FROM matches WHERE home_team_id = away_team_id",
        "SELECT COUNT(*) FROM matches m WHERE home_score != (SELECT COUNT(*) FROM goals g"
        " WHERE g.match_id = m.match_id AND g.team_id = m.home_team_id)"
        " OR away_score != (SELECT COUNT(*) FROM goals g"
        " WHERE g.match_id = m.match_id AND g.team_id = m.away_team_id)",
        "SELECT COUNT(*) FROM goals g LEFT JOIN appearances a"
        " ON a.match_id = g.match_id AND a.player_id = g.player_id WHERE a.player_id IS NULL",
        "SELECT COUNT(*) FROM matches m JOIN stadiums s USING (stadium_id)"
        " WHERE m.attendance > s.capacity",
    ],
)
def test_league_results_are_coherent(demo, sql):
    assert scalar(demo["league"], sql) == 0


def test_seed_files_cover_both_databases():
    pairs = seed_pairs()
    assert {p["db_id"] for p in pairs} == set(DEMO_DATABASES)
    assert all(set(p) == {"db_id", "question", "sql"} for p in pairs)
    assert len({(p["db_id"], p["question"]) for p in pairs}) == len(pairs)


@pytest.mark.parametrize("pair", seed_pairs(), ids=lambda p: f"{p['db_id']}:{p['question'][:40]}")
def test_seed_sql_returns_one_to_a_hundred_rows(demo, pair):
    sqlglot.parse_one(pair["sql"], read="sqlite")
    con = read_only(demo[pair["db_id"]])
    try:
        rows = con.execute(pair["sql"]).fetchmany(101)
    finally:
        con.close()
    assert 1 <= len(rows) <= 100
