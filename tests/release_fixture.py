"""Release folders in the release contract's layout, for tests of the publishing side.

Not a second release writer: the data files come from the package's typed writer
(``release/cut/write.py``); this only puts chosen items in chosen splits without sampling,
splitting or leakage checks, copies databases and writes the manifest, so that verify,
diff, export and the card can be tested on releases of any shape.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from answerable.kernel.ids import sha256_file
from answerable.kernel.records import read_jsonl, write_json
from answerable.kernel.typed_items import to_frame
from answerable.release.cut.write import write_data
from answerable.release.documents.beside_data import write_documents
from answerable.release.documents.card import About
from answerable.release.reader import count_items, tally

FIXTURES = Path(__file__).parent / "fixtures" / "publish"


def fixture_items() -> list[dict]:
    """Eleven demo items (seeds, templates, drafts, a value edit) kept as a fixture."""
    return list(read_jsonl(FIXTURES / "items.jsonl"))


def default_splits(items: list[dict]) -> dict[str, list[dict]]:
    """The first two answerable items in train, everything else in test."""
    answerable = [
        i["id"] for i in sorted(items, key=lambda i: i["id"]) if i["label"] == "answerable"
    ]
    train = set(answerable[:2])
    return {
        "train": [i for i in items if i["id"] in train],
        "test": [i for i in items if i["id"] not in train],
    }


def write_release(
    folder: Path,
    splits: dict[str, list[dict]],
    databases: dict[str, Path] | None = None,
    dataset: str = "fixture",
    version: str = "0.1.0",
    about: About | None = None,
) -> Path:
    """Lay out a release of ``splits`` at ``folder`` with copies of ``databases``; with
    ``about``, the documents are written as ``cut_release`` writes them."""
    folder = Path(folder)
    shipped = set(databases or {})
    everything = [
        {**with_database(item, shipped), "split": split}
        for split, items in sorted(splits.items())
        for item in items
    ]
    files = write_data(to_frame(everything), folder, ("parquet", "jsonl"))
    used = {i["db_id"] for i in everything}
    for db_id, path in sorted((databases or {}).items()):
        if db_id in used:
            (folder / "databases").mkdir(exist_ok=True)
            shutil.copyfile(path, folder / "databases" / f"{db_id}.sqlite")
            files.append(entry(folder, f"databases/{db_id}.sqlite"))
    write_json({"sampling": {}, "splits": {}, "leakage": {"checks": []}}, folder / "report.json")
    files.append(entry(folder, "report.json"))
    counts = count_items(everything)
    counts["by_split"] = tally(everything, "split")
    manifest = {
        "dataset": dataset,
        "version": version,
        "seed": 13,
        "tool": {"name": "answerable", "version": "0.1.0"},
        "recipe_signature": "0" * 16,
        "inputs": [],
        "counts": counts,
        "files": files,
    }
    if about is not None:
        manifest["files"] += write_documents(folder, manifest, about, folder.parent)
    write_json(manifest, folder / "manifest.json")
    return folder


def with_database(item: dict, shipped: set[str]) -> dict:
    """The item with the contract's ``database`` paths (unedited databases only)."""
    if item["db_id"] not in shipped or item.get("db_variant"):
        return {**item, "database": None}
    return {**item, "database": {"base": f"databases/{item['db_id']}.sqlite", "delta": None}}


def entry(folder: Path, relative: str, rows: int | None = None) -> dict:
    """A manifest file entry."""
    path = folder / relative
    found = {"path": relative, "sha256": sha256_file(path), "bytes": path.stat().st_size}
    return found if rows is None else {**found, "rows": rows}
