"""The demo recipe built against PostgreSQL (the test server of tests/postgres_server.py,
the demo databases loaded into the schemas clinic and league, read by a SELECT-only role):
the same verified items as the SQLite build, the release shipping SQLite files exported
from the server, and the recipe errors of a server source as one line each."""

from __future__ import annotations

import json

import polars as pl
import pytest
import yaml

from answerable.builders.counterfactual.registry import GENERATORS
from tests import postgres_server as server
from tests.conftest import DEMO_RECIPE, run_in

psycopg = pytest.importorskip("psycopg")
postgres_server, postgres_demo, postgres_reader = (  # fixtures
    server.postgres_server,
    server.postgres_demo,
    server.postgres_reader,
)
VERIFIED = ("seed_v1", "template_v1")  # the generators that execute gold SQL on the source
EDITS = frozenset(GENERATORS)  # the counterfactual step's


def server_recipe(folder, **source_keys) -> str:
    """The demo recipe with its sources on the server (DSN in $ANSWERABLE_TEST_PG_DSN).

    Drafting (which runs on PostgreSQL too) is left out to keep the test short;
    everything else is the demo's.
    """
    recipe = yaml.safe_load(DEMO_RECIPE.read_text())
    for name in ("drafting", "demo"):
        recipe.pop(name)
    recipe["dataset"] = "pg-demo"
    recipe["templates"]["paths"] = [str(DEMO_RECIPE.parent / "templates")]
    for source in recipe["sources"]:
        source.pop("databases")
        source["path"] = str(DEMO_RECIPE.parent / source["path"])
        source |= {"engine": "postgres", "dsn_env": "ANSWERABLE_TEST_PG_DSN"}
        source |= {"scratch_schema": server.SCRATCH, **source_keys}
    path = folder / "pg.yaml"
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    return str(path)


def _field(item: dict, name: str) -> dict:
    value = item[name]  # struct fields are JSON text in the candidates file
    return json.loads(value) if isinstance(value, str) else value


def _verified(candidates) -> dict:
    frame = pl.read_parquet(candidates)
    return {
        (i["db_id"], i["question"]): i
        for i in frame.iter_rows(named=True)
        if _field(i, "provenance")["generator"] in VERIFIED
    }


@pytest.fixture(scope="module")
def pg_build(postgres_reader, tmp_path_factory):
    cwd = tmp_path_factory.mktemp("pg-build")
    recipe = server_recipe(cwd)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANSWERABLE_TEST_PG_DSN", postgres_reader.dsn())
        result = run_in(cwd, "build", recipe)
    assert result.exit_code == 0, result.output
    assert postgres_reader.password not in result.output
    return cwd, result


def test_the_demo_builds_on_postgres_with_the_items_of_sqlite(pg_build, demo_build):
    """Every seed and template item of the SQLite build is built on PostgreSQL with the
    same question and the same result hash, but the one seed whose SQL calls julianday,
    a SQLite function sqlglot writes no PostgreSQL counterpart for: a reject naming it
    (template values queries run in PostgreSQL's dialect, so every template's values
    are SQLite's)."""
    cwd, _ = pg_build
    on_server = _verified(cwd / ".answerable" / "pg-demo" / "candidates.parquet")
    on_file = _verified(demo_build[0] / ".answerable" / "answerable-demo" / "candidates.parquet")
    assert set(on_server) <= set(on_file) and len(on_server) >= 150
    for key, item in on_server.items():
        assert _field(item, "result")["hash"] == _field(on_file[key], "result")["hash"], key
        assert _field(item, "result")["dialect"] == "postgres"
    missing = [on_file[key] for key in set(on_file) - set(on_server)]
    assert [_field(i, "provenance")["external_id"] for i in missing] == ["17"]
    assert "julianday(" in missing[0]["sql"]
    rejects = [
        json.loads(line)
        for line in (cwd / ".answerable" / "pg-demo" / "reports" / "rejects.jsonl").open()
    ]
    unknown = [r for r in rejects if "does not exist" in r["detail"]]
    assert [(r["step"], r.get("external_id")) for r in unknown] == [("seed_v1", "17")]
    assert "function julianday(" in unknown[0]["detail"]


def _edited(candidates) -> dict:
    """The counterfactual items by what they say: question, label, result and readings."""
    found = {}
    for item in pl.read_parquet(candidates).iter_rows(named=True):
        if _field(item, "provenance")["generator"] not in EDITS:
            continue
        result = _field(item, "result") or {}
        readings = tuple(r["result_hash"] for r in _field(item, "readings") or [])
        found[(item["db_id"], item["question"], item["label"], result.get("hash"), readings)] = item
    return found


