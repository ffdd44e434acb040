"""Source loaders: raw question/SQL inputs read into source examples and databases.

One loader per input format (``jsonl``, ``spider``, ``text2sql``, ``ehrsql``, ``tsv``/``csv``), each
returning :class:`SourceData`. :func:`load_source` reads one ``sources`` entry of a recipe,
:func:`load_sources` every entry, merged.
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders.engines import (
    DEFAULT_ENGINE,
    ENGINES,
    file_suffix,
    is_server,
    reads_sqlite_files,
)
from answerable.builders.sources.common import (
    LIMITS,
    DatabaseRef,
    SourceData,
    engine_database,
    find_database,
    server_database,
    within_limits,
)
from answerable.builders.sources.delimited import load_delimited
from answerable.builders.sources.ehrsql import load_ehrsql
from answerable.builders.sources.jsonl import load_jsonl
from answerable.builders.sources.spider import load_spider
from answerable.builders.sources.text2sql import load_text2sql
from answerable.kernel.errors import ConfigError
from answerable.kernel.recipe import Recipe

__all__ = [
    "FORMATS",
    "DatabaseRef",
    "SourceData",
    "load_ehrsql",
    "load_jsonl",
    "load_source",
    "load_sources",
    "load_spider",
    "load_text2sql",
]

FORMATS = ("jsonl", "spider", "text2sql", "ehrsql", "tsv", "csv")
# Formats that find each db_id's database by name, so it can live on another engine; the
# others name one SQLite file (text2sql's database:) or no database at all (tsv, csv).
ENGINE_FORMATS = ("jsonl", "spider", "ehrsql")
REQUIRED = {
    "jsonl": ("path", "databases"),
    "spider": ("path", "tables"),
    "text2sql": ("path", "database"),
    "ehrsql": ("path", "labels", "tables"),
    "tsv": ("path", "db_id"),
    "csv": ("path", "db_id"),
}


def load_source(
    spec: dict, base: Path, demo_dir: Path | None, limits: dict | None = None
) -> SourceData:
    """Load one recipe source entry; relative paths resolve against ``base``.

    ``databases: demo`` stands for ``demo_dir``, the generated demo databases. ``limits``
    is the recipe's ``limits`` section: an example past one of them is a ``too-long``
    reject naming the limit.
    """
    where = f"recipe source {spec.get('name', '<unnamed>')!r}"
    kind = spec.get("format")
    if kind not in FORMATS:
        raise ConfigError(
            where, "format", f"unknown format {kind!r}", fix=f"use one of: {', '.join(FORMATS)}"
        )
    server = is_server(spec.get("engine"))  # a server holds the databases
    for key in ("name", *REQUIRED[kind]):
        if not spec.get(key) and not (server and key == "databases"):
            raise ConfigError(
                where, key, f"required for format {kind}", fix=f"add {key}: to the source"
            )
    source_engine(spec, where, kind)
    paths = {
        key: resolve(spec, key, base, demo_dir)
        for key in ("path", "tables", "labels", "databases", "database", "schema")
    }
    limits = {**LIMITS, **(limits or {})}
    data = on_engine(
        dispatch(kind, spec, paths, limits["max_line_bytes"]), spec, paths["databases"], where
    )
    if not spec.get("follow_symlinks"):
        refuse_symlinks(data, where)
    return within_limits(kept_labels(data, spec), limits)


def refuse_symlinks(data: SourceData, where: str) -> None:
    """A source database that is a symlink (or sits in a symlinked ``<db_id>/`` folder)
    is refused: it would ship a file from elsewhere, whole, in the release."""
    for db_id in sorted(data.databases):
        path = data.databases[db_id].path
        if path is not None and (path.is_symlink() or path.parent.is_symlink()):
            raise ConfigError(
                where,
                "databases",
                f"the database of {db_id!r} ({path}) is a symbolic link",
                fix="copy the file into the folder, or set follow_symlinks: true on the source",
            )


def kept_labels(data: SourceData, spec: dict) -> SourceData:
    """Only the examples whose label the source's ``keep`` lists (all without it), and a
    note of how many were left out: a recipe that drafts its own unanswerable questions
    can leave a source's untyped ones out (TrustSQL over EHRSQL 2024)."""
    keep = spec.get("keep")
    if not keep:
        return data
    kept = [e for e in data.examples if e["label"] in keep]
    left = len(data.examples) - len(kept)
    if left:
        note = f"source {spec['name']!r}: {left} examples left out (keep: {', '.join(keep)})"
        data.notes = [*data.notes, note]
    data.examples = kept
    return data


