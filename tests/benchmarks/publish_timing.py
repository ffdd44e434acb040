"""Timing verify and diff on releases of a million items (issue 10's performance lines).

:func:`publish_lines` takes a typed frame of items (``bench_release.py``'s synthetic
pool, already split), writes it as a release with a manifest, writes a second version
with 1% of the items removed, 1% added and 1% of the questions edited, and returns

    verify_seconds=<s>    (answerable verify of the first, without --execute)
    diff_seconds=<s>      (answerable diff of the two)

Targets: verify <= 15 s, diff <= 20 s for 1,000,000 items.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from answerable.kernel.records import write_json
from answerable.release.cut.publish import frame_counts
from answerable.release.cut.write import write_data
from answerable.release.diff import diff_releases
from answerable.release.verify import verify_release


def write_bench_release(frame: pl.DataFrame, folder: Path, version: str) -> Path:
    """Data files and a manifest for ``frame`` (which has a ``split`` column)."""
    files = write_data(frame, folder, ("parquet", "jsonl"))
    manifest = {
        "dataset": "bench",
        "version": version,
        "seed": 13,
        "tool": {"name": "answerable", "version": "bench"},
        "recipe_signature": "0" * 16,
        "inputs": [],
        "counts": frame_counts(frame),
        "files": files,
    }
    write_json(manifest, Path(folder) / "manifest.json")
    return Path(folder)


def next_version(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with 1% of items removed, 1% added (new ids) and 1% of questions edited."""
    step = 100
    index = pl.int_range(pl.len())
    kept = frame.filter(index % step != 0)
    added = frame.filter(index % step == 1).with_columns(
        id=pl.col("id").str.slice(0, 15) + pl.lit("x")
    )
    edited = pl.when(pl.int_range(pl.len()) % step == 2).then(
        pl.col("question") + pl.lit(" (edited)")
    )
    kept = kept.with_columns(question=edited.otherwise(pl.col("question")))
    return pl.concat([kept, added]).sort("id")


def publish_lines(frame: pl.DataFrame, folder: Path) -> list[str]:
    """The two timing lines for ``frame``, releases written under ``folder``."""
    old = write_bench_release(frame, Path(folder) / "1.0.0", "1.0.0")
    new = write_bench_release(next_version(frame), Path(folder) / "1.1.0", "1.1.0")
    verified = verify_release(old)
    if verified.problems:
        raise AssertionError(f"the bench release does not verify: {verified.problems[:3]}")
    found = diff_releases(old, new)
    expected = frame.height // 100
    if not (len(found.removed) >= expected and len(found.added) >= expected - 1):
        raise AssertionError(
            f"unexpected diff: {len(found.added)} added, {len(found.removed)} removed"
        )
    return [f"verify_seconds={verified.seconds:.2f}", f"diff_seconds={found.seconds:.2f}"]
