"""The write step: typed release files, items as Arrow structs and lists derived from
the item schema.

The release's ``data/<split>.parquet`` and ``data/<split>.jsonl`` hold one column per
top-level item field, typed from ``schemas/item.schema.json``: a closed object is a
struct of its declared properties, an array a list of its items' type, an enum of
strings a string. Only the fields in :data:`OPEN_FIELDS` stay JSON text, because their
keys or cell types vary from item to item (result rows, edit scripts ...).

Every row carries every column and every struct every key (null when absent), so a
reader that infers types from the first rows (``pl.read_ndjson``, pandas) drops nothing.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

from answerable.ids import canonical_json, sha256_file
from answerable.item_model import (
    OPEN_FIELDS,
    SchemaShapeError,
    polars_schema,
    required_keys,
)
from answerable.records import DEFAULTS, atomic_path

# ---- items <-> typed frame -------------------------------------------------------------


def to_frame(items: Iterable[dict]) -> pl.DataFrame:
    """A typed frame of items, sorted by id; open fields become JSON text.

    A key that the schema does not declare inside a struct would be lost, so it is an
    error naming the item and the key.
    """
    schema = polars_schema()
    rows = [_typed_row(item, schema) for item in sorted(items, key=lambda i: i["id"])]
    return pl.DataFrame(rows, schema=schema, orient="row")


def _typed_row(item: dict, schema: pl.Schema) -> list:
    unknown = set(item) - set(schema)
    if unknown:
        raise SchemaShapeError(
            f"item {item.get('id')}: field(s) {sorted(unknown)} are not in "
            "schemas/item.schema.json (fix: declare them there)"
        )
    return [
        _typed(item.get(name, DEFAULTS.get(name)), dtype, name, item)
        for name, dtype in schema.items()
    ]


def _typed(value: Any, dtype: pl.DataType, path: str, item: dict) -> Any:
    if value is None:
        return None
    if path in OPEN_FIELDS:
        return canonical_json(value)
    if isinstance(dtype, pl.Struct):
        names = {field.name: field.dtype for field in dtype.fields}
        unknown = set(value) - set(names)
        if unknown:
            raise SchemaShapeError(
                f"item {item.get('id')}: {path} has key(s) {sorted(unknown)} that "
                "schemas/item.schema.json does not declare (fix: declare them there, or "
                "list the field in OPEN_FIELDS in src/answerable/item_model.py)"
            )
        return {k: _typed(value.get(k), t, f"{path}.{k}", item) for k, t in names.items()}
    if isinstance(dtype, pl.List):
        return [_typed(v, dtype.inner, path, item) for v in value]
    return value


def to_items(frame: pl.DataFrame) -> list[dict]:
    """Items back from a typed frame: every top-level field (null when absent), open
    fields parsed, null keys inside structs left out unless the schema requires them (an
    absent key and a null one read back alike)."""
    frame = frame.select([name for name in polars_schema() if name in frame.columns])
    converters = [(name, _converter(dtype, name)) for name, dtype in frame.schema.items()]
    return [
        {name: convert(row[name]) for name, convert in converters}
        for row in frame.iter_rows(named=True)
    ]


def _same(value: Any) -> Any:
    return value


@cache
def _converter(dtype: pl.DataType, path: str) -> Callable[[Any], Any]:
    """The function that turns one typed value at ``path`` back into its item form; made
    once per field, so a million rows do not walk the struct's type again and again."""
    if path in OPEN_FIELDS:
        return lambda value: None if value is None else json.loads(value)
    if isinstance(dtype, pl.Struct):
        return _struct_converter(dtype, path)
    if isinstance(dtype, pl.List):
        inner = _converter(dtype.inner, path)
        if inner is _same:
            return _same
        return lambda value: None if value is None else [inner(v) for v in value]
    return _same


def _struct_converter(dtype: pl.Struct, path: str) -> Callable[[Any], Any]:
    parts = [(f.name, _converter(f.dtype, f"{path}.{f.name}")) for f in dtype.fields]
    required = required_keys(path)

    def convert(value: Any) -> Any:
        if value is None:
            return None
        out = {}
        for key, part in parts:
            field = value.get(key)
            if field is not None:
                out[key] = part(field)
            elif key in required:
                out[key] = None
        return out

    return convert


# ---- files -----------------------------------------------------------------------------

SUFFIXES = {"parquet": ".parquet", "jsonl": ".jsonl"}
# Rows per row group of a data file: the most rows of a split held at once while it is
# written. A split of at most this many rows is one row group, written by polars as a
# whole frame is (the demo's and most releases' bytes); a larger one goes a row group at a
# time through pyarrow's Parquet writer (polars has no writer fed piece by piece, and its
# streaming sink reads the pieces ahead of the writer, holding a share of the split).
ROW_GROUP_ROWS = 4_096


