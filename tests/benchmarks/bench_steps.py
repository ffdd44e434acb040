"""Each build step against its floor, a no-op rebuild, and the start of the commands.

Run with ``python tests/benchmarks/bench_steps.py [QUOTA]`` (nice it on a shared
machine). It builds the demo's inputs with every template's quota set to QUOTA (default
200, as ``bench_build.py``'s small build: about 19,000 candidates), without human review,
offline, in this process (the shards' workers fork from it), and takes each step's wall
seconds from the build's report. Then, in the same process and run, it measures each
step's floor: the irreducible work of the same items, one process, wall seconds:

- every step: each of its output items' SQL (and candidate SQL) parsed once with sqlglot,
  and its items written once to Parquet (``records.write_parquet``);
- steps that execute SQL (``seed_v1``, ``template_v1``, ``counterfactual``,
  ``drafting``, whose answerable twins are verified by execution as templated pairs are,
  and ``candidate_sql``): each such SQL also executed once with ``sqlite3`` on a
  read-only connection over the database its item is about (a counterfactual item's
  edited database under ``variants/``: its delta over its source), rows fetched;
  ``counterfactual`` also copies a database file once per variant it made (each edit
  is made on a copy);
- ``checks`` and ``audit``: parse and write over every candidate (they read them all);
- ``release``: the released rows read and written again by polars (Parquet and JSON
  Lines), and the shipped databases copied.

The build runs with the user's cache but an empty chart cache (:func:`without_charts`),
so the release draws its chart as a first build does, whatever ran on the machine before.
Python keeps the bytecode of the package's modules beside their sources as on a user's
machine (compiled once at the start, as ``pip install`` compiles a wheel's), also where
``PYTHONDONTWRITEBYTECODE`` is set.

Then ``noop_rebuild_s``: the same recipe built again in its folder by ``answerable build``
in a new process, nothing changed (wall seconds); ``quickstart_cpu_s``: the README's quick
start (``answerable build raw/demo/recipe.yaml`` as shipped, in a fresh folder, its chart
drawn as well), CPU seconds of the build and its workers; ``inspect_cpu_s``: ``answerable
inspect`` of the demo release that build cut, CPU seconds of its process. Each step's
line goes to stderr; the last line on stdout is exactly ``worst_step=<name>
worst_ratio=<r> noop_rebuild_s=<s> inspect_cpu_s=<c> quickstart_cpu_s=<q>``.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

# Python keeps the bytecode of the modules it compiles, as on a user's machine: where
# PYTHONDONTWRITEBYTECODE is set (these machines set it), every module would be compiled
# from source in every command timed.
if __name__ == "__main__" and sys.flags.dont_write_bytecode:
    _env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    os.execve(sys.executable, [sys.executable, *sys.argv], _env)

import polars as pl
from bench_build import COMMAND, DEMO, recipe_in  # beside this file: its folder is on the path

from answerable.build import build
from answerable.builders.counterfactual.materialize import variant_base
from answerable.builders.sqlite_files import connect
from answerable.builders.sqlkit import parse
from answerable.kernel.errors import SQLError
from answerable.kernel.recipe import load_recipe
from answerable.kernel.records import read_parquet, write_parquet
from answerable.kernel.variables import cache_root

EXECUTING = {"seed_v1", "template_v1", "counterfactual", "drafting", "candidate_sql"}
READ_ALL = {"checks", "audit"}  # steps over every candidate


def item_sql(items: list[dict]) -> Iterator[tuple[dict, str]]:
    """``(item, sql)`` for an item's gold SQL and each of its candidate SQL texts."""
    for item in items:
        if item.get("sql"):
            yield item, item["sql"]
        for candidate in item.get("candidates") or []:
            if isinstance(candidate, dict) and candidate.get("sql"):
                yield item, candidate["sql"]


def parse_all(items: list[dict]) -> None:
    """Every SQL text of the items parsed once (an unparsable one costs its attempt)."""
    for item, sql in item_sql(items):
        with contextlib.suppress(SQLError):
            parse(sql, item.get("dialect") or "sqlite")


def execute_all(items: list[dict], databases: Path, variants: Path) -> None:
    """Every SQL text executed once over the database its item is about, rows fetched:
    the unedited database, or the edited one of a counterfactual item (``variants``,
    when the build kept its file: a delta opened over its source, as the build opens it,
    or a whole copy)."""
    connections: dict[str, sqlite3.Connection] = {}
    for item, sql in item_sql(items):
        db = item.get("db_variant") or item["db_id"]
        file = (variants if item.get("db_variant") else databases) / f"{db}.sqlite"
        if db not in connections and file.is_file():
            connections[db] = connect(file, variant_base(file))
        with contextlib.suppress(sqlite3.Error, KeyError):
            connections[db].execute(sql).fetchall()
    for connection in connections.values():
        connection.close()


