"""Counterfactual variants on DuckDB: the edit scripts applied by the engine give the
rows SQLite's whole edited copy holds, the source is never written, and items made on a
DuckDB source are proved there; on PostgreSQL the edited tables live in the scratch
schema and go unless kept (each engine's ``materialize_variant``, builders/engines/)."""

from __future__ import annotations

import pytest

from answerable.builders.counterfactual.materialize import materialize_full
from answerable.builders.counterfactual.on_engines import prove
from answerable.builders.counterfactual.script import add_column, drop_column, set_value
from answerable.builders.demo import generate_demo
from answerable.builders.engines.base import SourceSpec
from answerable.builders.engines.duckdb import (
    DuckDBDatabase,
    copy_sqlite_to_duckdb,
    materialize_duckdb,
)
from answerable.builders.engines.edited_tables import edit_rows
from answerable.builders.engines.variants import EngineVariants, drop_variants
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.builders.sources.common import DatabaseRef
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import sha256_file
from tests import postgres_server as server

# Each kind of op, on tables other tables reference (DuckDB refuses ALTER TABLE on them):
# a near-synonym filled from a column, values written into seeded rows, a column of the
# primary key dropped (patients.subject_id: the key admissions' foreign key points at).
OPS = {
    "fill and drop": [
        add_column("patients", "ethnic_group", "TEXT", "ethnicity", "shuffle", 11),
        add_column("admissions", "arrival_time", "TEXT", "admit_time", "shift_days", 12),
        drop_column("patients", "ethnicity"),
    ],
    "values": [set_value("admissions", "admission_type", "Telehealth", 40, 13)],
    "key dropped": [drop_column("patients", "subject_id"), drop_column("d_lab_items", "unit")],
    "numbers": [add_column("lab_events", "reading", "REAL", "value", "jitter", 14)],
}


@pytest.fixture(scope="module")
def clinic(tmp_path_factory):
    """The demo clinic as a SQLite file and as a DuckDB copy of it."""
    folder = tmp_path_factory.mktemp("clinic")
    lite = generate_demo(folder)["clinic"]
    return lite, copy_sqlite_to_duckdb(lite, folder / "clinic.duckdb")


def _table_hashes(database, tables) -> dict[str, str]:
    """Each table's rows in rowid order, hashed by the engine-independent result hash."""
    return {
        t.name: database.execute(f'SELECT * FROM "{t.name}" ORDER BY rowid', ordered=True).hash
        for t in tables
    }


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_duckdb_variant_holds_what_sqlites_edited_copy_holds(clinic, tmp_path, name):
    lite, duck = clinic
    before = sha256_file(duck)
    materialize_full(lite, OPS[name], tmp_path / "edited.sqlite")
    materialize_duckdb(duck, OPS[name], tmp_path / "edited.duckdb")
    assert sha256_file(duck) == before  # the source is only read
    schema = DatabaseSchema.from_sqlite(tmp_path / "edited.sqlite")
    with (
        ReadOnlyDatabase(tmp_path / "edited.sqlite") as a,
        DuckDBDatabase(tmp_path / "edited.duckdb") as b,
    ):
        assert [t.name for t in b.schema("x").tables] == [t.name for t in schema.tables]
        for mine, theirs in zip(b.schema("x").tables, schema.tables, strict=True):
            assert [c.name for c in mine.columns] == [c.name for c in theirs.columns]
        assert _table_hashes(b, schema.tables) == _table_hashes(a, schema.tables)


def test_a_dropped_key_column_takes_its_keys_with_it(clinic, tmp_path):
    _, duck = clinic
    materialize_duckdb(duck, OPS["key dropped"], tmp_path / "edited.duckdb")
    with DuckDBDatabase(tmp_path / "edited.duckdb") as db:
        tables = {t.name: t for t in db.schema("clinic").tables}
    assert tables["patients"].primary_key == []
    assert all(other != "patients" for _, other, _ in tables["admissions"].foreign_keys)
    assert ("hadm_id", "admissions", "hadm_id") in tables["icu_stays"].foreign_keys


def test_an_op_on_a_missing_table_or_column_is_a_materialize_error(clinic, tmp_path):
    _, duck = clinic
    for ops in ([drop_column("nowhere", "x")], [drop_column("patients", "nothing")]):
        with pytest.raises(SQLError) as error:
            materialize_duckdb(duck, ops, tmp_path / "edited.duckdb")
        assert error.value.reason == "materialize-failed"
    assert not (tmp_path / "edited.duckdb").exists()


