"""The readings of an ambiguous item, each with its SQL and the first rows of its result.

An ambiguous item has two or more reasonable readings; a reviewer can only judge it by
seeing that they give different answers. The item field ``readings`` holds them when the
build stored them: ``[{"name", "sql", "columns", "rows" (first 5), "row_count",
"result_hash"}]``. Items built before that carry only the readings' SQL in their trigger
(column- and value-ambiguous edits: ``trigger.readings`` with the candidate columns
beside them); the page then runs them on the item's edited database when it shows the
item (:class:`ReadingRunner`).
"""

from __future__ import annotations

import threading
from pathlib import Path

from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.kernel.errors import SQLError

SHOWN_ROWS = 5
STORED = "stored with the item by the build"
RUN_NOW = "run now on the item's edited database"


def stored_readings(item: dict) -> tuple[list[dict], str]:
    """The readings the item carries, and where they come from (empty when none)."""
    readings = item.get("readings") or []
    return ([_shown(r) for r in readings], STORED) if readings else ([], "")


def pending_readings(item: dict) -> list[tuple[str, str]]:
    """(name, SQL) of each reading the trigger lists, named after the column it reads.

    >>> pending_readings({"trigger": {"readings": ["SELECT a FROM t", "SELECT b FROM t"],
    ...                               "candidates": ["t.a", "t.b"]}})
    [('t.a', 'SELECT a FROM t'), ('t.b', 'SELECT b FROM t')]
    """
    trigger = item.get("trigger") or {}
    sqls = [s for s in trigger.get("readings") or [] if isinstance(s, str)]
    names = trigger.get("candidates") or trigger.get("columns") or []
    if len(names) != len(sqls):
        names = [f"reading {n}" for n in range(1, len(sqls) + 1)]
    return list(zip(names, sqls, strict=True))


class ReadingRunner:
    """Runs an item's readings on its edited database when the item carries no stored
    results; each item's readings are run once per server."""

    def __init__(self, variants: Path, limits: Limits | None = None):
        self.variants, self.limits = Path(variants), limits or Limits()
        self._done: dict[str, list[dict]] = {}
        self._lock = threading.Lock()

    def __call__(self, item: dict) -> tuple[list[dict], str]:
        stored = stored_readings(item)
        if stored[0] or not pending_readings(item):
            return stored
        with self._lock:
            if item["id"] not in self._done:
                self._done[item["id"]] = self._run(item)
        return self._done[item["id"]], RUN_NOW

    def _run(self, item: dict) -> list[dict]:
        from answerable.builders.counterfactual.materialize import variant_base  # sqlglot

        path = self.variants / f"{item.get('db_variant')}.sqlite"
        pending = pending_readings(item)
        if not item.get("db_variant") or not path.is_file():
            problem = f"the edited database {path.name} is not in {self.variants}"
            return [{"name": n, "sql": s, "error": problem} for n, s in pending]
        with ReadOnlyDatabase(path, self.limits, base=variant_base(path)) as database:
            return [_execute(database, name, sql) for name, sql in pending]


def _execute(database: ReadOnlyDatabase, name: str, sql: str) -> dict:
    try:
        result = database.execute(sql)
    except SQLError as error:
        return {"name": name, "sql": sql, "error": str(error)}
    return _shown(
        {
            "name": name,
            "sql": sql,
            "columns": result.columns,
            "rows": result.rows,
            "row_count": result.row_count,
            "result_hash": result.hash,
        }
    )


def _shown(reading: dict) -> dict:
    return {**reading, "rows": (reading.get("rows") or [])[:SHOWN_ROWS]}
