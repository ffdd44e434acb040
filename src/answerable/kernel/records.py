"""Items on disk: Parquet through polars, and JSON Lines.

An item is a dict under ``schemas/item.schema.json`` (its fields from
:mod:`answerable.kernel.item_model`). In Parquet it is stored typed as a release stores
it, one column per field, by the rule of :mod:`answerable.kernel.typed_items` (a null key
of a struct reads back left out unless the schema requires it). Writers sort by id and
write to a temporary file renamed into place, so output bytes depend on content only and
a killed run never leaves half a file.

Memory stays bounded by :data:`RUN_ROWS`, not by the number of items: a writer sorts at
most that many items at once (more are sorted in runs on disk, then merged), and
:func:`iter_parquet` and :class:`ItemFiles` read a file back a batch at a time.
"""

from __future__ import annotations

import bisect
import errno
import heapq
import itertools
import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from answerable.kernel.errors import ConfigError
from answerable.kernel.ids import canonical_json
from answerable.kernel.item_model import FIELDS, polars_schema
from answerable.kernel.typed_items import (
    DEFAULTS,
    by_id,
    from_arrow,
    to_items,
    unsorted_frame,
)

# The layout of an items file, part of every cached step's signature: a build over a work
# folder an earlier layout wrote computes its steps again instead of misreading them
# (1: nested fields as JSON text; 2: typed columns).
ITEMS_LAYOUT = 2
PARQUET_SCHEMA = polars_schema()
COLUMNS = list(PARQUET_SCHEMA)  # the columns of an items file, ``id`` first
RUN_ROWS = 2048  # items a writer sorts at once (as columns); more are merged from runs
BATCH_ROWS = 256  # items a reader decodes, or a writer holds as dicts, at once
# a run's row groups: the merge reads a run's next rows by position, decoding the groups
# that hold them (small groups waste little; each group costs a decode of every column)
RUN_GROUP_ROWS = 256


def complete(item: dict) -> dict:
    """The item with every field present, in the schema's order (missing ones null)."""
    return {name: item.get(name, DEFAULTS.get(name)) for name in FIELDS}


def sort_items(items: Iterable[dict]) -> list[dict]:
    """Items sorted by id: the one order every output uses."""
    return sorted(items, key=lambda item: item["id"])


def write_parquet(items: Iterable[dict], path: str | Path) -> Path:
    """Write items to a Parquet file atomically, sorted by id; returns the path.

    Up to :data:`RUN_ROWS` items are written in one piece; more are sorted in runs of
    that many, stored beside the file, and merged into it in row groups of that many, so
    the items need not all be in memory at once (``items`` may be a stream)."""
    path = Path(path)
    frames = _run_frames(items)
    first = next(frames)
    second = next(frames, None)
    if second is None:
        _write_frame(first, path)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{path.name}.runs-", dir=path.parent) as folder:
        runs = []
        for number, frame in enumerate(itertools.chain([first, second], frames)):
            run = Path(folder) / f"{number}.parquet"
            runs.append(_write_frame(frame, run, row_group_size=RUN_GROUP_ROWS))
            first = second = frame = None  # each run goes once it is written
        with _atomic(path) as tmp:
            _merge_runs(runs, tmp)
    return path


def _run_frames(items: Iterable[dict]) -> Iterator[pl.DataFrame]:
    """The items as :func:`to_frame` frames of :data:`RUN_ROWS` (one frame, maybe empty,
    for fewer), made :data:`BATCH_ROWS` items at a time: only that many items are held as
    dicts, the rest of a run as its typed columns (a stream of large items would
    otherwise hold two runs of dicts, ~100 MB, while the first is written)."""
    held, rows, made = [], 0, 0
    for piece in in_chunks(items, math.gcd(BATCH_ROWS, RUN_ROWS)):  # whole runs of pieces
        held.append(unsorted_frame(piece))
        rows, piece = rows + len(piece), None  # its dicts go before the next are read
        if rows == RUN_ROWS:
            yield by_id(pl.concat(held))
            held, rows, made = [], 0, made + 1
    if held or not made:
        yield by_id(pl.concat(held) if held else unsorted_frame([]))


def in_chunks(values: Iterable, size: int) -> Iterator[list]:
    """``values`` in lists of ``size`` (the last one shorter), taken as they come."""
    values = iter(values)
    while chunk := list(itertools.islice(values, size)):
        yield chunk
        chunk = None  # the caller's list only, while the next is read


