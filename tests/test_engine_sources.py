"""``engine:`` on the source formats that find each db_id's database by name (jsonl,
spider, ehrsql): DuckDB files in the databases folder; the others say so in one line."""

from __future__ import annotations

import pytest

from answerable.builders.engines.duckdb import copy_sqlite_to_duckdb
from answerable.builders.sources import load_source
from answerable.kernel.errors import ConfigError
from tests.test_sources import FIXTURES, build_db

SPIDER = {"name": "s", "format": "spider", "path": "spider_questions.json"}
SPIDER |= {"tables": "spider_tables.json"}


def test_a_spider_source_reads_its_databases_with_duckdb(tmp_path):
    lite = build_db("shop.sql", tmp_path / "lite" / "shop.sqlite")
    (tmp_path / "dbs").mkdir()
    copy_sqlite_to_duckdb(lite, tmp_path / "dbs" / "shop.duckdb")
    build_db("shop.sql", tmp_path / "school.sqlite")  # any tables: a file for db_id school
    copy_sqlite_to_duckdb(tmp_path / "school.sqlite", tmp_path / "dbs" / "school.duckdb")
    spec = SPIDER | {"databases": str(tmp_path / "dbs"), "engine": "duckdb"}
    data = load_source(spec, FIXTURES, None)
    shop = data.databases["shop"]
    assert shop.engine == "duckdb" and shop.path == tmp_path / "dbs" / "shop.duckdb"
    assert {t.name for t in shop.schema.tables} == {"customer", "orders"}  # from DuckDB
    with shop.open(None) as database:
        assert database.dialect == "duckdb"
        assert database.execute("SELECT count(*) FROM customer").row_count == 1


def test_a_spider_source_without_a_duckdb_file_is_one_line(tmp_path):
    (tmp_path / "dbs").mkdir()
    spec = SPIDER | {"databases": str(tmp_path / "dbs"), "engine": "duckdb"}
    with pytest.raises(ConfigError) as error:
        load_source(spec, FIXTURES, None)
    assert "no duckdb file for db_id" in str(error.value) and "fix:" in str(error.value)


def test_a_format_naming_one_sqlite_file_refuses_another_engine(tmp_path):
    spec = {"name": "t", "format": "text2sql", "path": "pets.json", "database": "x.sqlite"}
    with pytest.raises(ConfigError) as error:
        load_source(spec | {"engine": "duckdb"}, FIXTURES, None)
    assert "jsonl, spider, ehrsql" in str(error.value)
