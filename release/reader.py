"""A published release read back: its manifest, its items per split, its databases.

The layout (the release contract): ``manifest.json``; ``data/<split>.parquet`` and
``data/<split>.jsonl`` per split; ``databases/<db_id>.sqlite`` and
``databases/variants/<variant>.sqlite`` (a delta: the columns an edit changed and the
views that show them over its base). This module is the one reader of a release: verify,
diff, export, inspect and evaluate open it here (:func:`open_release`, or the parts:
:func:`read_release_manifest`, :func:`read_frame`, :func:`read_items`,
:func:`release_schemas`). Every reader takes a release folder and names it when it is not
one.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from answerable.builders.executor import Limits
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import ConfigError, RecordError
from answerable.kernel.ids import sha256_file
from answerable.kernel.item_model import polars_schema
from answerable.kernel.names import inside
from answerable.kernel.records import complete
from answerable.kernel.typed_items import to_items
from answerable.release.cut.write import read_split
from answerable.release.databases import item_files
from answerable.schemas import validate

MANIFEST = "manifest.json"
DATA_FILE = re.compile(r"^data/(?P<split>[^/]+)\.(?P<fmt>parquet|jsonl)$")
_FIX = "give the folder of a release (<out>/<dataset>/<version>/, holding manifest.json)"


def read_release_manifest(folder: Path) -> dict:
    """The manifest of a release folder, checked against its schema.

    A folder that is not a release, a manifest that is not JSON or not a manifest: a
    :class:`ConfigError` naming the file.
    """
    folder = Path(folder)
    path = folder / MANIFEST
    if not folder.is_dir():
        raise ConfigError(folder, None, "not a folder", fix=_FIX)
    if not path.is_file():
        raise ConfigError(folder, None, f"not a release: no {MANIFEST}", fix=_FIX)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(path, None, f"not JSON ({error})", fix=_FIX) from None
    try:
        validate("manifest", manifest)
    except RecordError as error:
        raise ConfigError(path, error.pointer or None, error.problem, fix=_FIX) from None
    for index, entry in enumerate(manifest["files"]):
        where = f"files[{index}].path"
        try:
            inside(folder, entry["path"], where)
        except ConfigError:
            problem = f"{entry['path']!r} is outside the release folder (symlinks followed)"
            raise ConfigError(
                path, where, problem, fix="list only files inside the release"
            ) from None
    return manifest


@dataclass(frozen=True)
class Release:
    """An opened release: its folder, manifest, items (sorted by id) and the execution
    limits its gold results were verified with."""

    path: Path
    items: list[dict]
    manifest: dict
    limits: Limits


def open_release(folder: str | Path, fields: Iterable[str] | None = None) -> Release:
    """The release at ``folder``: manifest checked, every split's items sorted by id.

    ``fields``: read only these item fields (those a data file has), as plain values
    (open fields parsed, absent fields left out); without it every field, as
    :func:`read_items` gives them. A release without data files is refused.
    """
    folder = Path(folder)
    manifest = data_manifest(folder)
    if fields is None:
        items = read_items(folder, manifest)
    else:
        frame = read_frame(folder, manifest, columns=fields)
        items = sorted(to_items(frame), key=lambda item: item["id"])
    return Release(folder, items, manifest, release_limits(manifest))


def data_manifest(folder: Path) -> dict:
    """The release's checked manifest; a release without data files is refused."""
    manifest = read_release_manifest(folder)
    if not data_files(manifest):
        raise ConfigError(folder, None, "not a release: no data/<split> files", fix=_FIX)
    return manifest


def release_limits(manifest: dict) -> Limits:
    """The execution limits the release's gold results were verified with (its
    ``execution`` entry: time limit and row cap); the executor's defaults for a release
    that does not record them."""
    recorded = manifest.get("execution") or {}
    return Limits(
        timeout_s=float(recorded.get("timeout_s", Limits.timeout_s)),
        row_cap=int(recorded.get("row_cap", Limits.row_cap)),
    )


def data_files(manifest: dict) -> dict[str, dict[str, dict]]:
    """``{split: {"parquet": entry, "jsonl": entry}}`` of the manifest's data files."""
    splits: dict[str, dict[str, dict]] = {}
    for entry in manifest["files"]:
        match = DATA_FILE.match(entry["path"])
        if match:
            splits.setdefault(match["split"], {})[match["fmt"]] = entry
    return {name: splits[name] for name in split_order(splits)}


def split_order(names) -> list[str]:
    """Split names in reading order: train, dev (or validation), test, then the rest."""
    rank = {"train": 0, "dev": 1, "validation": 1, "test": 2}
    return sorted(names, key=lambda name: (rank.get(name, 3), name))


def read_items(
    folder: Path, manifest: dict | None = None, frame: pl.DataFrame | None = None
) -> list[dict]:
    """Every item of a release as plain dicts (open fields parsed, every top-level field
    present), sorted by id; ``frame``: the release's :func:`read_frame`, when read already."""
    frame = read_frame(folder, manifest) if frame is None else frame
    items = [complete(item) for item in to_items(frame)]
    return sorted(items, key=lambda item: item["id"])