def _write_frame(frame: pl.DataFrame, path: Path, row_group_size: int | None = None) -> Path:
    with _atomic(path) as tmp:
        try:
            frame.write_parquet(
                tmp, compression="zstd", statistics=False, row_group_size=row_group_size
            )
        except pl.exceptions.ComputeError as error:
            raise _write_failed(path, error) from None
    return path


def _merge_runs(runs: list[Path], out: Path) -> None:
    """Runs sorted by id merged into one file, in row groups of :data:`RUN_ROWS`, a
    column at a time: the ids say which rows of each run make the next group (a stable
    sort of the runs' ids, in run order, orders ties as a merge of the runs does), and
    the group is those rows, read from the runs as stored (only the row groups that hold
    them are decoded), sorted by id."""
    ids = pl.concat(
        pl.read_parquet(run, columns=["id"]).with_columns(run=pl.lit(number, pl.Int32))
        for number, run in enumerate(runs)
    )
    order = by_id(ids).get_column("run")
    ids = None  # only the runs' order is kept
    taken = [0] * len(runs)  # rows of each run already merged

    def groups() -> Iterator[pl.DataFrame]:
        for start in range(0, len(order), RUN_ROWS):
            counts = order.slice(start, RUN_ROWS).value_counts(sort=False).rows()
            pieces = []
            for run, count in sorted(counts):
                pieces.append(pl.scan_parquet(runs[run]).slice(taken[run], count))
                taken[run] += count
            yield by_id(pl.concat(pieces).collect())

    _write_groups(groups(), out)


def _write_groups(groups: Iterable[pl.DataFrame], out: Path) -> None:
    """Item frames, sorted by id and cut in :data:`RUN_ROWS` rows (the last may be
    shorter), written to ``out`` one row group each, as :func:`write_parquet` writes more
    than that many."""
    import pyarrow.parquet as pq  # the [build] extra: a core install only reads

    writer = None
    try:
        for group in groups:
            frame = group.select(COLUMNS).rechunk()  # one chunk, as a frame of rows is
            table = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
            if writer is None:
                writer = pq.ParquetWriter(
                    out, table.schema, compression="zstd", write_statistics=False
                )
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()


def without_ids(path: str | Path, ids: set[str]) -> Path:
    """Rewrite a file :func:`write_parquet` wrote without the items of ``ids``: the bytes
    ``write_parquet`` would write for the items left, made from the stored columns (no
    item is decoded nor typed again)."""
    path = Path(path)
    kept = _regrouped(part.filter(~pl.col("id").is_in(ids)) for part in _frames(path))
    first = next(kept)
    second = next(kept, None)
    if second is None:  # write_parquet writes up to RUN_ROWS items as one polars frame
        return _write_frame(first.select(COLUMNS).rechunk(), path)
    with _atomic(path) as tmp:
        _write_groups(itertools.chain([first, second], kept), tmp)
    return path


def _frames(path: Path) -> Iterator[pl.DataFrame]:
    """A file's rows as frames of up to :data:`BATCH_ROWS`."""
    import pyarrow.parquet as pq

    for part in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS, use_threads=False):
        yield pl.from_arrow(part)


def _regrouped(frames: Iterable[pl.DataFrame]) -> Iterator[pl.DataFrame]:
    """The frames' rows in frames of :data:`RUN_ROWS` (the last shorter, and one empty
    frame when there are no rows)."""
    held, rows, made = [], 0, 0
    for frame in frames:
        held.append(frame)
        rows += frame.height
        while rows >= RUN_ROWS:
            whole = pl.concat(held)
            yield whole.head(RUN_ROWS)
            held, rows, made = [whole.slice(RUN_ROWS)], rows - RUN_ROWS, made + 1
    if rows or not made:
        yield pl.concat(held) if held else pl.DataFrame(schema=PARQUET_SCHEMA)


def _write_failed(path: Path, error: Exception) -> OSError:
    """The OS error behind a failed Parquet write: polars reports a full disk as a
    "transport error", so the free space says whether that is what happened."""
    if shutil.disk_usage(path.parent).free < 1 << 20:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    return OSError(errno.EIO, f"could not write Parquet ({error})", str(path))


def row_count(path: str | Path) -> int:
    """The rows of a Parquet file, read from its footer."""
    return pl.scan_parquet(path).select(pl.len()).collect().item()


def read_parquet(path: str | Path) -> list[dict]:
    """Read items from a Parquet file written by :func:`write_parquet`."""
    return to_items(pl.read_parquet(path))


