"""The PostgreSQL engine (builders/engines/postgres.py) against a real server: schema from
the catalog, result hashes equal to SQLite's, the row cap, bound parameters, read-only
proved (every write attempt fails and a checksum of the data shows nothing changed), and
every bad input as one named error that never holds the password."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import replace

import pytest
import sqlglot

from answerable.builders.engines import postgres as pg
from answerable.builders.engines.base import READ_ONLY_REASONS, SourceSpec
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.isolation import WALL_FACTOR
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import SQLError
from tests import postgres_server as server

psycopg = pytest.importorskip("psycopg")
postgres_server, postgres_demo, postgres_reader = (  # fixtures
    server.postgres_server,
    server.postgres_demo,
    server.postgres_reader,
)


def _open(srv, namespace="clinic", limits=None, **spec):
    spec = {"dsn": srv.dsn(), "namespace": namespace, **spec}
    return pg.PostgresEngine().open(SourceSpec(namespace, "postgres", **spec), limits)


def _open_here(srv, namespace="clinic"):
    spec = SourceSpec(namespace, "postgres", dsn=srv.dsn(), namespace=namespace)
    return pg.PostgresEngine().open_here(spec)


@pytest.fixture
def clinic(postgres_reader):
    db = _open(postgres_reader)
    yield db
    db.close()


@pytest.fixture
def clinic_here(postgres_reader):
    """The database opened in this process, for tests that patch the engine's module."""
    db = _open_here(postgres_reader)
    yield db
    db.close()


# --- schema and results ------------------------------------------------------------


@pytest.mark.parametrize("name", server.DEMO_SCHEMAS)
def test_schema_from_the_catalog_matches_the_sqlite_file(postgres_reader, demo_dir, name):
    """The SELECT-only role sees tables, columns and keys as SQLite's PRAGMAs give them
    (keys come from pg_constraint: information_schema hides them from this role)."""
    with _open(postgres_reader, name) as db:
        on_server = db.schema(name)
    on_file = DatabaseSchema.from_sqlite(demo_dir / f"{name}.sqlite")
    assert [t.name for t in on_server.tables] == [t.name for t in on_file.tables]
    for mine, theirs in zip(on_server.tables, on_file.tables, strict=True):
        assert [c.name for c in mine.columns] == [c.name for c in theirs.columns]
        assert mine.primary_key == theirs.primary_key
        assert mine.foreign_keys == theirs.foreign_keys
    kinds = {c.type for t in on_server.tables for c in t.columns}
    assert kinds <= {"BIGINT", "TEXT", "DOUBLE PRECISION"}, kinds


SAME_ON_BOTH = [
    "SELECT gender, count(*) FROM patients GROUP BY gender",
    "SELECT avg(length_of_stay), sum(subject_id), avg(subject_id) FROM icu_stays",
    "SELECT p.subject_id, a.hadm_id, a.admit_time FROM patients p JOIN admissions a "
    "ON a.subject_id = p.subject_id WHERE p.gender = 'F' ORDER BY a.hadm_id",
    "SELECT label, normal_low, normal_high, unit FROM d_lab_items ORDER BY item_id",
    "SELECT drug, min(dose_value), max(dose_value) FROM prescriptions GROUP BY drug",
    "SELECT count(*) FROM lab_events WHERE value IS NULL",
    "SELECT subject_id, date_of_death FROM patients ORDER BY subject_id LIMIT 7",
]


@pytest.mark.parametrize("sql", SAME_ON_BOTH)
def test_result_hash_equals_sqlite_for_equal_rows(clinic, demo_dir, sql):
    with ReadOnlyDatabase(demo_dir / "clinic.sqlite") as lite:
        expected = lite.execute(sql)
    got = clinic.execute(sqlglot.transpile(sql, read="sqlite", write="postgres")[0])
    assert got.row_count == expected.row_count > 0
    assert got.hash == expected.hash
    assert got.dialect == "postgres" and expected.dialect == "sqlite"


