"""The project's own seed format: one JSON object per line.

Each line is ``{"db_id", "question", "sql"}``; ``sql`` null or absent means the question
is unanswerable. Optional keys: ``label``, ``category``, ``split``, ``variables``. Any other
key is an error, so a misspelt ``sql`` cannot quietly turn every item unanswerable.
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders.engines import ENGINES
from answerable.builders.sources.common import (
    DatabaseRef,
    ExampleCollector,
    LineTooLong,
    SourceData,
    check_folder,
    engine_database,
    expect,
    field_of,
    find_database,
    new_example,
    read_jsonl,
    server_database,
)
from answerable.kernel.errors import ConfigError

KEYS = ("db_id", "question", "sql", "label", "category", "split", "variables")
OPTIONAL = {
    "label": (str, type(None)),
    "category": (str, type(None)),
    "split": (str, type(None)),
    "variables": (dict, type(None)),
}


def load_jsonl(
    path: Path,
    source: str,
    databases: Path | None,
    limit: int | None = None,
    max_line_bytes: int | None = None,
    engine: str = "sqlite",
    server: dict | None = None,
) -> SourceData:
    """Read a JSONL seed file whose databases are SQLite files under ``databases``.

    ``external_id`` is the line number. Every db_id must have a SQLite file
    (``<db_id>.sqlite`` or ``<db_id>/<db_id>.sqlite``): these seeds have no other schema.
    With ``engine`` another file engine's files are read (``<db_id>.duckdb`` ...); with
    ``server`` (the source entry of a server engine) each db_id is a schema on a server.
    """
    path = Path(path)
    if server is not None:
        where = f"recipe source {source!r}"
        return _examples(path, source, limit, max_line_bytes).finish(
            lambda db_id: server_database(server, db_id, where)
        )
    if databases is None:
        raise ConfigError(
            path,
            "databases",
            "a jsonl source needs its SQLite databases",
            fix="add databases: <folder> (or databases: demo) to the source",
        )
    folder = check_folder(databases)
    out = _examples(path, source, limit, max_line_bytes)
    return out.finish(lambda db_id: jsonl_database(folder, db_id, path, engine))


def _examples(path: Path, source: str, limit, max_line_bytes) -> ExampleCollector:
    out = ExampleCollector(source, limit)
    for number, line in read_jsonl(path, max_line_bytes):
        if out.full:
            break
        if isinstance(line, LineTooLong):
            out.reject(str(number), "too-long", line.detail())
            continue
        out.add(line_example(line, source, path, number))
    return out


def line_example(line: object, source: str, path: Path, number: int) -> dict:
    """The source example of one parsed JSONL line."""
    where = f"line {number}"
    line = expect(line, dict, path, where, "a JSON object")
    unknown = sorted(set(line) - set(KEYS))
    if unknown:
        raise ConfigError(path, where, f"unknown key {unknown[0]!r}; known keys: {', '.join(KEYS)}")
    db_id = field_of(line, "db_id", str, path, where)
    question = field_of(line, "question", str, path, where)
    sql = expect(line.get("sql"), (str, type(None)), path, f"{where}.sql")
    extra = {
        key: expect(line[key], kinds, path, f"{where}.{key}")
        for key, kinds in OPTIONAL.items()
        if key in line
    }
    return new_example(source, db_id, question, sql, external_id=str(number), **extra)


def jsonl_database(folder: Path, db_id: str, path: Path, engine: str = "sqlite") -> DatabaseRef:
    """The database of ``db_id`` under ``folder``; a missing file is a ConfigError."""
    suffix = ENGINES[engine].file_suffix
    found = find_database(folder, db_id, suffix)
    if found is None:
        raise ConfigError(
            path,
            "databases",
            f"no {ENGINES[engine].title} file for db_id {db_id!r} under {folder}",
            fix=f"add {folder / db_id}{suffix} or fix the db_id",
        )
    return engine_database(found, db_id, engine)
