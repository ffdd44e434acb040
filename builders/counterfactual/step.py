"""The build step of the counterfactual edits: the recipe's ``counterfactual`` section.

Its units are the verified answerable items so far (:func:`is_parent`), which wait on
disk and are read back a shard at a time; each worker builds its edit environment and
its store of engine variants once. Variants go to ``<workdir>/<dataset>/variants/``;
DuckDB and server sources are edited on their SQLite twin and proved on their engine.
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders import lexical
from answerable.builders.counterfactual import proposed
from answerable.builders.counterfactual.on_engines import (
    as_on_twins,
    counterfactual_on_engines,
    twin_databases,
)
from answerable.builders.counterfactual.stage import (
    PARENT_FIELDS,
    UNDRAWN_FIELDS,
    Config,
    draws,
    drop_repeated,
    edit_env,
    is_parent,
)
from answerable.builders.counterfactual.stage import STEP as NAME
from answerable.builders.engines import variants as engine_variants
from answerable.builders.engines.variants import on_engine
from answerable.kernel.recipe import Recipe
from answerable.pipeline import BuildContext, ItemsSoFar, StepOutput, with_fields
from answerable.pipeline.shards import PerProcess, StoredUnits, UnitsInPlace
from answerable.pipeline.steps import SectionStep, Work


class CounterfactualStep(SectionStep):
    """Counterfactual edits of the verified answerable items so far."""

    name = NAME
    section = "counterfactual"
    needs = ("verified",)
    makes = ("edited",)

    def check(self, recipe: Recipe) -> None:
        """Model candidates without a model endpoint fail before the build starts."""
        proposed.model_settings(recipe, _config(recipe))

    def signature(self, ctx: BuildContext, items: ItemsSoFar) -> tuple[dict, dict]:
        """The section, the limits, the model (model candidates) and the parents' ids."""
        config = _config(ctx.recipe)
        model = proposed.model_settings(ctx.recipe, config)
        settings = {"config": config.signature(), "limits": vars(ctx.limits)}
        settings |= {"model": model.identity()} if model else {}
        return settings, {"parents": _parents(items)[0], "files": ctx.inputs}

    def work(self, ctx: BuildContext, items: ItemsSoFar, folder: Path) -> Work:
        """The parents in shards, WordNet and inflect loaded once before the workers
        fork; the model's names for the parents' mentions asked once, here."""
        config = _config(ctx.recipe)
        model = proposed.model_settings(ctx.recipe, config)
        variants, seed = ctx.workspace.root / "variants", ctx.recipe.seed
        ids, used = _parents(items)  # and the databases the parents are on
        twins = twin_databases(ctx.databases, ctx.workspace.root, used)
        names = proposed_names(ctx, items, config, model, twins) if model else None

        def make_env():
            env = edit_env(twins, variants, seed, ctx.limits, config)
            if names is not None:
                env.proposed = names
            env.shared = folder / "shards" / "leaks"  # the workers' column checks, once
            return env

        env = PerProcess(make_env, lambda made: made.close())
        store = PerProcess(
            lambda: engine_variants.EngineVariants(variants, ctx.limits), lambda made: made.close()
        )
        units = _units(items, ids, folder)

        def edit(shard: list[str]) -> StepOutput:
            made = env.get()
            parents = _shard_parents(units, shard, made, config, ctx.databases)
            return counterfactual_on_engines(parents, made, config, ctx.databases, store.get())

        work = Work(run=edit, units=units.ids, prepare=lexical.preload, merge=drop_repeated)
        work.resources.callback(store.close)
        work.resources.callback(env.close)
        return work


def _config(recipe: Recipe) -> Config:
    return Config.from_section(recipe.section("counterfactual"))


def _units(items: ItemsSoFar, ids: list[str], folder: Path) -> UnitsInPlace | StoredUnits:
    """The parents as the shards' units: read where the earlier steps stored them, or
    (items held in memory) written to the step's folder first."""
    places = items.places() if isinstance(items, ItemsSoFar) else None
    if places is not None:
        return UnitsInPlace(places, ids)
    return StoredUnits((i for i in items if is_parent(i)), folder / "shards" / "units.parquet")


def _shard_parents(
    units: UnitsInPlace | StoredUnits, shard: list[str], env, config: Config, databases: dict
) -> list[dict]:
    """The shard's parents, read whole when drawn for an edit (:func:`draws`), or when on
    another engine (the draws are made on its SQLite twin's id); the others with only the
    fields a parent drawn for no edit is read for (most parents: decoding the rest of
    them was a tenth of the step's work)."""
    if not isinstance(units, UnitsInPlace):
        return units.load(shard)
    light = units.load(shard, UNDRAWN_FIELDS)
    whole = [
        item["id"]
        for item in light
        if on_engine(databases.get(item["db_id"])) or any(draws(item["id"], env, config))
    ]
    read = dict(zip(whole, units.load(whole), strict=True)) if whole else {}
    return [read.get(item["id"], item) for item in light]


def _parents(items: ItemsSoFar) -> tuple[list[str], set[str]]:
    """The parents' ids, sorted, and the databases they are on (one pass: on disk)."""
    parents, used = [], set()
    for item in with_fields(items, *PARENT_FIELDS):
        if is_parent(item):
            parents.append(item["id"])
            used.add(item["db_id"])
    return sorted(parents), used


def proposed_names(ctx: BuildContext, items: ItemsSoFar, config, model, twins=None) -> dict:
    """The model's column names for the parents' mentions, asked once in this
    process through the reply cache, before the shards' workers start (``twins``: the
    databases with DuckDB and server ones as their SQLite twins)."""
    variants = ctx.workspace.root / "variants"
    databases = twins or ctx.databases
    env = edit_env(databases, variants, ctx.recipe.seed, ctx.limits, config)
    try:
        found = as_on_twins(items, ctx.databases)
        proposed.ask_for_names(ctx, found, env, config, model)
        return env.proposed
    finally:
        env.close()


STEP = CounterfactualStep()
