"""A survey: the counterfactual edits over one source, outside a build, for their counts.

It reads the source, verifies its examples as the seed step does (by execution when
there is a database file, by binding otherwise), runs the edits with every parent
selected and every applicable edit verified (unless another config is given) and
returns the items, rejects and :class:`Stats`. ``tests/benchmarks/counterfactual_counts.py``
prints these counts for Spider dev, GeoQuery, Restaurants, Chinook and the demo.

>>> found = survey({"name": "geo", "format": "text2sql", "path": "geography.json",
...                 "database": "geography.sqlite"}, data_dir, workdir)  # doctest: +SKIP
>>> print("\\n".join(found.stats.lines()))                              # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from answerable.builders.counterfactual.generators.base import EditEnv
from answerable.builders.counterfactual.stage import Config, Stats, edit_env, run_counterfactual
from answerable.builders.executor import Limits
from answerable.builders.seeds import verify_examples
from answerable.builders.sources import load_source
from answerable.kernel.recipe import Recipe
from answerable.pipeline import BuildContext, StepOutput, Workspace

EVERY_PARENT = Config(rate=1.0, control_rate=1.0, every_edit=True)


@dataclass
class Survey:
    """What a survey made: the verified parents, the edited items, rejects and counts,
    and the databases they are over (``db_id`` -> DatabaseRef)."""

    parents: StepOutput
    edited: StepOutput
    stats: Stats
    databases: dict


def survey(
    spec: dict,
    base: Path,
    workdir: Path,
    config: Config = EVERY_PARENT,
    seed: int = 13,
    limits: Limits | None = None,
    demo_dir: Path | None = None,
) -> Survey:
    """Verify one source's examples and run the counterfactual edits over them."""
    limits = limits or Limits()
    parents, databases = verified_parents(spec, base, workdir, seed, limits, demo_dir)
    env = survey_env(databases, workdir, seed, limits, config)
    try:
        edited, stats = run_counterfactual(parents.items, env, config)
    finally:
        env.close()
    return Survey(parents, edited, stats, databases)


def verified_parents(
    spec: dict,
    base: Path,
    workdir: Path,
    seed: int = 13,
    limits: Limits | None = None,
    demo_dir: Path | None = None,
) -> tuple[StepOutput, dict]:
    """One source's examples verified as the seed step does, and its databases."""
    data = load_source(spec, Path(base), demo_dir)
    recipe = Recipe(
        Path(base) / "survey.yaml",
        {"dataset": "survey", "version": "0.0.0", "seed": seed, "sources": [spec]},
        Path(workdir),
        Path(workdir) / "out",
    )
    workspace = Workspace(Path(workdir), "survey")
    ctx = BuildContext(recipe, data.databases, limits or Limits(), workspace, data.examples)
    try:
        return verify_examples(data.examples, ctx), data.databases
    finally:
        ctx.close()


def survey_env(
    databases: dict, workdir: Path, seed: int, limits: Limits, config: Config = EVERY_PARENT
) -> EditEnv:
    """The :class:`EditEnv` of a survey: variants go under ``<workdir>/survey/variants``."""
    variants = Workspace(Path(workdir), "survey").root / "variants"
    return edit_env(databases, variants, seed, limits, config)
