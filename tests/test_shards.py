"""Shards: the same output for any workers and shard size, and a resume that redoes no
finished shard (in the shard runner, and for a build killed mid-stage)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from answerable.kernel import records
from answerable.kernel.progress import SILENT
from answerable.kernel.records import complete, sort_items
from answerable.pipeline import Execution, ItemsSoFar, StepOutput, Workspace, sort_rejects
from answerable.pipeline.shards import (
    PerProcess,
    StoredUnits,
    UnitsInPlace,
    cut,
    run_in_shards,
    shard_items,
    shard_rejects,
    store_shard,
)
from answerable.pipeline.steps import Work, run_step
from tests.conftest import DEMO_RECIPE, run_in
from tests.release_helpers import make_item

UNITS = list(range(23))


def context(tmp_path: Path, workers: int, size: int):
    return SimpleNamespace(
        execution=Execution(workers, size),
        progress=SILENT,
        close=lambda: None,
        signature=lambda _name, config, _inputs: config,  # a toy step's signature as given
        workspace=Workspace(tmp_path, "toy"),
    )


def sharded_step(ctx, name, signature, units, work, key, merge=lambda output: output):
    """A toy step through the build's runner: ``work`` over ``units`` in shards, then
    ``merge``, stored under ``steps/<name>-<signature>/``."""
    step = SimpleNamespace(
        name=name,
        signature=lambda _ctx, _items: (signature, None),
        work=lambda _ctx, _items, _folder: Work(run=work, units=units, key=key, merge=merge),
    )
    return run_step(step, ctx, [])


def toy_work(calls: Path | None = None):
    """Each unit gives an item (ids repeat every 7 units) and every fifth a reject; each
    call leaves a file named after its units in ``calls``, from any process."""

    def work(shard: list[int]) -> StepOutput:
        if calls is not None:
            calls.mkdir(exist_ok=True)
            (calls / "-".join(map(str, shard))).touch()
        out = StepOutput()
        for n in shard:
            out.items.append({"id": f"i{n % 7}", "question": str(n)})
            if n % 5 == 0:
                out.rejects.append({"id": f"r{n}", "reason": "fifth"})
        return out

    return work


def first_of_each(output: StepOutput) -> StepOutput:
    kept, seen = StepOutput(rejects=list(output.rejects)), set()
    for item in output.items:
        if item["id"] in seen:
            kept.rejects.append({"id": item["id"], "reason": "repeat", "n": item["question"]})
        else:
            seen.add(item["id"])
            kept.items.append(item)
    return kept


@pytest.mark.parametrize(("workers", "size"), [(1, 1), (1, 4), (2, 3), (2, 5), (2, 100)])
def test_the_merged_output_does_not_depend_on_workers_or_shard_size(tmp_path, workers, size):
    whole = first_of_each(toy_work()(UNITS))
    ctx = context(tmp_path, workers, size)
    made, cached = sharded_step(ctx, "toy", "sig", UNITS, toy_work(), str, first_of_each)
    assert not cached
    stored = sort_items(complete(i) for i in whole.items)  # as the step's file holds them
    assert (list(made.items), list(made.rejects)) == (stored, sort_rejects(whole.rejects))
    again, cached = sharded_step(ctx, "toy", "sig", UNITS, toy_work(), str, first_of_each)
    assert cached and (list(again.items), again.rejects) == (stored, sort_rejects(whole.rejects))
    assert not (tmp_path / "toy" / "steps" / "toy-sig" / "shards").exists()  # folded in


def test_a_run_that_dies_resumes_from_its_finished_shards(tmp_path):
    ctx, calls = context(tmp_path, 1, 4), tmp_path / "calls"
    folder = tmp_path / "step"

    def dies_at_13(shard: list[int]) -> StepOutput:
        if 13 in shard:
            raise KeyboardInterrupt  # as a kill would, mid-stage
        return toy_work(calls)(shard)

    with pytest.raises(KeyboardInterrupt):
        run_in_shards(ctx, folder, "toy", UNITS, dies_at_13, str)
    assert sorted(p.name for p in calls.iterdir()) == ["0-1-2-3", "4-5-6-7", "8-9-10-11"]
    stored = {p.name: p.stat().st_mtime_ns for p in (folder / "shards").iterdir()}
    assert len(stored) == 3
    shutil.rmtree(calls)

    made = run_in_shards(ctx, folder, "toy", UNITS, toy_work(calls), str)
    assert sorted(p.name for p in calls.iterdir()) == ["12-13-14-15", "16-17-18-19", "20-21-22"]
    assert all((folder / "shards" / n).stat().st_mtime_ns == t for n, t in stored.items())
    whole = toy_work()(UNITS)
    assert (list(made.items), made.rejects) == (whole.items, whole.rejects)


def test_forked_workers_run_every_pending_shard_once(tmp_path):
    calls = tmp_path / "calls"
    run_in_shards(context(tmp_path, 2, 2), tmp_path / "step", "toy", UNITS, toy_work(calls), str)
    ran = sorted(int(n) for p in calls.iterdir() for n in p.name.split("-"))
    assert ran == UNITS


def test_a_stored_shard_keeps_its_order_and_cuts_follow_weights(tmp_path):
    output = StepOutput([{"id": "b"}, {"id": "a"}], [{"id": "z", "reason": "x"}, {"id": "y"}])
    stored = store_shard(output, tmp_path / "s.jsonl")
    assert (list(shard_items(stored)), list(shard_rejects(stored))) == (
        output.items,
        output.rejects,
    )
    assert cut(list("abcde"), 3, {"a": 1, "b": 5, "c": 1, "d": 1, "e": 1}.get) == [
        ["a", "b"],
        ["c", "d", "e"],
    ]


def test_a_per_process_value_is_made_again_in_a_forked_process(tmp_path):
    made = []
    value = PerProcess(lambda: made.append(os.getpid()) or len(made))
    assert value.get() == 1 and value.get() == 1
    pid = os.fork()
    if pid == 0:  # the child: its own value, not the parent's
        os._exit(0 if value.get() == 2 else 1)
    assert os.waitpid(pid, 0)[1] == 0
    value.close()
    assert value.get() == 2


def test_units_read_in_place_are_those_a_units_file_holds(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RUN_ROWS", 64)  # files of many row groups
    first = [make_item(f"a{n}", sql=f"SELECT {n}") for n in range(300)]
    updated = [{**first[n], "question": f"Updated {n}?"} for n in range(0, 300, 7)]
    second = [make_item(f"b{n}", generator="template_v1") for n in range(200)] + updated
    so_far = ItemsSoFar()
    for number, items in enumerate([first, second]):
        so_far.add(
            records.ItemFiles([records.write_parquet(items, tmp_path / f"{number}.parquet")])
        )
    so_far.withdraw([first[5]["id"], second[3]["id"]])
    wanted = {item["id"] for n, item in enumerate(so_far) if n % 3}  # some items, not all
    stored = StoredUnits((i for i in so_far if i["id"] in wanted), tmp_path / "units.parquet")
    in_place = UnitsInPlace(so_far.places(), wanted)
    assert in_place.ids == stored.ids and len(in_place.ids) == len(wanted) == 332
    shards = cut(stored.ids, 10, lambda _unit: 1)
    assert all(in_place.load(shard) == stored.load(shard) for shard in shards)
    assert any(item["question"].startswith("Updated") for item in in_place.load(stored.ids))
    some = stored.ids[3::17]  # ids that are not one run of rows, across row groups
    whole = {item["id"]: item for item in stored.load(stored.ids)}
    assert in_place.load(some) == [whole[i] for i in some]
    light = in_place.load(some, ["id", "sql", "provenance"])
    assert [(i["id"], i["sql"], i["provenance"]) for i in light] == [
        (whole[i]["id"], whole[i]["sql"], whole[i]["provenance"]) for i in some
    ]
    assert all(i["question"] is None and i["db_id"] is None for i in light)  # not read
    held = ItemsSoFar()
    held.add(first)  # a stage's items in memory: no place to read them from
    assert held.places() is None


# ---- the demo build -------------------------------------------------------------------


def demo_copy(tmp_path: Path, workers: int, shard_size: int) -> Path:
    """The demo recipe and its inputs in ``tmp_path``, with these execution settings."""
    shutil.copytree(DEMO_RECIPE.parent, tmp_path / "demo")
    recipe = tmp_path / "demo" / "recipe.yaml"
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data["workers"] = workers
    data["execution"]["shard_size"] = shard_size
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return recipe


def sidecar(path: Path) -> bool:
    """A variant's sidecar names its source by absolute path, so it differs by folder."""
    return path.parent.name == "variants" and path.suffix == ".json"


