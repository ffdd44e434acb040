"""The engines at scale: the demo templates expanded to 20,000 verified pairs on each
engine, each against that engine's own client, and every gold query cross-checked.

Generates the demo databases (seed 7) into a temporary folder and copies them into each
other engine (DuckDB files; PostgreSQL schemas when the PostgreSQL engine and a server
are at hand, see :func:`postgres_refs`). On each engine the demo templates are expanded
with quotas adding up to 20,000 (seed 13, one worker: the engines are compared, not the
pool), and timed: loading the templates, drawing values, writing and executing every
pair (kept or rejected), checking results and building the items (one connection per
database, kept open across the templates, as the template stage keeps it). The floor is the
engine's own client (``sqlite3``, ``duckdb``, ``psycopg``) running the same statements
the build sent to the engine (recorded as it ran: the value queries, then every pair,
kept or rejected, as its parameterized SQL with its values bound by the client) in one
plain loop, fetching all rows. The build and the floor are timed in turns in this one
process, template after template (each template's expansion, then the floor on the
statements it sent), so that a change in the machine's load falls on both; each ratio
is the build's total time over the floor's. The time of the
floor as first written, the kept pairs' final SQL alone, is printed beside it. Then
every SQLite gold query is
transpiled by sqlglot and run on each other engine's copy, its result hash compared
(``builders.engines.crosscheck.check_item``), and the disagreements are counted by kind.

The last line is exactly

    engines=sqlite,duckdb,postgres pairs=<n> ratio_sqlite=<a> ratio_duckdb=<b>
    ratio_postgres=<c> agree=<k> disagree=<d>

(one line), ``n`` the pairs made on SQLite, each ratio the engine's expansion time over
its floor (``n/a`` for an engine that could not run here, with the reason printed
above, or that was not asked for), ``agree``/``disagree`` over every (gold query, other
engine) pair. Run with ``python tests/benchmarks/bench_engines.py [engine ...]`` (all
engines by default; SQLite always runs).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from answerable.builders.demo import DEMO_DATABASES, generate_demo
from answerable.builders.engines import ENGINES, crosscheck
from answerable.builders.engines.base import SourceSpec
from answerable.builders.engines.duckdb import connect_read_only, copy_sqlite_to_duckdb
from answerable.builders.executor import Limits
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef
from answerable.builders.templates import Settings, expand_templates, load_templates
from answerable.builders.templates.expand import kept_open
from tests.benchmarks.bench_templates import quotas_for

REPO = Path(__file__).resolve().parents[2]
TARGET = 20_000
ENGINE_ORDER = ("sqlite", "duckdb", "postgres")


def client_floor(connect: Callable[[Path], object], paths: dict[str, Path]) -> Callable:
    """An engine's own client alone: every statement ``(db_id, sql, params)`` executed
    and fetched in one plain loop over connections ``connect(path)`` makes."""

    def run(statements: list[tuple]) -> float:
        cons = {db: connect(p) for db, p in paths.items()}
        started = time.perf_counter()
        for db, sql, params in statements:
            try:  # a statement the engine refused in the build fails here too
                if params:
                    cons[db].execute(sql, params).fetchall()
                else:
                    cons[db].execute(sql).fetchall()
            except Exception:  # each client raises its own kinds of error
                pass
        seconds = time.perf_counter() - started
        for con in cons.values():
            con.close()
        return seconds

    return run


def kept_statements(items: list[dict]) -> list[tuple]:
    """The floor as first written: the kept pairs' final SQL, values written in."""
    return [(item["db_id"], item["sql"], ()) for item in items]


class Recorder:
    """Every statement the build sends to an engine, ``(db_id, sql, params)`` in order:
    each engine's ``execute`` is wrapped while :meth:`recording` is on."""

    def __init__(self):
        self.statements: list[tuple] = []

    @contextlib.contextmanager
    def recording(self):
        """Record the statements run inside the block (and nothing else)."""
        from answerable.builders.engines.duckdb import DuckDBDatabase
        from answerable.builders.engines.postgres import PostgresDatabase
        from answerable.builders.executor import ReadOnlyDatabase

        classes = (ReadOnlyDatabase, DuckDBDatabase, PostgresDatabase)
        originals = {cls: cls.execute for cls in classes}
        self.statements = []
        for cls, original in originals.items():
            cls.execute = self._wrapped(original)
        try:
            yield self
        finally:
            for cls, original in originals.items():
                cls.execute = original

    def _wrapped(self, original: Callable) -> Callable:
        statements = self.statements

        def execute(db, sql, params=(), *args, **kwargs):
            where = getattr(db, "namespace", None) or Path(db.path).stem
            statements.append((where, sql, params))
            return original(db, sql, params, *args, **kwargs)

        return execute


