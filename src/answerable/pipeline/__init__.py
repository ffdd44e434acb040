"""What every build step shares: the context, cached step outputs and rejects.

A step takes records and returns a :class:`StepOutput` (items kept, rejects with
reasons). Its output is stored under the work directory keyed by a signature, a hash
of the step's name, configuration and inputs, so a rerun of the same recipe loads
finished steps instead of repeating them.
"""

from __future__ import annotations

import heapq
import itertools
import os
import random
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from answerable.backends import checked_backend
from answerable.builders.engines.variants import EngineVariants
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.kernel.digests import FileDigests
from answerable.kernel.errors import ConfigError
from answerable.kernel.errors import reject as reject  # one line of the rejects report
from answerable.kernel.ids import content_hash, rng_for
from answerable.kernel.progress import SILENT, Progress
from answerable.kernel.recipe import Recipe
from answerable.kernel.records import (
    ITEMS_LAYOUT,
    ItemFiles,
    StoredRecords,
    read_json,
    read_jsonl,
    write_json,
    write_parquet,
    write_sorted_jsonl,
)


@dataclass
class StepOutput:
    """Items a step kept and the rejects it made, each with a reason.

    ``items`` is a list, or (a stored step's output) an :class:`ItemFiles` read from disk
    each time it is iterated."""

    items: Sequence[dict] = field(default_factory=list)
    rejects: list[dict] = field(default_factory=list)

    def extend(self, other: StepOutput) -> None:
        """Add another output's items and rejects to this one."""
        self.items.extend(other.items)
        self.rejects.extend(other.rejects)

    def merge(self, other: StepOutput) -> None:
        """Add another output: its items replace those with the same id (a stage that
        annotates earlier items returns them updated), the rest are appended."""
        self.items = list(self.items)
        index = {item["id"]: n for n, item in enumerate(self.items)}
        for item in other.items:
            if item["id"] in index:
                self.items[index[item["id"]]] = item
            else:
                self.items.append(item)
        self.rejects.extend(other.rejects)

    def reject_counts(self) -> Counter:
        """How many rejects per reason."""
        return Counter(r["reason"] for r in self.rejects)


class ItemsSoFar(Sequence):
    """The items a build has made so far: each stage's items in stage order, an item of a
    later stage replacing the earlier one with its id (a stage that annotates items
    returns them updated). Stored stages stay on disk (:class:`ItemFiles`): iterating
    reads them again, a batch at a time, so only the ids are held."""

    def __init__(self):
        self.layers: list[Sequence[dict]] = []
        self._ids: list[set[str]] = []
        self._gone: set[str] = set()  # ids a later stage withdrew (see withdraw)

    def add(self, items: Sequence[dict]) -> None:
        """One more stage's items."""
        self.layers.append(items)
        self._ids.append(set(items.ids() if isinstance(items, ItemFiles) else _ids(items)))

    def withdraw(self, ids: Iterable[str]) -> None:
        """Take the items of ``ids`` out (a stage rejected items made before it)."""
        self._gone |= set(ids)

    def __iter__(self) -> Iterator[dict]:
        for number, layer in enumerate(self.layers):
            later = self._later(number)
            yield from (item for item in layer if item["id"] not in later)

    def __len__(self) -> int:
        return sum(len(ids - self._later(n)) for n, ids in enumerate(self._ids))

    def __getitem__(self, index):
        return list(self)[index]

    def ids(self) -> list[str]:
        """Every item's id, sorted (from the ids held: no item is read)."""
        return sorted(set().union(*self._ids) - self._gone)

    def fields(self, *names: str) -> Iterator[dict]:
        """The items as :meth:`__iter__` gives them, with only the fields ``names`` read
        from the stored stages (the others null): a pass that needs a few short fields
        does not decode every item whole."""
        for number, layer in enumerate(self.layers):
            later = self._later(number)
            rows = layer.fields("id", *names) if isinstance(layer, ItemFiles) else layer
            yield from (item for item in rows if item["id"] not in later)

    def places(self) -> list[tuple[str, Path, int]] | None:
        """Where each item is stored: ``(id, file, row)``, in the order :meth:`__iter__`
        gives the items, reading only the files' ids; None when a stage's items are held
        in memory, not stored."""
        if not all(isinstance(layer, ItemFiles) for layer in self.layers):
            return None
        found = []
        for number, layer in enumerate(self.layers):
            later = self._later(number)
            found += [place for place in layer.places() if place[0] not in later]
        return found

    def _later(self, number: int) -> set[str]:
        """The ids an item of layer ``number`` is hidden by: a later layer's, or withdrawn."""
        return set().union(*self._ids[number + 1 :], self._gone)


