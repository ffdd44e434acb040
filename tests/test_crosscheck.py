"""Cross-engine agreement: gold queries run again on DuckDB over a copy of the data,
items whose results differ rejected (or flagged) with both results; sources on DuckDB."""

from __future__ import annotations

import json
import textwrap

import pytest

from answerable.builders.engines import crosscheck
from answerable.builders.engines.duckdb import DuckDBDatabase, copy_sqlite_to_duckdb
from answerable.builders.executor import ReadOnlyDatabase
from answerable.kernel.records import read_jsonl, read_parquet
from tests.conftest import run_in
from tests.test_cli import assert_clean_error, seed, tiny_project

AGREES = seed("How many items are there?", "SELECT count(*) FROM item")
# SQLite divides integers as integers; sqlglot writes the same '/' for DuckDB, which
# divides them as reals: 780 / 7 is 111 on one and 111.43 on the other.
DIVIDES = seed("What is the sum of the ids over seven?", "SELECT sum(id) / 7 FROM item")
# julianday has no DuckDB counterpart sqlglot knows: the transpiled SQL fails there.
NO_COUNTERPART = seed(
    "How many days after the first item was the last?",
    "SELECT max(julianday('2024-01-01')) - min(julianday('2023-12-01')) FROM item",
)


def _item(tmp_path, sql: str) -> tuple[dict, object]:
    """An item verified on the tiny shop database, and the DuckDB copy of it."""
    tiny_project(tmp_path, [])
    path = tmp_path / "dbs" / "shop.sqlite"
    with ReadOnlyDatabase(path) as db:
        result = db.execute(sql).to_record()
    item = {"id": "x", "sql": sql, "dialect": "sqlite", "result": result, "db_variant": None}
    return item, DuckDBDatabase(copy_sqlite_to_duckdb(path, tmp_path / "shop.duckdb"))


def test_an_agreeing_query_records_its_duckdb_sql(tmp_path):
    item, duck = _item(tmp_path, "SELECT name FROM item WHERE price > 90 ORDER BY id")
    with duck:
        found = crosscheck.check_item(item, duck)
    assert found == {"sql": item["sql"] + " NULLS FIRST", "agrees": True}  # SQLite's order


def test_integer_division_disagrees_with_both_results(tmp_path):
    item, duck = _item(tmp_path, DIVIDES["sql"])
    with duck:
        found = crosscheck.check_item(item, duck)
    assert item["result"]["rows"] == [[111]]
    assert not found["agrees"] and found["result"]["rows"] == [[pytest.approx(780 / 7)]]


def test_sql_with_no_counterpart_disagrees_with_the_error(tmp_path):
    item, duck = _item(tmp_path, NO_COUNTERPART["sql"])
    with duck:
        found = crosscheck.check_item(item, duck)
    assert not found["agrees"] and "julianday" in found["error"].lower()


def test_like_ignores_ascii_case_on_duckdb_as_on_sqlite(tmp_path):
    """SQLite's LIKE ignores the case of ASCII letters, DuckDB's and PostgreSQL's do not:
    written for them it becomes ILIKE, so 'THING 1%' still finds 'thing 1', 'thing 10' ..."""
    item, duck = _item(tmp_path, "SELECT count(*) FROM item WHERE name LIKE 'THING 1%'")
    with duck:
        found = crosscheck.check_item(item, duck)
        as_sqlglot_writes_it = duck.execute(item["sql"].replace("count(*)", "COUNT(*)"))
    assert item["result"]["rows"] == [[11]] and as_sqlglot_writes_it.rows == [[0]]
    assert found == {"sql": "SELECT COUNT(*) FROM item WHERE name ILIKE 'THING 1%'", "agrees": True}


def test_items_on_variants_or_without_results_are_not_checked():
    assert crosscheck.checkable({"sql": "SELECT 1", "result": {"hash": "h"}, "db_variant": None})
    assert not crosscheck.checkable({"sql": "SELECT 1", "result": {"hash": "h"}, "db_variant": "v"})
    assert not crosscheck.checkable({"sql": None, "result": None, "db_variant": None})


def _build(tmp_path, mode: str):
    recipe = tiny_project(
        tmp_path,
        [AGREES, DIVIDES, NO_COUNTERPART],
        extra=f"execution:\n  cross_check: [duckdb]\n  on_disagreement: {mode}\n",
    )
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    root = tmp_path / ".answerable" / "tiny"
    return (
        result,
        read_parquet(root / "candidates.parquet"),
        list(read_jsonl(root / "reports/rejects.jsonl")),
    )


def _findings(item: dict) -> dict:
    provenance = item["provenance"]
    provenance = json.loads(provenance) if isinstance(provenance, str) else provenance
    return provenance["params"]["cross_check"]


