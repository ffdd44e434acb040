"""Executor backends: where the pending shards of a per-item stage run.

:func:`answerable.pipeline.shards.run_in_shards` cuts a stage's units into shards, finds which
are stored already and asks the recipe's backend (``execution.backend``) for the
outputs of the others; it stores each output as it arrives, so a backend never writes a
shard and every backend gives the same bytes. A backend is a module with

- ``outputs(ctx, shards, pending, work, workers)``: ``(index, output)`` of every
  pending shard, in any order (``work`` turns a list of units into a
  :class:`~answerable.pipeline.StepOutput`; ``workers`` is the recipe's count, which a
  cluster backend may leave to the cluster);
- ``where(ctx, workers, pending)``: where the pending shards will run, for the
  ``-v`` line that announces a step;
- ``MISSING``: why it cannot run here (an optional extra not installed), or None;
- ``FIX``: what to do about it.

and one line in :data:`BACKENDS`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from answerable.kernel.errors import ConfigError

BACKENDS = {
    "local": "answerable.backends.local",  # processes forked on this machine (default)
    "ray": "answerable.backends.ray",  # tasks on a Ray cluster: pip install 'answerable[ray]'
}
DEFAULT = "local"


def backend(name: str) -> ModuleType:
    """The backend module registered as ``name``."""
    return importlib.import_module(BACKENDS[name])


def checked_backend(recipe) -> str:
    """The recipe's ``execution.backend`` (default ``local``), or a :class:`ConfigError`
    when no backend has that name or the one named cannot run here."""
    name = recipe.section("execution").get("backend", DEFAULT)
    if name not in BACKENDS:
        raise ConfigError(
            recipe.file,
            "execution.backend",
            f"no backend is called {name!r}",
            fix=f"use one of: {', '.join(BACKENDS)}",
        )
    chosen = backend(name)
    if chosen.MISSING is not None:
        raise ConfigError(recipe.file, "execution.backend", chosen.MISSING, fix=chosen.FIX)
    return name
