"""Variants stored as deltas give the same results and verdicts as whole edited copies.

Two proofs, on the demo databases and on Chinook (a real database nobody on the project
wrote; read from ``../shared/data``, skipped without it):

- the counterfactual step, run with every parent and every applicable edit, makes the
  same items and the same rejects (same labels, results, readings, reasons) whether its
  variants are deltas or whole copies;
- every counterfactual item of the demo build runs its own SQL, its parent's SQL, its
  readings and its candidate SQL to the same outcome (result hash or error reason) on
  the delta over its base as on a whole copy, and both report the same schema.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from answerable.annotation.readings import RUN_NOW, ReadingRunner
from answerable.builders import sqlite_files
from answerable.builders.counterfactual.materialize import (
    MaterializeError,
    VariantStore,
    materialize,
    materialize_full,
)
from answerable.builders.counterfactual.script import (
    add_column,
    drop_column,
    set_value,
    variant_id,
)
from answerable.builders.counterfactual.stage import run_counterfactual
from answerable.builders.counterfactual.survey import EVERY_PARENT, survey_env, verified_parents
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sqlite_files import DELTA_TABLE
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import sha256_file
from answerable.kernel.records import read_parquet
from tests.conftest import REPO, shared_data
from tests.test_counterfactual import objects

LIMITS = Limits(2.0, 100)


def run_both(parents: list[dict], databases: dict, folder: Path) -> tuple:
    """The counterfactual step's output with delta variants and with whole copies."""
    outputs = []
    for full in (False, True):
        env = survey_env(databases, folder / str(full), 13, LIMITS)
        env.variants = VariantStore(folder / f"variants-{full}", LIMITS, full=full)
        try:
            outputs.append(run_counterfactual(parents, env, EVERY_PARENT)[0])
        finally:
            env.close()
    return tuple(outputs)


def assert_same_step(parents: list[dict], databases: dict, folder: Path) -> int:
    deltas, copies = run_both(parents, databases, folder)
    assert deltas.items == copies.items
    assert deltas.rejects == copies.rejects
    assert len(list((folder / "variants-False").glob("*.sqlite"))) > 0
    return sum(1 for i in deltas.items if i["db_variant"])


def outcome(database: ReadOnlyDatabase, sql: str | None):
    """The result hash and row count, or the error reason."""
    if not sql:
        return None
    try:
        result = database.execute(sql)
    except SQLError as error:
        return error.reason
    return result.hash, result.row_count, result.rows


def queries(item: dict, parents: dict) -> list[str]:
    """Every SQL text whose outcome decides or shows the item's verdict."""
    found = [item.get("sql")]
    parent = parents.get((item.get("provenance") or {}).get("parent"))
    found.append(parent and parent.get("sql"))
    trigger = item.get("trigger") or {}
    found += list(trigger.get("readings") or [])
    found += [c["sql"] for c in item.get("candidates") or [] if c.get("sql")]
    return [sql for sql in found if sql]


def assert_same_per_item(items: list[dict], sources: dict, folder: Path) -> int:
    by_id = {i["id"]: i for i in items}
    deltas = VariantStore(folder / "deltas", LIMITS)
    copies = VariantStore(folder / "copies", LIMITS, full=True)
    checked = 0
    try:
        for item in (i for i in items if i.get("db_variant")):
            source, ops = sources[item["db_id"]], item["edit"]["ops"]
            delta = deltas.database(item["db_id"], source, ops)
            copy = copies.database(item["db_id"], source, ops)
            assert deltas.schema(item["db_id"], source, ops) == copies.schema(
                item["db_id"], source, ops
            )
            for sql in queries(item, by_id):
                assert outcome(delta, sql) == outcome(copy, sql), (item["id"], sql)
                checked += 1
    finally:
        deltas.close()
        copies.close()
    return checked


