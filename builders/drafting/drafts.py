"""Jobs (what to draft) and drafts (what came back), and drafts turned into items.

A job is one (parent item, category, sample): every category is drafted ``per_item``
times for every answerable item. The categories that rewrite a question show the
model the parent; the others get a focus instead (the parent's main table, or a
small-talk topic), so that drafts for different parents differ. Either drafter, the
LLM or the offline rules, turns a job into a :class:`Draft`; :func:`draft_item` makes
the schema-valid item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from sqlglot import exp

from answerable import __version__
from answerable.builders import sqlkit
from answerable.builders.counterfactual import query_shapes
from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.text import find_phrase
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import item_id, rng_for
from answerable.pipeline import reject

OFFLINE_DRAFTER = "offline_drafter_v1"
LLM_DRAFTER = "llm_drafter_v1"
"""The two drafters' registered names, recorded in ``provenance.generator``."""


@dataclass(frozen=True)
class Job:
    """One draft to make: a category for a parent item, ``sample``-th of its kind."""

    parent: dict
    category: str
    sample: int
    focus: str | None = None
    seed: int = 0  # the model request's seed: prompts shared by two jobs still differ

    @property
    def db_id(self) -> str:
        return self.parent["db_id"]

    @property
    def key(self) -> str:
        """A name for the job in seeds and reports."""
        return f"{self.parent['id']}/{self.category}/{self.sample}"


@dataclass(frozen=True)
class Draft:
    """A drafted question and what makes it problematic.

    ``derived`` says the text was made from the parent's question or SQL (then the
    parent goes into provenance); ``details`` are extra trigger fields (the missing
    column's table, the out-of-scope task ...).
    """

    job: Job
    question: str
    trigger: str
    generator: str
    rationale: str = ""
    subtype: str | None = None
    spans: tuple[dict, ...] = ()
    details: dict = field(default_factory=dict)
    derived: bool = True
    transform: str | None = None
    model: str | None = None
    prompt_hash: str | None = None

    @property
    def category(self) -> str:
        return self.job.category

    @property
    def parent_id(self) -> str | None:
        return self.job.parent["id"] if self.derived else None

    @property
    def id(self) -> str:
        return item_id(self.job.db_id, self.question, None)


def main_table(parent: dict) -> str | None:
    """The first table the parent's SQL reads (its FROM), or None."""
    return _first_table(parent["sql"], parent.get("dialect", "sqlite"))


@lru_cache(maxsize=4096)
def _first_table(sql: str, dialect: str) -> str | None:
    """The first table of the query, found once per shape (see
    :mod:`answerable.builders.counterfactual.query_shapes`): a templated parent's SQL differs
    from its template's others in its values only, which take no part in its tables
    when each became one literal of the parse (else the query is parsed itself)."""
    try:
        tokens = query_shapes.sql_tokens(sql, dialect)
    except SQLError:
        return None
    key = (dialect, query_shapes.shape_of(tokens))
    if key in _FIRST_TABLES:
        return _FIRST_TABLES[key]
    try:
        tree = sqlkit.parse(sql, dialect)
    except SQLError:
        return None
    table = tree.find(exp.Table)
    name = table.name if table is not None else None
    if query_shapes.values_only_in_literals(tree, tokens):
        if len(_FIRST_TABLES) >= FIRST_TABLES_KEPT:
            _FIRST_TABLES.clear()  # a full memo starts again: one more parse per shape
        _FIRST_TABLES[key] = name
    return name


FIRST_TABLES_KEPT = 1024  # shapes, as shapes.SHARED_LIMIT: a build has a few hundred
_FIRST_TABLES: dict[tuple, str | None] = {}  # this process's first table by query shape


def plan_jobs(parents: list[dict], categories: list[str], per_item: int, seed: int) -> list[Job]:
    """Every job for ``parents`` (answerable items), in a fixed order."""
    jobs = []
    for parent in sorted(parents, key=lambda p: p["id"]):
        table = main_table(parent)
        for name in categories:
            for sample in range(per_item):
                focus = _focus(name, table, parent, sample, seed)
                key = f"{parent['id']}/{name}/{sample}"
                jobs.append(Job(parent, name, sample, focus, _request_seed(seed, key)))
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


def job_reject(job: Job, generator: str, reason: str, detail: str) -> dict:
    """The rejects-report line of a job that gave no draft."""
    return reject(
        job.parent["id"],
        generator,
        reason,
        detail,
        db_id=job.db_id,
        category=job.category,
        sample=job.sample,
    )


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


def item_draft(item: dict, parent: dict) -> Draft:
    """The draft ``item`` was made from (:func:`draft_item` read backwards), with
    ``parent`` its anchor: what a check reads of it (the text, trigger, details, subtype,
    category and parent). The spans and rationale are not kept in the item."""
    provenance, trigger = item["provenance"], item["trigger"]
    params = provenance["params"]
    return Draft(
        Job(parent, item["category"], params["sample"], params.get("focus")),
        item["question"],
        trigger["text"],
        provenance["generator"],
        subtype=item["subtype"],
        details={k: v for k, v in trigger.items() if k not in ("kind", "text")},
        derived=provenance["parent"] is not None,
        transform=params.get("transform"),
        model=provenance["model"],
        prompt_hash=provenance["prompt_hash"],
    )
