"""The build stage of template_v1: the recipe's ``templates`` section, cached.

```yaml
templates:
  paths: [templates]   # YAML files, or folders of *.yaml, relative to the recipe
  quota: 4             # verified pairs per template that sets no quota
  row_cap: 100         # results with more rows are rejected (too-many-rows)
  attempts: 4          # at most quota x attempts expansions tried per template
  workers: 2           # processes (default: the recipe's workers); never changes the output
```
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from answerable.builders.templates.expand import Settings, drop_repeats, expand_templates
from answerable.builders.templates.model import (
    GENERATOR,
    Template,
    TemplateSet,
    load_templates,
    template_paths,
)
from answerable.builders.templates.paraphrase import OFFLINE
from answerable.errors import ConfigError
from answerable.ids import sha256_file
from answerable.pipeline import BuildContext, StepOutput
from answerable.recipe import Recipe
from answerable.shards import sharded_step


def template_files(recipe: Recipe) -> list[Path]:
    """The template files the recipe names (folders give their ``*.yaml`` files); the
    recipe loader has checked that each path exists."""
    return template_paths([recipe.resolve(p) for p in recipe.section("templates").get("paths", [])])


def settings_of(ctx: BuildContext) -> Settings:
    """The expansion settings from the recipe's ``templates`` and ``execution`` sections."""
    section = ctx.recipe.section("templates")
    return Settings(
        seed=ctx.recipe.seed,
        quota=section.get("quota", Settings.quota),
        row_cap=section.get("row_cap", Settings.row_cap),
        attempts=section.get("attempts", Settings.attempts),
        timeout_s=ctx.limits.timeout_s,
        keep_rows=ctx.limits.row_cap,
        workers=section.get("workers", Settings.workers),
    )


def check_templates(recipe: Recipe, databases: dict | None = None) -> TemplateSet:
    """The recipe's templates, or a :class:`ConfigError` for the first authoring error.

    A template that does not validate, repeats an id, names a placeholder its SQL or
    value sources do not define, or (when ``databases`` is given) names a db_id no
    source loads is the author's to fix: the build stops. What an expansion meets in
    the data (an empty result, too many rows) stays a reject.
    """
    loaded = load_templates(template_files(recipe), recipe.base)
    for problem in loaded.rejects:
        raise ConfigError(
            recipe.base / problem["source"],
            f"template {problem['template']!r}",
            problem["detail"],
            fix="correct the template (the README's 'Templates' section shows the format)",
        )
    for template in loaded.templates:
        if databases is not None and template.db_id not in databases:
            raise ConfigError(
                recipe.base / template.source,
                f"template {template.id!r}: db_id",
                f"no source loads database {template.db_id!r}",
                fix=f"use one of: {', '.join(sorted(databases)) or '(none)'}",
            )
    return loaded


def template_stage(ctx: BuildContext, _so_far: list[dict]) -> tuple[StepOutput, bool]:
    """template_v1 over the recipe's template files, cached by its signature and in
    shards of templates (a template weighs its quota)."""
    loaded = check_templates(ctx.recipe, ctx.databases)
    files = template_files(ctx.recipe)
    settings = settings_of(ctx)
    signature = ctx.signature(
        GENERATOR,
        {"settings": settings.signature(), "paraphraser": OFFLINE.name},
        {"templates": [sha256_file(f) for f in files], "files": ctx.inputs},
    )
    workers = ctx.recipe.section("templates").get("workers")
    if workers is not None:  # the section's own count wins over the recipe's
        ctx = replace(ctx, execution=replace(ctx.execution, workers=workers))
    one_process = replace(settings, workers=1)  # the shards are what run in parallel

    def expand(shard: list[Template]) -> StepOutput:
        return expand_templates(shard, ctx.databases, one_process, paraphraser=OFFLINE)

    def merge(made: StepOutput) -> StepOutput:
        return drop_repeats(StepOutput(made.items, loaded.rejects + made.rejects))

    return sharded_step(
        ctx,
        GENERATOR,
        signature,
        sorted(loaded.templates, key=lambda t: t.id),
        expand,
        key=lambda template: template.id,
        merge=merge,
        weight=lambda template: template.quota or settings.quota,
    )