@pytest.fixture(scope="module")
def demo_parents(demo_dir, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("delta-parents")
    parents, databases = [], {}
    for name in ("clinic", "league"):
        spec = {"name": name, "format": "jsonl", "path": f"{name}.jsonl", "databases": "demo"}
        made, found = verified_parents(
            spec, REPO / "raw" / "demo" / "seeds", workdir, demo_dir=demo_dir
        )
        parents += made.items
        databases.update(found)
    return parents, databases


def test_the_step_gives_the_same_items_on_deltas_and_copies_demo(demo_parents, tmp_path):
    parents, databases = demo_parents
    assert assert_same_step(parents, databases, tmp_path) >= 30


def test_the_step_gives_the_same_items_on_deltas_and_copies_chinook(tmp_path):
    base = shared_data("chinook")
    questions = REPO / "tests" / "fixtures" / "counterfactual" / "chinook.jsonl"
    spec = {"name": "chinook", "format": "jsonl", "path": str(questions), "databases": str(base)}
    parents, databases = verified_parents(spec, base, tmp_path, 13, LIMITS)
    assert assert_same_step(parents.items, databases, tmp_path) >= 10


def test_every_demo_build_item_runs_the_same_on_delta_and_copy(demo_build, tmp_path):
    cwd, _ = demo_build
    items = read_parquet(cwd / ".answerable" / "answerable-demo" / "candidates.parquet")
    sources = {db: cwd / ".answerable" / "demo" / f"{db}.sqlite" for db in ("clinic", "league")}
    edited = [i for i in items if i["db_variant"]]
    assert {i["provenance"]["generator"] for i in edited} >= {"drop_column_v1", "drop_unused_v1"}
    assert assert_same_per_item(items, sources, tmp_path) >= 2 * len(edited)


def test_a_whole_copy_and_a_delta_differ_only_in_storage(demo_dir, tmp_path):
    source = demo_dir / "league.sqlite"
    ops = [
        add_column("players", "primary_position", "TEXT", "position", "shuffle", 5),
        drop_column("players", "position"),
    ]
    copy = materialize_full(source, ops, tmp_path / "copy.sqlite")
    deltas = VariantStore(tmp_path / "deltas")
    delta = deltas.ensure("league", source, ops)
    assert delta.stat().st_size * 5 < copy.stat().st_size
    merged = DatabaseSchema.from_sqlite(delta, "league", base=source)
    assert DatabaseSchema.from_sqlite(copy, "league") == merged


def test_the_merged_view_keeps_the_executor_locks(demo_dir, tmp_path):
    source = demo_dir / "league.sqlite"
    before = sha256_file(source)
    delta = materialize(source, [drop_column("players", "position")], tmp_path / "v.sqlite")
    with ReadOnlyDatabase(delta, LIMITS, base=source) as db:
        assert (
            db.execute("SELECT count(*) FROM base.players").rows
            == db.execute("SELECT count(*) FROM temp.players").rows  # the merged view
        )
        with pytest.raises(SQLError, match="position"):
            db.execute("SELECT position FROM players")
        for sql in (
            f"ATTACH DATABASE '{source}' AS other",
            "DETACH DATABASE base",
            "DELETE FROM base.players",
            "WITH x AS (SELECT 1) DELETE FROM base.players",
            "WITH x AS (SELECT 1) DELETE FROM teams",  # a table read through to the base
            "CREATE TEMP VIEW players AS SELECT 1",
            "DROP VIEW players",
        ):
            with pytest.raises(SQLError) as caught:
                db.execute(sql)
            assert caught.value.reason == "not-read-only", sql
    assert sha256_file(source) == before


# ---- the column layout: what the merged view must keep ------------------------------

SHAPES = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, age INTEGER,
                     city TEXT, score NUMERIC, email TEXT UNIQUE);