def sqlite_connect(path: Path):
    """sqlite3 read-only on a demo file."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def duckdb_connect(path: Path):
    """duckdb's own client on a copy, opened as the engine opens it."""
    return connect_read_only(path)


def postgres_refs(paths: dict[str, Path]) -> tuple[dict, Callable | None, str]:
    """``(refs, floor, why_not)`` for PostgreSQL: empty with the reason when the engine
    or a server is not at hand. The hook the PostgreSQL engine's branch fills (a server
    started as tests/postgres_server.py does, the demo loaded into it)."""
    if "postgres" not in ENGINES:
        return {}, None, "no postgres engine in builders.engines.ENGINES"
    from tests import postgres_server as pg

    bindir = pg.postgres_bindir()
    if bindir is None:
        return {}, None, "PostgreSQL binaries not installed (apt-get install postgresql)"
    reader = _demo_server(bindir, paths)
    refs = {}
    for db in paths:
        spec = SourceSpec(db, "postgres", dsn=reader.dsn(), namespace=db)
        refs[db] = DatabaseRef(db, None, DatabaseSchema(db), "postgres", spec)
        with refs[db].open(None) as database:
            refs[db].schema = database.schema(db)
    return refs, postgres_floor(reader), ""


def _demo_server(bindir: Path, paths: dict[str, Path]):
    """A server started as the tests start theirs, the demo loaded into it, stopped when
    the benchmark ends; the cross-check copies into it as a role that may create schemas
    (``$ANSWERABLE_POSTGRES_DSN``). Returns the SELECT-only role's view of it."""
    import atexit
    import os
    import tempfile

    import psycopg

    from answerable.builders.engines.postgres import DSN_ENV
    from answerable.builders.engines.postgres_tables import load_sqlite
    from tests import postgres_server as pg

    folder = Path(tempfile.mkdtemp(prefix="answerable-pg-bench-"))
    admin = pg.start_server(bindir, folder)
    atexit.register(pg.stop_server, bindir, folder)
    with psycopg.connect(admin.dsn()) as con:
        for db, path in paths.items():
            load_sqlite(con, path, db)
    with psycopg.connect(admin.dsn(), autocommit=True) as con:
        con.execute("CREATE ROLE checker LOGIN PASSWORD 'checker'")
        con.execute(f'GRANT CREATE ON DATABASE "{admin.database}" TO checker')
    os.environ[DSN_ENV] = admin.dsn(user="checker", password="checker")
    return pg.grant_reader(admin, tuple(paths))


def postgres_floor(reader) -> Callable[[list[tuple]], float]:
    """psycopg alone: one autocommit connection per schema (the db_id), each statement
    executed (its values bound by psycopg) and all its rows fetched."""
    import psycopg

    def connect(schema: str):
        con = psycopg.connect(reader.dsn(), autocommit=True)
        con.execute(f'SET search_path = "{schema}"')
        return con

    return client_floor(connect, {db: db for db in DEMO_DATABASES})


def expand_in_turns(refs: dict, quotas: dict, floor: Callable) -> dict:
    """Expand every demo template over ``refs``, one template at a time, each followed by
    the floor running the statements that template's expansion sent (recorded as it
    ran): ``{"items", "rejects", "seconds", "floor_seconds", "statements"}``."""
    started = time.perf_counter()
    loaded = load_templates([REPO / "raw" / "demo" / "templates"], REPO / "raw" / "demo")
    found = {"items": [], "rejects": [], "seconds": time.perf_counter() - started}
    found |= {"floor_seconds": 0.0, "statements": 0}
    recorder = Recorder()
    with kept_open():  # as the template stage: one connection per source, not per call
        for template in sorted(loaded.templates, key=lambda t: t.id):
            with recorder.recording():
                started = time.perf_counter()
                made = expand_templates(
                    [template], refs, Settings(seed=13, attempts=4, workers=1), quotas=quotas
                )
                found["seconds"] += time.perf_counter() - started
            found["floor_seconds"] += floor(recorder.statements)
            found["statements"] += len(recorder.statements)
            found["items"] += made.items
            found["rejects"] += made.rejects
        started = time.perf_counter()
    found["seconds"] += time.perf_counter() - started  # closing them counts too
    return found


