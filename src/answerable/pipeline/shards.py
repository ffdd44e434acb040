"""Per-item stages in shards: cached one by one, run on every core, merged in one order.

A stage that treats its units (parents, templates, drafting jobs, items) one at a time
hands them to :func:`run_in_shards` with the function that treats a list of them. The
units, in the stage's fixed order, are cut into shards of ``shard_size``; each shard is
named by the hash of its units' keys and its output is stored under the step's folder
(``steps/<step>-<signature>/shards/<name>.jsonl``) as soon as it is done, written to a
temporary file and renamed, so a killed build leaves only whole shards. The next run
finds them and treats only the shards still missing. The merged output's items are
read back from those files as they are used (:class:`ShardItems`), so a step never
holds more than a shard's output in memory on their account.

Shards run where ``execution.backend`` says (:mod:`answerable.backends`: ``workers``
processes forked from the build, by default, or tasks on a Ray cluster) and finish in
any order; this process stores each, and the outputs are then read back in shard
order. A stage whose treatment of one unit does not look at the others therefore makes
the same output for any number of workers and any shard size; what does look across
units (repeated ids, near-duplicate questions) runs after the merge, over the merged
output in order.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from answerable.backends import backend
from answerable.kernel.ids import content_hash
from answerable.kernel.records import RowReader, write_jsonl, write_parquet
from answerable.pipeline import Rejects, StepOutput

Work = Callable[[list], StepOutput]


def shard_name(keys: list[str]) -> str:
    """A shard's file name: the hash of its units' keys, in order."""
    return content_hash(keys)[:24]


def run_in_shards(
    ctx,
    step_dir: Path,
    name: str,
    units: list,
    work: Work,
    key: Callable[[Any], str],
    weight: Callable[[Any], int] = lambda _unit: 1,
    prepare: Callable[[], None] = lambda: None,
) -> StepOutput:
    """``work`` over ``units`` in shards, resumed from the shards stored under
    ``step_dir``; the outputs concatenated in unit order.

    ``prepare`` runs here once before the pending shards (not at all when none is
    pending): what it loads (WordNet for the counterfactual edits), forked workers share.

    A shard closes once its units' ``weight`` reaches the shard size (a template
    weighs its quota of pairs, so a shard holds about as many items in every stage).

    ``ctx`` is the :class:`~answerable.pipeline.BuildContext`: its execution settings,
    progress and connections (closed before forking, so each process opens its own).
    """
    execution = ctx.execution
    size = execution.shard_size
    shards = cut(units, size, weight)
    files = [step_dir / "shards" / f"{shard_name([key(u) for u in s])}.jsonl" for s in shards]
    pending = [index for index, file in enumerate(files) if not file.is_file()]
    ctx.progress.detail(
        f"{name}: {len(units)} units in {len(shards)} shards of up to {size}, "
        f"{len(shards) - len(pending)} done by an earlier run, "
        + backend(execution.backend).where(ctx, execution.workers, pending)
    )
    if pending:
        prepare()
    with ctx.progress.task(name, len(units)) as task:
        task.advance(len(units) - sum(len(shards[i]) for i in pending))
        for index, output in _outputs(ctx, shards, pending, work, execution.workers):
            store_shard(output, files[index])
            task.advance(len(shards[index]))
    return StepOutput(ShardItems(files), Rejects(ShardRejects(files)))


def cut(units: list, size: int, weight: Callable[[Any], int]) -> list[list]:
    """``units`` in order, in shards each closed once its weight reaches ``size``.

    >>> cut([1, 2, 3, 4, 5], 2, lambda _u: 1)
    [[1, 2], [3, 4], [5]]
    >>> cut(["a", "b", "c"], 4, {"a": 5, "b": 1, "c": 1}.get)
    [['a'], ['b', 'c']]
    """
    shards, current, held = [], [], 0
    for unit in units:
        current.append(unit)
        held += weight(unit)
        if held >= size:
            shards.append(current)
            current, held = [], 0
    if current:
        shards.append(current)
    return shards


def store_shard(output: StepOutput, file: Path) -> Path:
    """One shard's items and rejects, in their order, in one file written atomically."""
    lines = ({"item": item} for item in output.items)
    rejects = ({"reject": record} for record in output.rejects)
    return write_jsonl(itertools.chain(lines, rejects), file)


def shard_items(file: Path) -> Iterator[dict]:
    """The items of a stored shard, in order, one line at a time."""
    return _lines(file, _ITEM)


def shard_rejects(file: Path) -> Iterator[dict]:
    """The rejects of a stored shard, in order (their lines are not the items')."""
    return _lines(file, _REJECT)


_ITEM, _REJECT = '{"item":', '{"reject":'  # how store_shard's lines begin (sorted keys)


def _lines(file: Path, kind: str, having: str = "") -> Iterator[dict]:
    with open(file, encoding="utf-8") as lines:
        for line in lines:
            if line.startswith(kind) and having in line:
                yield json.loads(line)[kind[2:-2]]


