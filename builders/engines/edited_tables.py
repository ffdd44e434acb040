"""An edit script applied to a table's rows, as the engine that holds them reads them.

A counterfactual variant on an engine other than SQLite is made by that engine
(:meth:`~answerable.builders.engines.base.Engine.materialize_variant`): it reads each
edited table's rows in its own order and writes them back with the ops applied. The ops
mean here what :mod:`answerable.builders.counterfactual.materialize` makes them mean on
SQLite, so a variant holds the same values on every engine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from answerable.builders.counterfactual.fills import fill_values
from answerable.builders.engines.base import sqlite_cell
from answerable.builders.schema import Table
from answerable.kernel.errors import SQLError


@dataclass
class EditedTable:
    """One table after the ops: its columns (name, engine type), its rows in the
    engine's order (an Arrow table for a table no op edits), and whether its keys
    survive."""

    table: Table
    columns: list[tuple[str, str]]
    rows: list[list] | Any
    dropped: set[str] = field(default_factory=set)  # lower-case names of dropped columns

    def primary_key(self) -> list[str]:
        """The table's primary key, or none when an op dropped one of its columns."""
        keys = self.table.primary_key
        return [] if any(k.lower() in self.dropped for k in keys) else list(keys)


def edit_rows(table: Table, rows: list[list], ops: list[dict]) -> EditedTable:
    """Apply ``ops`` (those of ``table``) to its ``rows`` (in the engine's order), as
    :mod:`answerable.builders.counterfactual.materialize` applies them on SQLite: an
    added column is filled from its source column's values (as SQLite holds them) in
    row order; ``set_value`` writes into the rows a ``random.Random(seed).sample`` of
    the row positions picks (the same positions SQLite's sample of its rowids picks)."""
    edited = EditedTable(table, [(c.name, c.type) for c in table.columns], [list(r) for r in rows])
    for op in ops:
        names = [name.lower() for name, _ in edited.columns]
        if op["op"] == "drop_column":
            at = _position(names, op, "column")
            del edited.columns[at]
            for row in edited.rows:
                del row[at]
            edited.dropped.add(op["column"].lower())
        elif op["op"] == "add_column":
            at = _position(names, op, "source")
            values = [sqlite_cell(row[at]) for row in edited.rows]
            filled = fill_values(op["fill"], values, op["seed"])
            edited.columns.append((op["column"], edited.columns[at][1]))
            for row, value in zip(edited.rows, filled, strict=True):
                row.append(value)
        elif op["op"] == "set_value":
            at = _position(names, op, "column")
            count = len(edited.rows)
            for index in random.Random(op["seed"]).sample(range(count), min(op["rows"], count)):
                edited.rows[index][at] = op["value"]
        else:
            raise SQLError("materialize-failed", f"unknown op {op['op']!r}")
    return edited


def _position(names: list[str], op: dict, key: str) -> int:
    try:
        return names.index(op[key].lower())
    except ValueError:
        raise SQLError(
            "materialize-failed", f"{op['op']}: {op['table']} has no column {op[key]}"
        ) from None


def ops_by_table(ops: list[dict]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for op in ops:
        found.setdefault(op["table"].lower(), []).append(op)
    return found


def describe_ops(ops: list[dict]) -> str:
    """The ops in a few words, for an error line (``drop_column t.c, ...``)."""
    return ", ".join(f"{op['op']} {op['table']}.{op['column']}" for op in ops)
