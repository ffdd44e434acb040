"""Counterfactual variants of sources, each made by the engine that reads the source.

An edited item is run on its engine's own copy of the edit. How that copy is made is
the engine's: :meth:`~answerable.builders.engines.base.Engine.materialize_variant`
(SQLite writes a delta over the source file, DuckDB a whole edited file, PostgreSQL the
edited tables into a scratch schema shown by TEMP views), and what it leaves behind at
the end of a build its :meth:`~answerable.builders.engines.base.Engine.drop_variants`
removes. An edit on a source that is not a SQLite file is proved on a SQLite twin
first (see :mod:`answerable.builders.counterfactual.on_engines`). This module keeps the
variants of one run (:class:`EngineVariants`), each made once and opened read-only, and
names no engine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from answerable.builders.counterfactual.script import variant_id
from answerable.builders.engines import engine, reads_sqlite_files
from answerable.builders.executor import Limits
from answerable.kernel.errors import SQLError


def on_engine(ref) -> bool:
    """Whether ``ref``'s database is read by an engine from other files than SQLite's or
    a server, and can be edited there (a server source names its scratch schema)."""
    if ref is None or not ref.runs or reads_sqlite_files(ref.engine):
        return False
    return ref.server is None or bool(ref.server.scratch)


def unedited(ref) -> str | None:
    """Why edits of ``ref``'s database cannot be made, or None."""
    if ref is not None and ref.server is not None and not ref.server.scratch:
        return (
            f"{ref.db_id} is on a {ref.engine} server whose source names no scratch schema "
            "for its variants (fix: add scratch_schema: <schema> to the source; see the README)"
        )
    return None


class EngineVariants:
    """Edited variants of sources, made once each by their engine and opened read-only.

    An engine's :meth:`~answerable.builders.engines.base.Engine.materialize_variant`
    writes its files under :attr:`root` and keeps its writable connections (or its own
    store of variants) here (:meth:`writer`), so that they are closed with the store."""

    def __init__(self, root: Path, limits: Limits | None = None):
        self.root = Path(root)
        self.limits = limits or Limits()
        self._open: dict[str, object] = {}
        self._writers: dict[object, object] = {}

    def database(self, ref, ops: list[dict]):
        """The variant of ``ref`` (a source's DatabaseRef) that ``ops`` make,
        opened read-only by its engine; ``ref`` itself when there are no ops."""
        name = variant_id(ref.db_id, ops) if ops else ref.db_id
        if name not in self._open:
            if ops and unedited(ref):
                raise SQLError("engine-not-supported", unedited(ref))
            if ops:
                made = engine(ref.engine).materialize_variant(ref, ops, name, self)
            else:
                made = ref.open(self.limits)
            self._open[name] = made
        return self._open[name]

    def writer(self, key, connect: Callable[[], object]):
        """The writable connection (or anything else with a ``close``) kept under
        ``key``, made by ``connect`` the first time (closed by :meth:`close`)."""
        if key not in self._writers:
            self._writers[key] = connect()
        return self._writers[key]

    def close(self) -> None:
        """Close every connection this store opened (variants stay; see :func:`drop_variants`)."""
        for database in self._open.values():
            database.close()
        for con in self._writers.values():
            con.close()
        self._open.clear()
        self._writers.clear()


def drop_variants(databases: dict) -> list[str]:
    """What each engine leaves of the variants of ``databases`` (``{db_id: DatabaseRef}``)
    at the end of a build, removed by the engine (variant tables on a server whose
    source does not keep them); return the names removed."""
    refs: dict[str, list] = {}
    for ref in databases.values():
        if getattr(ref, "engine", None):
            refs.setdefault(ref.engine, []).append(ref)
    return [
        name for kind, found in sorted(refs.items()) for name in engine(kind).drop_variants(found)
    ]
