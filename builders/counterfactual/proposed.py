"""Near-synonym candidates proposed by a model (``counterfactual.model_candidates``).

Before the edits run, every column a parent's question mentions (a grounded column of a
real table that is not a key) becomes one :class:`NameJob`, asked once per database
and column through the drafting client (:func:`propose_names`: cached, counted). The
names that come back are new to the table and not exact synonyms of the column or of
each other (:func:`.candidates.proposed_groups`); their pairs join the curated groups
(after them), and
the plausibility gate judges them like any other group: the model proposes, the gate
decides. With ``embeddings: true`` (needs ``answerable[embeddings]``) the names are first
ranked by sentence-embedding similarity to the question.
"""

from __future__ import annotations

from answerable.builders.counterfactual.generators.base import EditEnv, prepare
from answerable.builders.counterfactual.generators.helpers import real_table, split
from answerable.builders.counterfactual.lexicon import column_role
from answerable.builders.counterfactual.stage import is_parent
from answerable.builders.drafting.column_names import NameJob, propose_names, rank_by_embedding
from answerable.builders.drafting.settings import LLMSettings
from answerable.builders.drafting.stage import DraftingConfig
from answerable.kernel.errors import ConfigError, SQLError


def name_jobs(items: list[dict], env: EditEnv) -> list[NameJob]:
    """One job per database and mentioned column, with the first mention (by parent id)."""
    jobs: dict[tuple[str, str], NameJob] = {}
    for item in sorted((i for i in items if is_parent(i)), key=lambda i: i["id"]):
        try:
            parent = prepare(item, env.databases[item["db_id"]].schema, env.views(item["db_id"]))
        except (SQLError, KeyError):
            continue  # the stage rejects it with its reason
        for qualified, mention in sorted(parent.grounding.columns.items()):
            table = real_table(parent, split(qualified)[0])
            if table is None or (parent.db_id, qualified) in jobs:
                continue
            column = table.column(split(qualified)[1])
            if column_role(column.name, column.type, column.name in table.primary_key) == (
                "identifier"
            ):
                continue
            jobs[parent.db_id, qualified] = NameJob(
                parent.db_id,
                table.name,
                column.name,
                mention.text,
                item["question"],
                tuple(c.name for c in table.columns),
            )
    return [jobs[key] for key in sorted(jobs)]


def model_names(
    items: list[dict], env: EditEnv, settings, cache, usage, embeddings: bool = False
) -> dict[tuple[str, str], tuple[str, ...]]:
    """The model's names per ``(db_id, table.column)``."""
    jobs = name_jobs(items, env)
    found = propose_names(jobs, settings, cache, usage, env.seed)
    names = {}
    for job, proposed in sorted(found.items()):
        if embeddings and len(proposed) > 1:
            proposed = rank_by_embedding(job.question, proposed)
        names[job.db_id, f"{job.table}.{job.column}"] = proposed
    return names


def model_settings(recipe, config) -> LLMSettings | None:
    """The drafting model's settings when ``counterfactual.model_candidates`` is on; a
    :class:`ConfigError` when it is on and no endpoint is configured."""
    if not config.model_candidates:
        return None
    drafting = DraftingConfig.from_recipe(recipe)
    if drafting is None or drafting.llm is None:
        raise ConfigError(
            recipe.file,
            "counterfactual.model_candidates",
            "model candidates need a model endpoint",
            fix="set drafting.llm.base_url and drafting.llm.model (or OPENAI_BASE_URL), "
            "or remove model_candidates",
        )
    return drafting.llm


def ask_for_names(ctx, items: list[dict], env: EditEnv, config, settings: LLMSettings) -> None:
    """Fill ``env.proposed`` with the model's names, through the build's reply cache (the
    model's usage goes to the build report's ``llm`` section)."""
    from answerable.builders.drafting.stage import model_cache

    with model_cache(ctx) as (cache, usage):
        env.proposed = model_names(items, env, settings, cache, usage, config.embeddings)
