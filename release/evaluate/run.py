"""Execute predicted SQL on the released databases and compare it with the gold result.

Every prediction with SQL runs through the project's read-only executor on the
database its item names inside the release (the shipped base, or the edited variant
over it), with the release's time limit and row cap. A query that writes, runs too
long or fails is an error with the executor's reason; the database is never changed.

The gold side is the item's stored result when it is hashed the way the comparison
mode wants; otherwise the gold SQL runs once. Work is split by database into chunks
that run on every core; outcomes come back sorted by id, whatever the order of work.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from answerable.builders import sqlkit
from answerable.builders.executor import Limits, ReadOnlyDatabase, Result
from answerable.errors import ConfigError, SQLError
from answerable.release.evaluate.compare import MODES, jaccard, ordered_for

CHUNK = 2000  # predictions per unit of parallel work
PARALLEL_FROM = 4000  # fewer predictions than this run in this process


@dataclass(frozen=True, slots=True)
class Task:
    """One prediction to execute: the item's database, the SQL, and the gold side."""

    id: str
    database: tuple[str, str | None]
    sql: str
    gold_sql: str | None
    gold: dict | None  # the item's stored result


@dataclass(frozen=True, slots=True)
class Outcome:
    """What executing one prediction gave: an error reason, or a comparison."""

    id: str
    error: str | None = None  # the executor's reason: parse-error, timeout, not-read-only ...
    correct: bool = False
    jaccard: float = 0.0


def execute_all(
    release: Path,
    tasks: list[Task],
    mode: str = "multiset",
    limits: Limits | None = None,
    workers: int | None = None,
) -> dict[str, Outcome]:
    """Run every task and return its outcome by id."""
    limits = limits or Limits()
    workers = workers or os.cpu_count() or 1
    chunks = list(_chunks(tasks))
    if workers == 1 or len(tasks) < PARALLEL_FROM:
        opened: dict[tuple, ReadOnlyDatabase] = {}
        try:
            return _by_id(run_chunk(release, chunk, mode, limits, opened) for chunk in chunks)
        finally:
            for database in opened.values():
                database.close()
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        results = pool.map(
            run_chunk,
            [release] * len(chunks),
            chunks,
            [mode] * len(chunks),
            [limits] * len(chunks),
        )
        return _by_id(results)


def _by_id(results: Iterable[list[Outcome]]) -> dict[str, Outcome]:
    outcomes = {o.id: o for chunk in results for o in chunk}
    return dict(sorted(outcomes.items()))


def _chunks(tasks: list[Task]) -> Iterator[list[Task]]:
    by_database: dict[tuple, list[Task]] = defaultdict(list)
    for task in tasks:
        by_database[task.database].append(task)
    for key in sorted(by_database, key=str):
        group = by_database[key]
        for start in range(0, len(group), CHUNK):
            yield group[start : start + CHUNK]


_OPEN: dict[tuple, ReadOnlyDatabase] = {}  # in a worker: databases stay open across chunks


def run_chunk(
    release: Path,
    tasks: list[Task],
    mode: str,
    limits: Limits,
    opened: dict[tuple, ReadOnlyDatabase] | None = None,
) -> list[Outcome]:
    """Execute tasks that share one database (a unit of parallel work); ``opened`` keeps
    the open databases (a worker process's own by default)."""
    if not tasks:
        return []
    database = _database(release, tasks[0], limits, _OPEN if opened is None else opened)
    same = MODES[mode]
    return [_outcome(database, task, mode, same) for task in tasks]


def _database(release: Path, task: Task, limits: Limits, opened: dict) -> ReadOnlyDatabase:
    from answerable.release.databases import open_item_database

    key = (str(release), task.database, limits)
    if key not in opened:
        base, delta = task.database
        item = {"id": task.id, "database": {"base": base, "delta": delta}}
        try:
            opened[key] = open_item_database(release, item, limits=limits)
        except SQLError as error:
            raise ConfigError(
                release,
                base,
                f"cannot open the item's database: {error}",
                fix="use a whole release",
            ) from None
    return opened[key]


def _outcome(database: ReadOnlyDatabase, task: Task, mode: str, same) -> Outcome:
    gold_ordered = bool(task.gold and task.gold.get("ordered"))
    try:
        predicted = database.execute(task.sql, ordered=ordered_for(mode, gold_ordered))
    except SQLError as error:
        return Outcome(task.id, error=reason(error, task.sql))
    gold = gold_result(database, task, mode)
    if gold is None:  # nothing to compare with: the item is not answerable
        return Outcome(task.id)
    return Outcome(task.id, correct=same(predicted, gold), jaccard=jaccard(predicted, gold))


def reason(error: SQLError, sql: str) -> str:
    """The executor's reason, except that SQL refused for its first word is a parse
    error when it does not parse at all (``SELEC ...``), not an attempt to write."""
    if error.reason == "not-read-only":
        try:
            sqlkit.parse(sql)
        except SQLError as parsed:
            return parsed.reason
    return error.reason


def gold_result(database: ReadOnlyDatabase, task: Task, mode: str) -> Result | None:
    """The gold result hashed as ``mode`` compares: the stored one, or the gold SQL run."""
    if task.gold_sql is None:
        return None
    stored = task.gold
    gold_ordered = bool(stored and stored.get("ordered"))
    if stored is not None and gold_ordered == ordered_for(mode, gold_ordered):
        return Result(
            columns=stored["columns"],
            rows=stored["rows"],
            row_count=stored["row_count"],
            hash=stored["hash"],
            ordered=gold_ordered,
            truncated=stored.get("truncated", False),
        )
    try:
        result = database.execute(task.gold_sql, ordered=ordered_for(mode, gold_ordered))
    except SQLError as error:
        raise ConfigError(
            database.path,
            f"item {task.id}",
            f"the gold SQL does not run: {error}",
            fix="rebuild the release; its gold results must execute",
        ) from None
    result.ordered = gold_ordered  # the gold's own property, whatever the hash keeps
    return result
