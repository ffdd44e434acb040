"""Items on disk: Parquet through polars, and JSON Lines.

An item is a dict under ``schemas/item.schema.json``. In Parquet its plain fields are
string columns and its nested fields (spans, result, provenance ...) are JSON text, so
every item round-trips exactly whatever its nesting. Writers sort by id and write to a
temporary file renamed into place, so output bytes depend on content only and a killed
run never leaves half a file.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import polars as pl

from answerable.errors import ConfigError
from answerable.ids import canonical_json

PLAIN_FIELDS = (
    "id",
    "db_id",
    "db_variant",
    "question",
    "sql",
    "dialect",
    "label",
    "category",
    "subtype",
    "explanation",
)
NESTED_FIELDS = ("spans", "trigger", "edit", "result", "sql_meta", "provenance", "review")
NESTED_FIELDS += ("candidates",)  # optional: candidate SQL with SCARE strata (drafting)
NESTED_FIELDS += ("database",)  # in a release: base and delta paths (release/databases.py)
PLAIN_FIELDS += ("split",)  # optional: the split a source gave the example (or a release)
NESTED_FIELDS += ("readings",)  # optional: an ambiguous item's readings and results (issue 12)
PLAIN_FIELDS += ("answer",)  # optional: a templated triple's natural-language answer
NESTED_FIELDS += ("tags",)  # optional: free-form tags (BiomedSQL's reasoning categories)
NESTED_FIELDS += ("sql_by_dialect",)  # in a release: gold SQL per dialect (release/dialects.py)
FIELDS = PLAIN_FIELDS + NESTED_FIELDS
DEFAULTS = {"dialect": "sqlite", "spans": []}  # what an absent field means
PARQUET_SCHEMA = {name: pl.String for name in FIELDS}


def complete(item: dict) -> dict:
    """The item with every field present, in the schema's order (missing ones null)."""
    return {name: item.get(name, DEFAULTS.get(name)) for name in FIELDS}


def sort_items(items: Iterable[dict]) -> list[dict]:
    """Items sorted by id: the one order every output uses."""
    return sorted(items, key=lambda item: item["id"])


def to_frame(items: Iterable[dict]) -> pl.DataFrame:
    """A polars frame of items, nested fields as JSON text, sorted by id."""
    rows = []
    for item in sort_items(complete(i) for i in items):
        row = {name: item[name] for name in PLAIN_FIELDS}
        row.update({name: _dump(item[name]) for name in NESTED_FIELDS})
        rows.append(row)
    return pl.DataFrame(rows, schema=PARQUET_SCHEMA, orient="row")


def from_frame(frame: pl.DataFrame) -> list[dict]:
    """Items back from a frame made by :func:`to_frame`."""
    items = []
    for row in frame.iter_rows(named=True):
        item = {name: row.get(name) for name in PLAIN_FIELDS}
        item.update({name: _load(row.get(name)) for name in NESTED_FIELDS})
        items.append(item)
    return items


def _dump(value: Any) -> str | None:
    return None if value is None else canonical_json(value)


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def write_parquet(items: Iterable[dict], path: str | Path) -> Path:
    """Write items to a Parquet file atomically; returns the path."""
    path = Path(path)
    frame = to_frame(items)
    with _atomic(path) as tmp:
        try:
            frame.write_parquet(tmp, compression="zstd", statistics=False)
        except pl.exceptions.ComputeError as error:
            raise _write_failed(path, error) from None
    return path


def _write_failed(path: Path, error: Exception) -> OSError:
    """The OS error behind a failed Parquet write: polars reports a full disk as a
    "transport error", so the free space says whether that is what happened."""
    if shutil.disk_usage(path.parent).free < 1 << 20:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    return OSError(errno.EIO, f"could not write Parquet ({error})", str(path))


def read_parquet(path: str | Path) -> list[dict]:
    """Read items from a Parquet file written by :func:`write_parquet`."""
    return from_frame(pl.read_parquet(path))


def write_jsonl(records: Iterable[dict], path: str | Path) -> Path:
    """Write records as JSON Lines (sorted keys, one per line) atomically."""
    path = Path(path)
    with _atomic(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(canonical_json(record) + "\n")
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
        return self.tmp

    def __exit__(self, exc_type, exc, _tb) -> None:
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(self.path)  # a failed write or close names no file of its own
        try:
            if exc_type is None:
                os.replace(self.tmp, self.path)  # fails when the path is a folder, say
        finally:
            self.tmp.unlink(missing_ok=True)


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