class ShardRejects(Iterable):
    """The rejects of stored shards, in shard order, read a line at a time whenever they
    are iterated (a stage with many rejects, drafting's, need not hold them)."""

    stored = True  # see answerable.pipeline.Rejects

    def __init__(self, files: list[Path]):
        self.files = files

    def __iter__(self) -> Iterator[dict]:
        return itertools.chain.from_iterable(shard_rejects(file) for file in self.files)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class ShardItems(Iterable):
    """The items of stored shards, in shard order, read a line at a time whenever they
    are iterated: a step's merged output without holding it."""

    def __init__(self, files: list[Path]):
        self.files = files

    def __iter__(self) -> Iterator[dict]:
        return itertools.chain.from_iterable(shard_items(file) for file in self.files)

    def containing(self, text: str) -> Iterator[dict]:
        """The items whose stored line holds ``text`` (a field's JSON, such as
        ``"db_id":"clinic"``), in order: the other lines are never decoded. The caller
        checks the field, since the text may also stand elsewhere in a line."""
        lines = (_lines(file, _ITEM, text) for file in self.files)
        return itertools.chain.from_iterable(lines)


def _outputs(ctx, shards: list[list], pending: list[int], work: Work, workers: int) -> Iterator:
    """``(index, output)`` of each pending shard, in any order, from the recipe's executor
    backend (:mod:`answerable.backends`: forked processes, or a Ray cluster)."""
    return backend(ctx.execution.backend).outputs(ctx, shards, pending, work, workers)


class StoredUnits:
    """Items as a stage's units without holding them: written once, sorted by id, to
    ``file`` (under the step's ``shards`` folder, so it goes with them); the stage cuts
    shards of their ids (:attr:`ids`) and a shard reads its own items back
    (:meth:`load`, with Arrow: polars hangs in a forked worker), in whichever process
    runs it. Each process opens the file once (:class:`~answerable.kernel.records.RowReader`),
    so a shard decodes no more than the row group that holds it, and not even that when
    the shard before it in that process was in the same group."""

    def __init__(self, items: Iterable[dict], file: Path):
        self.file = write_parquet(items, file)
        self.ids: list[str] = pl.read_parquet(file, columns=["id"])["id"].to_list()
        self._reader = PerProcess(functools.partial(RowReader, self.file))

    def load(self, ids: list[str]) -> list[dict]:
        """The items of consecutive ``ids`` (a shard of :attr:`ids`), in order."""
        return self._reader.get().rows(self.start(ids), len(ids))

    def start(self, ids: list[str]) -> int:
        """The row of a shard's first unit (files with a row per unit share it)."""
        return bisect.bisect_left(self.ids, ids[0])

    def columns(self, *names: str) -> pl.DataFrame:
        """Some columns of every item, in id order, as stored (typed, open fields as JSON
        text)."""
        return pl.read_parquet(self.file, columns=list(names))


class UnitsInPlace:
    """Stored items as a stage's units, read where the earlier steps stored them (see
    :meth:`~answerable.pipeline.ItemsSoFar.places`): nothing is written before the
    workers start, and the stage cuts shards of :attr:`ids` as of :class:`StoredUnits`'.
    A shard reads its own items back (:meth:`load`, with Arrow), decoding only the row
    groups that hold them, each file opened once per process."""

    def __init__(self, places: Iterable[tuple[str, Path, int]], ids: Iterable[str]):
        wanted = set(ids)
        chosen = sorted((p for p in places if p[0] in wanted), key=lambda place: place[0])
        self.ids: list[str] = [identity for identity, _, _ in chosen]
        self._places = [(file, row) for _, file, row in chosen]
        self._readers = PerProcess(dict)

    def load(self, ids: list[str], columns: Sequence[str] | None = None) -> list[dict]:
        """The items of ``ids`` (some of :attr:`ids`, such as a shard), in order; with
        ``columns``, only those top-level fields are read (the others are null)."""
        rows: dict[Path, list[tuple[int, int]]] = {}  # file -> (row, place in the shard)
        for at, identity in enumerate(ids):
            file, row = self._places[bisect.bisect_left(self.ids, identity)]
            rows.setdefault(file, []).append((row, at))
        items: list = [None] * len(ids)
        readers = self._readers.get()
        for file, wanted in rows.items():
            wanted.sort()
            if file not in readers:
                readers[file] = RowReader(file)
            found = readers[file].take([row for row, _ in wanted], columns)
            for (_, at), item in zip(wanted, found, strict=True):
                items[at] = item
        return items


class PerProcess:
    """A value made once in each process that uses it (a connection, an edit
    environment): a forked worker makes its own instead of using its parent's."""

    def __init__(self, make: Callable[[], Any], close: Callable[[Any], None] = lambda _v: None):
        self.make, self.close_value = make, close
        self._pid: int | None = None
        self._value = None

    def __getstate__(self) -> dict:
        """What a process that is not forked gets (a Ray worker): the maker, never this
        process's value."""
        return {**self.__dict__, "_pid": None, "_value": None}

    def get(self):
        """This process's value, made on first use."""
        if self._pid != os.getpid():
            self._value, self._pid = self.make(), os.getpid()
        return self._value

    def close(self) -> None:
        """Close this process's value, if it made one."""
        if self._pid == os.getpid():
            self.close_value(self._value)
        self._pid, self._value = None, None
