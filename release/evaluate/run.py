"""Execute predicted SQL on the released databases and compare it with the gold result.

Every prediction with SQL runs through the project's read-only executor on the
database its item names inside the release (the shipped base, or the edited variant
over it), with the release's time limit and row cap. A query that writes, runs too
long or fails is an error with the executor's reason; the database is never changed.

The gold side is the item's stored result when it is hashed the way the comparison
mode wants (its rows, kept as the release's JSON text, are decoded by the worker that
compares them); otherwise the gold SQL runs once. Work is split by database into chunks
that run on every core, the largest first, from the moment :class:`Running` is made (the
caller does its own work meanwhile); outcomes come back sorted by id, whatever the order
of work.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING

from answerable.builders import sqlkit
from answerable.builders.executor import Limits, ReadOnlyDatabase, Result
from answerable.kernel.errors import ConfigError, SQLError
from answerable.release.evaluate.compare import MODES, jaccard, ordered_for

if TYPE_CHECKING:
    from answerable.release.databases import ItemDatabases

CHUNK = 2000  # predictions per unit of parallel work
PARALLEL_FROM = 4000  # fewer predictions than this run in this process


@dataclass(frozen=True, slots=True)
class Task:
    """One prediction to execute: the item's database, the SQL, and the gold side."""

    id: str
    database: tuple[str, str | None]
    sql: str
    gold_sql: str | None
    gold: dict | None  # the item's stored result, but its rows
    gold_rows: str | None = None  # the stored result's rows, as the release's JSON text


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
    with Running(release, tasks, mode, limits, workers) as running:
        return running.outcomes()


class Running:
    """Every task started on worker processes, the largest chunks first, as soon as it
    is made: the caller does its own work meanwhile, then :meth:`outcomes` waits for
    them. Few tasks (or one worker) run in this process when the outcomes are asked
    for. Use it in ``with``: leaving stops the workers, finished or not."""

    def __init__(
        self,
        release: Path,
        tasks: list[Task],
        mode: str = "multiset",
        limits: Limits | None = None,
        workers: int | None = None,
    ):
        self.release, self.mode, self.limits = release, mode, limits or Limits()
        workers = workers or os.cpu_count() or 1
        self.chunks = sorted(_chunks(tasks), key=len, reverse=True)  # small ones last
        self.pool = None
        if workers > 1 and len(tasks) >= PARALLEL_FROM:
            self.pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"))
            self.futures = [
                self.pool.submit(run_chunk, release, chunk, mode, self.limits)
                for chunk in self.chunks
            ]

    def outcomes(self) -> dict[str, Outcome]:
        """Every task's outcome by id, sorted by id (waits for the workers)."""
        if self.pool is not None:
            return _by_id(future.result() for future in self.futures)
        from answerable.release.databases import ItemDatabases  # imports the builders

        with ItemDatabases(self.release, self.limits) as opened:
            return _by_id(
                run_chunk(self.release, chunk, self.mode, self.limits, opened)
                for chunk in self.chunks
            )

    def close(self) -> None:
        """Stop the workers (what has not started is cancelled)."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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


_OPEN: dict[tuple, ItemDatabases] = {}  # in a worker: databases stay open across chunks


def run_chunk(
    release: Path,
    tasks: list[Task],
    mode: str,
    limits: Limits,
    opened: ItemDatabases | None = None,
) -> list[Outcome]:
    """Execute tasks that share one database (a unit of parallel work); ``opened`` keeps
    the open databases (a worker process's own by default). The predicted SQL, then the
    gold SQL that must run, go to the database's worker in one exchange each, every
    statement under its own limits."""
    if not tasks:
        return []
    if opened is None:
        from answerable.release.databases import ItemDatabases

        opened = _OPEN.setdefault((str(release), limits), ItemDatabases(release, limits))
    database = _database(tasks[0], opened)
    answers = database.execute_many([(task.sql, _ordered(task, mode)) for task in tasks])
    golds = gold_results(database, tasks, answers, mode)
    same = MODES[mode]
    return [_outcome(*each, same) for each in zip(tasks, answers, golds, strict=True)]


def _database(task: Task, opened: ItemDatabases) -> ReadOnlyDatabase:
    base, delta = task.database
    try:
        return opened.of({"id": task.id, "database": {"base": base, "delta": delta}})
    except SQLError as error:
        raise ConfigError(
            opened.release_dir,
            base,
            f"cannot open the item's database: {error}",
            fix="use a whole release",
        ) from None


def _ordered(task: Task, mode: str) -> bool:
    return ordered_for(mode, _gold_ordered(task))


def _gold_ordered(task: Task) -> bool:
    return bool(task.gold and task.gold.get("ordered"))


def _outcome(task: Task, predicted: Result | SQLError, gold: Result | None, same) -> Outcome:
    if isinstance(predicted, SQLError):
        return Outcome(task.id, error=reason(predicted, task.sql))
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


def gold_results(
    database: ReadOnlyDatabase, tasks: list[Task], answers: list, mode: str
) -> list[Result | None]:
    """Each task's gold result hashed as ``mode`` compares (the stored one, or the gold SQL
    run); None where the task has no gold SQL or its prediction failed (nothing to
    compare)."""
    golds = [
        None if isinstance(answer, SQLError) else stored_gold(task, mode)
        for task, answer in zip(tasks, answers, strict=True)
    ]
    to_run = [
        k
        for k, (task, answer) in enumerate(zip(tasks, answers, strict=True))
        if golds[k] is None and task.gold_sql is not None and not isinstance(answer, SQLError)
    ]
    ran = database.execute_many([(tasks[k].gold_sql, _ordered(tasks[k], mode)) for k in to_run])
    for k, result in zip(to_run, ran, strict=True):
        if isinstance(result, SQLError):
            raise ConfigError(
                database.path,
                f"item {tasks[k].id}",
                f"the gold SQL does not run: {result}",
                fix="rebuild the release; its gold results must execute",
            )
        result.ordered = _gold_ordered(tasks[k])  # the gold's own property, whatever the hash keeps
        golds[k] = result
    return golds


def stored_gold(task: Task, mode: str) -> Result | None:
    """The item's stored gold result, when it is hashed the way ``mode`` compares."""
    stored = task.gold
    if task.gold_sql is None or stored is None or _ordered(task, mode) != _gold_ordered(task):
        return None
    return Result(
        columns=stored["columns"],
        rows=None if task.gold_rows is None else json.loads(task.gold_rows),
        row_count=stored["row_count"],
        hash=stored["hash"],
        ordered=_gold_ordered(task),
        truncated=stored.get("truncated", False),
    )
