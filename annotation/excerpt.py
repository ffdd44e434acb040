"""What an annotator sees of the database: the part of the schema an item touches.

The excerpt lists the tables the gold SQL reads, or that the item's trigger or schema edit
names, with their columns; each column is marked ``used`` (the SQL reads it), ``edited``
(the trigger or edit names it: a dropped or changed column) or ``added`` (the edit names a
column the original database does not have). An item that names no table shows the whole
schema. Pure functions: the build computes excerpts once, at push time, from the
original database's schema.
"""

from __future__ import annotations

import re
from typing import Any

from answerable.builders.schema import DatabaseSchema

QUALIFIED = re.compile(r"^([A-Za-z_][\w$]*)\.([A-Za-z_][\w$ ]*)$")


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


def schema_excerpt(item: dict, schema: DatabaseSchema | None) -> list[dict]:
    """The tables an item touches with their columns marked (see the module docstring)."""
    if schema is None:
        return []
    meta = item.get("sql_meta") or {}
    used = {tuple(c.lower().split(".", 1)) for c in meta.get("columns") or [] if "." in c}
    named = named_columns(item.get("trigger")) | named_columns(item.get("edit"))
    tables = {t.lower() for t in meta.get("tables") or []} | {t.lower() for t, _ in named}
    known = {t.name.lower() for t in schema.tables}
    if not tables & known:
        tables = known
    excerpt = []
    for table in schema.tables:
        if table.name.lower() not in tables:
            continue
        columns = []
        for column in table.columns:
            key = (table.name.lower(), column.name.lower())
            edited = any((t.lower(), c.lower()) == key for t, c in named)
            mark = "edited" if edited else ("used" if key in used else None)
            columns.append({"name": column.name, "type": column.type, "mark": mark})
        have = {c["name"].lower() for c in columns}
        for t, c in sorted(named):
            if t.lower() == table.name.lower() and c.lower() not in have:
                columns.append({"name": c, "type": "", "mark": "added"})
        excerpt.append({"name": table.name, "columns": columns})
    return excerpt


def excerpt_markdown(excerpt: list[dict]) -> str:
    """The excerpt as Markdown for Argilla: one line per table, marks after columns.

    >>> excerpt_markdown([{"name": "t", "columns": [{"name": "a", "type": "INT", "mark": "used"},
    ...                                             {"name": "b", "type": "", "mark": "edited"}]}])
    '- **t**: a INT *(used)*, ~~b~~ *(edited)*'
    """
    lines = []
    for table in excerpt:
        columns = [_column_markdown(c) for c in table["columns"]]
        lines.append(f"- **{table['name']}**: " + ", ".join(columns))
    return "\n".join(lines)


def _column_markdown(column: dict) -> str:
    text = f"{column['name']} {column['type']}".strip()
    if column["mark"] == "edited":
        text = f"~~{column['name']}~~"
    elif column["mark"] == "added":
        text = f"**{column['name']}**"
    return text + (f" *({column['mark']})*" if column["mark"] else "")