def source_engine(spec: dict, where: str, kind: str) -> str:
    """The engine the source names (``sqlite`` when none); a ConfigError for an engine
    that is not known, or that this format's loader cannot read yet."""
    name = spec.get("engine", DEFAULT_ENGINE)
    if name not in ENGINES:
        known = ", ".join(sorted(ENGINES))
        raise ConfigError(where, "engine", f"unknown engine {name!r}", fix=f"use one of: {known}")
    readable = file_suffix(name) is not None or is_server(name)
    if not reads_sqlite_files(name) and (kind not in ENGINE_FORMATS or not readable):
        formats = ", ".join(ENGINE_FORMATS)
        raise ConfigError(
            where,
            "engine",
            f"a {kind} source reads SQLite files only; engine {name!r} is read by {formats} "
            "sources (they find each db_id's database by name: a file in a folder, or a "
            "schema on a server)",
            fix="remove engine:, or give the questions as a jsonl source",
        )
    return name


def on_engine(data: SourceData, spec: dict, folder: Path | None, where: str) -> SourceData:
    """``data`` with each database read by the engine the source names (a spider or
    ehrsql source; a jsonl source's loader reads its engine itself): ``<db_id>.duckdb``
    under ``databases`` for a file engine, the schema of that name (or ``schemas``'
    mapping) on the server for a server engine."""
    engine = spec.get("engine", DEFAULT_ENGINE)
    if reads_sqlite_files(engine) or spec.get("format") == "jsonl":
        return data
    for db_id in sorted(data.databases):
        if is_server(engine):
            data.databases[db_id] = server_database(spec, db_id, where)
            continue
        found = find_database(folder, db_id, file_suffix(engine))
        if found is None:
            raise ConfigError(
                where,
                "databases",
                f"no {engine} file for db_id {db_id!r} under {folder}",
                fix=f"add <databases>/{db_id}{file_suffix(engine)} or remove engine:",
            )
        data.databases[db_id] = engine_database(found, db_id, engine)
    return data


def resolve(spec: dict, key: str, base: Path, demo_dir: Path | None) -> Path | None:
    """The path under ``key``, made absolute against ``base``; None when absent."""
    value = spec.get(key)
    if value is None:
        return None
    if key == "databases" and value == "demo":
        if demo_dir is None:
            raise ConfigError(
                f"recipe source {spec['name']!r}",
                key,
                "no demo databases here",
                fix="generate the demo databases first, or name a folder",
            )
        return Path(demo_dir)
    return Path(base) / Path(value).expanduser()


def dispatch(
    kind: str, spec: dict, paths: dict[str, Path | None], max_line_bytes: int | None = None
) -> SourceData:
    """Call the loader of ``kind`` with the resolved paths."""
    name, limit = spec["name"], spec.get("limit")
    if kind in ("tsv", "csv"):
        return load_delimited(spec, paths, kind)
    if kind == "jsonl":
        engine = spec.get("engine", DEFAULT_ENGINE)
        server = spec if is_server(engine) else None
        return load_jsonl(
            paths["path"], name, paths["databases"], limit, max_line_bytes, engine, server
        )
    if kind == "spider":
        return load_spider(paths["tables"], paths["path"], name, paths["databases"], limit)
    if kind == "text2sql":
        return load_text2sql(paths["path"], name, paths["database"], spec.get("db_id"), limit)
    return load_ehrsql(
        paths["path"],
        paths["labels"],
        paths["tables"],
        name,
        spec.get("db_id") or "mimic_iv",
        paths["databases"],
        limit,
    )


def load_sources(recipe: Recipe) -> SourceData:
    """Every source of the recipe, merged; a db_id given two different files is an error."""
    merged = SourceData(examples=[], databases={}, rejects=[])
    for index, spec in enumerate(recipe.data["sources"]):
        data = load_source(spec, recipe.base, recipe.demo_dir, recipe.section("limits"))
        for db_id, ref in data.databases.items():
            known = merged.databases.get(db_id)
            if known is not None and known.path != ref.path:
                raise ConfigError(
                    recipe.file,
                    f"sources[{index}]",
                    f"database '{db_id}' is given twice, by different files",
                    fix="give each db_id one database file",
                )
            merged.databases.setdefault(db_id, ref)
        merged.examples += data.examples
        merged.rejects += data.rejects
        merged.notes += data.notes
    return merged