def disagreement_kind(found: dict) -> str:
    """A short name for what made a cross-checked query disagree."""
    if "error" not in found:
        return "different rows"
    message = found["error"]
    named = re.search(r"[Ff]unction with name (\w+)", message)
    if named:
        return f"no function {named.group(1).lower()}"
    return message.split(":", 1)[0]


def main(wanted: tuple[str, ...] = ENGINE_ORDER) -> None:
    """Run the benchmark on the engines ``wanted`` (sqlite always: the others are
    compared with it); the others' ratios print as ``n/a``."""
    wanted = ("sqlite", *wanted)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        paths = generate_demo(folder, 7)
        lite = {
            db: DatabaseRef(db, p, DatabaseSchema.from_sqlite(p, db)) for db, p in paths.items()
        }
        copies = {db: copy_sqlite_to_duckdb(p, folder / f"{db}.duckdb") for db, p in paths.items()}
        duck = {db: DatabaseRef(db, copies[db], lite[db].schema, "duckdb") for db in paths}
        for db, ref in duck.items():
            with ref.open(None) as database:
                ref.schema = database.schema(db)
        pg_refs, pg_floor, why_not = {}, None, "not asked for"
        if "postgres" in wanted:
            pg_refs, pg_floor, why_not = postgres_refs(paths)
        runs = {
            "sqlite": (lite, client_floor(sqlite_connect, paths)),
            "duckdb": (duck, client_floor(duckdb_connect, copies)),
        }
        if pg_floor is not None:
            runs["postgres"] = (pg_refs, pg_floor)
        else:
            print(f"postgres: not run ({why_not})")
        runs = {name: run for name, run in runs.items() if name in wanted}
        loaded = load_templates([REPO / "raw" / "demo" / "templates"], REPO / "raw" / "demo")
        quotas = quotas_for([t.id for t in loaded.templates], TARGET)
        ratios, made = {}, {}
        for name, (refs, floor) in runs.items():
            found = expand_in_turns(refs, quotas, floor)  # in turns: the same load on both
            items, rejects = found["items"], found["rejects"]
            kept_only = floor(kept_statements(items))
            made[name] = items
            ratios[name] = f"{found['seconds'] / found['floor_seconds']:.3f}"
            reasons = ", ".join(
                f"{k} {v}" for k, v in sorted(Counter(r["reason"] for r in rejects).items())
            )
            timing = (
                f"seconds={found['seconds']:.2f} floor_seconds={found['floor_seconds']:.2f} "
                f"statements={found['statements']} kept_sql_floor_seconds={kept_only:.2f}"
            )
            print(f"{name}: pairs={len(items)} {timing} rejects: {reasons}", flush=True)
        same = {
            name: len(
                {(i["question"], i["result"]["hash"]) for i in items}
                & {(i["question"], i["result"]["hash"]) for i in made["sqlite"]}
            )
            for name, items in made.items()
        }
        print(
            "pairs with the same question and result hash as on sqlite: "
            + ", ".join(f"{k} {v}" for k, v in same.items())
        )
        agree, kinds = 0, Counter()
        checkers = {
            name: crosscheck.Copies(folder / "cross", Limits(timeout_s=5))
            for name in runs
            if name != "sqlite"
        }
        by_sql = {i["sql"]: i for i in made["sqlite"]}
        for item in by_sql.values():
            for name, copies_of in checkers.items():
                found = crosscheck.check_item(item, copies_of.database(lite[item["db_id"]], name))
                if found["agrees"]:
                    agree += 1
                else:
                    kinds[(name, disagreement_kind(found))] += 1
        for copies_of in checkers.values():
            copies_of.close()
        print(
            f"gold queries cross-checked: {len(by_sql)}; disagreements by kind: "
            + ", ".join(f"{e} {k} {v}" for (e, k), v in sorted(kinds.items()))
        )
    print(
        f"engines={','.join(ENGINE_ORDER)} pairs={len(made['sqlite'])} "
        + " ".join(f"ratio_{name}={ratios.get(name, 'n/a')}" for name in ENGINE_ORDER)
        + f" agree={agree} disagree={sum(kinds.values())}"
    )


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or ENGINE_ORDER)  # e.g. "postgres": sqlite and postgres only
