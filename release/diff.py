"""``answerable diff OLD NEW``: what changed between two releases, and the changelog.

Items are matched by id: added, removed, and changed (with the fields that differ);
counts per label, category and split before and after; and the files whose sha256
differs. The work is polars joins and column comparisons, so two releases of a million
items compare in seconds. :func:`changelog_section` turns a diff into the section of a
release's ``CHANGELOG.md``.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl

from answerable.release.reader import MANIFEST, frame_tally, read_frame, read_release_manifest

BREAKDOWNS = (("label", "by_label"), ("category", "by_category"), ("split", "by_split"))
SHOWN = 20  # ids listed per kind in the text form; --json lists all


@dataclass
class ReleaseDiff:
    """The difference between two releases."""

    old: str
    new: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[str]] = field(default_factory=dict)
    moved: dict[str, list[str]] = field(default_factory=dict)  # id -> [old split, new split]
    counts: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict:
        """The diff as plain JSON (without the timing)."""
        data = asdict(self)
        data.pop("seconds")
        return data

    def changed_fields(self) -> dict[str, int]:
        """How many changed items differ in each field."""
        counts: dict[str, int] = {}
        for fields in self.changed.values():
            for name in fields:
                counts[name] = counts.get(name, 0) + 1
        return dict(sorted(counts.items()))

    def summary(self) -> str:
        """One line: how many items were added, removed and changed."""
        return (
            f"{self.old} -> {self.new}: {len(self.added)} added, {len(self.removed)} removed, "
            f"{len(self.changed)} changed"
        )

    def details(self, bullet: str) -> list[str]:
        """The fields that changed, the counts that moved and the files that changed,
        a line each, each starting with ``bullet``."""
        out = []
        if self.changed:
            fields = ", ".join(f"{k} {v}" for k, v in self.changed_fields().items())
            out.append(f"{bullet}changed fields: {fields}")
        for key, before_after in self.counts.items():
            moves = count_moves(before_after["old"], before_after["new"])
            if moves:
                out.append(f"{bullet}{key.replace('_', ' ')}: {', '.join(moves)}")
        for kind in ("added", "removed", "changed"):
            if self.files.get(kind):
                out.append(f"{bullet}files {kind}: {', '.join(self.files[kind])}")
        return out

    def lines(self) -> list[str]:
        """The diff for people: warnings, the summary, the details and a few ids."""
        out = [f"warning: {w}" for w in self.warnings] + [self.summary(), *self.details("  ")]
        for kind, ids in (("added", self.added), ("removed", self.removed)):
            if ids:
                out.append(f"  {kind}: {shown(ids)}")
        if self.changed:
            out.append(f"  changed: {shown(list(self.changed))}")
        if self.moved:
            out.append(f"  moved between splits: {shown(moved_lines(self.moved))}")
        return out


def moved_lines(moved: dict[str, list[str]]) -> list[str]:
    """``id: old -> new`` for each item that moved between splits."""
    return [f"{item}: {old} -> {new}" for item, (old, new) in sorted(moved.items())]


def shown(ids: list[str]) -> str:
    """The first ids of a list, and how many more."""
    more = f" ... (+{len(ids) - SHOWN})" if len(ids) > SHOWN else ""
    return ", ".join(ids[:SHOWN]) + more


def count_moves(old: dict[str, int], new: dict[str, int]) -> list[str]:
    """``name old -> new`` for each count that moved."""
    return [
        f"{name} {old.get(name, 0)} -> {new.get(name, 0)}"
        for name in sorted(set(old) | set(new))
        if old.get(name, 0) != new.get(name, 0)
    ]


def diff_releases(
    old: Path,
    new: Path,
    new_manifest: dict | None = None,
    old_manifest: dict | None = None,
    new_frame: pl.DataFrame | None = None,
) -> ReleaseDiff:
    """The diff of two release folders (a manifest or the new items' frame given is used
    instead of reading it, for a release being written). Two datasets: allowed, with a
    warning."""
    started = time.perf_counter()
    old_manifest = old_manifest or read_release_manifest(old)
    new_manifest = new_manifest or read_release_manifest(new)
    found = ReleaseDiff(old=label_of(old_manifest), new=label_of(new_manifest))
    if old_manifest["dataset"] != new_manifest["dataset"]:
        found.warnings.append(
            f"comparing two datasets ({old_manifest['dataset']} and {new_manifest['dataset']})"
        )
    before = read_frame(old, old_manifest)
    after = read_frame(new, new_manifest) if new_frame is None else new_frame
    compare_items(before, after, found)
    for column, key in BREAKDOWNS:
        found.counts[key] = {"old": frame_tally(before, column), "new": frame_tally(after, column)}
    found.files = compare_files(old_manifest, new_manifest)
    found.seconds = time.perf_counter() - started
    return found


def label_of(manifest: dict) -> str:
    """``dataset version`` of a manifest."""
    return f"{manifest['dataset']} {manifest['version']}"


def compare_items(before: pl.DataFrame, after: pl.DataFrame, found: ReleaseDiff) -> None:
    """Fill ``added``, ``removed`` and ``changed`` by id.

    Whole items are compared first by a 64-bit hash of their fields' hashes, so only ids and
    hashes are joined; the items whose hashes differ are then compared field by field,
    exactly. An item whose hash stays the same through a change would pass as unchanged
    only on a hash collision (about one in 2**64).
    """
    old_ids, new_ids = before.select("id"), after.select("id")
    found.added = sorted(new_ids.join(old_ids, on="id", how="anti").get_column("id").to_list())
    found.removed = sorted(old_ids.join(new_ids, on="id", how="anti").get_column("id").to_list())
    for name in sorted(set(before.columns) ^ set(after.columns)):
        side = "new" if name in after.columns else "old"
        found.warnings.append(f"field {name} is only in the {side} release")
    shared = []
    for name in (c for c in before.columns if c in after.columns and c != "id"):
        old_type, new_type = before.schema[name], after.schema[name]
        if old_type == new_type:
            shared.append(name)
        else:
            found.warnings.append(f"field {name} has another type ({old_type} -> {new_type})")
    if not shared:
        return
    row = pl.struct([pl.col(n).hash(seed=0) for n in shared]).hash(seed=0).alias("row")
    moved = (
        before.select("id", row)
        .join(after.select("id", row), on="id", how="inner", suffix="_new")
        .filter(pl.col("row") != pl.col("row_new"))
        .select("id")
    )
    old_rows = before.join(moved, on="id", how="semi").select("id", *shared)
    new_rows = after.join(moved, on="id", how="semi").select("id", *shared)
    both = old_rows.join(new_rows, on="id", how="inner", suffix="__new")
    differs = [pl.when(pl.col(n).ne_missing(pl.col(f"{n}__new"))).then(pl.lit(n)) for n in shared]
    rows = (
        both.select(pl.col("id"), pl.concat_list(differs).list.drop_nulls().alias("fields"))
        .filter(pl.col("fields").list.len() > 0)
        .sort("id")
    )
    found.changed = dict(rows.iter_rows())
    if "split" in shared:
        found.moved = moved_items(before, after)


def moved_items(before: pl.DataFrame, after: pl.DataFrame) -> dict[str, list[str]]:
    """The items in both releases whose split differs: id -> [old split, new split]."""
    both = before.select("id", "split").join(after.select("id", "split"), on="id", suffix="_new")
    moved = both.filter(pl.col("split").ne_missing(pl.col("split_new"))).sort("id")
    return {item: [old, new] for item, old, new in moved.iter_rows()}


def compare_files(old: dict, new: dict) -> dict[str, list[str]]:
    """Paths added, removed and changed (another sha256) between two manifests."""
    before = {f["path"]: f["sha256"] for f in old["files"]}
    after = {f["path"]: f["sha256"] for f in new["files"]}
    return {
        "added": sorted(set(after) - set(before)),
        "removed": sorted(set(before) - set(after)),
        "changed": sorted(p for p in set(before) & set(after) if before[p] != after[p]),
    }


def version_key(version: str) -> tuple:
    """Sort key of a version string: numeric parts as numbers (0.10.0 after 0.9.0)."""
    return tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-+]", version)
    )


def previous_version(dataset_dir: Path, version: str) -> Path | None:
    """The folder of the highest published version below ``version``, or None."""
    dataset_dir = Path(dataset_dir)
    if not dataset_dir.is_dir():
        return None
    older = [
        p
        for p in dataset_dir.iterdir()
        if p.is_dir()
        and not p.name.startswith(".")
        and (p / MANIFEST).is_file()
        and version_key(p.name) < version_key(version)
    ]
    return max(older, key=lambda p: version_key(p.name), default=None)


def changelog_section(
    manifest: dict, found: ReleaseDiff | None, held_back: list[str] | None = None
) -> str:
    """The ``CHANGELOG.md`` section of one version: its diff against the previous one, or
    its contents when it is the first; every item that moved between splits, and the
    items ``held_back`` (accepted, but unable to join their family's split)."""
    counts = manifest["counts"]
    labels = ", ".join(f"{k} {v}" for k, v in counts["by_label"].items())
    lines = [f"## {manifest['version']}", ""]
    if found is None:
        lines.append(f"First release: {counts['total']} items ({labels}).")
    else:
        lines.append(f"{found.summary()}; now {counts['total']} items ({labels}).")
        lines += found.details("- ")
        if found.moved:
            lines += ["", f"### Moved between splits ({len(found.moved)} items)", ""]
            lines += [f"- {line}" for line in moved_lines(found.moved)]
    if held_back:
        lines += ["", f"### Held back ({len(held_back)} items)", ""]
        lines.append(
            "Accepted items left out of this version: their family was released in a split "
            "their label is not placed in (release.split.test_only), or they link items "
            "released in two splits. No released item moves to make room for them."
        )
        lines += ["", *(f"- {item}" for item in held_back)]
    return "\n".join(lines) + "\n"
