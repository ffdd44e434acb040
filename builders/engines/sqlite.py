"""The SQLite engine: today's executor, unchanged.

Its gate (:func:`~answerable.builders.executor.install_gate`) and its opening
(:func:`~answerable.builders.opening.source_uri`, :func:`~answerable.builders.sqlite_files.connect`)
stay where they are; this module only names them as an engine.
"""

from __future__ import annotations

from answerable.builders.engines.base import Engine, SourceSpec
from answerable.builders.executor import GatedDatabase, Limits, ReadOnlyDatabase
from answerable.errors import SQLError


class SQLiteEngine(Engine):
    """SQLite files (a delta over its base with ``spec.base``)."""

    name = "sqlite"
    dialect = "sqlite"
    title = "SQLite"
    file_suffix = ".sqlite"

    def open(self, spec: SourceSpec, limits: Limits | None = None) -> ReadOnlyDatabase:
        """A :class:`ReadOnlyDatabase` on ``spec.path`` (gated, nothing written beside it,
        run in the worker process)."""
        return ReadOnlyDatabase(_path(spec), limits, base=spec.base)

    def open_here(self, spec: SourceSpec, limits: Limits | None = None) -> GatedDatabase:
        """The :class:`GatedDatabase` on ``spec.path``, in this process."""
        return GatedDatabase(_path(spec), limits, base=spec.base)


def _path(spec: SourceSpec):
    if spec.path is None:
        raise SQLError("bad-source", f"{spec.db_id}: a sqlite source needs a file path")
    return spec.path
