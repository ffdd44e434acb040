"""Gold SQL in other dialects: ``release.dialects: [duckdb, postgres]``.

A release's items carry their gold SQL in the dialect it was verified in (``dialect``).
With ``release.dialects``, each item also carries it in every dialect named, in the
typed field ``sql_by_dialect`` (one key per engine of
:data:`answerable.builders.engines.ENGINES`, null where not asked for or not verified).
Each translation is sqlglot's (``sqlkit.transpile``), and is kept only when it is
verified: run on a copy of the item's released database in that engine, it gives the
item's result hash (the cross-check's machinery,
:func:`answerable.builders.engines.crosscheck.check_item`). The copies are made from the
very files the release ships (an edited variant from its delta over its base, as
``answerable materialize --full`` makes it), so what is verified is what a consumer
runs. The item's own dialect needs no run: the build verified it.

A translation that sqlglot cannot write, that fails on the engine or that gives other
rows is a *failure*. ``release.on_dialect_failure`` says what becomes of its item:

* ``keep`` (the default): the item stays, with that dialect's key null. Its gold SQL is
  right in its own dialect; the failure is the translator's, and dropping the item
  would bias the release towards SQL that sqlglot happens to translate.
* ``drop``: the item leaves the release, so that every item runs in every dialect (a
  benchmark compared across engines needs the same items on each).

Either way the release's ``report.json`` lists every failure (item, engine, why) and
``manifest.json`` counts, per engine, the items verified and those that failed; the card
says the same in a sentence. Each engine makes its copies
(:meth:`~answerable.builders.engines.base.Engine.copy_from_sqlite`; PostgreSQL's go to
the server ``$ANSWERABLE_POSTGRES_DSN`` names, as the cross-check's do) and says when it
cannot (:meth:`~answerable.builders.engines.base.Engine.copies_unavailable`).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from answerable.builders.engines import ENGINES
from answerable.builders.engines import engine as engine_named
from answerable.builders.engines.crosscheck import check_item
from answerable.builders.executor import Limits
from answerable.kernel.errors import ConfigError, SQLError
from answerable.kernel.item_model import polars_schema

FIELD = "sql_by_dialect"
ON_FAILURE = ("keep", "drop")
# A translation is run once, on a fresh copy: allow more than a build's default, so a
# slower engine is not mistaken for a disagreeing one.
LIMITS = Limits(timeout_s=10.0)
_COLUMNS = ("id", "db_id", "db_variant", "sql", "dialect", "result", "edit", "database")


@dataclass
class DialectSettings:
    """``release.dialects`` and ``release.on_dialect_failure``."""

    engines: tuple[str, ...] = ()
    on_failure: str = "keep"


def dialect_settings(section: dict, file: str) -> DialectSettings:
    """The settings from a recipe's ``release`` section; a ConfigError names an engine
    that does not exist."""
    engines = tuple(section.get("dialects") or ())
    for name in engines:
        if name not in ENGINES:
            raise ConfigError(
                file,
                "release.dialects",
                f"unknown engine {name!r}",
                fix=f"use engines of: {', '.join(sorted(ENGINES))}",
            )
    return DialectSettings(engines, section.get("on_dialect_failure", "keep"))


@dataclass
class Translated:
    """What :class:`GoldInDialects` found: SQL per item and engine, and the failures."""

    sql: dict[str, dict[str, str]] = field(default_factory=dict)  # id -> engine -> SQL
    failures: list[dict] = field(default_factory=list)  # {"id", "engine", "reason"}

    def summary(self, settings: DialectSettings) -> dict:
        """The manifest's entry: per engine, items verified and items that failed."""
        counts = {
            name: {
                "verified": sum(name in by for by in self.sql.values()),
                "failed": sum(f["engine"] == name for f in self.failures),
            }
            for name in settings.engines
        }
        return {"engines": counts, "on_failure": settings.on_failure}