def test_set_value_picks_the_rows_sqlite_picks_whatever_the_rowids():
    """SQLite samples its rowids, the engine its row positions: the same rows."""
    table = Table("t", [Column("id", "BIGINT"), Column("v", "VARCHAR")])
    rows = [[i, "a"] for i in range(50)]
    edited = edit_rows(table, rows, [set_value("t", "v", "zz", 5, 99)])
    import random

    rowids = list(range(1, 51))  # SQLite's, from 1
    chosen = random.Random(99).sample(rowids, 5)
    assert sorted(r[0] + 1 for r in edited.rows if r[1] == "zz") == sorted(chosen)


def test_engine_variants_are_made_once_and_reused_by_their_sidecar(clinic, tmp_path):
    _, duck = clinic
    ref = DatabaseRef("clinic", duck, DatabaseSchema("clinic"), "duckdb")
    store = EngineVariants(tmp_path / "variants")
    try:
        db = store.database(ref, OPS["values"])
        assert db.dialect == "duckdb"
        made = sorted(p.name for p in (tmp_path / "variants").iterdir())
        assert len(made) == 2 and made[0].endswith(".duckdb")
        stamp = (tmp_path / "variants" / made[0]).stat().st_mtime_ns
    finally:
        store.close()
    again = EngineVariants(tmp_path / "variants")
    try:
        again.database(ref, OPS["values"])
        assert (tmp_path / "variants" / made[0]).stat().st_mtime_ns == stamp
    finally:
        again.close()


def _parent(sql: str, ordered: bool = False) -> dict:
    return {"id": "p", "sql": sql, "dialect": "duckdb", "result": {"ordered": ordered}}


def test_prove_takes_the_engines_sql_and_result_and_refuses_a_disagreement(clinic, tmp_path):
    lite, duck = clinic
    ops = OPS["fill and drop"]
    materialize_full(lite, ops, tmp_path / "edited.sqlite")
    materialize_duckdb(duck, ops, tmp_path / "edited.duckdb")
    twin, engine = (
        ReadOnlyDatabase(tmp_path / "edited.sqlite"),
        DuckDBDatabase(tmp_path / "edited.duckdb"),
    )
    with twin, engine:
        # an unanswerable item: the gold SQL fails on both variants
        gone = _parent("SELECT ethnicity FROM patients")
        item = {"id": "i", "db_id": "clinic", "question": "q", "sql": None, "edit": {"ops": ops}}
        proved, why = prove(item, gone, twin, engine)
        assert why is None and proved["dialect"] == "duckdb" and proved["sql"] is None
        # a control: the engine's SQL and result replace SQLite's, the id follows the SQL
        kept = _parent("SELECT count(*) FROM patients")
        control = {**item, "sql": "SELECT count(*) FROM patients", "result": {"hash": "x"}}
        proved, why = prove(control, {**kept, "sql": "SELECT COUNT(*) FROM patients"}, twin, engine)
        assert why is None and proved["sql"] == "SELECT COUNT(*) FROM patients"
        assert proved["result"]["dialect"] == "duckdb" and proved["id"] != control["id"]
        # a reading whose hash the engine does not give back is refused with its name
        reading = {"name": "ethnic_group", "sql": "SELECT ethnic_group FROM patients LIMIT 1",
                   "result_hash": "not-this", "rows": [], "columns": []}  # fmt: skip
        proved, why = prove({**item, "readings": [reading]}, gone, twin, engine)
        assert proved is None and "reading ethnic_group gives another result" in why
        # the gold SQL runs on one variant and fails on the other (SQLite has no levenshtein)
        odd = _parent("SELECT levenshtein(gender, 'x') FROM patients")
        proved, why = prove(item, odd, twin, engine)
        assert proved is None and "runs on the duckdb variant but fails on the SQLite" in why


# --- PostgreSQL: the edited tables in the scratch schema, read through TEMP views -------

postgres_server, postgres_demo, postgres_reader = (  # fixtures
    server.postgres_server,
    server.postgres_demo,
    server.postgres_reader,
)


