"""The build step of the cross-check, turned on by ``execution.cross_check``.

It runs after every step that makes executed items: the checked items replace those
made before, and (``execution.on_disagreement: reject``) the items that disagree are
withdrawn from the items so far and become rejects. Copies of the sources go to
``<workdir>/<dataset>/engines/<engine>/``.
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders.engines.crosscheck import STEP as NAME
from answerable.builders.engines.crosscheck import Copies, checkable, cross_check, settings
from answerable.kernel.recipe import Recipe
from answerable.pipeline import BuildContext, ItemsSoFar, StepOutput
from answerable.pipeline.steps import SectionStep, Work


class CrossCheckStep(SectionStep):
    """The gold queries of the items so far, run again on other engines."""

    name = NAME
    section = "execution"
    needs = ("verified",)
    reads = ("edited", "drafted", "candidates")
    makes = ("cross-checked",)
    withdraws = True

    def wanted(self, recipe: Recipe) -> bool:
        """When ``execution.cross_check`` names an engine."""
        return bool(settings(recipe)[0])

    def check(self, recipe: Recipe) -> None:
        """Every engine named is known."""
        settings(recipe)

    def signature(self, ctx: BuildContext, items: ItemsSoFar) -> tuple[dict, dict]:
        """The engines, the mode, the limits and each checkable item's result hash."""
        engines, mode = settings(ctx.recipe)
        checked = sorted((i["id"], i["result"]["hash"]) for i in items if checkable(i))
        config = {"engines": engines, "mode": mode, "limits": vars(ctx.limits)}
        return config, {"items": checked, "files": ctx.inputs}

    def work(self, ctx: BuildContext, items: ItemsSoFar, folder: Path) -> Work:
        """Every checkable item checked here, over copies opened once."""
        engines, mode = settings(ctx.recipe)
        copies = Copies(ctx.workspace.root / "engines", ctx.limits)

        def check(_all) -> StepOutput:
            checkable_items = [i for i in items if checkable(i)]
            return cross_check(checkable_items, ctx.databases, engines, copies, mode)

        work = Work(run=check)
        work.resources.callback(copies.close)
        return work


STEP = CrossCheckStep()
