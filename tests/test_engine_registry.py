"""A new engine is one class and one registry line: a fake file engine, registered only in
:data:`ENGINES`, is found by the source loaders by its own suffix, read through its own
``open``, named by its own title, exported to a release's SQLite file by its own
``export_sqlite``, and edited into counterfactual variants by its own
``materialize_variant`` (its SQLite twin exported through it); nothing else names it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from answerable.builders import engines
from answerable.builders.counterfactual.materialize import VariantStore, materialize_full
from answerable.builders.counterfactual.on_engines import twin_databases
from answerable.builders.counterfactual.script import drop_column
from answerable.builders.engines.base import SourceSpec
from answerable.builders.engines.sqlite import SQLiteEngine
from answerable.builders.engines.variants import EngineVariants, drop_variants, on_engine
from answerable.builders.sources import load_source
from answerable.kernel.errors import ConfigError, SQLError
from tests.test_sources import FIXTURES, build_db

SPIDER = {"name": "s", "format": "spider", "path": "spider_questions.json"}
SPIDER |= {"tables": "spider_tables.json"}


class LiteEngine(SQLiteEngine):
    """SQLite files under another suffix: a stand-in for a new file engine."""

    name = "lite"
    title = "Lite"
    file_suffix = ".lite"
    sqlite_files = False  # a release ships its databases exported, as any new engine's
    exported: list[str] = []  # noqa: RUF012 - the test reads what was exported
    materialized: list[str] = []  # noqa: RUF012 - and what was materialized

    def export_sqlite(self, ref, path: Path, tables=None) -> Path:
        """A copy of the file by SQLite's backup, all tables (the test checks the call)."""
        LiteEngine.exported.append(ref.db_id)
        with sqlite3.connect(ref.path) as source, sqlite3.connect(path) as target:
            source.backup(target)
        return Path(path)

    def materialize_variant(self, ref, ops, name, store):
        """A whole edited copy, ``<store.root>/<name>.lite``, made once (the test checks
        the calls)."""
        target = store.root / f"{name}{self.file_suffix}"
        if not target.is_file():
            LiteEngine.materialized.append(name)
            materialize_full(ref.path, ops, target)
        return self.open(SourceSpec(ref.db_id, self.name, path=target), store.limits)


@pytest.fixture
def lite(monkeypatch):
    """The fake engine registered, as a new engine's one line would register it."""
    monkeypatch.setitem(engines.ENGINES, "lite", LiteEngine)
    LiteEngine.exported, LiteEngine.materialized = [], []
    return LiteEngine


def databases(tmp_path: Path) -> Path:
    """A folder with ``shop.lite`` and ``school.lite`` (SQLite files under the suffix)."""
    folder = tmp_path / "dbs"
    build_db("shop.sql", folder / "shop.lite")
    build_db("shop.sql", folder / "school.lite")  # any tables: a file for db_id school
    return folder


def test_the_registry_answers_what_engines_declare(lite):
    assert engines.file_suffix("lite") == ".lite" and not engines.is_server("lite")
    assert engines.file_suffix("postgres") is None and engines.is_server("postgres")
    assert engines.file_suffix("nope") is None and not engines.is_server("nope")
    assert [engines.ENGINES[n].title for n in ("sqlite", "duckdb", "postgres")] == [
        "SQLite",
        "DuckDB",
        "PostgreSQL",
    ]


def test_a_registered_file_engine_is_read_by_its_suffix(lite, tmp_path):
    spec = SPIDER | {"databases": str(databases(tmp_path)), "engine": "lite"}
    data = load_source(spec, FIXTURES, None)
    shop = data.databases["shop"]
    assert shop.engine == "lite" and shop.path == tmp_path / "dbs" / "shop.lite"
    assert {t.name for t in shop.schema.tables} == {"customer", "orders"}
    with shop.open(None) as database:
        assert database.execute("SELECT name FROM customer").row_count == 2


def test_a_missing_file_of_a_registered_engine_names_its_suffix(lite, tmp_path):
    (tmp_path / "dbs").mkdir()
    spec = SPIDER | {"databases": str(tmp_path / "dbs"), "engine": "lite"}
    with pytest.raises(ConfigError) as error:
        load_source(spec, FIXTURES, None)
    assert "add <databases>/school.lite" in str(error.value)


def test_a_jsonl_source_names_a_registered_engine_by_its_title(lite, tmp_path):
    (tmp_path / "dbs").mkdir()
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text('{"db_id": "shop", "question": "How many?", "sql": "SELECT 1"}\n')
    spec = {"name": "j", "format": "jsonl", "path": str(seeds), "engine": "lite"}
    with pytest.raises(ConfigError) as error:
        load_source(spec | {"databases": str(tmp_path / "dbs")}, FIXTURES, None)
    assert "no Lite file for db_id 'shop'" in str(error.value)