def read_frame(
    folder: Path, manifest: dict | None = None, columns: Iterable[str] | None = None
) -> pl.DataFrame:
    """Every item of a release as one polars frame (from the Parquet files, or the JSON
    Lines files where a split has no Parquet), with a ``split`` column; split by split,
    each sorted by id as written (sort it when the order matters: that costs seconds on a
    million items). ``columns``: read only these (those a file has, in its order), plus
    ``split``."""
    folder = Path(folder)
    manifest = manifest if manifest is not None else read_release_manifest(folder)
    columns = None if columns is None else frozenset(columns)
    frames = []
    for split, files in data_files(manifest).items():
        # Parquet when the release has it; a release that ships JSON Lines only, those
        frame = _read_data(folder / (files.get("parquet") or files["jsonl"])["path"], columns)
        if "split" not in frame.columns:
            frame = frame.with_columns(pl.lit(split).alias("split"))
        frames.append(frame)
    if not frames:
        return _read_data(None, columns)
    same = all(frame.schema == frames[0].schema for frame in frames)
    return pl.concat(frames, how="vertical" if same else "diagonal_relaxed")


def _read_data(path: Path | None, columns: frozenset[str] | None) -> pl.DataFrame:
    """One data file (``None``: no file, an empty frame of every field), its ``columns``
    only when given; a Parquet file reads no other column."""
    if columns is not None and path is not None and path.suffix == ".parquet":
        present = [name for name in pl.read_parquet_schema(path) if name in columns]
        return pl.read_parquet(path, columns=present)
    frame = pl.DataFrame(schema=polars_schema()) if path is None else read_split(path)
    if columns is None:
        return frame
    wanted = columns | ({"split"} if path is None else set())
    return frame.select([name for name in frame.columns if name in wanted])


def database_key(item: dict) -> str:
    """The database an item is asked over: its edited variant, else its source database."""
    return item.get("db_variant") or item["db_id"]


def database_paths(item: dict, release: Path) -> tuple[str, str | None]:
    """``(base, delta)``: the paths inside the release of the database the item is asked
    over; an item without one is refused with a line naming the release and the item."""
    database = item.get("database")
    if not isinstance(database, dict) or not database.get("base"):
        raise ConfigError(
            release,
            f"item {item['id']}: database",
            "the item names no shipped database",
            fix="score a release cut with its databases (answerable build)",
        )
    return database["base"], database.get("delta")


def shipped(item: dict, release: Path) -> bool:
    """Whether the release ships the database the item is asked over."""
    database = item.get("database")
    if not isinstance(database, dict) or not database.get("base"):
        return False
    return all(
        (release / part).is_file() for part in (database["base"], database.get("delta")) if part
    )


def release_schemas(folder: Path, items: list[dict]) -> dict[str, DatabaseSchema]:
    """The schema of every database the items are asked over, keyed by
    :func:`database_key` (a variant's: its delta's tables over its base's). Items whose
    database the release does not ship (schema-only sources) have none here."""
    folder = Path(folder)
    schemas: dict[str, DatabaseSchema] = {}
    for item in items:
        key = database_key(item)
        if key in schemas or not item.get("database"):
            continue
        path, base = item_files(folder, item)
        schemas[key] = DatabaseSchema.from_sqlite(path, key, base=base)
    return schemas


def tally(items: list[dict], field: str) -> dict[str, int]:
    """Counts of ``field``'s values, sorted by value; null shows as ``none``."""
    counts = Counter(str(item.get(field) or "none") for item in items)
    return dict(sorted(counts.items()))


def count_items(items: Iterable[dict]) -> dict:
    """The manifest's counts: total and per label, category and database (``items`` is
    read once: it may be a stream)."""
    fields = {"by_label": "label", "by_category": "category", "by_db": "db_id"}
    counts, total = {name: Counter() for name in fields}, 0
    for item in items:
        total += 1
        for name, field in fields.items():
            counts[name][str(item.get(field) or "none")] += 1
    return {"total": total} | {name: dict(sorted(counts[name].items())) for name in fields}


def frame_tally(frame: pl.DataFrame, column: str) -> dict[str, int]:
    """Counts of a column's values, sorted, null or empty as ``none`` (the manifest's
    tally); empty when the column is absent."""
    if column not in frame.columns or frame.height == 0:
        return {}
    values = frame.get_column(column).cast(pl.String).fill_null("none").replace("", "none")
    return dict(sorted(values.value_counts().iter_rows()))


def file_entry(folder: Path, relative: str) -> dict:
    """The manifest entry of a file in a release: path, sha256 and bytes."""
    path = Path(folder) / relative
    return {"path": relative, "sha256": sha256_file(path), "bytes": path.stat().st_size}
