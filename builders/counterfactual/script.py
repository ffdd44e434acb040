"""Edit scripts: the JSON that names a database variant and rebuilds it.

An edit script is ``{"db_id": ..., "ops": [op, ...]}``; each op is a small dict:

- ``{"op": "add_column", "table", "column", "type", "source", "fill", "seed"}``: a new
  column filled from ``source``'s values by ``fill`` (see :mod:`.fills`), seeded;
- ``{"op": "drop_column", "table", "column"}``;
- ``{"op": "set_value", "table", "column", "value", "rows", "seed"}``: ``value`` written
  into ``rows`` rows of the column, chosen by the seed.

Ops apply in order, so near-synonyms are added (filled from the target) before the
target is dropped. The variant's id is the database id and a hash of the ops: one
distinct edit, one variant, however many items share it.

>>> ops = [drop_column("matches", "home_score")]
>>> variant_id("league", ops)
'league.860da95d8216'
>>> schema = DatabaseSchema("league", [Table("matches", [Column("home_score")])])
>>> [c.name for c in apply_to_schema(schema, ops).table("matches").columns]
[]
"""

from __future__ import annotations

from dataclasses import replace

from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.kernel.ids import content_hash


def drop_column(table: str, column: str) -> dict:
    """The op that removes ``table.column``."""
    return {"op": "drop_column", "table": table, "column": column}


def add_column(
    table: str, column: str, declared_type: str, source: str, fill: str, seed: int
) -> dict:
    """The op that adds ``table.column`` filled from ``source`` by ``fill``."""
    return {
        "op": "add_column",
        "table": table,
        "column": column,
        "type": declared_type,
        "source": source,
        "fill": fill,
        "seed": seed,
    }


def set_value(table: str, column: str, value, rows: int, seed: int) -> dict:
    """The op that writes ``value`` into ``rows`` seeded rows of ``table.column``."""
    return {
        "op": "set_value",
        "table": table,
        "column": column,
        "value": value,
        "rows": rows,
        "seed": seed,
    }


def edit_script(db_id: str, ops: list[dict]) -> dict:
    """The item's ``edit``: the database and the ops that make its variant."""
    return {"db_id": db_id, "ops": ops}


def variant_id(db_id: str, ops: list[dict]) -> str:
    """``<db_id>.<hash of ops>``: the name of the variant the ops make."""
    return f"{db_id}.{content_hash(ops, 12)}"


def apply_to_schema(schema: DatabaseSchema, ops: list[dict]) -> DatabaseSchema:
    """The schema after the ops: columns added and dropped, keys over a dropped column
    removed. Data ops leave the schema as it is."""
    tables = {t.name.lower(): _copy(t) for t in schema.tables}
    for op in ops:
        table = tables[op["table"].lower()]
        if op["op"] == "add_column":
            table.columns.append(Column(op["column"], op["type"]))
        elif op["op"] == "drop_column":
            _drop(table, op["column"])
    return DatabaseSchema(schema.db_id, [tables[t.name.lower()] for t in schema.tables])


def _copy(table: Table) -> Table:
    return replace(
        table,
        columns=list(table.columns),
        primary_key=list(table.primary_key),
        foreign_keys=list(table.foreign_keys),
    )


def _drop(table: Table, column: str) -> None:
    low = column.lower()
    table.columns = [c for c in table.columns if c.name.lower() != low]
    if any(k.lower() == low for k in table.primary_key):
        table.primary_key = []
    table.foreign_keys = [fk for fk in table.foreign_keys if fk[0].lower() != low]