def _ids(items: Iterable[dict]) -> Iterator[str]:
    return (item["id"] for item in items)


def sorted_ids(items: Iterable[dict]) -> list[str]:
    """The items' ids, sorted (a step's signature names its inputs by them); of the
    build's :class:`ItemsSoFar`, from the ids it holds, without reading an item."""
    return items.ids() if isinstance(items, ItemsSoFar) else sorted(_ids(items))


def with_fields(items: Iterable[dict], *names: str) -> Iterable[dict]:
    """The items with at least the fields ``names`` (and id): of the build's
    :class:`ItemsSoFar`, only those are read from its files."""
    return items.fields(*names) if isinstance(items, ItemsSoFar) else items


def first_of_each_id(
    output: StepOutput,
    repeated: Callable[[dict, Any], dict],
    remember: Callable[[dict], Any] = lambda _item: None,
) -> StepOutput:
    """``output`` with each id's first item only, as a stream read once (by the step's
    writer): a later item of an id becomes the reject ``repeated(item, remember(first))``,
    added to the returned output's rejects when the stream reaches it. Only the ids are
    held, never the items."""
    repeats: list[dict] = []  # filled as the stream is read

    def kept() -> Iterator[dict]:
        first: dict[str, Any] = {}
        for item in output.items:
            if item["id"] in first:
                repeats.append(repeated(item, first[item["id"]]))
                continue
            first[item["id"]] = remember(item)
            yield item

    return StepOutput(kept(), Rejects(output.rejects) + repeats)


class RejectFile(StoredRecords):
    """A stored step's rejects (JSON Lines sorted by :func:`sort_rejects`' key), read from
    the file whenever they are iterated (see :class:`StoredRecords`)."""

    stored = True  # read from disk whenever it is iterated (see Rejects)

    def __init__(self, path: Path):
        self.path = Path(path)
        with open(self.path, "rb") as lines:
            self._count = sum(1 for line in lines if line.strip())

    def _read(self) -> Iterator[dict]:
        return read_jsonl(self.path)

    def __len__(self) -> int:
        return self._count


class Rejects:
    """Rejects in parts, in the order they came, each held as it was given (a stored
    step's :class:`RejectFile`, the shards' files, a list that may still grow), so those
    on disk stay there; :meth:`in_order` is the report's order, as :func:`sort_rejects`
    over all of them gives, the stored parts (sorted already) merged as they are read."""

    def __init__(self, records: Iterable[dict] = ()):
        self.parts: list = []
        self.extend(records)

    def extend(self, records: Iterable[dict]) -> None:
        """More rejects: a list, a file or another :class:`Rejects` is kept as it is
        (read when these are), any other iterable is read into a list now."""
        if isinstance(records, Rejects):
            self.parts += records.parts
        elif isinstance(records, list) or getattr(records, "stored", False):
            self.parts.append(records)
        else:
            self.parts.append(list(records))

    def __iadd__(self, records: Iterable[dict]) -> Rejects:
        self.extend(records)
        return self

    def __add__(self, records: Iterable[dict]) -> Rejects:
        both = Rejects(self)
        both.extend(records)
        return both

    def __radd__(self, records: Iterable[dict]) -> Rejects:
        return Rejects(records) + self

    def append(self, record: dict) -> None:
        """One more reject."""
        self.extend([record])

    def __iter__(self) -> Iterator[dict]:
        return itertools.chain.from_iterable(self.parts)

    def __len__(self) -> int:
        return sum(map(len, self.parts))

    def __eq__(self, other) -> bool:
        return isinstance(other, Iterable) and list(self) == list(other)

    def in_order(self) -> Iterator[dict]:
        """Every reject sorted by step, id and reason (ties in the order they came)."""
        parts = (p if isinstance(p, RejectFile) else sort_rejects(p) for p in self.parts)
        return heapq.merge(*parts, key=_reject_key)


