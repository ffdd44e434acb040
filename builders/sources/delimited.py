"""Tab- or comma-separated question files (``tsv``, ``csv``), such as OncoMX-NAQ's.

A column map names the file's columns for the fields of a source example (``question``,
``sql``, ``category``, ``subtype``, ``split``, ``id``; a field left out reads the column of
its own name, if any, and only ``question`` is required); a category map turns the
file's own category labels into the taxonomy's (or ``answerable``). Labels are matched
after trimming and folding case and runs of spaces, since hand-made files disagree on
those (NAQ's labels carry trailing spaces on some rows only); every label that needed
it is reported in a note. The file's label is kept on the example as
``source_category``.

The schema comes from a DDL file (``schema:``), a Spider-style ``tables.json``
(``tables:``) or a SQLite file (``database:``). Without a database file nothing runs:
answerable rows with SQL are verified by binding to the schema, not by execution.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from answerable.builders.drafting.categories import definitions
from answerable.builders.sources.common import (
    DatabaseRef,
    ExampleCollector,
    SourceData,
    new_example,
    read_text,
    spider_schema,
    spider_tables,
    sqlite_schema,
)
from answerable.builders.sources.ddl import ddl_schema
from answerable.kernel.errors import ConfigError

FIELDS = ("question", "sql", "category", "subtype", "split", "id")
"""The fields a column map may name; ``id`` becomes the example's ``external_id``."""

DELIMITERS = {"tsv": "\t", "csv": ","}


def normal_label(label: str) -> str:
    """How labels are compared: trimmed, runs of spaces folded, case folded.

    >>> normal_label("Operator Ambiguous ")
    'operator ambiguous'
    """
    return " ".join(label.split()).casefold()


def load_delimited(spec: dict, paths: dict[str, Path | None], kind: str) -> SourceData:
    """Read one ``tsv``/``csv`` source entry (its paths already resolved)."""
    path, source, db_id = paths["path"], spec["name"], spec["db_id"]
    where = f"recipe source {source!r}"
    categories = category_map(spec.get("categories") or {}, where)
    columns, rows = read_rows(path, DELIMITERS[kind], column_map(spec.get("columns") or {}, where))
    out, seen = ExampleCollector(source, spec.get("limit")), {}
    for number, row in rows:
        if out.full:
            break
        if isinstance(row, MalformedRow):
            out.reject(str(number), "malformed-row", f"{path} line {number}: {row.problem}")
            continue
        out.add(row_example(row, number, columns, categories, spec, path, seen))
    schema = source_schema(spec, paths, db_id, where)
    data = out.finish(lambda _db: DatabaseRef(db_id, paths.get("database"), schema))
    data.notes = label_notes(path, seen)
    return data


def column_map(columns: dict, where: str) -> dict[str, str]:
    """``{field: column header}`` as the recipe gives it (``question`` at least)."""
    unknown = sorted(set(columns) - set(FIELDS))
    if unknown:
        raise ConfigError(
            where, f"columns.{unknown[0]}", "not a field", fix=f"map one of: {', '.join(FIELDS)}"
        )
    return {"question": "question", **columns}


def category_map(categories: dict, where: str) -> dict[str, tuple[str, str | None]]:
    """``{normal label: (item label, category)}`` from the recipe's category map."""
    known = {d.name: d.label for d in definitions()}
    mapped = {}
    for theirs, ours in categories.items():
        if ours not in known:
            raise ConfigError(
                where,
                f"categories.{theirs}",
                f"unknown category {ours!r}",
                fix=f"map it to one of: {', '.join(sorted(known))}",
            )
        mapped[normal_label(theirs)] = (known[ours], None if ours == "answerable" else ours)
    return mapped


@dataclass(frozen=True)
class MalformedRow:
    """A record the CSV reader could not split into the header's fields."""

    problem: str