def timed(work: Callable[[], object]) -> float:
    """Wall seconds of ``work()``."""
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def step_floor(step: str, root: Path, scratch: Path) -> float:
    """The floor of one step of the build whose work folder is ``root``."""
    if step == "release":
        return release_floor(root, scratch)
    if step in READ_ALL:
        files = [root / "candidates.parquet"]
    else:
        files = sorted(root.glob(f"steps/{step}-*/items.parquet"))
    items = [item for file in files for item in read_parquet(file)]
    seconds = timed(lambda: parse_all(items))
    seconds += timed(lambda: write_parquet(items, scratch / f"{step}.parquet"))
    if step in EXECUTING:
        seconds += timed(lambda: execute_all(items, root.parent / "demo", root / "variants"))
    if step == "counterfactual":
        variants = {i["db_variant"]: i["db_id"] for i in items if i.get("db_variant")}
        base = root.parent / "demo"
        seconds += timed(
            lambda: [
                shutil.copyfile(base / f"{db}.sqlite", scratch / f"{variant}.sqlite")
                for variant, db in variants.items()
            ]
        )
    return seconds


def release_floor(root: Path, scratch: Path) -> float:
    """Polars reading the released rows and writing them again, and the databases copied."""
    release = next(root.parent.parent.glob("releases/*/*/manifest.json")).parent
    out = scratch / "release"

    def write() -> None:
        (out / "data").mkdir(parents=True, exist_ok=True)
        for part in sorted(release.glob("data/*.parquet")):
            frame = pl.read_parquet(part)
            frame.write_parquet(out / "data" / part.name, compression="zstd", statistics=False)
            frame.write_ndjson(out / "data" / f"{part.stem}.jsonl")
        shutil.copytree(release / "databases", out / "databases", dirs_exist_ok=True)

    return timed(write)


@contextlib.contextmanager
def without_charts(folder: Path) -> Iterator[None]:
    """``$ANSWERABLE_CACHE`` set to ``folder``, holding links to the user's cached files
    (WordNet's index, ...) but no charts, for the processes run inside: a release draws
    its chart as a first build does, not only when no earlier run drew the same counts."""
    folder.mkdir()
    user = cache_root()
    for entry in sorted(user.iterdir()) if user.is_dir() else []:
        if entry.name != "charts":
            (folder / entry.name).symlink_to(entry)
    before = os.environ.get("ANSWERABLE_CACHE")
    os.environ["ANSWERABLE_CACHE"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            del os.environ["ANSWERABLE_CACHE"]
        else:
            os.environ["ANSWERABLE_CACHE"] = before


def children_cpu() -> float:
    """CPU seconds of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def compiled_modules() -> None:
    """Every module of the package compiled beside its source, as ``pip install``
    compiles a wheel's: the timed commands find what a user's second command finds."""
    import compileall
    import importlib
    import tomllib

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    setuptools = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]
    for name in setuptools["package-dir"]:  # each top folder of the package, where it is imported
        for folder in importlib.import_module(name).__path__:
            compileall.compile_dir(folder, quiet=1)


def command_cpu(args: list[str], cwd: Path) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of ``answerable ARGS`` run in ``cwd``, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    cpu, started = children_cpu(), time.perf_counter()
    subprocess.run([*COMMAND, *args], cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - started, children_cpu() - cpu


def quickstart_cpu() -> tuple[float, float]:
    """CPU seconds of the quick start's build (the demo recipe as shipped, in a fresh
    folder), then of ``answerable inspect`` of the demo release it cut."""
    with tempfile.TemporaryDirectory() as name, without_charts(Path(name) / "cache"):
        folder = Path(name)
        _, build_cpu = command_cpu(["-q", "build", str(DEMO / "recipe.yaml")], folder)
        release = next(folder.glob("releases/*/*/manifest.json")).parent
        _, inspect_cpu = command_cpu(["inspect", str(release)], folder)
    return build_cpu, inspect_cpu


def built_steps(folder: Path, quota: int) -> tuple[Path, dict[str, float]]:
    """The bench recipe built in ``folder`` in this process: (recipe, seconds per step)."""
    recipe = recipe_in(folder, quota)
    here = Path.cwd()
    os.chdir(folder)
    try:
        report = build(load_recipe(recipe))
    finally:
        os.chdir(here)
    return recipe, dict(report.seconds)


def main(quota: int) -> None:
    compiled_modules()
    with tempfile.TemporaryDirectory() as name, without_charts(Path(name) / "cache"):
        folder = Path(name)
        recipe, seconds = built_steps(folder, quota)
        root = next(folder.glob(".answerable/*/candidates.parquet")).parent
        (folder / "floors").mkdir()
        ratios = {}
        for step, spent in seconds.items():
            floor = step_floor(step, root, folder / "floors")
            ratios[step] = spent / floor
            line = f"{step}: {spent:.2f} s, floor {floor:.2f} s, ratio {ratios[step]:.1f}"
            print(line, file=sys.stderr)
        noop, _ = command_cpu(["-q", "build", str(recipe)], folder)
    quickstart, inspect = quickstart_cpu()
    worst = max(ratios, key=ratios.get)
    print(json.dumps({"quota": quota, "ratios": ratios}, sort_keys=True), file=sys.stderr)
    print(
        f"worst_step={worst} worst_ratio={ratios[worst]:.2f} noop_rebuild_s={noop:.2f} "
        f"inspect_cpu_s={inspect:.2f} quickstart_cpu_s={quickstart:.1f}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
