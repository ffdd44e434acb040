"""Build steps: what a step declares, how the build's steps are assembled and run.

A step is one stage of a build (``seed_v1``, ``template_v1``, ``counterfactual``,
``drafting``, ``candidate_sql``, ``cross_check``), kept in its stage's package as
``builders/<stage>/step.py``. It declares its versioned ``name``, the recipe
``section`` that configures it, the kinds of item it ``needs`` and ``reads`` and the
kinds it ``makes``; it gives its signature's parts and, when there is work to do, its
:class:`Work`: the units, what to ``run`` on one shard of them, and the ``merge`` that
looks across shards. The runner (:func:`run_step`) owns the rest: the signature, the
cached output under ``steps/<name>-<signature>/``, the shards, the workers and the
backend they run on (:mod:`answerable.pipeline.shards`).

:func:`assemble` checks the recipe's ``steps:`` list (default: every step, in the
build's order) before anything runs: an unknown step, one listed twice, or one listed
before a step that makes what it reads is a one-line configuration error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from answerable.kernel.errors import ConfigError
from answerable.kernel.recipe import Recipe
from answerable.pipeline import BuildContext, ItemsSoFar, StepOutput
from answerable.pipeline.shards import run_in_shards


@dataclass
class Work:
    """What a step does when its output is not stored yet.

    ``run`` treats one shard of ``units`` (each named by ``key`` and weighing
    ``weight``) in a worker, after ``prepare`` ran once in the build's process; with
    ``units`` None it runs once, here, over everything (``run(None)``). ``merge`` then
    looks across the shards' concatenated output (repeats, near-duplicates). ``workers``
    overrides the recipe's process count for this step; ``resources`` holds what the
    work opened, closed once it is stored.
    """

    run: Callable[[list | None], StepOutput]
    units: list | None = None
    key: Callable[[Any], str] = str
    weight: Callable[[Any], int] = lambda _unit: 1
    prepare: Callable[[], None] = lambda: None
    merge: Callable[[StepOutput], StepOutput] = lambda output: output
    workers: int | None = None
    resources: ExitStack = field(default_factory=ExitStack)


class Step(Protocol):
    """One stage of a build (see the module's docstring)."""

    name: str  # versioned: the cache folder's prefix and the rejects' ``step``
    section: str  # the recipe section that configures it
    needs: tuple[str, ...]  # kinds of item a step listed before it must make
    reads: tuple[str, ...]  # kinds it reads when a listed step makes them
    makes: tuple[str, ...]  # kinds of item it adds (or updates)
    withdraws: bool  # its rejects take their items out of the items so far

    def wanted(self, recipe: Recipe) -> bool:
        """Whether the recipe turns the step on (its section is there)."""

    def check(self, recipe: Recipe) -> None:
        """Raise the :class:`ConfigError` of the step's section before the build starts."""

    def signature(self, ctx: BuildContext, items: ItemsSoFar) -> tuple[Any, Any] | None:
        """``(config, inputs)`` of the step's signature, or None when it has nothing to
        do for this recipe (its output is then empty and not stored)."""

    def work(self, ctx: BuildContext, items: ItemsSoFar, folder: Path) -> Work:
        """The step's work over ``items`` (the items so far), its shards under ``folder``."""


class SectionStep:
    """What most steps share (a step may override each): it runs when the recipe has its
    ``section``, needs, reads and withdraws nothing, and its section needs no check
    beyond the recipe schema's."""

    section: str
    needs: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    withdraws = False

    def wanted(self, recipe: Recipe) -> bool:
        """Whether the recipe has the step's section."""
        return self.section in recipe.data

    def check(self, recipe: Recipe) -> None:
        """Nothing beyond the recipe schema's checks."""


def run_step(step: Step, ctx: BuildContext, items: ItemsSoFar) -> tuple[StepOutput, bool]:
    """The step's stored output, or its work's, stored for next time: ``(output,
    was_cached)``. A step killed halfway resumes from the shards it stored."""
    parts = step.signature(ctx, items)
    if parts is None:
        return StepOutput(), False
    signature = ctx.signature(step.name, *parts)
    folder = ctx.workspace.step_dir(step.name, signature)

    def compute() -> StepOutput:
        work = step.work(ctx, items, folder)
        with work.resources:
            return work.merge(_made(work, ctx, step.name, folder))

    return ctx.workspace.cached_step(step.name, signature, compute)


def _made(work: Work, ctx: BuildContext, name: str, folder: Path) -> StepOutput:
    if work.units is None:
        return work.run(None)
    if work.workers is not None:  # the step's own count wins over the recipe's
        ctx = replace(ctx, execution=replace(ctx.execution, workers=work.workers))
    return run_in_shards(
        ctx, folder, name, work.units, work.run, work.key, work.weight, work.prepare
    )


def assemble(recipe: Recipe, known: Sequence[Step]) -> tuple[Step, ...]:
    """The steps this recipe runs, in order: those its ``steps:`` list names (default:
    ``known``, in order) that its sections turn on, each checked (:meth:`Step.check`)."""
    listed = _listed(recipe, known)
    _check_order(recipe, listed, known)
    chosen = tuple(step for step in listed if step.wanted(recipe))
    for step in chosen:
        step.check(recipe)
    return chosen


def _listed(recipe: Recipe, known: Sequence[Step]) -> list[Step]:
    by_name = {step.name: step for step in known}
    names = recipe.data.get("steps")
    if names is None:
        return list(known)
    for index, name in enumerate(names):
        if name not in by_name:
            raise ConfigError(
                recipe.file,
                f"steps[{index}]",
                f"unknown step {name!r}",
                fix=f"use steps of: {', '.join(by_name)}",
            )
        if name in names[:index]:
            raise ConfigError(
                recipe.file,
                f"steps[{index}]",
                f"step {name!r} is listed twice",
                fix="list each step once",
            )
    return [by_name[name] for name in names]


def _check_order(recipe: Recipe, listed: list[Step], known: Sequence[Step]) -> None:
    """Every kind a step needs is made by a step listed before it, and no step that
    makes a kind it reads comes after it (the fix names the ``known`` steps that make
    the kind missing)."""
    for index, step in enumerate(listed):
        before = {kind for earlier in listed[:index] for kind in earlier.makes}
        for kind in step.needs:
            if kind not in before:
                raise _order_error(recipe, index, step, kind, _makers(known, kind))
        for later in listed[index + 1 :]:
            made = set(later.makes) & (set(step.reads) | set(step.needs))
            if made:
                raise _order_error(recipe, index, step, sorted(made)[0], [later.name])


def _makers(steps: Iterable[Step], kind: str) -> list[str]:
    return [step.name for step in steps if kind in step.makes]


def _order_error(recipe: Recipe, index: int, step: Step, kind: str, makers: list[str]):
    return ConfigError(
        recipe.file,
        f"steps[{index}]",
        f"step {step.name!r} reads {kind} items, which no step before it makes",
        fix=f"list {' or '.join(makers)} before {step.name}",
    )