def test_row_cap_keeps_the_first_rows_and_hashes_them_all(clinic, demo_dir):
    sql = "SELECT subject_id FROM patients ORDER BY subject_id"
    full = clinic.execute(sql, row_cap=10_000)
    capped = clinic.execute(sql, row_cap=5)
    assert capped.rows == full.rows[:5] and capped.truncated and not full.truncated
    assert capped.row_count == full.row_count == 750
    assert capped.hash == full.hash


def test_parameters_are_bound_by_the_server(clinic):
    """Placeholders become $1, $2 ...; a % in a LIKE pattern stays plain text."""
    sql = sqlglot.transpile(
        "SELECT count(*) FROM patients WHERE gender = ? AND insurance LIKE '%a%' "
        "AND subject_id > ?",
        read="sqlite",
        write="postgres",
    )[0]
    bound = clinic.execute(sql, ("F", 100))
    literal = clinic.execute(
        "SELECT count(*) FROM patients WHERE gender = 'F' AND insurance LIKE '%a%' "
        "AND subject_id > 100"
    )
    assert bound.rows == literal.rows and bound.rows[0][0] > 0
    with pytest.raises(SQLError, match="1 placeholders for 2 values"):
        clinic.execute("SELECT count(*) FROM patients WHERE gender = %s", ("F", "M"))


# --- read-only, proved ---------------------------------------------------------------

WRITE_ATTEMPTS = [
    "DROP TABLE patients",
    "DELETE FROM patients",
    "UPDATE patients SET gender = 'X'",
    "INSERT INTO patients (subject_id) VALUES (0)",
    "SELECT 1; DELETE FROM patients",
    "COPY patients TO '/tmp/answerable-leak.csv'",
    "SET ROLE answerable",
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
    "SELECT lo_import('/etc/passwd')",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT dblink_exec('dbname=x', 'DROP TABLE patients')",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT query_to_xml('DELETE FROM patients RETURNING *', true, false, '')",
    "SELECT U&\"\\0070g_read_file\"('/etc/passwd')",
    "SELECT * INTO stolen FROM patients",
    "WITH gone AS (DELETE FROM patients RETURNING *) SELECT count(*) FROM gone",
    "SELECT * FROM patients FOR UPDATE",
    "SELECT nextval('patients_seq')",
]


def _checksum(srv) -> tuple:
    """Every demo table's rows, the large objects, the relations and the settings."""
    with psycopg.connect(srv.dsn()) as con:
        tables = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema IN ('clinic', 'league') ORDER BY 1, 2"
        ).fetchall()
        digests = [
            con.execute(
                f'SELECT md5(string_agg(t::text, \'|\' ORDER BY t::text)) FROM "{s}"."{n}" t'
            ).fetchone()[0]
            for s, n in tables
        ]
        objects = con.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()
        relations = con.execute("SELECT count(*) FROM pg_class").fetchone()
    return tables, digests, objects, relations


@pytest.mark.parametrize("sql", WRITE_ATTEMPTS)
def test_a_write_attempt_fails_and_changes_nothing(postgres_demo, postgres_reader, clinic, sql):
    before = _checksum(postgres_demo)
    with pytest.raises(SQLError) as caught:
        clinic.execute(sql)
    assert caught.value.reason in (*READ_ONLY_REASONS, "permission-denied", "unknown-table")
    assert _checksum(postgres_demo) == before
    assert clinic.execute("SELECT count(*) FROM patients").rows == [[750]]  # still usable


SERVER_REFUSES = [
    "SELECT lo_import('/etc/passwd')",
    "SELECT pg_read_file('/etc/passwd')",
    "WITH gone AS (DELETE FROM patients RETURNING *) SELECT count(*) FROM gone",
    "SELECT * INTO stolen FROM patients",
    "SELECT * FROM patients FOR UPDATE",
]


@pytest.mark.parametrize("sql", SERVER_REFUSES)
def test_without_the_name_check_the_server_still_refuses(
    postgres_demo, clinic_here, monkeypatch, sql
):
    """The role and the read-only transaction hold on their own (locks 1 and 4)."""
    monkeypatch.setattr(pg, "REFUSED_FUNCTIONS", re.compile(r"(?!x)x"))
    before = _checksum(postgres_demo)
    with pytest.raises(SQLError) as caught:
        clinic_here.execute(sql)
    assert caught.value.reason in ("not-read-only", "permission-denied")
    assert _checksum(postgres_demo) == before


