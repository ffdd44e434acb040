"""Cut a release: ``<out>/<dataset>/<version>/`` with items in Parquet and JSON Lines
and a ``manifest.json`` holding counts and a sha256 per file.

The directory is written beside its final place and renamed into it, so a reader never
sees half a release. A published version is never rewritten: cutting the same version
again with identical content is a no-op, with different content an error.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from answerable import __version__
from answerable.errors import AnswerableError
from answerable.ids import sha256_file
from answerable.records import complete, sort_items, write_json, write_jsonl, write_parquet
from answerable.release.card import About
from answerable.release.contents import read_release_manifest
from answerable.release.databases import ship_databases
from answerable.release.documents import write_documents
from answerable.release.verify import ReleaseDiffersError, check_files
from answerable.schemas import validate

WRITERS = {
    "parquet": ("items.parquet", write_parquet),
    "jsonl": ("items.jsonl", lambda items, path: write_jsonl((complete(i) for i in items), path)),
}


class ReleaseExistsError(AnswerableError):
    """The version is published already with other content."""


@dataclass
class Release:
    """Where a release went, what it holds, and whether this call wrote it."""

    path: Path
    manifest: dict
    written: bool


def tally(items: list[dict], field: str) -> dict[str, int]:
    """Counts of ``field``'s values, sorted by value; null shows as ``none``."""
    counts = Counter(str(item.get(field) or "none") for item in items)
    return dict(sorted(counts.items()))


def count_items(items: list[dict]) -> dict:
    """The manifest's counts: total and per label, category and database."""
    return {
        "total": len(items),
        "by_label": tally(items, "label"),
        "by_category": tally(items, "category"),
        "by_db": tally(items, "db_id"),
    }


def cut_release(
    items: list[dict],
    *,
    out: Path,
    dataset: str,
    version: str,
    seed: int,
    recipe_signature: str,
    inputs: list[dict],
    formats: tuple[str, ...] = ("parquet", "jsonl"),
    sources: dict[str, Path | None] | None = None,
    variants: Path | None = None,
    about: About | None = None,
) -> Release:
    """Write the release of ``items`` and return where it went. With ``sources`` (db_id
    to database file) and ``variants`` (the build's variants folder), the databases the
    items use ship with them (:func:`answerable.release.databases.ship_databases`). With
    ``about``, the card, Croissant, changelog and license are written beside the data
    (:func:`answerable.release.documents.write_documents`)."""
    target = Path(out) / dataset / version
    items = sort_items(items)
    staging = target.with_name(f".{version}.staging-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        shipped = ship_databases(items, staging, sources, variants) if sources else None
        items = shipped.items if shipped else items
        files = [_write(items, staging, fmt) for fmt in formats]
        files += shipped.files if shipped else []
        manifest = {
            "dataset": dataset,
            "version": version,
            "seed": seed,
            "tool": {"name": "answerable", "version": __version__},
            "recipe_signature": recipe_signature,
            "inputs": inputs,
            "counts": count_items(items),
            "files": files,
        }
        if about is not None:
            manifest["files"] += write_documents(staging, manifest, about, target.parent)
        validate("manifest", manifest)
        write_json(manifest, staging / "manifest.json")
        return _publish(staging, target, manifest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write(items: list[dict], folder: Path, fmt: str) -> dict:
    name, writer = WRITERS[fmt]
    path = writer(items, folder / name)
    return {
        "path": name,
        "sha256": sha256_file(path),
        "bytes": path.stat().st_size,
        "rows": len(items),
    }


def _publish(staging: Path, target: Path, manifest: dict) -> Release:
    if target.exists():
        published = read_release_manifest(target)
        damaged = check_files(target, published)
        if damaged:
            raise ReleaseDiffersError(
                f"{target}: the published release differs from its manifest: "
                + "; ".join(damaged)
                + " (fix: restore the folder from a copy, or delete it to publish again)"
            )
        if published != manifest:
            raise ReleaseExistsError(
                f"{target}: version {manifest['version']} is already published with other "
                "content (fix: bump 'version' in the recipe; a published version is never "
                "rewritten)"
            )
        return Release(target, published, written=False)
    os.replace(staging, target)
    return Release(target, manifest, written=True)


def read_manifest(folder: Path) -> dict:
    """The manifest of a release directory."""
    return json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))
