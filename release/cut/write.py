"""The write step: typed release files, items as Arrow structs and lists derived from
the item schema.

The release's ``data/<split>.parquet`` and ``data/<split>.jsonl`` hold one column per
top-level item field, typed from ``schemas/item.schema.json`` as a build's candidates
are (:mod:`answerable.kernel.typed_items`: a closed object is a struct of its declared
properties, an array a list of its items' type; only the open fields stay JSON text).

Every row carries every column and every struct every key (null when absent), so a
reader that infers types from the first rows (``pl.read_ndjson``, pandas) drops nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from answerable.kernel.ids import sha256_file
from answerable.kernel.item_model import polars_schema
from answerable.kernel.records import atomic_path

# ---- files -----------------------------------------------------------------------------

SUFFIXES = {"parquet": ".parquet", "jsonl": ".jsonl"}
# Rows per row group of a data file: the most rows of a split held at once while it is
# written. A split of at most this many rows is one row group, written by polars as a
# whole frame is (the demo's and most releases' bytes); a larger one goes a row group at a
# time through pyarrow's Parquet writer (polars has no writer fed piece by piece, and its
# streaming sink reads the pieces ahead of the writer, holding a share of the split).
# pyarrow's cost per row group is most of a write in small groups: 4,096 rows took 4.2x
# the CPU of 65,536 writing 300,000 rows.
ROW_GROUP_ROWS = 65_536


class SplitFiles:
    """One split's files (``data/<split>.<format>`` under ``folder``), written as its rows
    arrive in id order (:meth:`add`, a frame at a time) and finished by :meth:`close`,
    which gives their manifest entries. Nothing is spooled and no split is held whole:
    JSON Lines are written as the rows come; Parquet in row groups of
    :data:`ROW_GROUP_ROWS`, so at most a group's rows wait. A split of one group is
    written by polars, a longer one a group at a time by pyarrow's writer (the file's
    schema from its first group), the same bytes whatever the frames the rows came in."""

    def __init__(self, folder: Path, split: str, formats: Iterable[str]):
        self.split, self.rows = split, 0
        self._files = contextlib.ExitStack()
        self._paths: dict[str, tuple[Path, Path]] = {}  # format -> (path, its temporary)
        for fmt in formats:
            path = Path(folder) / f"data/{split}{SUFFIXES[fmt]}"
            self._paths[fmt] = (path, self._files.enter_context(atomic_path(path)))
        self._ndjson = None
        if "jsonl" in self._paths:  # closed before the temporaries are renamed
            self._ndjson = self._files.enter_context(open(self._paths["jsonl"][1], "wb"))  # noqa: SIM115 (held by the stack)
        self._held: list[pl.DataFrame] = []  # the Parquet rows of the group being gathered
        self._count = 0  # rows held
        self._first: pl.DataFrame | None = None  # the first group, until a second comes
        self._parquet = None  # pyarrow's writer, from the second group on

    def add(self, rows: pl.DataFrame) -> None:
        """The split's next rows (after every row added before them)."""
        self.rows += rows.height
        if self._ndjson is not None:
            rows.write_ndjson(self._ndjson)
        if "parquet" not in self._paths:
            return
        while rows.height:
            take = rows.head(ROW_GROUP_ROWS - self._count)
            self._held.append(take)
            self._count += take.height
            rows = rows.slice(take.height)
            if self._count == ROW_GROUP_ROWS:
                self._group(pl.concat(self._held, rechunk=True))
                self._held, self._count = [], 0

    def _group(self, group: pl.DataFrame) -> None:
        if self._first is None and self._parquet is None:
            self._first = group
            return
        if self._parquet is None:
            import pyarrow.parquet as pq  # the [build] extra: only a build writes a release

            head, self._first = self._first.to_arrow(), None
            self._parquet = pq.ParquetWriter(
                self._paths["parquet"][1], head.schema, compression="zstd", write_statistics=False
            )
            self._parquet.write_table(head, row_group_size=ROW_GROUP_ROWS)
            del head  # not held while the next row group is gathered
        self._parquet.write_table(group.to_arrow(), row_group_size=ROW_GROUP_ROWS)

    def close(self) -> list[dict]:
        """Finish the files (renamed into place) and give their manifest entries, in the
        order of the formats."""
        with self._files:
            if "parquet" in self._paths:
                self._finish_parquet()
        return [
            {
                "path": path.relative_to(path.parents[1]).as_posix(),
                "sha256": sha256_file(path),
                "bytes": path.stat().st_size,
                "rows": self.rows,
            }
            for path, _tmp in self._paths.values()
        ]

    def _finish_parquet(self) -> None:
        if self._held:
            self._group(pl.concat(self._held, rechunk=True))
            self._held = []
        if self._parquet is not None:
            self._parquet.close()
        else:  # one group, or none at all
            first = self._first if self._first is not None else pl.DataFrame(schema=polars_schema())
            first.write_parquet(self._paths["parquet"][1], compression="zstd", statistics=False)

    def abort(self) -> None:
        """Give up the files (their temporaries removed, nothing renamed)."""
        if self._parquet is not None:
            self._parquet.close()
        self._files.__exit__(RuntimeError, RuntimeError("aborted"), None)


def read_split(path: Path) -> pl.DataFrame:
    """One data file of a release, Parquet or JSON Lines, with the release's types."""
    path = Path(path)
    if path.suffix == ".parquet":
        return pl.read_parquet(path)
    return pl.read_ndjson(path, schema=polars_schema())


def write_data(
    frames: pl.DataFrame | Iterable[pl.DataFrame], folder: Path, formats: Iterable[str]
) -> list[dict]:
    """The write step: one file per split and format under ``folder/data``, rows sorted by
    id, splits in name order; the manifest entries of every file written.

    ``frames`` is a frame of items, or frames one after another in id order (chunks of
    the release): each chunk's rows go to their split's files as they come
    (:class:`SplitFiles`), so no split is ever held whole and nothing is spooled. A
    whole frame is in memory already: it is sorted by id if need be and given in slices
    of :data:`ROW_GROUP_ROWS` rows (views of it, not copies), so a split's rows are
    copied out of it a slice at a time, never a whole split at once."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    if isinstance(frames, pl.DataFrame):
        frame = frames.select(list(polars_schema()))
        frame = frame if frame["id"].is_sorted() else frame.sort("id")
        frames = frame.iter_slices(ROW_GROUP_ROWS)
    formats = list(formats)
    files: dict[str, SplitFiles] = {}
    try:
        last = None
        for frame in frames:
            frame = frame.select(list(polars_schema()))  # item fields, in the schema's order
            if frame.is_empty():
                continue
            if not frame["id"].is_sorted() or (last is not None and frame["id"][0] <= last):
                raise ValueError("the release's chunks are not in id order")
            last = frame["id"][-1]
            for split in sorted(frame["split"].unique().drop_nulls().to_list()):
                if split not in files:
                    files[split] = SplitFiles(folder, split, formats)
                files[split].add(frame.filter(pl.col("split") == split))
            del frame
        entries = []
        for split in sorted(files):
            entries += files.pop(split).close()
        return entries
    finally:
        for unfinished in files.values():
            unfinished.abort()