def test_build_rejects_disagreeing_items_with_both_results(tmp_path):
    result, items, rejects = _build(tmp_path, "reject")
    assert "cross_check: 1 items, 2 rejects" in result.output
    assert [i["sql"] for i in items] == [AGREES["sql"]]
    assert _findings(items[0]) == {"duckdb": {"sql": "SELECT COUNT(*) FROM item", "agrees": True}}
    found = {r["sql"]["sqlite"]: r for r in rejects if r["reason"] == "cross-check-disagrees"}
    assert set(found) == {DIVIDES["sql"], NO_COUNTERPART["sql"]}
    divides = found[DIVIDES["sql"]]
    assert divides["results"]["sqlite"]["rows"] == [[111]]
    assert divides["results"]["duckdb"]["rows"] != [[111]]
    assert divides["step"] == "cross_check" and divides["generator"] == "seed_v1"
    assert "julianday" in found[NO_COUNTERPART["sql"]]["detail"].lower()
    # the copy is made once and reused; a rerun takes the cached step
    assert (tmp_path / ".answerable/tiny/engines/duckdb/shop.duckdb").is_file()
    again = run_in(tmp_path, "build", tmp_path / "recipe.yaml")
    assert "cross_check: 1 items, 2 rejects (cached)" in again.output


def test_build_flags_disagreeing_items_and_keeps_them(tmp_path):
    _, items, rejects = _build(tmp_path, "flag")
    assert sorted(i["sql"] for i in items) == sorted(
        s["sql"] for s in (AGREES, DIVIDES, NO_COUNTERPART)
    )
    flagged = {i["sql"]: _findings(i)["duckdb"]["agrees"] for i in items}
    assert flagged == {AGREES["sql"]: True, DIVIDES["sql"]: False, NO_COUNTERPART["sql"]: False}
    assert not [r for r in rejects if r["reason"] == "cross-check-disagrees"]


def test_unknown_cross_check_engine_is_one_line(tmp_path):
    recipe = tiny_project(tmp_path, [AGREES], extra="execution:\n  cross_check: [oracle]\n")
    assert_clean_error(
        run_in(tmp_path, "build", recipe), "execution.cross_check", "oracle", "duckdb", "fix:"
    )


def test_unknown_source_engine_is_one_line(tmp_path):
    recipe = tiny_project(tmp_path, [AGREES])
    recipe.write_text(recipe.read_text() + "    engine: oracle\n")
    assert_clean_error(run_in(tmp_path, "build", recipe), "engine", "oracle", "fix:")


def test_a_duckdb_source_verifies_items_in_duckdb(tmp_path):
    recipe = tiny_project(tmp_path, [AGREES, DIVIDES])
    copy_sqlite_to_duckdb(tmp_path / "dbs" / "shop.sqlite", tmp_path / "dbs" / "shop.duckdb")
    (tmp_path / "dbs" / "shop.sqlite").unlink()
    recipe.write_text(recipe.read_text() + "    engine: duckdb\n")
    result = run_in(tmp_path, "build", recipe, "--no-release")
    assert result.exit_code == 0, result.output
    items = read_parquet(tmp_path / ".answerable/tiny/candidates.parquet")
    assert {i["dialect"] for i in items} == {"duckdb"}
    rows = {i["question"]: json.loads(i["result"])["rows"] if isinstance(i["result"], str)
            else i["result"]["rows"] for i in items}  # fmt: skip
    assert rows[AGREES["question"]] == [[39]]
    assert rows[DIVIDES["question"]] == [[pytest.approx(780 / 7)]]  # DuckDB's division


def _duckdb_release(tmp_path, cwd):
    cwd.mkdir()
    recipe = tiny_project(cwd, [AGREES, DIVIDES])
    copy_sqlite_to_duckdb(cwd / "dbs" / "shop.sqlite", cwd / "dbs" / "shop.duckdb")
    (cwd / "dbs" / "shop.sqlite").unlink()
    recipe.write_text(recipe.read_text() + "    engine: duckdb\n")
    result = run_in(cwd, "build", recipe)
    assert result.exit_code == 0, result.output
    return cwd / "releases" / "tiny" / "0.1.0"


def test_a_release_from_a_duckdb_source_ships_sqlite_files_exported_from_it(tmp_path):
    release = _duckdb_release(tmp_path, tmp_path / "a")
    shipped = release / "databases" / "shop.sqlite"
    with ReadOnlyDatabase(shipped) as db:  # a SQLite file, the DuckDB copy's rows
        assert db.execute("SELECT count(*), sum(price) FROM item").rows[0][0] == 39
    items = [json.loads(line) for f in sorted((release / "data").glob("*.jsonl"))
             for line in f.read_text().splitlines()]  # fmt: skip
    assert sorted(i["question"] for i in items) == sorted(s["question"] for s in (AGREES, DIVIDES))
    assert {i["result"]["dialect"] for i in items} == {"duckdb"}
    # DuckDB divides integers as reals; sqlglot writes that division back for SQLite as
    # a real division, so verify --execute gets DuckDB's 111.43 from the shipped file
    checked = run_in(tmp_path / "a", "verify", release, "--execute")
    assert checked.exit_code == 0 and "2 gold queries re-executed" in checked.output
    # a rebuild from another DuckDB copy of the same rows (DuckDB files of equal data
    # differ in bytes, so the manifest's inputs do) ships the same files
    again = _duckdb_release(tmp_path, tmp_path / "b")
    shipped = ["databases/shop.sqlite"] + [f"data/{f.name}" for f in (release / "data").iterdir()]
    for relative in shipped:
        assert (again / relative).read_bytes() == (release / relative).read_bytes()


