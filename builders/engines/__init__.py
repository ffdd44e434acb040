"""Execution engines: where a source's data lives and how it is read.

:data:`ENGINES` maps a recipe's ``engine:`` value to its :class:`~.base.Engine`; a new
engine is one module here and one line in it. An engine declares what the rest of the
toolkit asks of it (its title, a file engine's suffix, whether it is a server, whether
its databases are SQLite files, how it writes a SQLite copy for a release, how it makes
a counterfactual variant): see :mod:`.base` for the interface. The functions
here answer those questions by the engine's name, reading the registry when asked.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from answerable.builders.engines.base import Database, Engine, SourceSpec
from answerable.builders.engines.duckdb import DuckDBEngine
from answerable.builders.engines.exports import tables_used
from answerable.builders.engines.postgres import PostgresEngine
from answerable.builders.engines.sqlite import SQLiteEngine
from answerable.builders.executor import Limits
from answerable.kernel.errors import SQLError

ENGINES: dict[str, type[Engine]] = {
    "sqlite": SQLiteEngine,
    "duckdb": DuckDBEngine,
    "postgres": PostgresEngine,
}

DEFAULT_ENGINE = "sqlite"

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "Database",
    "Engine",
    "SourceSpec",
    "engine",
    "export_source",
    "export_sources",
    "file_suffix",
    "is_server",
    "needs_export",
    "open_source",
    "reads_sqlite_files",
]


def engine(name: str) -> Engine:
    """The engine called ``name``; raises :class:`SQLError` ``unknown-engine`` naming the
    known ones (a recipe loader turns it into a ConfigError on its key)."""
    if name not in ENGINES:
        known = ", ".join(sorted(ENGINES))
        raise SQLError("unknown-engine", f"no engine '{name}' (known: {known})")
    return ENGINES[name]()


def open_source(spec: SourceSpec, limits: Limits | None = None) -> Database:
    """``spec`` opened read-only by the engine it names."""
    return engine(spec.engine).open(spec, limits)


def file_suffix(name: str) -> str | None:
    """The suffix of the database files of the file engine ``name`` (``.sqlite``), or
    None for a server engine or an unknown name."""
    return ENGINES[name].file_suffix if name in ENGINES else None


def is_server(name: str) -> bool:
    """Whether the engine ``name`` reads databases on a server (its sources name a
    server, not files)."""
    return name in ENGINES and ENGINES[name].is_server


def reads_sqlite_files(name: str) -> bool:
    """Whether the engine ``name`` reads SQLite files, which a release ships as they are
    (see :attr:`~.base.Engine.sqlite_files`)."""
    return name in ENGINES and ENGINES[name].sqlite_files


def needs_export(ref) -> bool:
    """Whether a source's database reaches a release as an exported SQLite file: a
    release ships SQLite files, so every database an engine reads from other files or
    a server is exported."""
    return ref is not None and ref.runs and not reads_sqlite_files(ref.engine)


def export_source(ref, path: Path, tables: Iterable[str] | None = None) -> Path:
    """The database of ``ref`` (a DatabaseRef read by another engine than SQLite)
    written by its engine to the SQLite file ``path``: ``tables`` only when given."""
    return engine(ref.engine).export_sqlite(ref, path, tables)


def export_sources(items: list[dict], databases: dict, folder: Path) -> dict[str, Path]:
    """``{db_id: SQLite file}`` for every database the items use that another engine
    reads: the tables their SQL and edits read (every table when none does), exported to
    ``folder/<db_id>.sqlite`` so a release ships files, as it does for SQLite sources."""
    made = {}
    for db_id in sorted({i["db_id"] for i in items}):
        ref = databases.get(db_id)
        if not needs_export(ref):
            continue
        known = {t.name.lower() for t in ref.schema.tables}
        wanted = tables_used(i for i in items if i["db_id"] == db_id) & known or known
        folder.mkdir(parents=True, exist_ok=True)
        made[db_id] = export_source(ref, folder / f"{db_id}.sqlite", wanted)
    return made
