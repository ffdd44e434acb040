"""The build step of template_v1: the recipe's ``templates`` section, cached.

The templates are the units, in shards (a template weighs its quota of pairs); a
stored output is read without loading the templates again: the build that stored it
checked the same files. The model's rewrites are asked for once, before the shards'
workers start; repeated pairs are dropped and the model's answers asked for after
them (:meth:`merge`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from answerable.builders.templates.expand import expand_templates, kept_open, unique_pairs
from answerable.builders.templates.model import GENERATOR, Template
from answerable.builders.templates.paraphrase import OFFLINE
from answerable.builders.templates.stage import (
    ModelUse,
    check_templates,
    imported_templates,
    settings_of,
    template_files,
)
from answerable.kernel.ids import sha256_file
from answerable.kernel.recipe import Recipe
from answerable.pipeline import BuildContext, ItemsSoFar, StepOutput
from answerable.pipeline.steps import SectionStep, Work


class TemplateStep(SectionStep):
    """template_v1 over the recipe's template files."""

    name = GENERATOR
    section = "templates"
    makes = ("verified",)

    def check(self, recipe: Recipe) -> None:
        """The model settings the section asks for (an endpoint without a model fails)."""
        ModelUse.of(recipe)

    def signature(self, ctx: BuildContext, items: ItemsSoFar) -> tuple[dict, dict]:
        """The expansion settings, the model's part and the template files' hashes."""
        model = ModelUse.of(ctx.recipe)
        config = {
            "settings": settings_of(ctx).signature(),
            "paraphraser": OFFLINE.name,
            **model.identity(),
        }
        files = [sha256_file(f) for f in template_files(ctx.recipe)]
        return config, {"templates": files, "files": ctx.inputs}

    def work(self, ctx: BuildContext, items: ItemsSoFar, folder: Path) -> Work:
        """The checked templates in shards; the section's ``workers`` wins over the
        recipe's, and every shard run here reuses one connection per source."""
        loaded = check_templates(ctx.recipe, ctx.databases)
        settings = settings_of(ctx)
        model = ModelUse.of(ctx.recipe)
        one_process = replace(settings, workers=1)  # the shards are what run in parallel
        paraphraser = model.paraphraser(ctx, loaded.templates)  # offline: nothing asked

        def expand(shard: list[Template]) -> StepOutput:
            return expand_templates(shard, ctx.databases, one_process, paraphraser=paraphraser)

        def merge(made: StepOutput) -> StepOutput:
            rejects = imported_templates(ctx.recipe).rejects + made.rejects
            kept = unique_pairs(StepOutput(made.items, rejects))  # a stream: never all held
            return StepOutput(model.answered(ctx, kept.items), kept.rejects)

        work = Work(
            run=expand,
            units=sorted(loaded.templates, key=lambda template: template.id),
            key=lambda template: template.id,
            weight=lambda template: template.quota or settings.quota,
            merge=merge,
            workers=ctx.recipe.section("templates").get("workers"),
        )
        work.resources.enter_context(kept_open())
        return work


STEP = TemplateStep()