def test_a_setting_changed_by_a_statement_is_undone(clinic_here, monkeypatch):
    monkeypatch.setattr(pg, "REFUSED_FUNCTIONS", re.compile(r"(?!x)x"))
    clinic_here.execute("SELECT set_config('statement_timeout', '0', false)")
    assert clinic_here.execute("SELECT current_setting('statement_timeout')").rows == [["2s"]]
    assert clinic_here.execute("SELECT current_setting('transaction_read_only')").rows == [["on"]]


# --- bad input: one line each, the password never shown -------------------------------


def _refused(srv, **spec) -> SQLError:
    with pytest.raises(SQLError) as caught:
        _open(srv, **spec).close()
    message = str(caught.value)
    assert "\n" not in message
    assert srv.password not in message
    return caught.value


def test_unreachable_server(postgres_reader):
    gone = replace(postgres_reader, port=server.free_port())
    error = _refused(gone)
    assert error.reason == "unreachable"
    assert f"port={gone.port}" in str(error) and "password" not in str(error)


def test_wrong_password(postgres_reader):
    error = _refused(postgres_reader, dsn=postgres_reader.dsn(password="not-the-password"))
    assert error.reason == "unreachable"
    assert "password authentication failed" in str(error)
    assert "not-the-password" not in str(error)


def test_dsn_without_a_database(postgres_reader, monkeypatch):
    monkeypatch.delenv("PGDATABASE", raising=False)
    error = _refused(postgres_reader, dsn=postgres_reader.dsn(dbname=None))
    assert error.reason == "bad-source"
    assert "names no database (fix: add dbname=" in str(error)


def test_dsn_that_does_not_parse_is_not_quoted(postgres_reader):
    error = _refused(postgres_reader, dsn=f"host=x password={postgres_reader.password} oops")
    assert error.reason == "bad-source" and "does not parse" in str(error)


def test_dsn_from_the_environment(postgres_reader, monkeypatch):
    monkeypatch.setenv("CLINIC_DSN", postgres_reader.dsn())
    with _open(postgres_reader, dsn=None, dsn_env="CLINIC_DSN") as db:
        assert db.execute("SELECT count(*) FROM admissions").row_count == 1
    monkeypatch.delenv("CLINIC_DSN")
    error = _refused(postgres_reader, dsn=None, dsn_env="CLINIC_DSN")
    assert "CLINIC_DSN is not set" in str(error)


def test_a_superuser_is_refused(postgres_demo):
    error = _refused(postgres_demo)
    assert error.reason == "bad-source"
    assert "is a superuser" in str(error) and "SELECT rights only" in str(error)


def test_a_table_without_select_is_a_named_reject(postgres_demo, postgres_reader):
    with psycopg.connect(postgres_demo.dsn(), autocommit=True) as admin:
        admin.execute(f"REVOKE SELECT ON clinic.lab_events FROM {server.READER}")
        try:
            with _open(postgres_reader) as db:
                assert db.schema("clinic").table("lab_events") is None
                with pytest.raises(SQLError) as caught:
                    db.execute("SELECT count(*) FROM lab_events")
        finally:
            admin.execute(f"GRANT SELECT ON clinic.lab_events TO {server.READER}")
    assert caught.value.reason == "permission-denied"
    assert "permission denied for table lab_events" in str(caught.value)


def test_statement_timeout(postgres_reader):
    with _open(postgres_reader, limits=Limits(timeout_s=0.2)) as db:
        with pytest.raises(SQLError) as caught:
            db.execute("SELECT count(*) FROM lab_events a, lab_events b, lab_events c")
        assert caught.value.reason == "timeout"
        assert db.execute("SELECT count(*) FROM patients").rows == [[750]]


def _locked_for(postgres_demo, seconds: float) -> threading.Thread:
    """A thread that holds an exclusive lock on clinic.patients for ``seconds`` (a
    statement that reads the table waits on the wall clock as on a busy machine); it
    returns once the lock is taken."""
    taken = threading.Event()

    def hold() -> None:
        with psycopg.connect(postgres_demo.dsn()) as admin:
            admin.execute("LOCK TABLE clinic.patients IN ACCESS EXCLUSIVE MODE")
            taken.set()
            time.sleep(seconds)

    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait()
    return thread