def outputs(cwd: Path) -> dict[str, bytes]:
    """Every file of the candidates, reports and release a build made under ``cwd``; the
    build report without its steps' cache flags (a resumed build found steps cached)."""
    roots = [cwd / ".answerable" / "answerable-demo", cwd / "releases"]
    files = {
        str(path.relative_to(cwd)): path.read_bytes()
        for root in roots
        for path in sorted(root.rglob("*"))
        if path.is_file() and not {"steps", "review"} & set(path.parts) and not sidecar(path)
    }
    report = json.loads(files.pop(".answerable/answerable-demo/reports/build.json"))
    assert set(report.pop("steps")) == {
        "seed_v1",
        "template_v1",
        "counterfactual",
        "drafting",
        "candidate_sql",
    }
    files["build.json without steps"] = json.dumps(report, sort_keys=True).encode()
    return files


@pytest.mark.slow
def test_one_worker_and_small_shards_give_the_default_builds_bytes_and_release(
    default_build, tmp_path
):
    cwd = default_build
    recipe = demo_copy(tmp_path, workers=1, shard_size=5)
    (tmp_path / "run").mkdir()
    result = run_in(tmp_path / "run", "build", recipe)
    assert result.exit_code == 0, result.output
    mine, default = outputs(tmp_path / "run"), outputs(cwd)
    assert len(mine) > 50  # candidates, reports, the release and its databases
    assert [name for name in mine if mine[name] != default.get(name)] == []

    # a cached rerun finds its release whole; with the release gone it cuts it again
    again = run_in(tmp_path / "run", "build", recipe)
    assert "(unchanged, already published)" in again.stdout, again.output
    shutil.rmtree(tmp_path / "run" / "releases")
    again = run_in(tmp_path / "run", "build", recipe)
    assert "(written)" in again.stdout, again.output
    data = {name: bytes_ for name, bytes_ in mine.items() if "/data/" in name}
    assert data and {n: d for n, d in outputs(tmp_path / "run").items() if n in data} == data


