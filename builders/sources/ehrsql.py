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
    gold, relabelled = read_labels(labels)
    ids = [
        field_of(expect_entry(e, data, i), "id", str, data, f"data[{i}]")
        for i, e in enumerate(entries)
    ]
    places: dict[str, list[int]] = {}
    for index, external_id in enumerate(ids):
        places.setdefault(external_id, []).append(index)
    out = ExampleCollector(source, limit)
    for index, (entry, external_id) in enumerate(zip(entries, ids, strict=True)):
        if out.full:
            break
        question = field_of(entry, "question", str, data, f"data[{index}]")
        problem = id_problem(external_id, places[external_id], gold, relabelled, data, labels)
        if problem is not None:
            out.reject(external_id, *problem)
            continue
        out.add(ehrsql_example(source, db_id, question, gold[external_id], external_id))
    return out.finish(lambda name: schema_database(name, folder, schemas, tables))


def read_entries(path: Path) -> list:
    """The ``data`` list of an EHRSQL data file."""
    document = expect(read_json(path), dict, path, None, 'an object {"version", "data"}')
    return field_of(document, "data", list, path, "top level")


def expect_entry(entry, path: Path, index: int) -> dict:
    """One entry of the ``data`` list, which must be an object."""
    return expect(entry, dict, path, f"data[{index}]", "a question entry (object)")


def read_labels(path: Path) -> tuple[dict[str, str], set[str]]:
    """The id-to-SQL map of an EHRSQL label file (every value must be a string), and the
    ids it gives more than one label (JSON would keep the last one silently)."""
    repeated: list[str] = []
    labels = expect(read_json(path, repeated), dict, path, None, "an object mapping id to SQL")
    for key, value in labels.items():
        expect(value, str, path, key, 'SQL text or "null"')
    return labels, set(repeated)


def id_problem(
    external_id: str, places: list[int], gold: dict, relabelled: set[str], data: Path, labels: Path
) -> tuple[str, str] | None:
    """``(reason, detail)`` when an id cannot be trusted to pair a question with its
    label: used by two questions, labelled twice, or not labelled at all."""
    if len(places) > 1:
        shown = ", ".join(f"data[{i}]" for i in places)
        return "duplicate-id", f"{data} uses this id for {len(places)} questions ({shown})"
    if external_id in relabelled:
        return "duplicate-id", f"{labels} gives this id more than one label"
    if external_id not in gold:
        return "missing-label", f"{labels} has no label for this id"
    return None


def ehrsql_example(source: str, db_id: str, question: str, label: str, external_id: str) -> dict:
    """One example; the label ``"null"`` makes it unanswerable with no category."""
    sql = None if label.strip() == NO_ANSWER else label
    return new_example(source, db_id, question, sql, external_id=external_id)