def test_a_statement_held_past_the_limit_by_the_machine_still_runs(
    postgres_demo, postgres_reader, monkeypatch
):
    """The limit is wall time on a server: a statement made to wait past it (here by a
    lock, as a loaded machine would) is run again under the rest of the wall bound and
    kept, so a busy machine does not change a build's items; one that waits past the
    bound too is a timeout, and the session's limit is the limit again after each."""
    monkeypatch.setattr(pg, "REFUSED_FUNCTIONS", re.compile(r"(?!x)x"))
    spec = SourceSpec("clinic", "postgres", dsn=postgres_reader.dsn(), namespace="clinic")
    with pg.PostgresEngine().open_here(spec, Limits(timeout_s=0.2)) as db:
        holder = _locked_for(postgres_demo, 0.6)
        assert db.execute("SELECT count(*) FROM patients").rows == [[750]]
        holder.join()
        assert db.execute("SELECT current_setting('statement_timeout')").rows == [["200ms"]]
        holder = _locked_for(postgres_demo, 0.2 * WALL_FACTOR + 1)
        try:
            with pytest.raises(SQLError) as caught:
                db.execute("SELECT count(*) FROM patients")
        finally:
            holder.join()
        assert caught.value.reason == "timeout"
        assert db.execute("SELECT current_setting('statement_timeout')").rows == [["200ms"]]


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("SELECT ARRAY[1, 2]", "an array"),
        ("SELECT '{\"a\": 1}'::jsonb", "a JSON object"),
        ("SELECT interval '1 day'", "an interval"),
        ("SELECT 1.12345678901234567890::numeric(30, 20)", "which a float cannot hold"),
    ],
)
def test_a_type_the_hash_does_not_know_is_a_named_reject(clinic, sql, words):
    with pytest.raises(SQLError) as caught:
        clinic.execute(sql)
    assert caught.value.reason == "unhashable-type" and words in str(caught.value)


def test_a_result_refused_half_read_leaves_the_connection_usable(clinic):
    """The stream is cancelled and drained: the next statement runs at once."""
    with pytest.raises(SQLError) as caught:
        clinic.execute("SELECT repeat('x', 200000) FROM generate_series(1, 50000)")
    assert caught.value.reason == "result-too-large"
    with pytest.raises(SQLError) as caught:
        clinic.execute("SELECT ARRAY[g] FROM generate_series(1, 50000) AS g")
    assert caught.value.reason == "unhashable-type"
    assert clinic.execute("SELECT count(*) FROM patients").rows == [[750]]


def test_a_text_run_again_is_prepared_and_gives_what_it_gave_unprepared(clinic_here):
    """A text's second run prepares it (one per text and parameter types); its results
    are those of the same SQL with the values written in."""
    sql = "SELECT count(*), min(subject_id) FROM patients WHERE gender = %s AND subject_id > %s"
    values = [(gender, low) for gender in "FM" for low in (100, 10200)]
    found = [clinic_here.execute(sql, pair) for pair in values]
    assert len(clinic_here._prepared.names) == 1
    for (gender, low), result in zip(values, found, strict=True):
        literal = clinic_here.execute(
            f"SELECT count(*), min(subject_id) FROM patients WHERE gender = '{gender}' "
            f"AND subject_id > {low}"
        )
        assert result.rows == literal.rows and result.hash == literal.hash
    clinic_here.execute(sql, ("F", "10200"))  # other parameter types: another statement
    assert len(clinic_here._prepared.names) == 1  # (prepared on its own second run)


def test_every_run_of_a_text_with_values_takes_its_generic_plan(clinic_here):
    """Prepared or not, first run or tenth, a text with values runs on its generic plan,
    so the plan (and an unordered result's row order) never depends on how many times a
    session ran it; a prepared text is planned once."""
    sql = "SELECT subject_id FROM admissions WHERE subject_id > %s"
    found = [clinic_here.execute(sql, (10100,)) for _ in range(8)]
    assert all(result.rows == found[0].rows for result in found)
    clinic_here._settle()  # our own catalog read, outside the gate
    plans = clinic_here._con.execute(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
    ).fetchall()
    clinic_here._send_rollback()
    assert plans == [(7, 0)]  # runs 2 to 8 prepared, none of them planned for its values