class Workspace:
    """The build state of one dataset under the work directory.

    Layout: ``<workdir>/<dataset>/steps/<step>-<signature>/`` for cached step outputs,
    ``candidates.parquet``, and ``reports/`` (rejects, build report).
    """

    def __init__(self, workdir: Path, dataset: str):
        self.root = workdir / dataset
        self.steps = self.root / "steps"
        self.reports = self.root / "reports"
        self.candidates = self.root / "candidates.parquet"
        self.served: list[str] = []  # the step folders this build used, in order

    @cached_property
    def digests(self) -> FileDigests:
        """The sha256 of the build's own files, kept by their file status between
        builds (:mod:`answerable.kernel.digests`); saved at the end of a build."""
        return FileDigests(self.steps / "digests.json")

    def step_dir(self, name: str, signature: str) -> Path:
        """Where one step's output for one signature lives."""
        return self.steps / f"{name}-{signature}"

    def stored_output(self, name: str, signature: str) -> StepOutput | None:
        """The step's stored output (as :meth:`cached_step` returns it), or None when the
        step has not been stored for this signature."""
        folder = self.step_dir(name, signature)
        items_file, rejects_file = folder / "items.parquet", folder / "rejects.jsonl"
        if not (items_file.is_file() and rejects_file.is_file()):
            return None
        self.served.append(folder.name)
        return StepOutput(ItemFiles([items_file]), RejectFile(rejects_file))

    def cached_step(
        self, name: str, signature: str, compute: Callable[[], StepOutput]
    ) -> tuple[StepOutput, bool]:
        """The step's stored output, or ``compute()``'s, stored for next time.

        Returns ``(output, was_cached)``, its items an :class:`ItemFiles` over the step's
        items file (sorted by id) and its rejects a :class:`RejectFile`, either way. The
        step is stored once both files are there (the rejects are written last), so a
        step killed halfway is computed again (a sharded step, from the shards it
        finished: see :mod:`answerable.pipeline.shards`).
        """
        stored = self.stored_output(name, signature)
        if stored is not None:
            return stored, True
        folder = self.step_dir(name, signature)
        self.served.append(folder.name)
        items_file, rejects_file = folder / "items.parquet", folder / "rejects.jsonl"
        output = compute()
        rejects_file.unlink(missing_ok=True)  # the step is stored once both files are there
        write_parquet(output.items, items_file)
        # after the items: a stream's rejects (see first_of_each_id) are known once it is read
        write_sorted_jsonl(output.rejects, rejects_file, _reject_key)
        shutil.rmtree(folder / "shards", ignore_errors=True)  # the step's files hold them now
        # read back from disk when used: neither items nor rejects stay in memory
        return StepOutput(ItemFiles([items_file]), RejectFile(rejects_file)), False

    def cached_report(self, name: str, compute: Callable[[], dict]) -> dict:
        """A report over every step this build used (the audit), stored under
        ``steps/<name>-<hash of those steps>.json``: a rerun whose steps all came from
        the cache reads it instead of computing it again."""
        path = self.steps / f"{name}-{content_hash(self.served)[:16]}.json"
        if path.is_file():
            return read_json(path)
        report = compute()
        write_json(report, path)
        return read_json(path)  # as a rerun reads it, so the two builds write the same


def _reject_key(record: dict) -> tuple:
    return (record.get("step") or "", record.get("id") or "", record.get("reason") or "")


def sort_rejects(rejects: list[dict]) -> list[dict]:
    """Rejects in the report's fixed order: by step, id and reason."""
    return sorted(rejects, key=_reject_key)


