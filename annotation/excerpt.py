"""What an annotator sees of the database: the part of the schema an item touches.

The excerpt lists the tables the item's SQL reads (its gold SQL, the SQL of its readings,
its parent's SQL for a draft), joined ones included, and the tables its trigger or schema
edit names, with their columns. Each column carries one mark:

- ``used``: the SQL reads it, or the trigger names it (the column the question is about);
- ``added``: the edit adds it (it is in the edited database, not the original);
- ``dropped``: the edit removes it;
- ``edited``: the edit changes its values (it stays, with other contents);
- ``absent``: the question asks for it, but it is in neither database (a missing column).

A table the SQL reads beside others, and which the trigger does not name, is marked
``joined``. An item that names no known table shows the whole schema. Pure functions:
the build computes excerpts once, at push time, from the original database's schema.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from answerable import __version__
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import SQLError

QUALIFIED = re.compile(r"^([A-Za-z_][\w$]*)\.([A-Za-z_][\w$ ]*)$")
EDIT_MARKS = {"drop_column": "dropped", "add_column": "added", "set_value": "edited"}
OLD_EDIT_KEYS = {"drop": "dropped", "add": "added"}  # {"drop": [...], "add": [...]}


def named_columns(value: Any) -> set[tuple[str, str]]:
    """Every ``table.column`` string inside a trigger or edit, as (table, column) pairs.

    >>> sorted(named_columns({"kind": "drop", "column": "patients.weight", "added": ["a.b"]}))
    [('a', 'b'), ('patients', 'weight')]
    """
    found: set[tuple[str, str]] = set()
    if isinstance(value, str):
        match = QUALIFIED.match(value.strip())
        if match:
            found.add((match.group(1), match.group(2)))
    elif isinstance(value, dict):
        for inner in value.values():
            found |= named_columns(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            found |= named_columns(inner)
    return found


def edit_marks(edit: Any) -> dict[tuple[str, str], str]:
    """(table, column) -> ``added``, ``dropped`` or ``edited`` for what a schema edit does.

    >>> edit_marks({"ops": [{"op": "set_value", "table": "p", "column": "eth"}]})
    {('p', 'eth'): 'edited'}
    >>> edit_marks({"drop": ["p.insurance"]})
    {('p', 'insurance'): 'dropped'}
    """
    marks: dict[tuple[str, str], str] = {}
    if not isinstance(edit, dict):
        return marks
    for op in edit.get("ops") or []:
        mark = EDIT_MARKS.get(op.get("op"))
        if mark and op.get("table") and op.get("column"):
            marks[(op["table"].lower(), op["column"].lower())] = mark
    for key, mark in OLD_EDIT_KEYS.items():
        for table, column in named_columns(edit.get(key)):
            marks[(table.lower(), column.lower())] = mark
    return marks


def item_sql(item: dict, parent_sql: str | None = None) -> list[str]:
    """The SQL texts an item shows: its gold SQL, its readings' SQL, its parent's SQL."""
    trigger = item.get("trigger") or {}
    texts = [item.get("sql"), *(trigger.get("readings") or []), parent_sql]
    texts += [r.get("sql") for r in item.get("readings") or [] if isinstance(r, dict)]
    return [t for t in texts if isinstance(t, str) and t.strip()]


Reads = Callable[[str, str], "tuple[tuple[str, ...], tuple[str, ...]] | None"]


def reads_or_none(sql: str, dialect: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``(tables, columns)`` ``sql`` reads (:func:`~answerable.builders.sqlkit.reads`), or
    None when it does not parse as a read-only query."""
    from answerable.builders.sqlkit import reads  # sqlglot: only for a text not read before

    try:
        return reads(sql, dialect)
    except SQLError:
        return None


