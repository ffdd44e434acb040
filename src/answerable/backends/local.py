"""The local backend: the pending shards in processes forked from the build.

Forked workers share the build's loaded state (sources, templates, WordNet) without
copying it; what must not be shared (a SQLite connection, an edit environment) is closed
before the fork or held in a :class:`~answerable.pipeline.shards.PerProcess`.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator

MISSING = None  # always available
FIX = None


def where(_ctx, workers: int, pending: list[int]) -> str:
    """How many processes the pending shards run in."""
    processes = min(workers, max(len(pending), 1))
    return f"{processes} worker{'' if processes == 1 else 's'}"


def outputs(ctx, shards: list[list], pending: list[int], work, workers: int) -> Iterator:
    """``(index, output)`` of each pending shard, here (one worker, or one shard to do)
    or in ``workers`` forked processes."""
    if workers <= 1 or len(pending) <= 1:
        for index in pending:
            yield index, work(shards[index])
        return
    ctx.close()  # a forked process must not share the parent's SQLite connections
    global _JOB
    _JOB = (shards, work)
    context = multiprocessing.get_context("fork")
    pool = context.Pool(min(workers, len(pending)), initializer=worker_ignores_interrupts)
    try:
        yield from pool.imap_unordered(_run_shard, pending)
    finally:
        pool.terminate()
        pool.join()
        _JOB = None


def worker_ignores_interrupts() -> None:
    """A pool worker's initializer: Ctrl-C reaches every process of the terminal's
    group, and only the parent answers it (with one line), so workers ignore it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


_JOB: tuple | None = None  # (shards, work): what forked workers run, set before the fork


def _run_shard(index: int) -> tuple:
    shards, work = _JOB
    return index, work(shards[index])