def iter_parquet(path: str | Path, columns: Sequence[str] | None = None) -> Iterator[dict]:
    """The items of a Parquet file written by :func:`write_parquet`, in its order, read
    :data:`BATCH_ROWS` at a time; with ``columns``, only those fields (the others null).
    A column may name a field inside a struct (``provenance.generator``): its struct then
    holds only that field."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    for batch in file.iter_batches(batch_size=BATCH_ROWS, columns=columns, use_threads=False):
        yield from from_arrow(batch)


def read_rows(path: str | Path, start: int, count: int) -> list[dict]:
    """``count`` items of a file :func:`write_parquet` wrote, from row ``start`` on,
    reading only the row groups that hold them (Arrow only, see :func:`from_arrow`)."""
    return RowReader(path).rows(start, count)


class RowReader:
    """A file :func:`write_parquet` wrote, open for reading rows by position: its footer
    is read once, a read decodes only the row groups that hold the rows, and the last
    group decoded is kept, since shards read consecutive rows and a row group holds
    many shards' (one per process: a forked worker must open its own)."""

    def __init__(self, path: str | Path, convert: Callable[[Any], list] = from_arrow):
        import pyarrow.parquet as pq

        self.file = pq.ParquetFile(path)
        self.convert = convert  # an Arrow table's rows as the reader's callers want them
        sizes = (self.file.metadata.row_group(g).num_rows for g in range(self.file.num_row_groups))
        self.starts = list(itertools.accumulate(sizes, initial=0))  # row of each group
        self._last: tuple[int, Any] = (-1, None)  # (group, its decoded table)

    def rows(self, start: int, count: int) -> list[dict]:
        """``count`` items from row ``start`` on (fewer at the end of the file)."""
        items, stop = [], start + count
        group = max(bisect.bisect_right(self.starts, start) - 1, 0)
        while group < len(self.starts) - 1 and self.starts[group] < stop:
            first = self.starts[group]
            low = max(start - first, 0)
            items += self.convert(self._group(group).slice(low, stop - first - low))
            group += 1
        return items

    def take(self, rows: list[int], columns: Sequence[str] | None = None) -> list[dict]:
        """The items of ``rows`` (ascending positions), in that order; only the row
        groups that hold them are decoded, and only their rows converted (with
        ``columns``, only those columns: the converter sees no others)."""
        items, at = [], 0
        while at < len(rows):
            group = bisect.bisect_right(self.starts, rows[at]) - 1
            end = bisect.bisect_left(rows, self.starts[group + 1], at)
            low, count = rows[at] - self.starts[group], end - at
            table = self._group(group)
            if rows[end - 1] - rows[at] == count - 1:  # consecutive rows: a view of them
                picked = table.slice(low, count)
            else:
                picked = table.take([row - self.starts[group] for row in rows[at:end]])
            if columns is not None:
                picked = picked.select([name for name in columns if name in picked.schema.names])
            items += self.convert(picked)
            at = end
        return items

    def _group(self, group: int):
        if self._last[0] != group:
            self._last = (group, None)  # the old table goes before the new one is read
            self._last = (group, self.file.read_row_group(group, use_threads=False))
        return self._last[1]


class StoredRecords(Sequence):
    """Records on disk, read from there each time they are iterated (:meth:`_read`), so
    holding them costs no memory. Indexing reads them into memory once (kept), for
    callers that want a list."""

    _held: list[dict] | None = None

    def _read(self) -> Iterator[dict]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[dict]:
        return iter(self._held) if self._held is not None else self._read()

    def __getitem__(self, index):
        if self._held is None:
            self._held = list(self)
        return self._held[index]

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)


class ItemFiles(StoredRecords):
    """Items stored in Parquet files, in file order, read a batch at a time (see
    :class:`StoredRecords`)."""

    def __init__(self, files: Iterable[str | Path]):
        self.files = [Path(file) for file in files]
        self._rows = [row_count(file) for file in self.files]

    def _read(self) -> Iterator[dict]:
        return itertools.chain.from_iterable(iter_parquet(file) for file in self.files)

    def __len__(self) -> int:
        return sum(self._rows)

    def ids(self) -> list[str]:
        """The items' ids, in order, reading only that column."""
        return self.column("id")

    def column(self, name: str) -> list:
        """One field of every item, in order, reading only that column (as stored: typed,
        open fields as JSON text)."""
        return [v for file in self.files for v in pl.read_parquet(file, columns=[name])[name]]

    def places(self) -> Iterator[tuple[str, Path, int]]:
        """Each item's ``(id, file, row)``, in order, reading only the ids."""
        for file in self.files:
            ids = pl.read_parquet(file, columns=["id"])["id"]
            yield from ((identity, file, row) for row, identity in enumerate(ids))

    def fields(self, *names: str) -> Iterator[dict]:
        """The items with only the fields ``names`` read (the others null), in order."""
        if self._held is not None:
            return iter(self._held)
        return itertools.chain.from_iterable(iter_parquet(f, list(names)) for f in self.files)


