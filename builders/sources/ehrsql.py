"""EHRSQL 2024 sources: questions, labels, and a Spider-style schema.

``data.json`` is ``{"version", "data": [{"id", "question"}]}``; ``label.json`` maps each
id to its gold SQL, or to the string ``"null"`` when the question is unanswerable.
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

NO_ANSWER = "null"


def load_ehrsql(
    data: Path,
    labels: Path,
    tables: Path,
    source: str,
    db_id: str = "mimic_iv",
    databases: Path | None = None,
    limit: int | None = None,
) -> SourceData:
    """Read EHRSQL questions and labels; ``external_id`` is the EHRSQL id."""
    data, labels, tables = Path(data), Path(labels), Path(tables)
    folder = check_folder(databases) if databases is not None else None
    schemas = spider_tables(tables)
    entries = read_entries(data)
    gold = read_labels(labels)
    out = ExampleCollector(source, limit)
    for index, entry in enumerate(entries):
        if out.full:
            break
        where = f"data[{index}]"
        entry = expect(entry, dict, data, where, "a question entry (object)")
        external_id = field_of(entry, "id", str, data, where)
        question = field_of(entry, "question", str, data, where)
        if external_id not in gold:
            out.reject(external_id, "missing-label", f"{labels} has no label for this id")
            continue
        out.add(ehrsql_example(source, db_id, question, gold[external_id], external_id))
    return out.finish(lambda name: schema_database(name, folder, schemas, tables))


def read_entries(path: Path) -> list:
    """The ``data`` list of an EHRSQL data file."""
    document = expect(read_json(path), dict, path, None, 'an object {"version", "data"}')
    return field_of(document, "data", list, path, "top level")


def read_labels(path: Path) -> dict[str, str]:
    """The id-to-SQL map of an EHRSQL label file; every value must be a string."""
    labels = expect(read_json(path), dict, path, None, "an object mapping id to SQL")
    for key, value in labels.items():
        expect(value, str, path, key, 'SQL text or "null"')
    return labels


def ehrsql_example(source: str, db_id: str, question: str, label: str, external_id: str) -> dict:
    """One example; the label ``"null"`` makes it unanswerable with no category."""
    sql = None if label.strip() == NO_ANSWER else label
    return new_example(source, db_id, question, sql, external_id=external_id)
