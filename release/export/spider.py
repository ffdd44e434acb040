"""Spider's layout: ``<split>.json`` (a list of ``{db_id, question, query}``) and
``tables.json`` (one schema entry per database).

Spider holds answerable questions only; every other item is left out. An item over an
edited variant is asked over that variant, so its ``db_id`` here is the variant's id and
``tables.json`` describes the variant's schema. Spider's token fields (``query_toks``,
``question_toks``, the parsed ``sql``) are not written: its own scripts derive them.
"""

from __future__ import annotations

from collections.abc import Mapping

from answerable.builders.schema import DatabaseSchema, Table
from answerable.release.export.common import Export, by_split, json_text
from answerable.release.reader import database_key

NOT_ANSWERABLE = "Spider holds answerable questions only (question with gold SQL)"
NO_SCHEMA = "the release ships no database for it, so tables.json cannot describe it"


def export(items: list[dict], schemas: Mapping[str, DatabaseSchema]) -> Export:
    """Spider's questions per split and ``tables.json`` for the databases they use."""
    out = Export()
    used: set[str] = set()
    for split, members in by_split(items).items():
        entries = []
        for item in members:
            key = database_key(item)
            if item["label"] != "answerable":
                out.leave_out(item, NOT_ANSWERABLE)
            elif key not in schemas:
                out.leave_out(item, NO_SCHEMA)
            else:
                used.add(key)
                entries.append({"db_id": key, "question": item["question"], "query": item["sql"]})
        if entries:
            out.files[f"{split}.json"] = json_text(entries)
    if used:
        out.files["tables.json"] = tables_json([schemas[key] for key in sorted(used)])
    return out


def tables_json(schemas: list[DatabaseSchema]) -> str:
    """Spider's ``tables.json`` text for ``schemas``."""
    return json_text([spider_entry(schema) for schema in schemas])


def spider_entry(schema: DatabaseSchema) -> dict:
    """One ``tables.json`` entry: Spider numbers columns across tables, ``*`` first."""
    columns: list[list] = [[-1, "*"]]
    types = ["text"]
    index: dict[tuple[str, str], int] = {}
    for table_number, table in enumerate(schema.tables):
        for column in table.columns:
            index[(table.name.lower(), column.name.lower())] = len(columns)
            columns.append([table_number, column.name])
            types.append(spider_type(column.type))
    primary = [
        index[(table.name.lower(), name.lower())]
        for table in schema.tables
        for name in table.primary_key
        if (table.name.lower(), name.lower()) in index
    ]
    foreign = [
        [index[source], index[target]]
        for table in schema.tables
        for source, target in foreign_pairs(table)
        if source in index and target in index
    ]
    return {
        "db_id": schema.db_id,
        "table_names_original": [t.name for t in schema.tables],
        "table_names": [natural(t.name) for t in schema.tables],
        "column_names_original": columns,
        "column_names": [[t, natural(name) if t >= 0 else name] for t, name in columns],
        "column_types": types,
        "primary_keys": primary,
        "foreign_keys": foreign,
    }


def foreign_pairs(table: Table) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """``((table, column), (other table, other column))`` of each foreign key, lower case."""
    name = table.name.lower()
    return [((name, c.lower()), (t.lower(), o.lower())) for c, t, o in table.foreign_keys]


def spider_type(declared: str) -> str:
    """Spider's coarse column type (text, number, time, boolean, others) of a SQLite type."""
    kind = declared.upper()
    if any(word in kind for word in ("INT", "REAL", "NUM", "DEC", "FLOA", "DOUB")):
        return "number"
    if any(word in kind for word in ("DATE", "TIME")):
        return "time"
    if "BOOL" in kind:
        return "boolean"
    if any(word in kind for word in ("CHAR", "TEXT", "CLOB")) or not kind:
        return "text"
    return "others"


def natural(name: str) -> str:
    """Spider's readable name of a table or column: lower case, spaces for underscores."""
    return name.replace("_", " ").lower()