DEFAULT_SHARD_SIZE = 64  # small enough that a slow stage shows progress and splits


@dataclass(frozen=True)
class Execution:
    """How per-item stages run (see :mod:`answerable.pipeline.shards`): ``workers`` processes
    over shards of ``shard_size`` units. Neither changes an output, so neither is part
    of a step's signature."""

    workers: int = 1
    shard_size: int = DEFAULT_SHARD_SIZE
    backend: str = "local"  # where the shards run (answerable.backends)
    ray_address: str | None = None  # the Ray cluster of the ray backend

    @classmethod
    def from_recipe(cls, recipe: Recipe) -> Execution:
        """The recipe's top-level ``workers`` (default: the machine's cores),
        ``execution.shard_size``, ``execution.backend`` (checked: a ConfigError when it
        cannot run here) and ``execution.ray_address``."""
        section = recipe.section("execution")
        return cls(
            recipe.data.get("workers", os.cpu_count() or 1),
            section.get("shard_size", DEFAULT_SHARD_SIZE),
            checked_backend(recipe),
            section.get("ray_address"),
        )


@dataclass
class BuildContext:
    """What a step may use: the recipe, the databases, execution limits and seeded RNGs."""

    recipe: Recipe
    databases: dict  # db_id -> builders.sources.DatabaseRef
    limits: Limits
    workspace: Workspace
    examples: list[dict] = field(default_factory=list)  # source examples, as loaded
    inputs: list[dict] = field(default_factory=list)  # input files with their sha256
    report: dict = field(default_factory=dict)  # sections stages add to reports/build.json
    execution: Execution = field(default_factory=Execution)
    progress: Progress = SILENT
    _open: dict[str, ReadOnlyDatabase] = field(default_factory=dict)
    _variants: Any = None  # the EngineVariants of edited items, opened on first use

    def database(self, db_id: str) -> ReadOnlyDatabase | None:
        """A read-only connection to ``db_id``'s file by the engine its source names, or
        None for schema-only sources."""
        ref = self.databases.get(db_id)
        if ref is None or not ref.runs:
            return None
        if db_id not in self._open:
            self._open[db_id] = ref.open(self.limits)
        return self._open[db_id]

    def item_database(self, item: dict) -> ReadOnlyDatabase | None:
        """The database an item runs on: for an edited item, its variant as the engine
        of its source makes it (made again if missing); else its source."""
        if not item.get("db_variant"):
            return self.database(item["db_id"])
        ref = self.databases.get(item["db_id"])
        if ref is None or not ref.runs:
            return None
        if self._variants is None:
            self._variants = EngineVariants(self.workspace.root / "variants", self.limits)
        return self._variants.database(ref, item["edit"]["ops"])

    def schema(self, db_id: str):
        """The :class:`DatabaseSchema` of ``db_id``."""
        ref = self.databases.get(db_id)
        if ref is None:
            raise ConfigError(
                self.recipe.file,
                "sources",
                f"no database '{db_id}' is loaded",
                fix="add a source that provides it",
            )
        return ref.schema

    def rng(self, step: str, key: str = "") -> random.Random:
        """The random generator private to (recipe seed, step, key)."""
        return rng_for(self.recipe.seed, step, key)

    def signature(self, step: str, config: Any, inputs: Any) -> str:
        """The cache key of a step: name, configuration, inputs, the recipe seed and the
        layout of its stored items."""
        key = {"step": step, "config": config, "inputs": inputs, "seed": self.recipe.seed}
        return content_hash(key | {"layout": ITEMS_LAYOUT})

    def __getstate__(self) -> dict:
        """What a process that is not forked gets (a Ray worker): the context without
        open connections, which it opens again on first use, and without progress."""
        return {**self.__dict__, "_open": {}, "_variants": None, "progress": SILENT}

    def close(self) -> None:
        """Close every open database connection."""
        for db in self._open.values():
            db.close()
        self._open.clear()
        if self._variants is not None:
            self._variants.close()
