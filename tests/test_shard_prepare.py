"""Issue 14: what a sharded stage loads once before its workers fork, they share."""

from __future__ import annotations

import os
from types import SimpleNamespace

from answerable.kernel.progress import SILENT
from answerable.pipeline import Execution, StepOutput, Workspace
from answerable.pipeline.shards import run_in_shards

LOADED: list[str] = []  # what prepare() loaded in this process (a forked worker inherits it)


def test_prepare_runs_once_before_the_workers_fork_and_not_when_every_shard_is_stored(
    tmp_path,
):
    ctx = SimpleNamespace(
        execution=Execution(2, 2),
        progress=SILENT,
        close=lambda: None,
        workspace=Workspace(tmp_path, "toy"),
    )
    calls = []

    def prepare():
        calls.append(os.getpid())
        LOADED.append("wordnet")

    def work(shard: list[int]) -> StepOutput:
        made = [{"id": str(n), "pid": os.getpid(), "saw": list(LOADED)} for n in shard]
        return StepOutput(items=made)

    LOADED.clear()
    units, folder = list(range(6)), tmp_path / "step"
    made = run_in_shards(ctx, folder, "toy", units, work, str, prepare=prepare)
    assert calls == [os.getpid()]
    assert [item["id"] for item in made.items] == [str(n) for n in units]
    assert all(item["saw"] == ["wordnet"] for item in made.items)
    assert {item["pid"] for item in made.items} - {os.getpid()}  # forked workers ran them
    # every shard is stored now: prepare is not called again
    again = run_in_shards(ctx, folder, "toy", units, work, str, prepare=prepare)
    assert calls == [os.getpid()] and list(again.items) == list(made.items)
