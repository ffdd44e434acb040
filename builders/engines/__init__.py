"""Execution engines: where a source's data lives and how it is read.

:data:`ENGINES` maps a recipe's ``engine:`` value to its :class:`~.base.Engine`; a new
engine is one module here and one line in it. See :mod:`.base` for the interface.
"""

from __future__ import annotations

from answerable.builders.engines.base import Database, Engine, SourceSpec
from answerable.builders.engines.duckdb import DuckDBEngine
from answerable.builders.engines.postgres import PostgresEngine
from answerable.builders.engines.sqlite import SQLiteEngine
from answerable.builders.executor import Limits
from answerable.errors import SQLError

ENGINES: dict[str, type[Engine]] = {
    "sqlite": SQLiteEngine,
    "duckdb": DuckDBEngine,
    "postgres": PostgresEngine,
}

DEFAULT_ENGINE = "sqlite"

__all__ = ["DEFAULT_ENGINE", "ENGINES", "Database", "Engine", "SourceSpec", "engine", "open_source"]


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