def shard_files(cwd: Path, step: str) -> list[Path]:
    """A step's finished shards (not its units file, not a shard being written)."""
    steps = cwd / ".answerable" / "answerable-demo" / "steps"
    return sorted(steps.glob(f"{step}-*/shards/*.jsonl"))


@pytest.mark.slow
def test_a_build_killed_mid_stage_resumes_from_its_finished_shards(default_build, tmp_path):
    cwd = default_build
    recipe = demo_copy(tmp_path, workers=1, shard_size=2)
    run = tmp_path / "run"
    run.mkdir()
    command = [sys.executable, "-c", "from answerable.cli import main; main()"]
    build = subprocess.Popen(
        [*command, "-v", "build", str(recipe)],
        cwd=run,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while len(shard_files(run, "counterfactual")) < 3:  # a few of its 86 shards done
        assert build.poll() is None, "the build ended before it could be killed"
        assert time.monotonic() < deadline, "no counterfactual shard appeared"
        time.sleep(0.02)
    os.killpg(build.pid, signal.SIGKILL)
    assert build.wait(timeout=30) == -signal.SIGKILL
    finished = [p for p in shard_files(run, "counterfactual") if p.suffix == ".jsonl"]
    assert 3 <= len(finished) < 86

    again = run_in(run, "-v", "build", recipe)
    assert again.exit_code == 0, again.output
    shards = r"^counterfactual: 172 units in 86 shards of up to 2, (\d+) done by an earlier run"
    line = re.search(shards, again.stderr, re.M)
    assert line and int(line.group(1)) >= len(finished), again.stderr
    assert re.search(r"^template_v1: \d+ items, \d+ rejects \(cached\)$", again.stderr, re.M)
    mine, default = outputs(run), outputs(cwd)
    assert [name for name in mine if mine[name] != default.get(name)] == []


def bulky_work(shard: list[int]) -> StepOutput:
    """An item of a few kilobytes per unit, like a build's (a result of 40 rows)."""

    def result(n: int) -> dict:
        return {"rows": [[n, f"patient {n} row {r}", r * 1.5] for r in range(40)]}

    return StepOutput(
        [{"id": f"{n:08d}", "question": f"Question {n}?", "result": result(n)} for n in shard]
    )


def traced_peak(run) -> int:
    """The largest Python allocation while ``run()`` runs, above what was held before."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_a_sharded_step_holds_about_a_shard_not_the_whole_step(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RUN_ROWS", 200)  # the writer sorts 200 items at a time
    ctx = context(tmp_path, 1, 50)

    def step(units: int) -> None:
        made, _ = sharded_step(ctx, "toy", f"sig{units}", list(range(units)), bulky_work, str)
        assert sum(1 for _ in made.items) == units  # read back from the step's file

    small, large = traced_peak(lambda: step(500)), traced_peak(lambda: step(5000))
    held = traced_peak(lambda: bulky_work(list(range(4500))))  # what 4,500 more items take
    # ten times the items: the peak grows by a small share of what holding them would cost
    assert large - small < 0.2 * held, (small, large, held)
