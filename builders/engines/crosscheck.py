"""Cross-engine agreement: each gold query run again on another engine, over a copy of
the same data, and its result compared by hash.

``execution.cross_check: [duckdb, postgres]`` names the engines. For every item whose
gold SQL was verified by execution on its source (not on an edited variant), the SQL is
transpiled by sqlglot from the dialect it was verified in into the other engine's
dialect and run on that engine's copy of the source (made once per source and engine,
see :class:`Copies`). Equal hashes mean the two engines give the same rows (see
:mod:`.base` for how cells of different engines are made comparable).

An item whose results differ, whose SQL cannot be written in the other dialect, or that
fails there, is rejected (``execution.on_disagreement: reject``, the default) with both
results in the reject, or kept with the finding (``flag``). Every checked item records
what was found under ``provenance.params.cross_check``: per engine, the transpiled SQL
and whether it agrees (the SQL in each dialect a release can carry).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from answerable.builders import sqlkit
from answerable.builders.engines import engine as engine_named
from answerable.builders.engines.base import Database, SourceSpec
from answerable.builders.executor import Limits
from answerable.kernel.errors import ConfigError, SQLError
from answerable.kernel.ids import sha256_file
from answerable.kernel.records import read_json, write_json
from answerable.pipeline import StepOutput, reject

STEP = "cross_check"
DISAGREES = "cross-check-disagrees"  # the reject reason of every finding
MODES = ("reject", "flag")


@dataclass
class Copies:
    """Each source copied once into each other engine, under ``root/<engine>/``.

    A copy is remade when its source's sha256 changed (a sidecar records it), so a
    rerun reuses the copies of an unchanged source.
    """

    root: Path
    limits: Limits
    _open: dict = field(default_factory=dict)

    def database(self, ref, name: str) -> Database:
        """The copy of ``ref`` (a DatabaseRef of a SQLite source) in engine ``name``."""
        key = (ref.db_id, name)
        if key not in self._open:
            self._open[key] = engine_named(name).open(self._copy(ref, name), self.limits)
        return self._open[key]

    def _copy(self, ref, name: str) -> SourceSpec:
        if not engine_named(ref.engine).sqlite_files:
            raise SQLError(
                "cross-check-unsupported",
                f"{ref.db_id} is read by {ref.engine}: copies are made from SQLite sources",
            )
        target = self.root / name / f"{ref.db_id}.{name}"
        sidecar = target.with_name(target.name + ".json")
        stamp = {"source_sha256": sha256_file(ref.path)}
        engine = engine_named(name)
        # the engine says what of an earlier copy can be reused: a file engine its file, a
        # server engine nothing (its copy, a schema, is loaded anew each build)
        reused = engine.reused_copy(ref.db_id, target)
        if reused is not None and sidecar.is_file() and read_json(sidecar) == stamp:
            return reused
        target.parent.mkdir(parents=True, exist_ok=True)
        spec = engine.copy_from_sqlite(ref.path, target)
        write_json(stamp, sidecar)
        return spec

    def close(self) -> None:
        """Close every copy opened."""
        for database in self._open.values():
            database.close()
        self._open.clear()


def checkable(item: dict) -> bool:
    """Whether an item has a gold result on its source to compare with."""
    return bool(item.get("sql")) and bool(item.get("result")) and not item.get("db_variant")


def check_item(item: dict, other: Database) -> dict:
    """What ``other`` says about ``item``'s gold query: ``{"sql", "agrees", "result"}``
    (``result`` only when it differs) or ``{"sql", "agrees": False, "error"}``."""
    written = item.get("dialect") or "sqlite"
    try:
        sql = sqlkit.transpile(item["sql"], written, other.dialect)
    except SQLError as error:
        return {"sql": None, "agrees": False, "error": str(error)}
    try:
        found = other.execute(sql, ordered=item["result"]["ordered"])
    except SQLError as error:
        return {"sql": sql, "agrees": False, "error": str(error)}
    if found.hash == item["result"]["hash"]:
        return {"sql": sql, "agrees": True}
    return {"sql": sql, "agrees": False, "result": found.to_record()}


def cross_check(
    items: list[dict], databases: dict, engines: list[str], copies: Copies, mode: str
) -> StepOutput:
    """The checked items (with ``provenance.params.cross_check``) and the rejects of
    those that disagree (``mode`` reject) or the flagged items (``mode`` flag)."""
    out = StepOutput()
    for item in sorted(items, key=lambda i: i["id"]):
        ref = databases.get(item["db_id"])
        if not checkable(item) or ref is None or ref.path is None:
            continue
        found = {
            name: check_item(item, copies.database(ref, name))
            for name in engines
            if name != ref.engine
        }
        if not found:
            continue
        checked = _with_findings(item, found)
        if all(f["agrees"] for f in found.values()) or mode == "flag":
            out.items.append(checked)
        else:
            out.rejects.append(_reject(item, found))
    return out


def _with_findings(item: dict, found: dict) -> dict:
    provenance = dict(item["provenance"])
    provenance["params"] = {**(provenance.get("params") or {}), "cross_check": found}
    return {**item, "provenance": provenance}


def _reject(item: dict, found: dict) -> dict:
    against = ", ".join(name for name, f in found.items() if not f["agrees"])
    what = "; ".join(f"{n}: {f['error']}" for n, f in found.items() if "error" in f)
    detail = f"{item.get('dialect') or 'sqlite'} and {against} give different results"
    return reject(
        item["id"],
        STEP,
        DISAGREES,
        f"{detail} ({what})" if what else detail,
        generator=item["provenance"].get("generator"),
        results={item.get("dialect") or "sqlite": item["result"]}
        | {n: f.get("result") for n, f in found.items() if not f["agrees"]},
        sql={item.get("dialect") or "sqlite": item["sql"]}
        | {n: f["sql"] for n, f in found.items()},
    )


def settings(recipe) -> tuple[list[str], str]:
    """``(engines, mode)`` from the recipe's ``execution`` section; a ConfigError names
    an unknown engine."""
    from answerable.builders.engines import ENGINES

    execution = recipe.section("execution")
    engines = list(execution.get("cross_check") or [])
    for name in engines:
        if name not in ENGINES:
            known = ", ".join(sorted(ENGINES))
            raise ConfigError(
                recipe.file,
                "execution.cross_check",
                f"unknown engine {name!r}",
                fix=f"use engines of: {known}",
            )
    return engines, execution.get("on_disagreement", "reject")
