"""The splits a dataset's earlier versions gave their items, which a new version keeps.

An item released in split S stays in S in every later version of the same dataset: the
split step (:mod:`answerable.release.cut.split`) pins it there and places only new items.
The earlier versions are the published folders of the dataset below the version being
cut (in the recipe's ``out``), or those of ``release.previous``; an item in several takes
the split of the latest. Only ``release.resplit: true`` with a higher major version lets
items move (:func:`check_resplit`), and the changelog then lists each moved item.

An item released before but absent now (rejected since, or not sampled) still holds its
family's split: :meth:`Earlier.departed` gives its last released row, so that a new
member of its family or question joins the split it was released in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from answerable.kernel.ids import content_hash, sha256_file
from answerable.release.cut.config import ReleaseConfig
from answerable.release.diff import version_key
from answerable.release.reader import MANIFEST, read_frame

SPLIT_COLUMNS = {"id": pl.String, "split": pl.String}
# what links a departed item to the items of a new version (see split.LINKS)
LINK_FIELDS = ("id", "db_id", "question", "label", "provenance", "sql_meta")
DEPARTED_COLUMNS = {
    name: pl.String for name in ("id", "db_id", "question", "label", "split", "parent", "skeleton")
}


@dataclass
class Earlier:
    """The earlier versions of a dataset and the split each released item had last."""

    folders: list[Path] = field(default_factory=list)  # in version order
    splits: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=SPLIT_COLUMNS))

    @property
    def latest(self) -> str | None:
        """The highest earlier version, or None for a first release."""
        return self.folders[-1].name if self.folders else None

    def departed(self, present: pl.Series) -> pl.DataFrame:
        """The last released row (:data:`DEPARTED_COLUMNS`) of each item an earlier
        version released that ``present`` (the ids of the version being cut) lacks, in
        id order; the folders are read, latest first, only until every such item is
        found."""
        gone = self.splits.filter(~pl.col("id").is_in(present.implode()))["id"]
        rows = [pl.DataFrame(schema=DEPARTED_COLUMNS)]
        for folder in reversed(self.folders):  # the latest first; older ones while needed
            if gone.is_empty():
                break
            rows.append(_link_fields(folder, gone))
            gone = gone.filter(~gone.is_in(rows[-1]["id"].implode()))
        return pl.concat(rows).sort("id")


def _link_fields(folder: Path, ids: pl.Series) -> pl.DataFrame:
    """:data:`DEPARTED_COLUMNS` of the items ``ids`` in a release folder (null where a
    field is absent, as a skeleton of an item without SQL)."""
    frame = read_frame(folder, columns=LINK_FIELDS).filter(pl.col("id").is_in(ids.implode()))
    nested = {"parent": "provenance", "skeleton": "sql_meta"}
    columns = []
    for name, dtype in DEPARTED_COLUMNS.items():
        if name in nested and nested[name] in frame.columns:
            columns.append(pl.col(nested[name]).struct.field(name).cast(dtype).alias(name))
        elif name in frame.columns:
            columns.append(pl.col(name).cast(dtype))
        else:
            columns.append(pl.lit(None, dtype).alias(name))
    return frame.select(columns)


def earlier_versions(dataset_dir: Path, version: str, config: ReleaseConfig) -> Earlier:
    """The published versions below ``version`` in ``dataset_dir`` (or in
    ``release.previous``: a release folder, or a folder of versions), with the split
    each of their items had last."""
    folders = earlier_folders(dataset_dir, version, config)
    splits = [_item_splits(folder) for folder in folders]
    if not splits:
        return Earlier()
    latest = pl.concat(splits).unique("id", keep="last", maintain_order=True).sort("id")
    return Earlier(folders, latest)


def earlier_folders(dataset_dir: Path, version: str, config: ReleaseConfig) -> list[Path]:
    """The folders of the versions :func:`earlier_versions` reads, in version order."""
    source = config.previous or Path(dataset_dir)
    if config.previous is not None and not source.is_dir():
        raise config.error(
            "previous",
            f"{source} is not a folder",
            fix="name a published release folder, or the folder of its versions",
        )
    if (source / MANIFEST).is_file():
        return [source]
    return sorted(_versions_below(source, version), key=lambda p: version_key(p.name))


def earlier_signature(dataset_dir: Path, version: str, config: ReleaseConfig) -> str:
    """A hash of the earlier versions' manifests: a release cached by a build is cut
    again when they change."""
    folders = earlier_folders(dataset_dir, version, config)
    return content_hash([[p.name, sha256_file(p / MANIFEST)] for p in folders])


def _versions_below(dataset_dir: Path, version: str) -> list[Path]:
    if not dataset_dir.is_dir():
        return []
    return [
        p
        for p in dataset_dir.iterdir()
        if p.is_dir()
        and not p.name.startswith(".")
        and (p / MANIFEST).is_file()
        and version_key(p.name) < version_key(version)
    ]


def _item_splits(folder: Path) -> pl.DataFrame:
    """``id`` and ``split`` of every item of a release folder (its ids only are read)."""
    return read_frame(folder, columns=["id"]).select(list(SPLIT_COLUMNS))


def major(version: str) -> int:
    """The major number of a version (its first part; 0 when it is not a number)."""
    head = version_key(version)[0]
    return head[1] if head[0] == 0 else 0


def check_resplit(config: ReleaseConfig, earlier: Earlier, version: str) -> None:
    """``release.resplit`` moves released items, so it needs a higher major version."""
    if not config.resplit or earlier.latest is None:
        return
    if major(version) <= major(earlier.latest):
        raise config.error(
            "resplit",
            f"resplit moves items released in {earlier.latest}, but version {version} keeps "
            "its major number",
            fix=f"raise the major version (e.g. {major(earlier.latest) + 1}.0.0) or remove "
            "release.resplit",
        )


def pins(config: ReleaseConfig, earlier: Earlier) -> Earlier | None:
    """The earlier versions whose splits the released items keep (None: split afresh,
    as a first release or ``release.resplit`` does)."""
    if config.resplit or earlier.latest is None:
        return None
    return earlier
