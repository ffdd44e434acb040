"""``answerable evaluate`` at scale: 100,000 predictions scored on the demo databases.

Builds the demo recipe into a temporary folder, copies its items into a release of
100,000 items (each demo item many times under new ids, in ``data/test.parquet``, with the
demo release's shipped databases and deltas), and writes one prediction per item: the
gold SQL, a wrong candidate, a failing query or an abstention, drawn with a seeded coin.
It then times :func:`evaluate` (reading the release and the predictions, executing on
both cores, every metric, breakdowns and 1,000 bootstrap resamples), and the floor:
sqlite3 alone, on the same number of processes, executing the same predicted SQL and
every item's gold SQL on the same databases. The last line is exactly

    predictions=<n> seconds=<s> floor_seconds=<f> ratio=<r>

Run with ``python tests/benchmarks/bench_evaluate.py [n] [workers]``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from click.testing import CliRunner

from answerable.builders import sqlite_files
from answerable.cli import main
from answerable.kernel.ids import content_hash, rng_for
from answerable.kernel.records import write_json
from answerable.kernel.typed_items import to_frame
from answerable.release.cut.write import write_data
from answerable.release.databases import item_files
from answerable.release.evaluate.report import evaluate
from answerable.release.reader import MANIFEST, count_items, open_release, read_release_manifest

REPO = Path(__file__).resolve().parents[2]
FAILING = ("SELECT no_such_column FROM no_such_table", "SELEC 1", "SELECT count(* FROM t")


def build_demo(folder: Path) -> Path:
    """The demo release, built in ``folder``."""
    old = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(main, ["build", str(REPO / "raw" / "demo" / "recipe.yaml")])
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    return folder / "releases" / "answerable-demo" / "0.1.0"


def scale_release(built: Path, target: Path, n: int) -> list[dict]:
    """A release of ``n`` items copied from ``built`` (same databases); returns its items."""
    target.mkdir(parents=True)
    # a copy, not a symlink: a release's database paths may not leave its own folder
    shutil.copytree(built / "databases", target / "databases")
    originals = open_release(built).items
    items = []
    for k in range(n):
        item = dict(originals[k % len(originals)])
        item["id"] = content_hash([item["id"], k])
        item["split"] = "test"
        items.append(item)
    items.sort(key=lambda i: i["id"])
    files = write_data(to_frame(items), target, ["parquet"])
    manifest = read_release_manifest(built)  # the built one's, with these items' files
    shipped = [entry for entry in manifest["files"] if entry["path"].startswith("databases/")]
    manifest |= {"files": files + shipped, "counts": count_items(items)}
    write_json(manifest, target / MANIFEST)
    return items


def predicted_sql(item: dict) -> str | None:
    """A seeded mix: about 40% right, 25% wrong, 10% failing, 25% abstaining."""
    rng = rng_for(13, "bench-evaluate", item["id"])
    draw = rng.random()
    wrong = [c["sql"] for c in item.get("candidates") or [] if c.get("sql")]
    wrong = [sql for sql in wrong if sql != item.get("sql")] or ["SELECT 1"]
    if draw < 0.25:
        return None
    if draw < 0.35:
        return rng.choice(FAILING)
    if draw < 0.60 or item["label"] != "answerable":
        return rng.choice(wrong)
    return item["sql"]


def floor_chunk(release: Path, work: list[tuple[dict, list[str]]]) -> int:
    """sqlite3 alone: open each database once, run every statement, fetch every row."""
    connections: dict[tuple, sqlite3.Connection] = {}
    rows = 0
    for database, statements in work:
        key = (database["base"], database.get("delta"))
        if key not in connections:
            path, base = item_files(release, {"database": database})
            connections[key] = sqlite_files.connect(path, base)
        for sql in statements:
            with contextlib.suppress(sqlite3.Error):
                rows += len(connections[key].execute(sql).fetchall())
    return rows


def floor(release: Path, items: list[dict], predictions: dict, workers: int) -> float:
    """Seconds for sqlite3 alone to execute the same predicted and gold statements."""
    by_database: dict[tuple, list[str]] = {}
    for item in items:
        statements = by_database.setdefault(
            (item["database"]["base"], item["database"].get("delta")), []
        )
        if predictions[item["id"]] is not None:
            statements.append(predictions[item["id"]])
            if item["label"] == "answerable":
                statements.append(item["sql"])
    work = [
        ({"base": base, "delta": delta}, statements[i : i + 2000])
        for (base, delta), statements in sorted(by_database.items(), key=str)
        for i in range(0, len(statements), 2000)
    ]
    started = time.perf_counter()
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        list(pool.map(floor_chunk, [release] * len(work), [[w] for w in work]))
    return time.perf_counter() - started


def main_bench(n: int, workers: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        built = build_demo(Path(tmp))
        release = Path(tmp) / "scaled" / "1.0.0"
        items = scale_release(built, release, n)
        predictions = {item["id"]: predicted_sql(item) for item in items}
        path = Path(tmp) / "predictions.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"id": k, "sql": v}) + "\n" for k, v in predictions.items())
        started = time.perf_counter()
        report = evaluate(release, path, workers=workers)
        seconds = time.perf_counter() - started
        floor_seconds = floor(release, items, predictions, workers)
        print(
            f"ex={report['ex']} ser={report['ser']} rs_10={report['rs_10']} "
            f"abstained={report['abstained']} errors={report['errors']}",
            file=sys.stderr,
        )
        print(
            f"predictions={len(predictions)} seconds={seconds:.2f} "
            f"floor_seconds={floor_seconds:.2f} ratio={seconds / floor_seconds:.2f}"
        )


if __name__ == "__main__":
    main_bench(
        int(sys.argv[1]) if len(sys.argv) > 1 else 100_000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 2,
    )
