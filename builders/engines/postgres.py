"""The PostgreSQL engine: sources that live on a server, read through psycopg 3.

A source names a server by a libpq DSN (``dsn`` in the recipe, or ``dsn_env``, the
environment variable that holds it) and the schema its tables live in (``namespace``,
``public`` by default). The password may sit in the DSN, in ``PGPASSWORD`` or in
``~/.pgpass``; it is never printed: messages name the host, port, database and user only,
and any text the server or libpq sends back is scrubbed of it.

Untrusted SQL can change nothing, by four locks, each enough for the common cases:

1. **The role.** The build should log in as a role with SELECT rights only (the README
   says how). A superuser, or a member of ``pg_read_server_files``,
   ``pg_write_server_files`` or ``pg_execute_server_program``, is refused at open: such
   a role reads and writes server files (``pg_read_file``, ``lo_import``) even inside a
   read-only transaction.
2. **One read statement.** The text must start with SELECT, WITH or VALUES, and psycopg
   sends it with the extended protocol, which refuses a second statement.
3. **Functions with effects outside the transaction** are refused by name before the
   text is sent (:data:`REFUSED_FUNCTIONS`): ``pg_*`` (``pg_terminate_backend``,
   ``pg_read_file``, advisory locks, ``pg_sleep`` ...), the large-object ``lo_*``
   functions, ``dblink*``, ``set_config``/``current_setting``, the sequence functions,
   ``txid_*`` and the ``*_to_xml`` functions that run SQL given as text. A name is found
   anywhere in the text (in a string too: a false alarm only refuses the query), and
   ``U&"..."`` identifiers, which could spell a name otherwise, are refused.
4. **Every statement in a READ ONLY transaction that is rolled back**, under the
   session's ``statement_timeout`` (the limits' ``timeout_s``): the server refuses any
   write, and whatever a statement did to the session (a setting, a large object) is
   undone when it ends. The transaction is begun when the connection opens and after
   each statement by ``ROLLBACK AND CHAIN``, which rolls back and begins the next one
   READ ONLY again in one command, sent with the statement in one round trip (libpq's
   pipeline mode, see :class:`_Statement`: a BEGIN and a ROLLBACK per statement, or a
   rollback of its own, were a third to half of the engine's time); the session is
   exempt from ``idle_in_transaction_session_timeout`` so a build busy elsewhere keeps
   it.

The server measures a statement's time on the wall clock, which a busy machine stretches,
so a statement that passes the limit is run once more with the rest of the wall bound
SQLite's queries have (``WALL_FACTOR`` times the limit, both runs together) before it is
a ``timeout``: a build gives the same items on a loaded machine as on an idle one.

A text that runs a second time (a template's SQL with other values) is prepared, so the
server parses and plans it once (:class:`_Prepared`), as psycopg's own ``execute`` does;
every run of a text with parameters takes its generic plan (see :data:`_PLANS`).
Rows stream from the server in chunks, so a result of any size is hashed
in bounded memory; cells are turned into SQLite's kinds (:func:`.base.sqlite_cell`), so
the hash equals SQLite's for equal rows. One step comes first: a *computed* numeric
(``avg`` or ``sum`` of integers, which PostgreSQL keeps exact where SQLite and DuckDB
compute doubles) becomes a float, as the other engines give it; a stored
``numeric(p, s)`` keeps the base's rule. Parameters (``?`` in SQLite's SQL, ``%s`` after
sqlglot transpiles it) are bound as ``$1, $2 ...`` by the server.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import time
from collections.abc import Iterable
from pathlib import Path

from answerable.builders.engines import postgres_tables, postgres_variants
from answerable.builders.engines.base import Engine, SourceSpec, sqlite_rows
from answerable.builders.engines.postgres_catalog import read_schema
from answerable.builders.executor import (
    READ_KEYWORDS,
    Connected,
    Limits,
    Result,
    collect,
    first_keyword,
)
from answerable.builders.isolation import WALL_FACTOR
from answerable.builders.schema import quote_identifier
from answerable.kernel.errors import SQLError
from answerable.kernel.untrusted_text import register_secret

DEFAULT_NAMESPACE = "public"
DSN_ENV = "ANSWERABLE_POSTGRES_DSN"  # the cross-check's server when a recipe names none
COPY_PREFIX = "answerable_copy_"  # schemas the cross-check loads SQLite copies into
_STREAM_ROWS = 1000
# Session settings whose default comes from the server's configuration and that change
# what SQL returns (timestamptz arithmetic and its text, date text): pinned per session.
PINNED = "-c TimeZone=UTC -c DateStyle=ISO,MDY"
REFUSED_FUNCTIONS = re.compile(
    r"""\b(pg_\w+|lo_(?:import|export|unlink|creat|create|from_bytea|put|get|open|close|
    write|read|truncate\w*|lseek\w*|tell\w*)|dblink\w*|txid_\w+|\w*_to_xml\w*|set_config|
    current_setting|nextval|setval|currval|lastval)\b|u&\"""",
    re.IGNORECASE | re.VERBOSE,
)
# Roles whose members read or write the server's files, whatever the transaction says.
_FILE_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program")
_ROLE_CHECK = (
    "SELECT rolsuper, ARRAY(SELECT r FROM unnest(%s::text[]) AS r "
    "WHERE pg_has_role(current_user, r, 'MEMBER')) FROM pg_roles WHERE rolname = current_user"
)


def _psycopg():
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a dependency of the package
        raise SQLError(
            "bad-source", "the postgres engine needs psycopg 3 (pip install 'psycopg[binary]')"
        ) from None
    return psycopg


def resolve_dsn(spec: SourceSpec) -> str:
    """The DSN of ``spec``: its ``dsn``, else the variable ``dsn_env`` names.

    Raises :class:`SQLError` ``bad-source`` when neither is set, the DSN does not parse
    (libpq's own message is left out: it may quote the password) or names no database.
    """
    dsn = spec.dsn
    if dsn is None and spec.dsn_env:
        dsn = os.environ.get(spec.dsn_env)
        if not dsn:
            raise SQLError(
                "bad-source",
                f"{spec.db_id}: the environment variable {spec.dsn_env} is not set "
                "(fix: export it with the server's DSN, e.g. "
                "'host=db.example.org dbname=clinic user=reader')",
            )
    if not dsn:
        raise SQLError(
            "bad-source", f"{spec.db_id}: a postgres source needs dsn or dsn_env (fix: add one)"
        )
    keys = _dsn_keys(dsn, spec.db_id)
    register_secret(keys.get("password") or os.environ.get("PGPASSWORD"))
    if not keys.get("dbname") and not os.environ.get("PGDATABASE"):
        raise SQLError(
            "bad-source",
            f"{spec.db_id}: the DSN names no database (fix: add dbname=<name> to the DSN)",
        )
    return dsn


def _dsn_keys(dsn: str, db_id: str) -> dict:
    from psycopg import conninfo

    try:
        return conninfo.conninfo_to_dict(dsn)
    except Exception:
        raise SQLError(
            "bad-source",
            f"{db_id}: the DSN does not parse (fix: write it as 'host=... dbname=... "
            "user=...' or postgresql://user@host/dbname)",
        ) from None


def describe_dsn(dsn: str) -> str:
    """The parts of a DSN that may be shown: host, port, database and user.

    >>> describe_dsn("host=db port=5433 dbname=clinic user=reader password=secret")
    'host=db port=5433 dbname=clinic user=reader'
    """
    keys = _dsn_keys(dsn, "?")
    shown = ("host", "port", "dbname", "user")
    return " ".join(f"{key}={keys[key]}" for key in shown if keys.get(key))


def scrub(message: str, dsn: str) -> str:
    """``message`` on one line, with the DSN's password (and the DSN itself) taken out."""
    try:
        secret = _dsn_keys(dsn, "?").get("password") or os.environ.get("PGPASSWORD")
    except SQLError:
        secret = None
    text = " ".join(message.split())
    for hidden in (dsn, secret):
        if hidden:
            text = text.replace(hidden, "***")
    return text


def libpq_environment() -> dict[str, str]:
    """The ``PG*`` variables of this process, which libpq reads when it connects."""
    return {name: value for name, value in os.environ.items() if name.startswith("PG")}


def open_in_worker(dsn, namespace, setup, environment, limits) -> PostgresDatabase:
    """The SQL worker's opener: the caller's ``PG*`` variables (``environment``), not
    the fork's, then the session."""
    for name in [name for name in os.environ if name.startswith("PG")]:
        del os.environ[name]
    os.environ.update(environment)  # libpq reads PG* variables when it connects
    return PostgresDatabase(dsn, namespace, limits, setup=setup)


class PostgresEngine(Engine):
    """Sources in a PostgreSQL schema (see the module docstring)."""

    name = "postgres"
    dialect = "postgres"
    title = "PostgreSQL"
    is_server = True

    def open(self, spec: SourceSpec, limits: Limits | None = None):
        """The source opened in the worker process (see the base), its DSN resolved here,
        from this process's environment."""
        from answerable.builders.isolation import IsolatedDatabase

        namespace = spec.namespace or DEFAULT_NAMESPACE
        opener = (open_in_worker, (resolve_dsn(spec), namespace, (), libpq_environment()))
        return IsolatedDatabase(opener, limits or Limits(), self.dialect)

    def open_here(self, spec: SourceSpec, limits: Limits | None = None) -> PostgresDatabase:
        """Connect to ``spec``'s server and check its role (see the module docstring), in
        this process."""
        return PostgresDatabase(resolve_dsn(spec), spec.namespace or DEFAULT_NAMESPACE, limits)

    def reused_copy(self, db_id: str, target: Path) -> None:
        """None: a copy on the server is loaded anew each build (see the base)."""
        return None

    def copies_unavailable(self) -> tuple[str, str] | None:
        """Why copies cannot be made when ``$ANSWERABLE_POSTGRES_DSN`` names no server."""
        if os.environ.get(DSN_ENV):
            return None
        fix = f"export {DSN_ENV} with the DSN of a server where a role may create schemas"
        return f"{DSN_ENV} is not set", fix

    def copy_from_sqlite(self, sqlite_path: Path, target: Path) -> SourceSpec:
        """Load the SQLite file into the schema ``answerable_copy_<target's stem>`` on the
        server that ``$ANSWERABLE_POSTGRES_DSN`` names (a role allowed to create schemas;
        the prefix keeps a copy from ever replacing a source's schema)."""
        dsn = resolve_dsn(SourceSpec(Path(sqlite_path).stem, "postgres", dsn_env=DSN_ENV))
        namespace = COPY_PREFIX + re.sub(r"\W", "_", Path(target).stem.lower())
        with _connect(dsn) as con:
            postgres_tables.load_sqlite(con, sqlite_path, namespace)
        return SourceSpec(Path(sqlite_path).stem, "postgres", dsn_env=DSN_ENV, namespace=namespace)

    def export_sqlite(self, ref, path: Path, tables: Iterable[str] | None = None) -> Path:
        """The source's schema on its server written to ``path``, rows in physical order
        (see :func:`.postgres_tables.export_sqlite`), through a read-only session."""
        with _connect(resolve_dsn(ref.server)) as con:
            con.read_only = True
            namespace = ref.server.namespace or "public"
            wanted = tables if tables is not None else [t.name for t in ref.schema.tables]
            return postgres_tables.export_sqlite(con, namespace, wanted, path)

    def materialize_variant(self, ref, ops: list[dict], name: str, store):
        """The edited tables copied into the source's scratch schema (see
        :mod:`.postgres_variants`), shown by TEMP views in the session that reads them."""
        from answerable.builders.isolation import IsolatedDatabase

        spec = ref.server
        dsn = resolve_dsn(spec)
        writer = store.writer(dsn, lambda: _connect(dsn, autocommit=True))
        copies = postgres_variants.materialize_postgres(writer, spec, ref.schema, ops, name)
        setup = postgres_variants.shadowing_views(spec.scratch, copies)
        opener = (
            open_in_worker,
            (dsn, spec.namespace or DEFAULT_NAMESPACE, setup, libpq_environment()),
        )
        return IsolatedDatabase(opener, store.limits, self.dialect)

    def drop_variants(self, refs: list) -> list[str]:
        """Drop every variant table (marked by :data:`.postgres_variants.VARIANT_COMMENT`)
        in the scratch schema of each source that does not keep its variants."""
        dropped, seen = [], set()
        for spec in (ref.server for ref in refs):
            if spec is None or not spec.scratch or spec.keep_variants:
                continue
            dsn = resolve_dsn(spec)
            if (dsn, spec.scratch) not in seen:
                seen.add((dsn, spec.scratch))
                con = _connect(dsn, autocommit=True)
                dropped += postgres_variants.drop_marked(con, spec.scratch)
        return dropped


def _connect(dsn: str, **options):
    psycopg = _psycopg()
    try:
        return psycopg.connect(dsn, **options)
    except psycopg.Error as error:
        raise SQLError(
            "unreachable", f"PostgreSQL {describe_dsn(dsn)}: {scrub(str(error), dsn)}"
        ) from None


class PostgresDatabase(Connected):
    """One PostgreSQL schema opened for untrusted reads (the engine's :class:`Database`)."""

    dialect = "postgres"

    def __init__(self, dsn: str, namespace: str, limits: Limits | None = None, setup: list = ()):
        self.namespace = namespace
        self.limits = limits or Limits()
        self._dsn = dsn
        timeout_ms = max(1, int(self.limits.timeout_s * 1000))
        settings = (
            f"-c statement_timeout={timeout_ms} -c default_transaction_read_only=on "
            f"-c idle_in_transaction_session_timeout=0 {PINNED} -c {_PLANS}"
        )
        self._con = _connect(dsn, autocommit=True, options=settings)
        self._pending_rollback = False
        self._prepared = _Prepared()
        try:
            self._check_role()
            self._con.execute(
                "SELECT set_config('search_path', %s, false)", (quote_identifier(namespace),)
            )
            self._prepare(setup)
            self._con.execute("BEGIN READ ONLY")  # the first statement's transaction
        except BaseException:
            self._con.close()
            raise

    def _prepare(self, setup: list) -> None:
        """Run our own ``setup`` statements (a variant's TEMP views, see :mod:`.variants`)
        in one read-write transaction, committed before the first untrusted statement's
        READ ONLY transaction begins (the session's default stays read-only)."""
        if not setup:
            return
        with self._con.transaction():
            self._con.execute("SET TRANSACTION READ WRITE")
            for statement in setup:
                self._con.execute(statement)

    def _check_role(self) -> None:
        superuser, file_roles = self._con.execute(_ROLE_CHECK, (list(_FILE_ROLES),)).fetchone()
        if superuser or file_roles:
            why = "is a superuser" if superuser else f"is a member of {', '.join(file_roles)}"
            raise SQLError(
                "bad-source",
                f"PostgreSQL {describe_dsn(self._dsn)}: the role {why}, which reads and "
                "writes server files even in a read-only transaction (fix: log in as a "
                "role with SELECT rights only; see the README's PostgreSQL section)",
            )

    def execute(
        self,
        sql: str,
        params: tuple | dict = (),
        ordered: bool | None = None,
        row_cap: int | None = None,
        byte_cap: int | None = None,
    ) -> Result:
        """Run one read statement (see :class:`.base.Database`)."""
        from answerable.builders.executor import has_order_by

        refuse_unsafe(sql)
        if ordered is None:
            ordered = has_order_by(sql, self.dialect)
        cap = self.limits.row_cap if row_cap is None else row_cap
        byte_cap = self.limits.result_bytes if byte_cap is None else byte_cap
        query, values = _bind(sql, params)
        psycopg = _psycopg()
        try:
            try:
                return self._run(query, values, ordered, cap, byte_cap)
            except psycopg.errors.QueryCanceled as error:
                if "statement timeout" not in str(error):
                    raise
                self._allow_wall_bound()  # see the class docstring: a timeout is confirmed
                return self._run(query, values, ordered, cap, byte_cap)
        except psycopg.Error as error:
            raise classify(error, self._dsn) from None

    def _run(self, query: str, values, ordered: bool, cap: int, byte_cap: int) -> Result:
        """One statement in its READ ONLY transaction, its rows collected."""
        started = time.monotonic()
        self._settle()  # a rollback :meth:`schema` left in flight
        with _Statement(self._con, query, values, self._prepared) as (description, rows):
            columns = [name for name, _type, _scale in description]
            return collect(
                sqlite_rows([_computed_numerics_as_floats(rows, description)], columns),
                columns,
                ordered,
                cap,
                self.limits,
                byte_cap,
                started,
                self.dialect,
            )

    def _allow_wall_bound(self) -> None:
        """Give the next statement (in the transaction now open, whose rollback undoes
        the setting) the rest of the wall-time bound SQLite's queries have: the limit
        was spent once, ``WALL_FACTOR - 1`` times it are left."""
        bound_ms = max(1, int((WALL_FACTOR - 1) * self.limits.timeout_s * 1000))
        self._settle()
        self._con.execute("SELECT set_config('statement_timeout', %s, true)", (f"{bound_ms}",))

    def schema(self, db_id: str) -> object:
        """The schema of :attr:`namespace`, read from the catalog (see
        :mod:`.postgres_catalog`)."""
        psycopg = _psycopg()
        try:
            with self._rolled_back():
                return read_schema(self._con, self.namespace, db_id)
        except psycopg.Error as error:
            raise classify(error, self._dsn) from None

    @contextlib.contextmanager
    def _rolled_back(self):
        """Run the block in the open READ ONLY transaction, then roll it back and begin
        the next (lock 4 of the module docstring), whatever the block did or raised.

        The rollback is sent without waiting for the server's answer, which the next
        block (or :meth:`close`) takes first: the server runs commands in the order
        sent, so no statement ever starts before the previous one was rolled back, and
        the round trip overlaps the build's own work between statements (waited for at
        once, it made the engine twice as slow as psycopg alone on a busy machine)."""
        self._settle()
        try:
            yield
        finally:
            self._send_rollback()

    def _send_rollback(self) -> None:
        from psycopg import generators

        self._con.pgconn.send_query(b"ROLLBACK AND CHAIN")
        self._con.wait(generators.send(self._con.pgconn))
        self._pending_rollback = True

    def _settle(self) -> None:
        """Take the answer of the rollback sent after the last statement."""
        if not self._pending_rollback:
            return
        from psycopg import generators, pq

        self._pending_rollback = False
        for result in self._con.wait(generators.fetch_many(self._con.pgconn)):
            if result.status != pq.ExecStatus.COMMAND_OK:
                message = (result.error_message or b"").decode("utf-8", "replace")
                raise _psycopg().OperationalError(
                    f"the rollback after a statement failed: {message}"
                )

    def close(self) -> None:
        """Take the last rollback's answer, then close the connection."""
        try:
            self._settle()
        except _psycopg().Error:
            pass  # closing anyway: the server rolls back what a closed session left
        finally:
            self._con.close()


_MAX_PREPARED = 256  # named statements per session; texts past it run unprepared
_MAX_SEEN = 100_000  # texts remembered as run once (forgotten all at once past it)
# Every statement with parameters runs on its text's generic plan, prepared or not: the
# plan then depends on the text and the tables' statistics only, never on how many times
# this session ran the text (the server's default switches a prepared text to its generic
# plan after five runs, and which session reaches five depends on how the build's work
# was shared among processes: a generic plan may return an unordered result's rows in
# another order, so the kept rows would not be reproducible). A prepared text is then
# planned once, not once per run: planning every run made the engine a third slower than
# psycopg alone, whose statements reuse their plans after five runs.
_PLANS = "plan_cache_mode=force_generic_plan"
_ROLLBACK = b"ROLLBACK AND CHAIN"


class _Prepared:
    """The session's named statements: a text (with its parameters' types) that runs a
    second time is prepared, so the server parses and plans it once, as psycopg's own
    ``execute`` does after a few runs; at most :data:`_MAX_PREPARED` per session."""

    def __init__(self):
        self.names: dict[tuple, bytes] = {}
        self.seen: set[tuple] = set()

    def name(self, con, query: bytes, types: tuple) -> bytes | None:
        """The statement's name, prepared now when this is its second run; None to run
        it unprepared. Preparing is a round trip of its own (once per text), inside the
        open READ ONLY transaction, which a failure rolls back and begins again."""
        key = (query, types)
        if key in self.names:
            return self.names[key]
        if key not in self.seen or len(self.names) >= _MAX_PREPARED:
            if len(self.seen) >= _MAX_SEEN:  # texts that ran once: bounded memory
                self.seen.clear()
            self.seen.add(key)
            return None
        name = f"answerable_{len(self.names)}".encode()
        failed = con.pgconn.prepare(name, query, param_types=types or None)
        if failed.status != _pq().ExecStatus.COMMAND_OK:
            con.pgconn.exec_(_ROLLBACK)
            raise _psycopg().errors.error_from_result(failed, encoding=con.info.encoding)
        self.names[key] = name
        return name


def _pq():
    from psycopg import pq

    return pq


class _Statement:
    """One statement and the rollback after it, sent in one round trip (libpq's pipeline
    mode): the statement, ``ROLLBACK AND CHAIN``, a sync. The server runs them in order,
    so the statement has its READ ONLY transaction to itself and whatever it did is
    rolled back before anything else runs (lock 4 of the module docstring); when the
    statement fails, the server skips the rollback, which is then sent alone.

    Used as a context manager, it gives ``(description, rows)``: ``(name, type oid,
    type modifier)`` per column, and the rows streamed in chunks (libpq's chunked mode:
    bounded memory for any result). Leaving the block cancels a result not read to its
    end, then reads every answer still due, the rollback's last.
    """

    def __init__(self, con, query: str, values: tuple | None, prepared: _Prepared):
        from psycopg import generators
        from psycopg.adapt import PyFormat, Transformer

        self._con, self._pg, self._fetch = con, con.pgconn, generators.fetch
        self._tx = Transformer(con)
        text = query.encode(con.info.encoding)
        params = None
        if values:
            params = self._tx.dump_sequence(values, [PyFormat.AUTO] * len(values))
        types = tuple(self._tx.types) if values else ()
        name = prepared.name(con, text, types)
        pg = self._pg
        pg.enter_pipeline_mode()
        try:
            formats = self._tx.formats if values else None
            if name is None:
                pg.send_query_params(text, params, param_types=types or None, param_formats=formats)
            else:
                pg.send_query_prepared(name, params, param_formats=formats)
            if _pq().version() >= 170000:
                pg.set_chunked_rows_mode(_STREAM_ROWS)
            else:  # pragma: no cover - psycopg[binary] bundles a libpq 17 or later
                pg.set_single_row_mode()
            pg.send_query_params(_ROLLBACK, None)
            pg.pipeline_sync()  # sends the three at once
            con.wait(generators.send(pg))
        except BaseException:
            self._leave()
            raise
        self._done = False

    def _next(self):
        return self._con.wait(self._fetch(self._pg))

    def __enter__(self) -> tuple[list[tuple], object]:
        first = self._next()
        if first.status == _pq().ExecStatus.FATAL_ERROR:
            self._done = True
            self._leave()  # __exit__ does not run when __enter__ raises
            raise self._error(first)
        description = [
            (first.fname(i).decode(self._con.info.encoding), first.ftype(i), first.fmod(i))
            for i in range(first.nfields)
        ]
        return description, self._rows(first)

    def _rows(self, result):
        ExecStatus = _pq().ExecStatus
        self._tx.set_pgresult(result)
        while True:
            if result.status == ExecStatus.FATAL_ERROR:
                self._done = True
                raise self._error(result)
            if result.ntuples:
                self._tx.set_pgresult(result, set_loaders=False)
                yield from self._tx.load_rows(0, result.ntuples, tuple)
            if result.status != ExecStatus.TUPLES_CHUNK:
                break
            result = self._next()
        self._done = True

    def _error(self, result):
        return _psycopg().errors.error_from_result(result, encoding=self._con.info.encoding)

    def __exit__(self, *exc) -> None:
        if not self._done:  # a result left half-read: cancelled, its rows drained
            getattr(self._con, "cancel_safe", self._con.cancel)()
        self._leave()

    def _leave(self) -> None:
        """Read every answer up to the sync, then leave pipeline mode. When the statement
        failed, the server skipped the rollback sent with it (a pipeline skips what
        follows an error up to its sync), and a cancel may reach the rollback itself:
        then it is sent again, alone. Raises when that fails too (the connection is
        then unusable, as psycopg says)."""
        ExecStatus = _pq().ExecStatus
        pg, answers = self._pg, []
        try:
            while pg.pipeline_status:
                result = self._next()
                if result is not None and result.status == ExecStatus.PIPELINE_SYNC:
                    break
                answers.append(result)
        finally:
            pg.exit_pipeline_mode()
        rollback = [r for r in answers if r is not None][-1:]
        if not rollback or rollback[0].status != ExecStatus.COMMAND_OK:
            # skipped after a failed statement, or hit by the cancel of a half-read result
            # that reached the server once the statement had ended: sent again alone
            rollback = [pg.exec_(_ROLLBACK)]
        if not rollback or rollback[0].status != ExecStatus.COMMAND_OK:
            message = rollback[0].error_message if rollback else b"no answer"
            raise _psycopg().OperationalError(
                f"the rollback after a statement failed: {message.decode('utf-8', 'replace')}"
            )


def refuse_unsafe(sql: str) -> None:
    """Raise :class:`SQLError` unless ``sql`` is one read statement calling no refused
    function (locks 2 and 3 of the module docstring).

    >>> refuse_unsafe("SELECT pg_read_file('/etc/passwd')")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    answerable.kernel.errors.SQLError: function-not-allowed: pg_read_file may not run on ...
    """
    if first_keyword(sql) not in READ_KEYWORDS:
        raise SQLError("not-read-only", "only SELECT, WITH or VALUES statements may run")
    found = REFUSED_FUNCTIONS.search(sql)
    if found:
        name = found.group(1) or 'U&"..." identifiers'
        raise SQLError(
            "function-not-allowed",
            f"{name} may not run on a source (it acts outside the read-only transaction)",
        )


def _bind(sql: str, params: tuple | dict) -> tuple[str, tuple | None]:
    """The query and its values for psycopg: without values the text goes as it is (a
    ``%`` in it is then plain text); with values each placeholder (``%s`` or ``?`` in
    order, ``%(name)s`` or ``:name`` by name) becomes ``$n``, bound by the server."""
    if not params:
        return sql, None
    query, names = _numbered(sql)
    if isinstance(params, dict):
        missing = [name for name in names if name not in params]
        if missing:
            raise SQLError("sql-error", f"no value for the placeholder {missing[0]}")
        return query, tuple(params[name] for name in names)
    if len(names) != len(params):
        raise SQLError("sql-error", f"{len(names)} placeholders for {len(params)} values")
    return query, tuple(params)


@functools.lru_cache(maxsize=1024)
def _numbered(sql: str) -> tuple[str, tuple[str, ...]]:
    """``sql`` with its placeholders written ``$1, $2 ...`` and the name each number
    stands for (its position for unnamed ones). Cached: a template runs one text with
    many value sets."""
    from sqlglot import exp

    from answerable.builders import sqlkit

    tree = sqlkit.parse(sql, "postgres")
    names: list[str] = []
    for position, mark in enumerate(list(tree.find_all(exp.Placeholder, bfs=False))):
        # in the order written; sqlglot names an unnamed %s or ? mark "?"
        name = mark.name if mark.name not in ("", "?") else str(position)
        if name not in names:
            names.append(name)
        mark.replace(exp.Var(this=f"${names.index(name) + 1}"))
    return tree.sql(dialect="postgres"), tuple(names)


_NUMERIC = 1700  # the type oid of numeric


def _computed_numerics_as_floats(rows, description):
    """Rows with the cells of computed numerics (``numeric`` with no declared precision:
    ``avg`` and ``sum`` of integers, arithmetic on them) as floats; ``description`` is
    ``(name, type oid, type modifier)`` per column.

    PostgreSQL computes ``avg(bigint)`` exactly, to 16 decimals or more, where SQLite
    and DuckDB compute a double: the float is the value the other engines give, and the
    hash compares floats to 12 significant digits. A stored ``numeric(p, s)`` keeps its
    exact value and meets the base's rule (refused when a float cannot hold it).
    """
    computed = [
        i for i, (_, oid, modifier) in enumerate(description) if oid == _NUMERIC and modifier < 0
    ]
    if not computed:
        return rows
    return (_floats_at(row, computed) for row in rows)


def _floats_at(row: tuple, positions: list[int]) -> tuple:
    cells = list(row)
    for i in positions:
        if cells[i] is not None and cells[i].is_finite():
            cells[i] = float(cells[i])
    return tuple(cells)


_REASONS = {  # psycopg.errors class names -> the executor's reason codes
    "QueryCanceled": "timeout",
    "ReadOnlySqlTransaction": "not-read-only",
    "UndefinedColumn": "unknown-column",
    "AmbiguousColumn": "unknown-column",
    "UndefinedTable": "unknown-table",
    "InsufficientPrivilege": "permission-denied",
    "ProgramLimitExceeded": "too-big",
    "OutOfMemory": "too-big",
    "StatementTooComplex": "too-big",
}


def classify(error, dsn: str) -> SQLError:
    """The :class:`SQLError` for a psycopg error, its message scrubbed of the password."""
    message = scrub(str(error), dsn)
    name = type(error).__name__
    if "multiple commands" in message:
        return SQLError("multiple-statements", "only one SQL statement may run")
    if name in _REASONS:
        return SQLError(_REASONS[name], message)
    if name == "SyntaxError":
        return SQLError("parse-error", message)
    if name in ("OperationalError", "InterfaceError"):
        return SQLError("unreachable", f"PostgreSQL {describe_dsn(dsn)}: {message}")
    return SQLError("sql-error", message)
