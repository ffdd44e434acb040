"""What a build does with each drafted category, read from the category registry.

Each category's module (:mod:`.categories`) declares its offline rule, its check, its
twin maker and its prompt example writer on its :class:`~.category.Category`; the
functions here look the job's category up in :data:`.categories.CATEGORIES` and call
its piece, around what every category shares (planning the jobs, the checks run before
a category's own, turning a draft into an item).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from answerable import __version__
from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.category import Category
from answerable.builders.drafting.checks import Failure, copied_example
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import LLM_DRAFTER, Draft, Job, main_table
from answerable.builders.drafting.prompts import MADE_UP_ATTRIBUTES, MAX_VALUE_CHARS
from answerable.builders.drafting.text import find_phrase, humanize, normalize
from answerable.builders.drafting.twins import Twin
from answerable.kernel.ids import rng_for
from answerable.kernel.untrusted_text import control_character


def plan_jobs(
    parents: list[dict],
    categories: list[str],
    per_item: int,
    seed: int,
    tables: Mapping[str, str | None] | None = None,
) -> list[Job]:
    """Every job for ``parents`` (answerable items), in a fixed order, each with its
    parent's main table: from ``tables`` (by parent id: found once for the whole
    stage, see :func:`.stage.parent_tables`), else found here."""
    jobs = []
    for parent in sorted(parents, key=lambda p: p["id"]):
        table = tables[parent["id"]] if tables is not None else main_table(parent)
        for name in categories:
            for sample in range(per_item):
                focus = _focus(name, table, parent, sample, seed)
                key = f"{parent['id']}/{name}/{sample}"
                jobs.append(Job(parent, name, sample, focus, _request_seed(seed, key), table))
    return jobs


def _request_seed(seed: int, key: str) -> int:
    return rng_for(seed, "drafting-request", key).getrandbits(31)


def _focus(category: str, table: str | None, parent: dict, sample: int, seed: int) -> str | None:
    drafted = CATEGORIES[category]
    if drafted.uses_parent:
        return None
    if drafted.topics:
        rng = rng_for(seed, "drafting-topic", f"{parent['id']}/{sample}")
        return drafted.topic_focus.format(topic=rng.choice(drafted.topics))
    return f"the table {table}" if table else None


def trigger_spans(question: str, trigger: str, category: str, concept: str | None) -> list[dict]:
    """The span of the trigger in the question, when the category tags one and it is there."""
    tag = CATEGORIES[category].span_tag
    found = find_phrase(question, trigger.replace("_", " ")) if tag else None
    if found is None:
        return []
    start, end = found
    return [
        {"start": start, "end": end, "tag": tag, "text": question[start:end], "concept": concept}
    ]


def draft_item(draft: Draft, seed: int) -> dict:
    """The item of a kept draft: labelled, triggered, explained, with its provenance."""
    category = CATEGORIES[draft.category]
    parent = draft.job.parent
    spans = list(draft.spans) or trigger_spans(
        draft.question, draft.trigger, draft.category, draft.details.get("concept")
    )
    params = {"category": draft.category, "sample": draft.job.sample, "anchor": parent["id"]}
    params.update(
        {k: v for k, v in (("transform", draft.transform), ("focus", draft.job.focus)) if v}
    )
    return {
        "id": draft.id,
        "db_id": draft.job.db_id,
        "db_variant": None,
        "question": draft.question,
        "sql": None,
        "dialect": parent.get("dialect", "sqlite"),
        "label": category.label,
        "category": draft.category,
        "subtype": draft.subtype,
        "spans": spans,
        "trigger": {"kind": draft.category, "text": draft.trigger, **draft.details},
        "explanation": category.explanation.format(trigger=draft.trigger),
        "result": None,
        "sql_meta": None,
        "provenance": {
            "generator": draft.generator,
            "tool_version": __version__,
            "source": (parent.get("provenance") or {}).get("source"),
            "params": params,
            "seed": seed,
            "parent": draft.parent_id,
            "model": draft.model,
            "prompt_hash": draft.prompt_hash,
        },
    }


def example_questions(context: DatabaseContext, parent: dict | None = None) -> tuple[str, ...]:
    """Every question (and parent question) a drafting prompt for this database and
    parent may show as an example, of any category: a draft that repeats one copied it.
    The bookshop's examples are included: other prompts show them."""
    shown = [e for c in CATEGORIES.values() for e in c.examples]
    shown += [e for c in CATEGORIES.values() for e in database_examples(c, context, parent)]
    return tuple(dict.fromkeys(e[k] for e in shown for k in ("parent", "question") if k in e))


def database_examples(
    category: Category, context: DatabaseContext, parent: dict | None = None
) -> tuple[dict, ...]:
    """Two examples of ``category`` written on the database of ``context``: its own
    tables, columns and values, on a table the parent does not use where there is one.
    The category's own examples when the database offers nothing to write them on
    (no values, no numeric column), and always for out-of-domain and small talk, whose
    questions are about no database.

    >>> from answerable.builders.schema import Column, DatabaseSchema, Table
    >>> table = Table("players", [Column("name", "TEXT"), Column("height_cm", "INTEGER")])
    >>> values = {"players": {"name": ["Ann Lee"], "height_cm": [181]}}
    >>> context = DatabaseContext("league", DatabaseSchema("league", [table]), values)
    >>> [e["question"] for e in database_examples(CATEGORIES["vague-word"], context)]
    ['Which players have a high height cm?', 'Which players have a large height cm?']
    """
    writer = category.example_writer
    found = _example_columns(context, parent) if writer else None
    if found is None:
        return category.examples
    return writer(*found)


def _example_columns(context: DatabaseContext, parent: dict | None):
    """``(table words, a text column and value, a numeric column and value)`` of the
    first table (the parent's own last) with both, or None."""
    own = main_table(parent) if parent and parent.get("sql") else None
    for table in sorted(context.schema.tables, key=lambda t: (t.name == own, t.name)):
        text = number = None
        for column in table.columns:
            values = context.column_values(table.name, column.name)
            if not values or column.name.lower().endswith("id"):
                continue
            value = values[0]
            if isinstance(value, str) and text is None and len(value) <= MAX_VALUE_CHARS:
                text = (humanize(column.name), value)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                number = number or (humanize(column.name), value)
        if text and number:
            others = {humanize(c.name) for t in context.schema.tables for c in t.columns}
            invented = next((a for a in MADE_UP_ATTRIBUTES if a not in others), "shoe size")
            return humanize(table.name), text, number, invented
    return None


def check_draft(draft: Draft, context: DatabaseContext) -> Failure | None:
    """Why ``draft`` fails its category's check, or None when it passes."""
    control = control_character(draft.question)
    if control is not None:
        return "control-character", f"the question holds {control} (not text a reader sees)"
    if normalize(draft.question) == normalize(draft.job.parent["question"]):
        return "same-as-parent", "the draft repeats its parent's question"
    if draft.generator == LLM_DRAFTER:  # only a model saw a prompt's examples
        copied = copied_example(draft.question, example_questions(context, draft.job.parent))
        if copied is not None:
            return copied
    return CATEGORIES[draft.category].check(draft, context)


def draft_offline(job: Job, context: DatabaseContext, rng: random.Random) -> Draft | None:
    """The offline draft for one job, or None when its rule finds nothing to work on."""
    return CATEGORIES[job.category].offline_rule(job, context, rng)


def make_twin(job: Job, context: DatabaseContext, rng: random.Random, database) -> Twin | None:
    """The answerable twin of a job's device, or None when there is none to make."""
    rule = CATEGORIES[job.category].twin
    return rule(job, context, rng, database) if rule else None