class GoldInDialects:
    """Gold SQL in other dialects, a chunk at a time: :meth:`add` fills each chunk of the
    release (in id order), :meth:`report` says what was found over all of them. The
    engines' copies of the databases are made once and kept until the block ends."""

    def __init__(self, folder: Path, settings: DialectSettings, file: str = "recipe"):
        for name in settings.engines:
            if unavailable := engine_named(name).copies_unavailable():
                why, fix = unavailable
                raise ConfigError(file, "release.dialects", f"{name} is named but {why}", fix=fix)
        self.folder, self.settings, self.found = Path(folder), settings, Translated()
        self._scratch: tempfile.TemporaryDirectory | None = None
        self._copies: _Copies | None = None

    def __enter__(self) -> GoldInDialects:
        return self

    def __exit__(self, *_) -> None:
        if self._copies is not None:
            self._copies.close()
            self._scratch.cleanup()

    def add(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` with :data:`FIELD` filled, without its failed items when they drop
        (unchanged when no dialect is asked for)."""
        if not self.settings.engines:
            return frame
        if self._copies is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="answerable-dialects-")
            self._copies = _Copies(self.folder, Path(self._scratch.name))
        failed = len(self.found.failures)
        rows = frame.select(_COLUMNS).to_dicts()
        _translate(rows, self.settings.engines, self._copies, self.found)
        if self.settings.on_failure == "drop":
            gone = _failed_ids(self.found.failures[failed:])
            frame = frame.filter(~pl.col("id").is_in(gone))
        dtype = polars_schema()[FIELD]
        column = pl.Series(FIELD, [self.found.sql.get(i) for i in frame["id"]], dtype=dtype)
        return frame.with_columns(column)

    def dropped(self) -> list[str]:
        """The ids of the items left out for a failure (none when they are kept)."""
        if self.settings.on_failure != "drop":
            return []
        return _failed_ids(self.found.failures)

    def report(self) -> dict:
        """The release report's ``dialects`` entry (empty when no dialect is asked for)."""
        if not self.settings.engines:
            return {}
        return self.found.summary(self.settings) | {"failures": self.found.failures}


def _failed_ids(failures: list[dict]) -> list[str]:
    """The ids of the items of ``failures``, each once, sorted."""
    return sorted({failure["id"] for failure in failures})


def translate(rows: list[dict], folder: Path, engines: tuple[str, ...]) -> Translated:
    """Every gold query of ``rows`` written and verified in each of ``engines`` over
    copies of the release's databases under ``folder``."""
    found = Translated()
    with tempfile.TemporaryDirectory(prefix="answerable-dialects-") as scratch:
        copies = _Copies(folder, Path(scratch))
        try:
            _translate(rows, engines, copies, found)
        finally:
            copies.close()
    return found


def _translate(rows: list[dict], engines: tuple[str, ...], copies: _Copies, found: Translated):
    for row in sorted(rows, key=lambda r: r["id"]):
        if row["sql"] and row["result"]:
            _translate_row(row, engines, copies, found)


def _translate_row(row: dict, engines: tuple[str, ...], copies: _Copies, found: Translated):
    written = row["dialect"] or "sqlite"
    item = {"sql": row["sql"], "dialect": written, "result": row["result"]}
    for name in engines:
        if name == written:
            verdict = {"sql": row["sql"], "agrees": True}
        elif not row["database"]:
            verdict = {"agrees": False, "error": "no database in the release to run it on"}
        else:
            try:
                verdict = check_item(item, copies.database(row, name))
            except SQLError as error:  # the copy could not be made or opened
                verdict = {"agrees": False, "error": str(error)}
        if verdict["agrees"]:
            found.sql.setdefault(row["id"], {})[name] = verdict["sql"]
        else:
            found.failures.append({"id": row["id"], "engine": name, "reason": _why(verdict)})


def _why(verdict: dict) -> str:
    if "error" in verdict:
        return verdict["error"]
    rows = verdict["result"]["row_count"]
    return f"different rows ({rows} rows, result hash {verdict['result']['hash'][:12]})"


class _Copies:
    """One copy per released database file (or variant) and engine, made on first use."""

    def __init__(self, folder: Path, scratch: Path):
        self.folder, self.scratch = folder, scratch
        self._open: dict = {}
        self._full: dict = {}

    def database(self, row: dict, name: str):
        """The copy in engine ``name`` of the database ``row`` was verified on."""
        where = row["database"]
        key = (where["base"], where["delta"], name)
        if key not in self._open:
            source = self._sqlite_file(row)
            # no dot: a server engine names its copy after the target's stem
            stem = f"release_{row['db_variant'] or row['db_id']}".replace(".", "_")
            (self.scratch / name).mkdir(parents=True, exist_ok=True)
            spec = engine_named(name).copy_from_sqlite(source, self.scratch / name / stem)
            self._open[key] = engine_named(name).open(spec, LIMITS)
        return self._open[key]

    def _sqlite_file(self, row: dict) -> Path:
        """The item's database as one whole SQLite file (a variant's edit applied)."""
        from answerable.builders.counterfactual.materialize import VariantStore

        base = self.folder / row["database"]["base"]
        if not row["database"]["delta"]:
            return base
        if "store" not in self._full:
            self._full["store"] = VariantStore(self.scratch / "full", full=True)
        edit = row["edit"] if isinstance(row["edit"], dict) else json.loads(row["edit"])
        return self._full["store"].ensure(row["db_id"], base, edit["ops"])

    def close(self) -> None:
        """Close every copy opened."""
        for database in self._open.values():
            database.close()
        self._open.clear()


def check_shipped(folder: Path, items: list[dict]) -> tuple[int, list[str]]:
    """Run each item's shipped :data:`FIELD` SQL on a copy of its released database in
    that engine and compare with its result hash (``answerable verify --execute``):
    ``(queries run, problems)``. An engine that cannot make copies here (PostgreSQL when
    ``$ANSWERABLE_POSTGRES_DSN`` names no server) is skipped; the item's own dialect was
    run by the caller."""
    problems, executed = [], 0
    with tempfile.TemporaryDirectory(prefix="answerable-dialects-") as scratch:
        copies = _Copies(Path(folder), Path(scratch))
        try:
            for item in items:
                for name, sql in sorted((item.get(FIELD) or {}).items()):
                    if not sql or name == (item["result"] or {}).get("dialect", "sqlite"):
                        continue
                    if engine_named(name).copies_unavailable():
                        continue
                    executed += 1
                    problem = _shipped_problem(item, name, sql, copies)
                    if problem:
                        problems.append(f"item {item['id']}: {name} SQL {problem}")
        finally:
            copies.close()
    return executed, problems


def _shipped_problem(item: dict, name: str, sql: str, copies: _Copies) -> str | None:
    try:
        got = copies.database(item, name).execute(sql, ordered=item["result"]["ordered"])
    except SQLError as error:
        return f"does not run ({error})"
    if got.hash != item["result"]["hash"]:
        return f"gives another result ({got.row_count} rows, hash {got.hash[:12]})"
    return None


def card_lines(manifest: dict) -> list[str]:
    """The card's sentence on the dialects the gold SQL ships in (none without them)."""
    dialects = manifest.get("dialects")
    if not dialects:
        return []
    parts = ", ".join(
        f"{name} {c['verified']} verified, {c['failed']} not"
        for name, c in dialects["engines"].items()
    )
    fate = "kept without it" if dialects["on_failure"] == "keep" else "left out of the release"
    return [
        f"Gold SQL in other dialects (`{FIELD}`), each translated by sqlglot and verified "
        f"by running it on a copy of the item's database in that engine: {parts}. An item "
        f"whose translation failed is {fate}; `report.json` lists each failure.",
        "",
    ]