def test_a_prepared_text_that_fails_leaves_the_transaction_rolled_back(clinic_here, monkeypatch):
    """An error in a statement makes the server skip the rollback sent with it in the
    pipeline; it is sent again alone: the next statement is in a fresh READ ONLY
    transaction, with what the failed one's transaction did undone."""
    monkeypatch.setattr(pg, "REFUSED_FUNCTIONS", re.compile(r"(?!x)x"))
    sql = "SELECT set_config('statement_timeout', '0', false), 10 / %s"
    assert clinic_here.execute(sql, (5,)).rows == [["0", 2]]
    assert clinic_here.execute(sql, (2,)).rows == [["0", 5]]  # now prepared
    with pytest.raises(SQLError) as caught:
        clinic_here.execute(sql, (0,))
    assert "division by zero" in str(caught.value)
    assert clinic_here.execute("SELECT current_setting('statement_timeout')").rows == [["2s"]]
    assert clinic_here.execute("SELECT current_setting('transaction_read_only')").rows == [["on"]]
    assert clinic_here.execute(sql, (1,)).rows == [["0", 10]]


def test_a_cross_check_copy_never_replaces_a_source_schema(postgres_demo, demo_dir, monkeypatch):
    """copy_from_sqlite loads into answerable_copy_<name>, never into the schema the
    source lives in, even under a role allowed to replace it."""
    monkeypatch.setenv(pg.DSN_ENV, postgres_demo.dsn())
    before = _checksum(postgres_demo)
    spec = pg.PostgresEngine().copy_from_sqlite(demo_dir / "clinic.sqlite", demo_dir / "clinic")
    assert spec.namespace == "answerable_copy_clinic" and spec.dsn_env == pg.DSN_ENV
    assert _checksum(postgres_demo)[1] == before[1]  # the source schemas' rows unchanged


def test_like_ignores_ascii_case_on_the_server_as_on_sqlite(clinic, demo_dir):
    """SQLite's LIKE ignores ASCII case and PostgreSQL's does not: sqlkit writes ILIKE."""
    from answerable.builders import sqlkit

    sql = "SELECT count(*) FROM patients WHERE gender LIKE 'f'"
    with ReadOnlyDatabase(demo_dir / "clinic.sqlite") as lite:
        expected = lite.execute(sql)
    written = sqlkit.transpile(sql, "sqlite", "postgres")
    assert "ILIKE" in written and expected.rows[0][0] > 0
    assert clinic.execute(written).hash == expected.hash
    assert clinic.execute(sqlglot.transpile(sql, read="sqlite", write="postgres")[0]).rows == [[0]]


def test_time_zone_and_date_style_are_pinned_per_session(
    postgres_demo, postgres_reader, monkeypatch
):
    """The role's (or server's) own TimeZone and DateStyle do not reach the statements."""
    monkeypatch.setattr(pg, "REFUSED_FUNCTIONS", re.compile(r"(?!x)x"))
    role = f'ALTER ROLE "{postgres_reader.user}"'
    with psycopg.connect(postgres_demo.dsn(), autocommit=True) as con:
        con.execute(f"{role} SET TimeZone = 'America/New_York'")
        con.execute(f"{role} SET DateStyle = 'SQL, DMY'")
    try:
        with psycopg.connect(postgres_reader.dsn()) as plain:  # the role's defaults
            assert plain.execute("SHOW TimeZone").fetchone() == ("America/New_York",)
        with _open_here(postgres_reader) as clinic:
            shown = clinic.execute(
                "SELECT current_setting('TimeZone'), current_setting('DateStyle'), "
                "(TIMESTAMPTZ '2024-03-09 12:00:00+05' + INTERVAL '1 day')::text"
            )
        assert shown.rows == [["UTC", "ISO, MDY", "2024-03-10 07:00:00+00"]]
    finally:
        with psycopg.connect(postgres_demo.dsn(), autocommit=True) as con:
            con.execute(f"{role} RESET ALL")
