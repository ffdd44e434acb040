"""The two build steps of drafting: ``drafting`` and ``candidate_sql``.

Both are turned on by the recipe's ``drafting`` section (:class:`DraftingConfig`).
``drafting`` drafts from the answerable items so far (:mod:`.stage`: the offline
drafter in shards of jobs, then the pass that drops repeats, per database; the model's
drafts in one pass); ``candidate_sql`` gives every item so far its candidate SQL,
offline in shards of items (the items wait on disk, each shard reads its own back).
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders.drafting.stage import (
    CANDIDATES_STEP,
    STEP,
    DraftingConfig,
    ParentSql,
    candidates_identity,
    contexts_for,
    draft_offline_in_shards,
    draft_with_model,
    with_candidates,
)
from answerable.kernel.recipe import Recipe
from answerable.pipeline import BuildContext, ItemsSoFar, StepOutput, sorted_ids
from answerable.pipeline.shards import StoredUnits
from answerable.pipeline.steps import SectionStep, Work


class DraftingStep(SectionStep):
    """Draft, check and deduplicate, from the answerable items so far."""

    name = STEP
    section = "drafting"
    needs = ("verified",)
    makes = ("drafted",)

    def check(self, recipe: Recipe) -> None:
        """The section's model settings (an endpoint without a model fails)."""
        DraftingConfig.from_recipe(recipe)

    def signature(self, ctx: BuildContext, items: ItemsSoFar) -> tuple[dict, dict]:
        """The configuration and the items so far; the build report names the drafter
        whether the drafts are stored or not."""
        config = DraftingConfig.from_recipe(ctx.recipe)
        ctx.report.setdefault(STEP, {})["drafter"] = config.drafter
        return config.identity(), {"items": sorted_ids(items), "files": ctx.inputs}

    def work(self, ctx: BuildContext, items: ItemsSoFar, folder: Path) -> Work:
        """The offline drafter's shards of jobs and repeat pass, or the model's drafts."""
        config = DraftingConfig.from_recipe(ctx.recipe)
        draft = draft_with_model if config.llm is not None else draft_offline_in_shards
        return Work(run=lambda _all: draft(ctx, config, items, folder))


class CandidatesStep(SectionStep):
    """Candidate SQL and SCARE stratum for every item so far: the items, updated."""

    name = CANDIDATES_STEP
    section = "drafting"
    needs = ("drafted",)
    reads = ("verified", "edited")
    makes = ("candidates",)

    def signature(self, ctx: BuildContext, items: ItemsSoFar) -> tuple[dict, dict] | None:
        """How many candidates by which generator, and the items so far; None (nothing
        to do) when ``drafting.candidates.per_item`` is 0."""
        config = DraftingConfig.from_recipe(ctx.recipe)
        if config.candidates_per_item == 0:
            return None
        return candidates_identity(config), {"items": sorted_ids(items), "files": ctx.inputs}

    def work(self, ctx: BuildContext, items: ItemsSoFar, folder: Path) -> Work:
        """Offline: every item a unit, in shards; with a model: every item at once."""
        config = DraftingConfig.from_recipe(ctx.recipe)
        if config.llm is not None:
            return Work(run=lambda _all: StepOutput(with_candidates(ctx, config, list(items))))
        units = StoredUnits(items, folder / "shards" / "units.parquet")
        contexts = contexts_for(ctx, units.columns("db_id")["db_id"].unique())
        parents = ParentSql(units, folder / "shards" / "parents.parquet")

        def find(shard: list[str]) -> StepOutput:
            found = with_candidates(ctx, config, units.load(shard), contexts, parents.of(shard))
            return StepOutput(items=found)

        return Work(run=find, units=units.ids)


DRAFTING = DraftingStep()
CANDIDATES = CandidatesStep()
