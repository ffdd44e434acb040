"""The Ray backend: each pending shard is a task on a Ray cluster (``answerable[ray]``).

``execution.backend: ray`` connects to ``execution.ray_address`` (or ``RAY_ADDRESS``;
with neither, to a Ray instance already running on this machine, else a new local one)
and submits one task per pending shard. Ray's workers are not forked from the build, so
the stage's work function travels to them pickled (cloudpickle), with what it closes
over: the build context without its open connections and a
:class:`~answerable.pipeline.shards.PerProcess` without its value, so each worker opens its own
databases and edit environments on first use. The function is put in Ray's object store
once per step and unpickled once per worker process, not once per shard.

The outputs come back to the build's process, which stores each shard as it arrives
(so a build killed, or a task that failed, resumes from the stored shards). A task
whose worker dies (a lost node, a process killed for memory) runs again, up to
:data:`RETRIES` times; a Python error in a shard is raised in the build as it was
raised in the worker, since running the same shard again would fail the same way.

The workers must reach what the work reads and writes, at the same paths: the source
databases, the work directory (counterfactual variants are written there) and the
same version of ``answerable`` (see the README's cluster section).
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterator

from answerable.kernel.errors import ConfigError

try:
    import ray
except ImportError:  # the optional extra is not installed
    ray = None

MISSING = None if ray is not None else "the ray backend needs Ray, which is not installed"
FIX = "pip install 'answerable[ray]', or set execution.backend: local"
RETRIES = 3  # runs of a task after its worker died, before the build fails
IN_FLIGHT_PER_CPU = 2  # tasks submitted ahead per cluster CPU: results keep coming back


def where(ctx, _workers: int, _pending: list[int]) -> str:
    """The cluster the pending shards run on (its CPUs decide how many at once)."""
    address = ctx.execution.ray_address or os.environ.get("RAY_ADDRESS")
    return f"on the Ray cluster at {address}" if address else "on Ray (this machine)"


def outputs(ctx, shards: list[list], pending: list[int], work, _workers: int) -> Iterator:
    """``(index, output)`` of each pending shard, as Ray's tasks finish. The recipe's
    ``workers`` is left to the cluster: every task asks for one CPU, and the cluster's
    CPUs bound how many run at once."""
    if not pending:
        return
    connect(ctx)
    # pickled without this process's connections (BuildContext and PerProcess say how)
    job = (os.getcwd(), [ray.put(work)])  # in a list: each worker fetches it once
    task = _run_shard.options(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)
    limit = IN_FLIGHT_PER_CPU * max(int(ray.cluster_resources().get("CPU", 1)), 1)
    waiting, running = iter(pending), {}

    def submit() -> None:
        for index in itertools.islice(waiting, limit - len(running)):
            running[task.remote(*job, shards[index])] = index

    submit()
    try:
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            index = running.pop(done[0])
            yield index, _result(done[0])
            submit()
    finally:
        for ref in running:  # the build stopped: its other shards are not wanted now
            ray.cancel(ref)


def connect(ctx) -> None:
    """Join the recipe's Ray cluster once per process (see the module docstring), or a
    :class:`ConfigError` naming ``execution.ray_address`` when it cannot be reached."""
    if ray.is_initialized():
        return
    address = ctx.execution.ray_address or os.environ.get("RAY_ADDRESS")
    try:
        ray.init(
            address=address,
            include_dashboard=False,
            log_to_driver=False,  # the build's output stays the build's
            logging_level=logging.WARNING,
        )
    except (ConnectionError, ValueError, ray.exceptions.RayError) as error:
        raise ConfigError(
            ctx.recipe.file,
            "execution.ray_address",
            f"cannot join the Ray cluster at {address or 'this machine'}: {error}",
            fix=UNREACHABLE,
        ) from None


UNREACHABLE = (
    "start the cluster (ray start --head) and give its address here or in RAY_ADDRESS; "
    "a cluster with token authentication also needs RAY_AUTH_MODE=token and its token"
)


def _result(ref):
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as error:
        raise error.cause from None  # the shard's own error, as the local backend raises it


_WORK: tuple | None = None  # (object id, work) of the step this worker last ran


def _run(cwd: str, work_ref: list, units: list):
    """One shard in a Ray worker: the step's work, fetched on the worker's first shard
    of that step, run from the build's working directory (relative paths)."""
    global _WORK
    key = work_ref[0].hex()
    if _WORK is None or _WORK[0] != key:
        _WORK = None  # the previous step's work and its connections go first
        _WORK = (key, ray.get(work_ref[0]))
    if os.getcwd() != cwd and os.path.isdir(cwd):
        os.chdir(cwd)
    return _WORK[1](units)


_run_shard = ray.remote(_run) if ray is not None else None
