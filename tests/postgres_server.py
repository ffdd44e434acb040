"""A real PostgreSQL server for the tests, from Debian's ``postgresql`` package.

``postgres_server`` (session-scoped) runs ``initdb`` and ``pg_ctl`` in a temporary folder
on a free port of 127.0.0.1 and stops the server at the end of the session. PostgreSQL
refuses to run as root and CI runs as root, so there the binaries run as the ``postgres``
user the package creates (``runuser``). Connections over TCP need the superuser's
password (scram-sha-256), so the wrong-password case is real; the password is random per
session. ``postgres_demo`` loads the two demo databases into the schemas ``clinic`` and
``league`` with the project's own loader (:mod:`answerable.builders.engines.postgres_tables`);
``postgres_reader`` is the same server seen by the build's role (SELECT on those schemas,
plus its own scratch schema), made as docs/how-to/read-from-a-postgresql-server.md says.

A test that needs the server skips with a reason only when the binaries are not
installed (``.ci/run`` installs them).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

SUPERUSER = "answerable"
DATABASE = "answerable_test"
DEMO_SCHEMAS = ("clinic", "league")


@dataclass(frozen=True)
class PostgresServer:
    """Where the test server listens and how to log in to it."""

    host: str
    port: int
    user: str
    password: str
    database: str

    def dsn(self, database: str | None = None, **overrides: str) -> str:
        """A libpq key/value DSN for this server (``overrides`` replace its keys)."""
        keys = {
            "host": self.host,
            "port": str(self.port),
            "user": self.user,
            "password": self.password,
            "dbname": database or self.database,
            "connect_timeout": "5",
        }
        keys.update(overrides)
        return " ".join(f"{key}={value}" for key, value in keys.items() if value is not None)


def postgres_bindir() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: Debian's newest version, else the PATH's."""
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_server_user(command: list[str]) -> list[str]:
    """``command`` as the ``postgres`` user when we are root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


def _give_to_server_user(folder: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")


def start_server(bindir: Path, folder: Path) -> PostgresServer:
    """Initialise a cluster in ``folder`` and start it on a free port of 127.0.0.1."""
    _give_to_server_user(folder)
    password = secrets.token_hex(16)
    pwfile = folder / "pw"
    pwfile.write_text(password + "\n")
    _give_to_server_user(pwfile)
    data = folder / "data"
    _run(
        [
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            SUPERUSER,
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ],
        folder,
    )
    pwfile.unlink()
    port = free_port()
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    _run(
        [
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(folder / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "start",
        ],
        folder,
    )
    server = PostgresServer("127.0.0.1", port, SUPERUSER, password, "postgres")
    _create_database(server, DATABASE)
    return PostgresServer("127.0.0.1", port, SUPERUSER, password, DATABASE)


def stop_server(bindir: Path, folder: Path) -> None:
    """Stop the server in ``folder`` (fast shutdown) and remove the folder."""
    subprocess.run(
        _as_server_user(
            [str(bindir / "pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "-w", "stop"]
        ),
        capture_output=True,
        check=False,
    )
    shutil.rmtree(folder, ignore_errors=True)


def _run(command: list[str], folder: Path) -> None:
    done = subprocess.run(_as_server_user(command), capture_output=True, text=True, cwd=folder)
    if done.returncode != 0:
        log = folder / "server.log"
        tail = log.read_text()[-2000:] if log.exists() else ""
        raise RuntimeError(f"{command[0]} failed: {done.stderr.strip()}\n{tail}")


def _create_database(server: PostgresServer, name: str) -> None:
    import psycopg

    with psycopg.connect(server.dsn(), autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')


READER = "answerable_reader"
SCRATCH = "answerable_scratch"


def grant_reader(server: PostgresServer, schemas: tuple[str, ...]) -> PostgresServer:
    """Create the login role the build uses (SELECT on ``schemas``, and its own scratch
    schema for counterfactual variants) and return the server as seen by that role.

    These are the statements docs/how-to/read-from-a-postgresql-server.md gives.
    """
    import psycopg
    from psycopg import sql

    password = secrets.token_hex(16)
    reader, scratch = sql.Identifier(READER), sql.Identifier(SCRATCH)
    with psycopg.connect(server.dsn(), autocommit=True) as con:
        con.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(scratch))
        if con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER,)).fetchone():
            con.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(reader))
            con.execute(sql.SQL("DROP ROLE {}").format(reader))
        con.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(reader, sql.Literal(password))
        )
        con.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                sql.Identifier(server.database), reader
            )
        )
        for name in schemas:
            schema = sql.Identifier(name)
            con.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, reader))
            con.execute(
                sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(schema, reader)
            )
        con.execute(sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(scratch, reader))
    return replace(server, user=READER, password=password)


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server for this test session (see the module docstring)."""
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install -e .)")
    bindir = postgres_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL binaries not installed (apt-get install postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="answerable-pg-"))
    try:
        server = start_server(bindir, folder)
    except BaseException:
        stop_server(bindir, folder)
        raise
    yield server
    stop_server(bindir, folder)


@pytest.fixture(scope="session")
def postgres_demo(postgres_server, demo_dir):
    """The server with the demo databases loaded into the schemas ``clinic`` and ``league``."""
    import psycopg

    from answerable.builders.engines.postgres_tables import load_sqlite

    with psycopg.connect(postgres_server.dsn()) as con:
        for name in DEMO_SCHEMAS:
            load_sqlite(con, demo_dir / f"{name}.sqlite", name)
    return postgres_server


@pytest.fixture(scope="session")
def postgres_reader(postgres_demo):
    """The demo server as the build's role sees it: SELECT on the demo schemas only (and
    its own scratch schema, ``answerable_scratch``)."""
    return grant_reader(postgres_demo, DEMO_SCHEMAS)
