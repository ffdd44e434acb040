"""Cutting a release at scale: 1,000,000 synthetic items sampled, split, checked for
leakage and written, with polars doing the work.

The pool: 250,000 families of four items (a seed, a counterfactual edit of it, a control
and a draft; one family in ten has an unanswerable draft) over 20 databases, in 12
strata (the first candidate SQL's SCARE stratum x hardness). The recipe: a share of 0.95
per stratum, a 6:2:2 question split with unanswerable items only in test, the default
leakage checks of a question split, Parquet and JSON Lines. Before the timed run it
builds the demo release in a child process (so the demo build's memory does not count
toward the release's peak) and prints its database storage. The lines on stdout are exactly

    db_bytes=<all files under the demo release's databases folder> base_bytes=<sources>
    verify_seconds=<s>    (issue 10: answerable verify of the written release, no --execute)
    diff_seconds=<s>      (issue 10: answerable diff against a next version; see
                           publish_timing.py)
    core_install_seconds=<s> core_install_mb=<m>   (a fresh venv with the wheel and no
                           extra, from a local wheel folder; see core_install.py)
    items=<n> seconds=<s> peak_rss_mb=<m>

``items`` is the pool every step goes through (the release keeps about 95% of it; the
line before gives the counts); ``seconds`` covers sampling, splitting, the leakage checks
and writing every file (the synthetic pool is made before the clock starts);
``peak_rss_mb`` is this process's largest resident memory, taken before verify and diff
run. Run with
``python tests/benchmarks/bench_release.py [n]``.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from core_install import core_install_line  # beside this file, as publish_timing
from publish_timing import publish_lines  # beside this file: the script's folder is on the path

from answerable.build import build
from answerable.kernel.item_model import polars_schema
from answerable.kernel.recipe import load_recipe
from answerable.release.cut.config import release_config
from answerable.release.cut.publish import prepare_release
from answerable.release.cut.write import write_data
from answerable.release.databases import storage_line

REPO = Path(__file__).resolve().parents[2]
STRATA = ("answerable-correct", "answerable-incorrect", "ambiguous", "unanswerable")
HARDNESS = ("easy", "medium", "hard")
SECTION = {
    "sample": {"strata": ["scare_stratum", "hardness"], "share": 0.95},
    "split": {
        "kind": "question",
        "ratios": {"train": 0.6, "dev": 0.2, "test": 0.2},
        "test_only": ["unanswerable", "ambiguous"],
    },
}


def hex_ids(numbers: np.ndarray) -> pl.Series:
    """16-hex-digit ids of a splitmix64 scramble of ``numbers`` (distinct, uniform)."""
    z = numbers.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    text = np.frombuffer(z.astype(">u8").tobytes().hex().encode(), dtype="S16")
    return pl.Series(text).cast(pl.String)


def struct(dtype: pl.Struct, **values: pl.Expr) -> pl.Expr:
    """A struct column of ``dtype`` with the given fields and every other field null."""
    return pl.struct(
        [values.get(f.name, pl.lit(None)).cast(f.dtype).alias(f.name) for f in dtype.fields]
    )


def synthetic_pool(n: int) -> pl.DataFrame:
    """n typed items in families of four, built column-wise (no loop per item)."""
    schema = polars_schema()
    families = n // 4
    base = pl.DataFrame(
        {
            "id": hex_ids(np.arange(n)),
            "family": np.arange(n) // 4,
            "member": np.arange(n) % 4,
        }
    )
    seed_ids = base.filter(pl.col("member") == 0).select("family", seed_id="id")
    base = base.join(seed_ids, on="family", maintain_order="left").with_columns(
        example=hex_ids(np.arange(n) // 4 + 10 * n)
    )
    unanswerable = (pl.col("member") == 3) & (pl.col("family") % 10 == 0)
    label = pl.when(unanswerable).then(pl.lit("unanswerable")).otherwise(pl.lit("answerable"))
    words = pl.col("family").cast(pl.String)
    question = pl.format(
        "How many rows of table {} have value {} (variant {})?",
        pl.col("family") % 997,
        words,
        pl.col("member"),
    )
    sql = pl.format(
        "SELECT count(*) FROM t{} WHERE v = {} AND k = {}",
        pl.col("family") % 997,
        words,
        pl.col("member"),
    )
    frame = base.with_columns(
        label=label,
        db_id=pl.format("db{}", pl.col("family") % 20),
        question=question,
        sql=pl.when(unanswerable).then(None).otherwise(sql),
        category=pl.when(unanswerable).then(pl.lit("missing-column")),
        sql_meta=struct(
            schema["sql_meta"],
            skeleton=pl.format("SELECT count(*) FROM _ WHERE _ = _ AND {} = _", pl.col("member")),
            hardness=pl.lit(pl.Series(HARDNESS)).get(pl.col("family") % 3),
            operations=pl.concat_list(pl.lit("Select"), pl.lit("Multi-Filter")),
        ),
        provenance=struct(
            schema["provenance"],
            generator=pl.lit(
                pl.Series(["seed_v1", "drop_column_v1", "drop_unused_v1", "draft_v1"])
            ).get(pl.col("member")),
            parent=pl.when(pl.col("member") == 0).then("example").otherwise("seed_id"),
        ),
        candidates=pl.concat_list(
            struct(
                schema["candidates"].inner,
                sql=sql,
                generator=pl.lit("perturb_sql_v1"),
                stratum=pl.lit(pl.Series(STRATA)).get((pl.col("family") // 3) % 4),
            )
        ),
    )
    columns = [
        frame[name].cast(dtype) if name in frame.columns else pl.Series(name, [None] * n, dtype)
        for name, dtype in schema.items()
    ]
    del families
    frame = pl.DataFrame(columns).with_columns(
        dialect=pl.lit("sqlite"), spans=pl.lit([], schema["spans"])
    )
    return frame.sort("id")  # as to_frame gives it


def demo_storage() -> str:
    """The database storage line of the demo release, built in a temporary folder."""
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            report = build(load_recipe(REPO / "raw" / "demo" / "recipe.yaml"))
            return storage_line(report.release.path)
        finally:
            os.chdir(here)


def main(n: int) -> None:
    child = [sys.executable, __file__, "--demo-storage"]
    print(subprocess.run(child, check=True, capture_output=True, text=True).stdout.strip())
    pools = [synthetic_pool(n)]  # handed over by pop(), so sampling can free the pool
    config = release_config(SECTION, "bench_release")
    with tempfile.TemporaryDirectory() as folder:
        start, cpu = time.perf_counter(), time.process_time()
        frame, report = prepare_release(pools.pop(), config, seed=13, name="bench 1.0.0")
        prepared = time.perf_counter() - start
        files = write_data(frame, Path(folder), config.formats)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
    splits = report["splits"]["counts"]
    print(
        f"pool={n} chosen={report['sampling']['chosen']} "
        + " ".join(f"{name}={splits[name]['total']}" for name in sorted(splits))
        + f" files={len(files)} bytes={sum(f['bytes'] for f in files)} "
        + f"family_leaks={report['leakage']['family']['leaks']} "
        + f"prepare_seconds={prepared:.2f} write_seconds={seconds - prepared:.2f} "
        + f"cpu_seconds={cpu:.2f}",
        file=sys.stderr,
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before verify and diff
    with tempfile.TemporaryDirectory() as folder:  # issue 10: verify and diff of such a release
        print("\n".join(publish_lines(frame, Path(folder))))
    print(core_install_line())
    print(f"items={n} seconds={seconds:.2f} peak_rss_mb={peak:.0f}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--demo-storage"]:
        print(demo_storage())
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
