"""The build step of seed_v1: every source example verified, in one pass.

It reads no earlier item and runs whatever the recipe holds (every recipe has
``sources``); the contradiction check looks across all examples, so it is one unit.
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders.seeds import GENERATOR, verify_examples
from answerable.pipeline import BuildContext, ItemsSoFar
from answerable.pipeline.steps import SectionStep, Work


class SeedStep(SectionStep):
    """seed_v1 over every source example, cached by its signature."""

    name = GENERATOR
    section = "sources"  # every recipe has them: the step always runs
    makes = ("verified",)

    def signature(self, ctx: BuildContext, items: ItemsSoFar) -> tuple[dict, dict]:
        """The limits, the examples' ids and the input files' hashes."""
        examples = sorted(example["id"] for example in ctx.examples)
        return {"limits": vars(ctx.limits)}, {"examples": examples, "files": ctx.inputs}

    def work(self, ctx: BuildContext, items: ItemsSoFar, folder: Path) -> Work:
        """Every example verified here, in one unit."""
        return Work(run=lambda _all: verify_examples(ctx.examples, ctx))


STEP = SeedStep()