CREATE INDEX people_age ON people(age);
CREATE INDEX people_city_age ON people(city, age);
CREATE TABLE tags (code TEXT PRIMARY KEY, label TEXT, weight REAL) WITHOUT ROWID;
CREATE TABLE visits (person INTEGER REFERENCES people(id), day TEXT, UNIQUE (person, day));
CREATE VIEW adults AS SELECT name, age, city FROM people WHERE age >= 18;
CREATE VIEW adult_cities AS SELECT city, count(*) AS n FROM adults GROUP BY city;
"""
CITIES = ["Lyon", "lyon", "Oslo", "Porto", None]


@pytest.fixture
def shapes(tmp_path) -> Path:
    """A source with an aliased rowid with gaps, a WITHOUT ROWID table, a NOCASE column,
    indexes, and views reading views."""
    path = tmp_path / "shapes.sqlite"
    con = sqlite3.connect(path)
    con.executescript(SHAPES)
    people = [
        (
            5 * n + n % 3,
            f"Name{n % 37}",
            n % 90,
            CITIES[n % 5],
            n % 7 if n % 3 else f"{n}",
            f"p{(n * 7919) % 400}@x",
        )
        for n in range(1, 400)
    ]
    con.executemany("INSERT INTO people VALUES (?, ?, ?, ?, ?, ?)", people)
    con.executemany(
        "INSERT INTO tags VALUES (?, ?, ?)", [(f"t{n}", f"L{n}", n / 3) for n in range(30)]
    )
    con.executemany(
        "INSERT INTO visits VALUES (?, ?)", [(p[0], f"2024-01-{p[0] % 28 + 1:02d}") for p in people]
    )
    con.commit()
    con.close()
    return path


SHAPE_QUERIES = [
    "SELECT * FROM people",
    "SELECT id, age FROM people WHERE age > 80",
    "SELECT name FROM people WHERE city = 'Lyon'",
    "SELECT * FROM people WHERE name = 'NAME3'",
    "SELECT * FROM people WHERE score = '4'",
    "SELECT DISTINCT name FROM people ORDER BY name",
    "SELECT * FROM adults",
    "SELECT * FROM adult_cities",
    "SELECT p.name, v.day FROM visits AS v JOIN people AS p ON p.id = v.person",
    "SELECT name, age FROM people ORDER BY age DESC, id LIMIT 9",
    "SELECT * FROM tags",
    "SELECT nickname, count(*) FROM people GROUP BY nickname",
    "SELECT * FROM people WHERE nickname = 'name5'",
    "SELECT city FROM people",
    "SELECT email FROM people",
    "SELECT person FROM visits",
    "SELECT * FROM visits WHERE person > 100",
]


def assert_alike(source: Path, ops: list[dict], folder: Path) -> Path:
    """Materialize ``ops`` both ways; every shape query gives the same rows in the same
    order (or the same error), and both report the same schema. Returns the delta."""
    delta = materialize(source, ops, folder / "delta.sqlite")
    copy = materialize_full(source, ops, folder / "copy.sqlite")
    assert DatabaseSchema.from_sqlite(delta, "s", base=source) == DatabaseSchema.from_sqlite(
        copy, "s"
    )
    with ReadOnlyDatabase(delta, LIMITS, base=source) as merged, ReadOnlyDatabase(copy) as whole:
        for sql in SHAPE_QUERIES:
            assert free_order(merged, sql) == free_order(whole, sql), sql
    return delta


def free_order(database: ReadOnlyDatabase, sql: str):
    """The outcome, with the rows sorted when SQL leaves their order free: the planner
    of the merged view sees the base's indexes and a join, so only the rows are
    promised (and the multiset hash of an unordered result)."""
    found = outcome(database, sql)
    if isinstance(found, str) or "ORDER BY" in sql:
        return found
    hash_, count, rows = found
    return hash_, count, sorted(rows, key=repr) if count == len(rows) else "capped"


def test_an_aliased_rowid_with_gaps_keys_the_added_and_rewritten_columns(shapes, tmp_path):
    ops = [
        add_column("people", "nickname", "TEXT", "name", "shuffle", 3),
        set_value("people", "name", "Zed", 40, seed=5),
        drop_column("people", "score"),
    ]
    delta = assert_alike(shapes, ops, tmp_path)
    assert objects(delta) == {DELTA_TABLE: "table", "answerable_delta_people": "table"}
    assert stored_columns(delta) == ["base_rowid", "name", "nickname"]  # score: nothing


def stored_columns(delta: Path, table: str = "answerable_delta_people") -> list[str]:
    con = sqlite3.connect(delta)
    try:
        return [c for (c,) in con.execute("SELECT name FROM pragma_table_info(?)", (table,))]
    finally:
        con.close()


def test_an_index_over_a_rewritten_column_plans_as_on_a_copy(shapes, tmp_path):
    delta = assert_alike(shapes, [set_value("people", "age", 99, 40, seed=5)], tmp_path)
    assert objects(delta) == {
        DELTA_TABLE: "table",
        "answerable_delta_people": "table",
        "answerable_delta_people_age": "index",  # people_city_age also reads city: not kept
    }
    assert stored_columns(delta) == ["base_rowid", "age"]
    con = sqlite_files.connect(delta, shapes)
    plan = con.execute("EXPLAIN QUERY PLAN SELECT id FROM people WHERE age = 99").fetchall()
    con.close()
    assert any("answerable_delta_people_age" in str(row) for row in plan), plan


def test_a_dropped_column_in_a_unique_clause_costs_nothing(shapes, tmp_path):
    delta = assert_alike(shapes, [drop_column("visits", "day")], tmp_path)  # UNIQUE (person, day)
    assert objects(delta) == {DELTA_TABLE: "table"}


def test_affinity_and_collation_hold_on_rewritten_columns(shapes, tmp_path):
    ops = [
        set_value("people", "name", "Zed", 10, seed=1),
        set_value("people", "score", 4, 10, seed=2),
    ]
    assert_alike(shapes, ops, tmp_path)  # name = 'NAME3' (NOCASE), score = '4' (NUMERIC)


def test_a_without_rowid_table_drops_columns_and_refuses_data_edits_alike(shapes, tmp_path):
    delta = assert_alike(shapes, [drop_column("tags", "weight")], tmp_path)
    assert objects(delta) == {DELTA_TABLE: "table"}
    for op in (
        set_value("tags", "label", "x", 3, seed=1),
        add_column("tags", "l2", "TEXT", "label", "shuffle", 1),
    ):
        with pytest.raises(MaterializeError, match="rowid"):
            materialize_full(shapes, [op], tmp_path / "copy2.sqlite")
        with pytest.raises(MaterializeError, match="rowid"):
            materialize(shapes, [op], tmp_path / "delta2.sqlite")


def test_source_views_reading_an_edited_table_show_the_edit(shapes, tmp_path):
    ops = [set_value("people", "city", "Oslo", 120, seed=4)]
    delta = assert_alike(shapes, ops, tmp_path)  # adults and adult_cities alike
    con = sqlite3.connect(delta)
    views = con.execute(f"SELECT name, view FROM {DELTA_TABLE} WHERE type = 'view' ORDER BY seq")
    assert [(n, v.split(" AS ")[0]) for n, v in views] == [
        ("adults", "CREATE TEMP VIEW adults"),
        ("adult_cities", "CREATE TEMP VIEW adult_cities"),
    ]
    con.close()
    with pytest.raises(MaterializeError, match="adults"):  # a copy would lose the view
        materialize(shapes, [drop_column("people", "age")], tmp_path / "broken.sqlite")


def test_an_old_layout_file_in_a_work_directory_is_remade(demo_dir, tmp_path):
    source, ops = demo_dir / "league.sqlite", [drop_column("players", "position")]
    store = VariantStore(tmp_path)
    path = store.ensure("league", source, ops)
    sidecar = path.with_suffix(".json")
    stamp = json.loads(sidecar.read_text())
    old = tmp_path / "old.sqlite"  # what the earlier layout wrote: a copy of the table
    con = sqlite3.connect(old)
    con.execute("CREATE TABLE players (player_id INTEGER PRIMARY KEY, name TEXT)")
    con.commit()
    con.close()
    shutil.copyfile(old, path)
    sidecar.write_text(json.dumps({**stamp, "layout": "delta"}))
    again = VariantStore(tmp_path)
    assert again.ensure("league", source, ops) == path and again.made == 1
    assert objects(path) == {DELTA_TABLE: "table"}
    assert json.loads(sidecar.read_text())["layout"] == "column-delta"
    with ReadOnlyDatabase(path, LIMITS, base=source) as db:
        assert db.execute("SELECT count(*) FROM players").rows[0][0] > 0  # not misread


def test_a_delta_opens_only_over_its_base_and_its_statements_only_make_views(demo_dir, tmp_path):
    source = demo_dir / "league.sqlite"
    delta = materialize(source, [drop_column("players", "position")], tmp_path / "v.sqlite")
    with pytest.raises(SQLError, match="base") as alone:
        ReadOnlyDatabase(delta, LIMITS)
    assert alone.value.reason == "not-a-database"
    for planted in (
        f"ATTACH DATABASE '{tmp_path / 'planted.sqlite'}' AS planted",
        "CREATE TEMP TABLE players (x)",
        "PRAGMA query_only = OFF",
    ):
        tampered = tmp_path / "tampered.sqlite"
        shutil.copyfile(delta, tampered)
        con = sqlite3.connect(tampered)
        con.execute(f"UPDATE {DELTA_TABLE} SET view = ?", (planted,))
        con.commit()
        con.close()
        with pytest.raises(SQLError, match="not authorized"):
            ReadOnlyDatabase(tampered, LIMITS, base=source)
        assert not (tmp_path / "planted.sqlite").exists()


def test_a_source_table_named_like_the_deltas_own_is_refused(tmp_path):
    source = tmp_path / "clash.sqlite"
    con = sqlite3.connect(source)
    con.execute(f"CREATE TABLE {DELTA_TABLE} (x)")
    con.execute("CREATE TABLE t (a, b)")
    con.commit()
    con.close()
    with pytest.raises(MaterializeError, match=DELTA_TABLE):
        materialize(source, [drop_column("t", "b")], tmp_path / "v.sqlite")


def test_the_review_readings_run_on_a_delta(demo_dir, tmp_path):
    source = demo_dir / "league.sqlite"
    ops = [
        add_column("matches", "first_home_score", "INTEGER", "home_score", "jitter", 1),
        drop_column("matches", "home_score"),
    ]
    VariantStore(tmp_path).ensure("league", source, ops)
    readings = [
        "SELECT sum(first_home_score) FROM matches",
        "SELECT count(*) FROM matches JOIN teams ON teams.team_id = matches.home_team_id",
    ]
    item = {
        "id": "r1",
        "db_variant": variant_id("league", ops),
        "trigger": {"readings": readings, "candidates": ["a", "b"]},
    }
    shown, where = ReadingRunner(tmp_path, LIMITS)(item)
    assert where == RUN_NOW and all("error" not in r for r in shown), shown
    with ReadOnlyDatabase(source) as db:
        assert shown[1]["rows"] == db.execute(readings[1]).rows