def test_a_duckdb_source_without_its_file_is_one_line(tmp_path):
    recipe = tiny_project(tmp_path, [AGREES])
    recipe.write_text(recipe.read_text() + "    engine: duckdb\n")
    assert_clean_error(run_in(tmp_path, "build", recipe), "no DuckDB file", "shop.duckdb")


def test_engine_on_a_format_that_cannot_read_it_is_one_line(tmp_path):
    recipe = tiny_project(tmp_path, [])
    (tmp_path / "q.json").write_text("[]")
    recipe.write_text(
        textwrap.dedent("""\
        dataset: tiny
        version: 0.1.0
        seed: 1
        sources:
          - {name: s, format: text2sql, path: q.json, database: dbs/shop.sqlite, engine: duckdb}
        """)
    )
    assert_clean_error(run_in(tmp_path, "build", recipe), "engine", "jsonl", "fix:")


@pytest.mark.parametrize(
    ("sql", "agrees"),
    [
        ("SELECT date('2024-01-31', '+30 days'), date('2024-03-01', '-1 day') FROM item", True),
        (
            "SELECT count(*) FROM item WHERE '2024-02-15 10:00' < date('2024-01-31', '+15 days')",
            True,
        ),
        # month arithmetic differs between engines (Jan 31 + 1 month): left as SQLite wrote it
        ("SELECT date('2024-01-31', '+1 month') FROM item", False),
    ],
)
def test_sqlite_day_shifts_are_written_portably(tmp_path, sql, agrees):
    item, duck = _item(tmp_path, sql)
    with duck:
        assert crosscheck.check_item(item, duck)["agrees"] is agrees


def test_counterfactual_items_on_a_duckdb_source_are_proved_on_duckdb_variants(tmp_path):
    recipe = tiny_project(
        tmp_path,
        [seed("Which items cost more than 90?", "SELECT name FROM item WHERE price > 90")],
        extra="counterfactual:\n  rate: 1.0\n  edits: [drop_column_v1]\n",
    )
    copy_sqlite_to_duckdb(tmp_path / "dbs" / "shop.sqlite", tmp_path / "dbs" / "shop.duckdb")
    recipe.write_text(
        recipe.read_text().replace("databases: dbs\n", "databases: dbs\n    engine: duckdb\n")
    )
    result = run_in(tmp_path, "build", recipe, "--no-release")
    assert result.exit_code == 0, result.output
    items = read_parquet(tmp_path / ".answerable/tiny/candidates.parquet")
    edited = [i for i in items if i["db_variant"]]
    assert edited and {i["dialect"] for i in edited} == {"duckdb"}
    assert {i["label"] for i in edited} == {"unanswerable"}
    variants = tmp_path / ".answerable/tiny/variants"
    assert {f"{i['db_variant']}.duckdb" for i in edited} <= {p.name for p in variants.iterdir()}


def test_counterfactual_parents_on_a_server_without_scratch_schema_are_named_rejects():
    from answerable.builders.counterfactual.on_engines import counterfactual_on_engines
    from answerable.builders.engines.base import SourceSpec
    from answerable.builders.schema import DatabaseSchema
    from answerable.builders.sources.common import DatabaseRef

    spec = SourceSpec("shop", "postgres", dsn_env="NOT_USED", namespace="shop")
    refs = {"shop": DatabaseRef("shop", None, DatabaseSchema("shop"), "postgres", spec)}
    parent = {"id": "p1", "db_id": "shop", "label": "answerable", "sql": "SELECT 1",
              "provenance": {"generator": "seed_v1"}}  # fmt: skip
    out = counterfactual_on_engines([parent], None, None, refs, None)
    assert not out.items and [r["reason"] for r in out.rejects] == ["engine-not-supported"]
    assert "fix: add scratch_schema" in out.rejects[0]["detail"]


def test_a_copy_is_reused_as_a_file_on_duckdb_and_never_on_a_server(tmp_path):
    """A reused DuckDB copy is its file; a PostgreSQL copy is a schema on a server, so a
    file (or sidecar) left at its name is never taken for it."""
    from answerable.builders.engines import engine

    target = tmp_path / "shop.duckdb"
    assert engine("duckdb").reused_copy("shop", target) is None
    target.write_bytes(b"")
    spec = engine("duckdb").reused_copy("shop", target)
    assert spec.path == target and spec.engine == "duckdb"
    (tmp_path / "shop.postgres").write_bytes(b"")
    assert engine("postgres").reused_copy("shop", tmp_path / "shop.postgres") is None