def write_jsonl(records: Iterable[dict], path: str | Path) -> Path:
    """Write records as JSON Lines (sorted keys, one per line) atomically."""
    path = Path(path)
    with _atomic(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(canonical_json(record) + "\n")
    return path


SORT_RUN = 50_000  # records write_sorted_jsonl sorts in memory at once; more are merged


def write_sorted_jsonl(records: Iterable[dict], path: str | Path, key) -> Path:
    """:func:`write_jsonl` of ``sorted(records, key=key)``, the same bytes, sorting at
    most :data:`SORT_RUN` records at a time: more are sorted in runs stored beside the
    file and merged (ties keep their order, as ``sorted`` does)."""
    path = Path(path)
    chunks = in_chunks(records, SORT_RUN)
    first = next(chunks, [])
    second = next(chunks, None)
    if second is None:
        return write_jsonl(sorted(first, key=key), path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{path.name}.runs-", dir=path.parent) as folder:
        runs = []
        for number, chunk in enumerate(itertools.chain([first, second], chunks)):
            runs.append(write_jsonl(sorted(chunk, key=key), Path(folder) / f"{number}.jsonl"))
            first = second = chunk = None  # each run's records go once it is written
        write_jsonl(heapq.merge(*map(read_jsonl, runs), key=key), path)
    return path


def read_jsonl(path: str | Path) -> Iterator[dict]:
    """Yield the records of a JSON Lines file."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


class _atomic:
    """Context manager giving a temporary sibling path, renamed onto ``path`` on success."""

    def __init__(self, path: Path):
        self.path = path
        self.tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")

    def __enter__(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale_temporaries(self.path.parent)
        return self.tmp

    def __exit__(self, exc_type, exc, _tb) -> None:
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(self.path)  # a failed write or close names no file of its own
        try:
            if exc_type is None:
                os.replace(self.tmp, self.path)  # fails when the path is a folder, say
        finally:
            self.tmp.unlink(missing_ok=True)


_SWEPT: set[tuple[int, Path]] = set()  # (process, folder) pairs already swept


def sweep_stale_temporaries(folder: Path) -> None:
    """Remove the temporaries that killed processes left in ``folder`` (a SIGKILL runs no
    cleanup, so a killed build leaves ``.<name>.<pid>.tmp`` beside what it was writing,
    and SQLite its ``-journal``, ``-wal`` or ``-shm`` when the temporary is a database):
    those whose process is gone. Once per folder and process, before its first write."""
    key = (os.getpid(), folder)
    if key in _SWEPT:
        return
    _SWEPT.add(key)
    for tmp in folder.glob(".*.tmp*"):
        stem, _, suffix = tmp.name.rpartition(".tmp")
        pid = stem.rpartition(".")[2]
        if suffix in SQLITE_SIDE_FILES and pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


SQLITE_SIDE_FILES = ("", "-journal", "-wal", "-shm")  # a temporary and SQLite's files beside it


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def guard_replace(path: str | Path, force: bool = False, ours: bytes | None = None) -> None:
    """Refuse to replace a file answerable did not write, unless ``force``.

    ``ours`` is how the files this command writes begin (their first bytes); a file that
    begins otherwise is someone else's and is left alone (a ConfigError with the fix).
    """
    path = Path(path)
    if force or path.is_dir() or not (path.exists() or path.is_symlink()):
        return  # a folder fails at the write, as one line
    if ours is not None:
        with open(path, "rb") as fh:
            if fh.read(len(ours)) == ours:
                return
    raise ConfigError(
        path, None, "already exists", fix="pass --force to replace it, or choose another path"
    )


def atomic_path(path: str | Path) -> _atomic:
    """Public form of the atomic-write helper, for other writers (manifests, reports)."""
    return _atomic(Path(path))


def write_json(value: Any, path: str | Path) -> Path:
    """Write pretty, key-sorted JSON atomically (manifests, reports)."""
    path = Path(path)
    with _atomic(path) as tmp:
        tmp.write_text(
            json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return path


def read_json(path: str | Path) -> Any:
    """Read one JSON document."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
