"""Spider-style sources: ``tables.json``, a questions file and optional database files.

The questions file is a list of ``{db_id, question, query}``. A database with a file at
``<databases>/<db_id>/<db_id>.sqlite`` (or ``<databases>/<db_id>.sqlite``) is read from
that file; one without is schema-only, its schema taken from ``tables.json``.
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders.sources.common import (
    ExampleCollector,
    SourceData,
    check_folder,
    expect,
    field_of,
    new_example,
    read_json,
    schema_database,
    spider_tables,
)


def load_spider(
    tables: Path, questions: Path, source: str, databases: Path | None, limit: int | None = None
) -> SourceData:
    """Read a Spider questions file; ``external_id`` is the index in that file."""
    tables, questions = Path(tables), Path(questions)
    folder = check_folder(databases) if databases is not None else None
    schemas = spider_tables(tables)
    entries = expect(read_json(questions), list, questions, None, "a list of questions")
    out = ExampleCollector(source, limit)
    for index, entry in enumerate(entries):
        if out.full:
            break
        out.add(spider_example(entry, source, questions, index))
    return out.finish(lambda db_id: schema_database(db_id, folder, schemas, tables))


def spider_example(entry: object, source: str, path: Path, index: int) -> dict:
    """The source example of one Spider question entry."""
    where = f"[{index}]"
    entry = expect(entry, dict, path, where, "a question entry (object)")
    db_id = field_of(entry, "db_id", str, path, where)
    question = field_of(entry, "question", str, path, where)
    query = field_of(entry, "query", str, path, where)
    return new_example(source, db_id, question, query, external_id=str(index))