def _server_ref(reader, keep: bool = False):
    spec = SourceSpec(
        "clinic",
        "postgres",
        dsn=reader.dsn(),
        namespace="clinic",
        scratch=server.SCRATCH,
        keep_variants=keep,
    )
    ref = DatabaseRef("clinic", None, DatabaseSchema("clinic"), "postgres", spec)
    with ref.open(None) as database:
        ref.schema = database.schema("clinic")
    return ref


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_postgres_variant_holds_what_sqlites_edited_copy_holds(
    clinic, postgres_reader, tmp_path, name
):
    lite, _ = clinic
    ref = _server_ref(postgres_reader)
    materialize_full(lite, OPS[name], tmp_path / "edited.sqlite")
    schema = DatabaseSchema.from_sqlite(tmp_path / "edited.sqlite")
    store = EngineVariants(tmp_path / "variants")
    try:
        variant = store.database(ref, OPS[name])
        with ReadOnlyDatabase(tmp_path / "edited.sqlite") as copy:
            for table in schema.tables:  # the rows as a multiset: PostgreSQL has no rowid
                sql = f'SELECT * FROM "{table.name}"'
                mine = variant.execute(sql, ordered=False)
                assert mine.hash == copy.execute(sql, ordered=False).hash, table.name
                assert [c.lower() for c in mine.columns] == [c.name for c in table.columns]
    finally:
        store.close()
    # the source schema is untouched, and the copies go when the build ends
    with ref.open(None) as source:
        found = source.execute(
            "SELECT count(*) FROM admissions WHERE admission_type = 'Telehealth'"
        )
        assert found.rows == [[0]]
    assert drop_variants({"clinic": ref})
    assert _scratch_tables(postgres_reader) == []


def test_variants_are_dropped_while_a_session_still_reads_them(clinic, postgres_reader, tmp_path):
    """A forked worker's session (its TEMP views over the variant's tables) may still be
    open when the build drops its variants: the drop does not wait for it or fail."""
    ref = _server_ref(postgres_reader)
    store = EngineVariants(tmp_path / "variants")
    try:
        variant = store.database(ref, OPS["values"])
        assert variant.execute("SELECT count(*) FROM admissions").rows[0][0] > 0
        assert drop_variants({"clinic": ref})
        assert _scratch_tables(postgres_reader) == []
    finally:
        store.close()


def test_postgres_variants_are_kept_with_keep_variants(clinic, postgres_reader, tmp_path):
    kept = _server_ref(postgres_reader, keep=True)
    store = EngineVariants(tmp_path / "variants")
    try:
        store.database(kept, OPS["values"])
    finally:
        store.close()
    assert drop_variants({"clinic": kept}) == []
    made = _scratch_tables(postgres_reader)
    assert len(made) == 1 and made[0].endswith("_admissions")
    # reused, not made again, by a later store; then dropped by a build that keeps none
    again = EngineVariants(tmp_path / "variants")
    try:
        found = again.database(kept, OPS["values"]).execute(
            "SELECT count(*) FROM admissions WHERE admission_type = 'Telehealth'"
        )
        assert found.rows == [[40]]
    finally:
        again.close()
    assert drop_variants({"clinic": _server_ref(postgres_reader)}) == made


def _scratch_tables(reader) -> list[str]:
    import psycopg

    with psycopg.connect(reader.dsn()) as con:
        rows = con.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1", (server.SCRATCH,)
        )
        return [name for (name,) in rows]


def test_workers_racing_for_one_postgres_variant_both_get_it(postgres_reader, monkeypatch):
    """Two workers make the same variant at once: the second waits for the first's
    copies and reuses them (racing CREATE TABLEs of one name fail on the catalog's
    unique index, which once rejected a counterfactual item at random)."""
    import threading
    import time

    import psycopg

    from answerable.builders.engines import postgres_variants

    ref = _server_ref(postgres_reader)
    written = postgres_variants._write_postgres_table
    first_in = threading.Event()

    def slow_write(*args):  # the first worker holds its transaction open a while
        written(*args)
        if not first_in.is_set():
            first_in.set()
            time.sleep(0.5)

    monkeypatch.setattr(postgres_variants, "_write_postgres_table", slow_write)
    found, failed = [], []

    def make() -> None:
        with psycopg.connect(postgres_reader.dsn(), autocommit=True) as con:
            try:
                spec, schema = ref.server, ref.schema
                found.append(
                    postgres_variants.materialize_postgres(con, spec, schema, OPS["values"], "race")
                )
            except SQLError as error:
                failed.append(error)

    first = threading.Thread(target=make)
    first.start()
    first_in.wait()
    second = threading.Thread(target=make)
    second.start()
    first.join()
    second.join()
    try:
        assert failed == [] and len(found) == 2 and found[0] == found[1]
    finally:
        assert drop_variants({"clinic": ref})
