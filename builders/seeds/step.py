"""The build step of seed_v1: every source example verified, in one pass.

It reads no earlier item and runs whatever the recipe holds (every recipe has
``sources``); the contradiction check looks across all examples, so it is one unit.
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders.seeds import GENERATOR, verify_examples
from answerable.pipeline import BuildContext, ItemsSoFar
from answerable.pipeline.steps import Work
from answerable.recipe import Recipe


class SeedStep:
    """seed_v1 over every source example, cached by its signature."""

    name = GENERATOR
    section = "sources"
    needs: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    makes = ("verified",)
    withdraws = False

    def wanted(self, recipe: Recipe) -> bool:
        """Always: every recipe has sources."""
        return True

    def check(self, recipe: Recipe) -> None:
        """Nothing beyond the recipe's own checks (sources are read when the build starts)."""

    def signature(self, ctx: BuildContext, items: ItemsSoFar) -> tuple[dict, dict]:
        """The limits, the examples' ids and the input files' hashes."""
        examples = sorted(example["id"] for example in ctx.examples)
        return {"limits": vars(ctx.limits)}, {"examples": examples, "files": ctx.inputs}

    def work(self, ctx: BuildContext, items: ItemsSoFar, folder: Path) -> Work:
        """Every example verified here, in one unit."""
        return Work(run=lambda _all: verify_examples(ctx.examples, ctx))


STEP = SeedStep()