def write_split(
    pieces: Callable[[], Iterable[pl.DataFrame]], folder: Path, split: str, formats: Iterable[str]
) -> list:
    """Write one split's rows as ``data/<split>.<format>`` under ``folder``; the manifest
    entries of the files written. ``pieces()``: the split's rows in id order, a frame at a
    time (the spooled parts read back one at a time, or the split's one frame), once per
    format."""

    def write(fmt: str) -> dict:
        relative = f"data/{split}{SUFFIXES[fmt]}"
        path = Path(folder) / relative
        with atomic_path(path) as tmp:
            if fmt == "parquet":
                rows = _write_parquet(pieces(), tmp)
            else:
                rows = _write_ndjson(pieces(), tmp)
        return {
            "path": relative,
            "sha256": sha256_file(path),
            "bytes": path.stat().st_size,
            "rows": rows,
        }

    # one format after the other, in this thread: writers in threads of their own (new
    # ones per split) left the pages of their buffers behind, ~30 MB more at the peak
    return [write(fmt) for fmt in formats]


def _write_ndjson(pieces: Iterable[pl.DataFrame], path: Path) -> int:
    """JSON Lines a piece at a time (the bytes are those of one write); the rows written."""
    rows = 0
    with open(path, "wb") as out:
        for piece in pieces:
            piece.write_ndjson(out)
            rows += piece.height
    return rows


def _write_parquet(pieces: Iterable[pl.DataFrame], path: Path) -> int:
    """Parquet in row groups of :data:`ROW_GROUP_ROWS` (see there); the rows written."""
    groups = _row_groups(pieces)
    first = next(groups)
    second = next(groups, None)
    if second is None:
        first.write_parquet(path, compression="zstd", statistics=False)
        return first.height
    import pyarrow.parquet as pq  # the [build] extra: only a build writes a release

    rows = 0
    tables = (group.to_arrow() for group in itertools.chain([first, second], groups))
    del first, second  # held by the chain until written, no longer
    head = next(tables)  # each group converted once; the first gives the file's schema
    with pq.ParquetWriter(path, head.schema, compression="zstd", write_statistics=False) as out:
        tables, head = itertools.chain([head], tables), None
        for table in tables:
            out.write_table(table, row_group_size=ROW_GROUP_ROWS)
            rows += table.num_rows
            del table  # not held while the next row group is gathered
    return rows


def _row_groups(pieces: Iterable[pl.DataFrame]) -> Iterator[pl.DataFrame]:
    """The rows of ``pieces`` in frames of :data:`ROW_GROUP_ROWS` (the last may be
    shorter; one empty frame when there are none)."""
    held: list[pl.DataFrame] = []
    count, made = 0, 0
    for piece in pieces:
        while piece.height:
            take = piece.head(ROW_GROUP_ROWS - count)
            held.append(take)
            count += take.height
            piece = piece.slice(take.height)
            if count == ROW_GROUP_ROWS:
                yield pl.concat(held, rechunk=True)
                held, count, made = [], 0, made + 1
    if held:
        yield pl.concat(held, rechunk=True)
    elif not made:  # no rows at all; a split of whole groups ends with no empty one
        yield pl.DataFrame(schema=polars_schema())


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
    the release): each chunk's rows are spooled to disk per split, then every split's
    files are written from its spool a piece at a time, so no split is ever held whole.
    A whole frame is in memory already: each split is written from it, without a spool."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    if isinstance(frames, pl.DataFrame):
        return _write_whole(frames, folder, formats)
    with tempfile.TemporaryDirectory(prefix=".spool-", dir=folder) as spool:
        parts: dict[str, list[Path]] = {}
        last = None
        for frame in frames:
            frame = frame.select(list(polars_schema()))  # item fields, in the schema's order
            if frame.is_empty():
                continue
            if not frame["id"].is_sorted() or (last is not None and frame["id"][0] <= last):
                raise ValueError("the release's chunks are not in id order")
            last = frame["id"][-1]
            for split in sorted(frame["split"].unique().to_list()):
                part = Path(spool) / f"{split}.{len(parts.get(split, [])):06d}.arrow"
                frame.filter(pl.col("split") == split).write_ipc(part)
                parts.setdefault(split, []).append(part)
        entries = []
        for split, spooled in sorted(parts.items()):
            entries += write_split(_reader(spooled), folder, split, formats)
        return entries


def _reader(parts: list[Path]) -> Callable[[], Iterator[pl.DataFrame]]:
    """The spooled Arrow IPC files of a split, read back one at a time on each call."""
    return lambda: (pl.read_ipc(part) for part in parts)


def _write_whole(frame: pl.DataFrame, folder: Path, formats: Iterable[str]) -> list[dict]:
    """:func:`write_data` of one frame of items: the same files, each split's rows
    taken from the frame as they are needed."""
    frame = frame.select(list(polars_schema()))  # item fields, in the schema's order
    frame = frame if frame["id"].is_sorted() else frame.sort("id")
    entries = []
    for split in sorted(frame["split"].unique().drop_nulls().to_list()):
        rows = frame.filter(pl.col("split") == split)
        entries += write_split(lambda rows=rows: [rows], folder, split, formats)
        del rows
    return entries
