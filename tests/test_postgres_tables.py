"""Copying SQLite files into PostgreSQL schemas and PostgreSQL tables back to SQLite
(builders/engines/postgres_tables.py), against the real server of tests/postgres_server.py."""

from __future__ import annotations

import sqlite3

import pytest

from answerable.builders.engines.postgres_catalog import read_schema
from answerable.builders.engines.postgres_tables import export_sqlite, load_sqlite
from answerable.builders.executor import result_hash
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import SQLError
from tests import postgres_server as server

psycopg = pytest.importorskip("psycopg")
postgres_server, postgres_demo = server.postgres_server, server.postgres_demo  # fixtures


def _lite_rows(path, table):
    con = sqlite3.connect(path)
    try:
        return con.execute(f'SELECT * FROM "{table}"').fetchall()
    finally:
        con.close()


def _server_rows(con, schema, table):
    return con.execute(f'SELECT * FROM "{schema}"."{table}"').fetchall()


def _shape(schema: DatabaseSchema):
    return [
        (t.name, [c.name for c in t.columns], t.primary_key, t.foreign_keys) for t in schema.tables
    ]


@pytest.mark.parametrize("name", server.DEMO_SCHEMAS)
def test_demo_database_survives_the_round_trip(postgres_demo, demo_dir, tmp_path, name):
    """Names, keys and every table's rows are the same in SQLite, PostgreSQL and the file
    exported back; the export is byte-identical when repeated."""
    source = demo_dir / f"{name}.sqlite"
    with psycopg.connect(postgres_demo.dsn()) as con:
        on_server = read_schema(con, name)
        assert _shape(on_server) == _shape(DatabaseSchema.from_sqlite(source))
        tables = [t.name for t in on_server.tables]
        first = export_sqlite(con, name, tables, tmp_path / "a.sqlite")
        second = export_sqlite(con, name, tables, tmp_path / "b.sqlite")
        assert first.read_bytes() == second.read_bytes()
        assert _shape(DatabaseSchema.from_sqlite(first)) == _shape(on_server)
        for table in tables:
            expected = _lite_rows(source, table)
            assert expected, table
            want = result_hash(expected, ordered=False)
            assert result_hash(_server_rows(con, name, table), ordered=False) == want, table
            assert result_hash(_lite_rows(first, table), ordered=False) == want, table


def test_column_types_follow_the_stored_values(postgres_server, tmp_path):
    path = tmp_path / "kinds.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (a NUMERIC, b, c DATE, d BLOB, e INT, f VARCHAR(3))")
    con.execute("INSERT INTO t VALUES (1, 2.5, '2020-01-02', x'00ff', NULL, NULL)")
    con.execute("INSERT INTO t VALUES (2, 3, '2021-03-04', x'01', NULL, NULL)")
    con.commit()
    con.close()
    with psycopg.connect(postgres_server.dsn()) as server:
        load_sqlite(server, path, "kinds")
        types = [c.type for c in read_schema(server, "kinds").table("t").columns]
        assert types == ["BIGINT", "DOUBLE PRECISION", "TEXT", "BYTEA", "BIGINT", "TEXT"]
        assert server.execute("SELECT d FROM kinds.t ORDER BY a").fetchone()[0] == b"\x00\xff"


def test_a_column_mixing_text_and_numbers_is_refused_and_nothing_is_left(postgres_server, tmp_path):
    path = tmp_path / "mixed.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE good (x INTEGER)")
    con.execute("CREATE TABLE t (v)")
    con.executemany("INSERT INTO t VALUES (?)", [("a",), (1,)])
    con.commit()
    con.close()
    with psycopg.connect(postgres_server.dsn()) as server:
        with pytest.raises(SQLError) as caught:
            load_sqlite(server, path, "mixed")
        assert caught.value.reason == "unsupported-type"
        assert "t.v holds integer and text values" in str(caught.value)
        left = server.execute(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'mixed'"
        ).fetchone()[0]
        assert left == 0


def test_export_writes_server_types_as_sqlite_values(postgres_server, tmp_path):
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as server:
        server.execute("DROP SCHEMA IF EXISTS typed CASCADE")
        server.execute("CREATE SCHEMA typed")
        server.execute(
            "CREATE TABLE typed.t (id integer PRIMARY KEY, price numeric(8,2), born date, "
            "seen timestamp, ok boolean, name varchar(10))"
        )
        server.execute(
            "INSERT INTO typed.t VALUES (2, 1.50, '2020-01-02', '2020-01-02 03:04:05', true, "
            "'b'), (1, 10.00, NULL, NULL, false, 'a')"
        )
        out = export_sqlite(server, "typed", ["t"], tmp_path / "typed.sqlite")
    rows = _lite_rows(out, "t")
    assert rows == [
        (1, 10, None, None, 0, "a"),
        (2, 1.5, "2020-01-02", "2020-01-02 03:04:05", 1, "b"),
    ]


def test_export_refuses_a_type_sqlite_cannot_hold(postgres_server, tmp_path):
    with psycopg.connect(postgres_server.dsn(), autocommit=True) as server:
        server.execute("DROP SCHEMA IF EXISTS odd CASCADE")
        server.execute("CREATE SCHEMA odd")
        server.execute("CREATE TABLE odd.t (tags text[], doc jsonb)")
        with pytest.raises(SQLError) as caught:
            export_sqlite(server, "odd", ["t"], tmp_path / "odd.sqlite")
        assert caught.value.reason == "unsupported-type"
        assert "t.tags is of type ARRAY" in str(caught.value)
        with pytest.raises(SQLError, match="schema odd has no table nope"):
            export_sqlite(server, "odd", ["nope"], tmp_path / "odd.sqlite")
    assert not (tmp_path / "odd.sqlite").exists()
    assert not (tmp_path / "odd.sqlite.partial").exists()