def read_rows(
    path: Path, delimiter: str, columns: dict[str, str]
) -> tuple[dict[str, str], list[tuple[int, dict | MalformedRow]]]:
    """The full column map and ``(line number, row)`` per data row, the row a
    :class:`MalformedRow` when the record cannot be trusted (more fields than the
    header, an unterminated quote, a cell over the CSV reader's size limit).

    A field the recipe does not map reads the column of its own name when there is one;
    a mapped column the header lacks is an error.
    """
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = [name.strip() for name in reader.fieldnames or []]
    except csv.Error as error:
        raise ConfigError(path, "header", f"not a readable header: {error}") from None
    reader.fieldnames = header
    for name, column in columns.items():
        if column not in header:
            raise ConfigError(
                path,
                "header",
                f"no column {column!r} for {name} (columns: {', '.join(header) or 'none'})",
                fix=f"add the column or map {name} to another one under columns:",
            )
    columns = {**{f: f for f in FIELDS if f in header}, **columns}
    return columns, list(records(reader))


def records(reader: csv.DictReader) -> Iterator[tuple[int, dict | MalformedRow]]:
    """``(line the record starts on, row or MalformedRow)`` for each non-blank record."""
    while True:
        start = reader.reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            yield start, MalformedRow(_csv_problem(error))
            continue
        if None in row:
            extra = len(row[None])
            yield start, MalformedRow(f"{extra} more field(s) than the header's {len(row) - 1}")
        elif any(row.values()):
            yield start, row


def _csv_problem(error: csv.Error) -> str:
    """The reader's complaint in the user's terms."""
    if "unexpected end of data" in str(error):
        return "a quote opened here is never closed (the rest of the file is inside it)"
    return str(error)


def row_example(
    row: dict,
    number: int,
    columns: dict[str, str],
    categories: dict,
    spec: dict,
    path: Path,
    seen: dict,
) -> dict:
    """The source example of one row; an unmapped category stops the load."""
    value = {name: (row.get(column) or "").strip() or None for name, column in columns.items()}
    fields = {"external_id": value.get("id") or str(number)}
    for name in ("subtype", "split"):
        if value.get(name):
            fields[name] = value[name]
    raw = row.get(columns["category"]) if "category" in columns else None
    if raw is not None and raw.strip():
        fields.update(mapped_category(raw, categories, path, number, spec))
        seen.setdefault(raw, 0)
        seen[raw] += 1
    elif value.get("sql") is None:
        fields["label"] = "unanswerable"
    return new_example(
        spec["name"], spec["db_id"], value["question"] or "", value.get("sql"), **fields
    )


def mapped_category(raw: str, categories: dict, path: Path, number: int, spec: dict) -> dict:
    """``label``, ``category`` and ``source_category`` of a row's label."""
    found = categories.get(normal_label(raw))
    if found is None:
        raise ConfigError(
            path,
            f"row {number}",
            f"category {' '.join(raw.split())!r} is not in the category map",
            fix=f"add it under categories: of source {spec['name']!r}",
        )
    label, category = found
    return {"label": label, "category": category, "source_category": " ".join(raw.split())}


def label_notes(path: Path, seen: dict[str, int]) -> list[str]:
    """One note per label that matched only once normalized, with how many rows had it."""
    return [
        f"{path}: category {raw!r} read as {' '.join(raw.split())!r} ({count} rows)"
        for raw, count in sorted(seen.items())
        if raw != " ".join(raw.split())
    ]


def source_schema(spec: dict, paths: dict, db_id: str, where: str):
    """The schema from ``schema`` (DDL), ``tables`` (Spider-style) or ``database``."""
    if paths.get("schema") is not None:
        return ddl_schema(paths["schema"], db_id)
    if paths.get("tables") is not None:
        return spider_schema(spider_tables(paths["tables"]), db_id, paths["tables"])
    if paths.get("database") is not None:
        return sqlite_schema(paths["database"], db_id)
    raise ConfigError(
        where,
        "schema",
        "a question file needs the schema of its database",
        fix="add schema: <DDL file>, tables: <tables.json> or database: <SQLite file>",
    )