class KnownReads:
    """:func:`reads_or_none` of each SQL text, kept in a JSON file between builds: a
    rebuild whose review queue shows the same SQL looks it up instead of parsing it
    again. The file names the sqlglot and answerable versions that read the texts (any
    other starts afresh) and keeps only the texts of the last build's queue. Use it as
    a context manager: the file is written at exit, when its texts changed."""

    def __init__(self, file: Path):
        self.file = file
        self.stamp = {"sqlglot": version("sqlglot"), "answerable": __version__}
        try:
            stored = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = {}
        fresh = isinstance(stored, dict) and stored.get("stamp") == self.stamp
        self.known: dict = stored.get("reads", {}) if fresh else {}
        self.used: dict = {}

    def __call__(self, sql: str, dialect: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        key = f"{dialect}\n{sql}"
        if key not in self.used:
            found = self.known.get(key, False)
            if found is False:
                found = reads_or_none(sql, dialect)
            self.used[key] = None if found is None else [list(found[0]), list(found[1])]
        found = self.used[key]
        return None if found is None else (tuple(found[0]), tuple(found[1]))

    def __enter__(self) -> KnownReads:
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None and self.used != self.known:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.file.with_suffix(".tmp")
            text = json.dumps({"stamp": self.stamp, "reads": self.used}, sort_keys=True)
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, self.file)


def read_by(
    texts: Iterable[str], dialect: str = "sqlite", lookup: Reads = reads_or_none
) -> tuple[set[str], set[tuple]]:
    """(tables, (table, column) pairs) the SQL texts read (each looked up with
    ``lookup``), lower-cased; unparsable SQL is skipped (the excerpt is a view, not a
    check)."""
    tables: set[str] = set()
    columns: set[tuple] = set()
    for sql in texts:
        found = lookup(sql, dialect)
        if found is None:
            continue
        read_tables, read_columns = found
        tables |= {t.lower() for t in read_tables}
        columns |= {tuple(c.lower().split(".", 1)) for c in read_columns if "." in c}
    return tables, columns


def schema_excerpt(
    item: dict,
    schema: DatabaseSchema | None,
    parent_sql: str | None = None,
    lookup: Reads = reads_or_none,
) -> list[dict]:
    """The tables an item touches with their columns marked (see the module docstring);
    ``lookup`` says what an SQL text reads (:class:`KnownReads` keeps it between builds)."""
    if schema is None:
        return []
    meta = item.get("sql_meta") or {}
    sql_tables, used = read_by(
        item_sql({**item, "sql": None}, parent_sql), item.get("dialect") or "sqlite", lookup
    )
    sql_tables |= {t.lower() for t in meta.get("tables") or []}
    used |= {tuple(c.lower().split(".", 1)) for c in meta.get("columns") or [] if "." in c}
    edits = edit_marks(item.get("edit"))
    named = {(t.lower(), c.lower()) for t, c in named_columns(item.get("trigger"))}
    named_tables = {t for t, _ in named} | {t for t, _ in edits}
    known = {t.name.lower() for t in schema.tables}
    tables = (sql_tables | named_tables) & known or known
    excerpt = []
    for table in schema.tables:
        low = table.name.lower()
        if low not in tables:
            continue
        columns = []
        for column in table.columns:
            key = (low, column.name.lower())
            mark = edits.get(key) or ("used" if key in used | named else None)
            columns.append({"name": column.name, "type": column.type, "mark": mark})
        have = {c["name"].lower() for c in columns}
        extra = {c for t, c in (*edits, *named) if t == low and c not in have}
        for name in sorted(extra):
            mark = edits.get((low, name)) or "absent"
            columns.append({"name": name, "type": "", "mark": mark})
        entry = {"name": table.name, "columns": columns}
        if len(sql_tables & known) > 1 and low in sql_tables and low not in named_tables:
            entry["joined"] = True
        excerpt.append(entry)
    return excerpt


def excerpt_markdown(excerpt: list[dict]) -> str:
    """The excerpt as Markdown for Argilla: one line per table, marks after columns.

    >>> excerpt_markdown([{"name": "t", "columns": [{"name": "a", "type": "INT", "mark": "used"},
    ...                                             {"name": "b", "type": "", "mark": "dropped"}]}])
    '- **t**: a INT *(used)*, ~~b~~ *(dropped)*'
    """
    lines = []
    for table in excerpt:
        columns = [_column_markdown(c) for c in table["columns"]]
        joined = " *(joined)*" if table.get("joined") else ""
        lines.append(f"- **{table['name']}**{joined}: " + ", ".join(columns))
    return "\n".join(lines)


def _column_markdown(column: dict) -> str:
    text = f"{column['name']} {column['type']}".strip()
    if column["mark"] == "dropped":
        text = f"~~{column['name']}~~"
    elif column["mark"] == "absent":
        text = f"_{column['name']}?_"
    elif column["mark"] == "added":
        text = f"**{column['name']}**"
    return text + (f" *({column['mark']})*" if column["mark"] else "")