def test_counterfactual_items_on_the_server_are_the_sqlite_builds(
    pg_build, demo_build, postgres_reader
):
    """Exactly the SQLite build's counterfactual items (same edits, labels, results and
    readings), proved on the server's own variants (items in PostgreSQL's dialect; no
    parent is the julianday seed); the variants' tables are gone from the scratch schema
    when the build ends."""
    cwd, _ = pg_build
    on_server = _edited(cwd / ".answerable" / "pg-demo" / "candidates.parquet")
    on_file = _edited(demo_build[0] / ".answerable" / "answerable-demo" / "candidates.parquet")
    assert len(on_server) > 40 and set(on_server) == set(on_file)
    assert {i["dialect"] for i in on_server.values()} == {"postgres"}
    assert any(i["db_variant"] for i in on_server.values())
    with psycopg.connect(postgres_reader.dsn()) as con:
        left = con.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = %s", (server.SCRATCH,)
        ).fetchone()[0]
    assert left == 0


def test_the_release_ships_sqlite_files_exported_from_the_server(pg_build):
    cwd, _ = pg_build
    release = cwd / "releases" / "pg-demo" / "0.1.0"
    assert sorted(p.name for p in (release / "databases").glob("*.sqlite")) == [
        "clinic.sqlite",
        "league.sqlite",
    ]
    result = run_in(cwd, "verify", release, "--execute")
    assert result.exit_code == 0, result.output
    assert "gold queries re-executed" in result.output
    # what sqlglot cannot write back for SQLite stays out of the release, by name
    rejects = [
        json.loads(line)
        for line in (cwd / ".answerable" / "pg-demo" / "reports" / "rejects.jsonl").open()
    ]
    unportable = [r for r in rejects if r["reason"] == "not-portable"]
    assert all("written for SQLite" in r["detail"] for r in unportable)
    released = {i["id"] for i in pl.read_parquet(release / "data" / "test.parquet").to_dicts()}
    assert not released & {r["id"] for r in unportable}


def test_the_manifest_pins_the_servers_tables_by_checksum(pg_build, demo_dir):
    """No file to hash: each server source's tables are in the inputs by checksum, the
    same the demo's SQLite files give for the same rows."""
    from answerable.builders.engines.pinning import table_checksums
    from answerable.builders.executor import ReadOnlyDatabase
    from answerable.builders.schema import DatabaseSchema

    cwd, _ = pg_build
    manifest = json.loads((cwd / "releases" / "pg-demo" / "0.1.0" / "manifest.json").read_text())
    pinned = {entry["path"]: entry for entry in manifest["inputs"]}
    for name in server.DEMO_SCHEMAS:
        path = demo_dir / f"{name}.sqlite"
        with ReadOnlyDatabase(path) as lite:
            on_file = table_checksums(lite, DatabaseSchema.from_sqlite(path, name))
        assert pinned[f"postgres:{name}"]["tables"] == on_file
        assert len(pinned[f"postgres:{name}"]["sha256"]) == 64


def test_a_rebuild_is_byte_identical(pg_build, postgres_reader, tmp_path):
    cwd, _ = pg_build
    recipe = server_recipe(tmp_path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANSWERABLE_TEST_PG_DSN", postgres_reader.dsn())
        assert run_in(tmp_path, "build", recipe).exit_code == 0
    for relative in ("databases/clinic.sqlite", "data/train.jsonl", "data/train.parquet"):
        first = (cwd / "releases" / "pg-demo" / "0.1.0" / relative).read_bytes()
        assert (tmp_path / "releases" / "pg-demo" / "0.1.0" / relative).read_bytes() == first


def test_server_source_errors_are_one_line(postgres_reader, tmp_path, monkeypatch):
    recipe = server_recipe(tmp_path)
    monkeypatch.delenv("ANSWERABLE_TEST_PG_DSN", raising=False)
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 1
    assert "ANSWERABLE_TEST_PG_DSN is not set" in result.output
    assert len(result.output.strip().splitlines()) == 1

    monkeypatch.setenv("ANSWERABLE_TEST_PG_DSN", postgres_reader.dsn(password="wrong-one"))
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 1 and "password authentication failed" in result.output
    assert "wrong-one" not in result.output and postgres_reader.password not in result.output

    monkeypatch.setenv("ANSWERABLE_TEST_PG_DSN", postgres_reader.dsn())
    recipe = server_recipe(tmp_path, schemas={"clinic": "nowhere"})
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 1
    assert "schema 'nowhere' holds no table this role can read" in result.output