def test_a_release_exports_a_registered_engines_database_through_it(lite, tmp_path):
    spec = SPIDER | {"databases": str(databases(tmp_path)), "engine": "lite"}
    data = load_source(spec, FIXTURES, None)
    items = [{"db_id": "shop", "sql": "SELECT name FROM customer"}]
    made = engines.export_sources(items, data.databases, tmp_path / "exports")
    assert lite.exported == ["shop"] and made == {"shop": tmp_path / "exports" / "shop.sqlite"}
    count = "SELECT count(*) FROM customer"
    with sqlite3.connect(made["shop"]) as copy, sqlite3.connect(data.databases["shop"].path) as src:
        assert copy.execute(count).fetchone() == src.execute(count).fetchone() == (2,)


def test_an_unknown_engine_lists_the_registered_ones(lite, tmp_path):
    spec = SPIDER | {"databases": str(databases(tmp_path)), "engine": "nope"}
    with pytest.raises(ConfigError) as error:
        load_source(spec, FIXTURES, None)
    assert "duckdb, lite, postgres, sqlite" in str(error.value)


def test_a_registered_engine_makes_its_own_counterfactual_variants(lite, tmp_path):
    spec = SPIDER | {"databases": str(databases(tmp_path)), "engine": "lite"}
    shop = load_source(spec, FIXTURES, None).databases["shop"]
    ops = [drop_column("customer", "city")]
    store = EngineVariants(tmp_path / "variants")
    try:
        variant = store.database(shop, ops)
        assert store.database(shop, ops) is variant  # made and opened once per run
        assert variant.execute("SELECT name FROM customer ORDER BY id").rows == [["Ada"], ["Ben"]]
        with pytest.raises(SQLError):
            variant.execute("SELECT city FROM customer")
        assert store.database(shop, []).execute("SELECT city FROM customer").row_count == 2
    finally:
        store.close()
    made = lite.materialized
    assert len(made) == 1 and (tmp_path / "variants" / f"{made[0]}.lite").is_file()
    again = EngineVariants(tmp_path / "variants")  # a later run reuses the engine's file
    try:
        again.database(shop, ops)
    finally:
        again.close()
    assert lite.materialized == made and drop_variants({"shop": shop}) == []
    with sqlite3.connect(shop.path) as source:  # the source is only read
        assert source.execute("SELECT count(city) FROM customer").fetchone() == (2,)


def test_the_sqlite_twin_of_a_registered_engine_is_its_own_export(lite, tmp_path):
    spec = SPIDER | {"databases": str(databases(tmp_path)), "engine": "lite"}
    found = load_source(spec, FIXTURES, None).databases
    twins = twin_databases(found, tmp_path / "work", {"shop"})
    assert lite.exported == ["shop"] and twins["school"] is found["school"]
    assert twins["shop"].engine == "sqlite" and twins["shop"].path.suffix == ".sqlite"
    assert {t.name for t in twins["shop"].schema.tables} == {"customer", "orders"}


def test_sqlite_makes_its_variants_as_its_engine_declares(tmp_path):
    """SQLite is an engine like the others: its variant comes from its own
    ``materialize_variant`` (a delta over the source file), and it alone declares that
    a release ships its files as they are."""
    spec = SPIDER | {"databases": str(tmp_path / "dbs")}
    build_db("shop.sql", tmp_path / "dbs" / "shop.sqlite")
    build_db("shop.sql", tmp_path / "dbs" / "school.sqlite")
    shop = load_source(spec, FIXTURES, None).databases["shop"]
    ops = [drop_column("customer", "city")]
    store = EngineVariants(tmp_path / "variants")
    try:
        variant = store.database(shop, ops)
        assert variant.execute("SELECT name FROM customer ORDER BY id").rows == [["Ada"], ["Ben"]]
        with pytest.raises(SQLError):
            variant.execute("SELECT city FROM customer")
    finally:
        store.close()
    made = sorted(p.name for p in (tmp_path / "variants").glob("*.sqlite"))
    deltas = VariantStore(tmp_path / "variants")
    try:
        assert made == [deltas.ensure("shop", shop.path, ops).name]  # the same delta file
    finally:
        deltas.close()
    declared = [n for n, kind in engines.ENGINES.items() if kind.sqlite_files]
    assert declared == ["sqlite"] and not engines.needs_export(shop) and not on_engine(shop)


def test_a_registered_engine_is_exported_and_twinned(lite, tmp_path):
    spec = SPIDER | {"databases": str(databases(tmp_path)), "engine": "lite"}
    shop = load_source(spec, FIXTURES, None).databases["shop"]
    assert engines.needs_export(shop) and on_engine(shop)
