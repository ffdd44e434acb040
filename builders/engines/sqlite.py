"""The SQLite engine: today's executor, unchanged.

Its gate (:func:`~answerable.builders.executor.install_gate`) and its opening
(:func:`~answerable.builders.source_files.source_uri`,
:func:`~answerable.builders.sqlite_files.connect`) stay where they are, and its
counterfactual variants are the deltas of
:class:`~answerable.builders.counterfactual.materialize.VariantStore`; this module only
names them as an engine.
"""

from __future__ import annotations

from answerable.builders.engines.base import Engine, SourceSpec
from answerable.builders.executor import GatedDatabase, Limits, ReadOnlyDatabase
from answerable.kernel.errors import SQLError


class SQLiteEngine(Engine):
    """SQLite files (a delta over its base with ``spec.base``)."""

    name = "sqlite"
    dialect = "sqlite"
    title = "SQLite"
    file_suffix = ".sqlite"
    sqlite_files = True

    def open(self, spec: SourceSpec, limits: Limits | None = None) -> ReadOnlyDatabase:
        """A :class:`ReadOnlyDatabase` on ``spec.path`` (gated, nothing written beside it,
        run in the worker process)."""
        return ReadOnlyDatabase(_path(spec), limits, base=spec.base)

    def open_here(self, spec: SourceSpec, limits: Limits | None = None) -> GatedDatabase:
        """The :class:`GatedDatabase` on ``spec.path``, in this process."""
        return GatedDatabase(_path(spec), limits, base=spec.base)

    def materialize_variant(self, ref, ops: list[dict], name: str, store) -> ReadOnlyDatabase:
        """The variant as a delta over the source file, made once under ``store.root``
        and reused by later runs while its source is unchanged (see
        :class:`~answerable.builders.counterfactual.materialize.VariantStore`, kept in
        ``store`` for the run)."""
        from answerable.builders.counterfactual.materialize import VariantStore  # sqlglot

        deltas = store.writer("sqlite-deltas", lambda: VariantStore(store.root, store.limits))
        return deltas.database(ref.db_id, _path(ref), ops)


def _path(spec: SourceSpec):
    if spec.path is None:
        raise SQLError("bad-source", f"{spec.db_id}: a sqlite source needs a file path")
    return spec.path
