"""Jobs (what to draft) and drafts (what came back), and drafts turned into items.

A job is one (parent item, category, sample): every category is drafted ``per_item``
times for every answerable item. The categories that rewrite a question show the
model the parent; the others get a focus instead (the parent's main table, or a
small-talk topic), so that drafts for different parents differ. Either drafter, the
LLM or the offline rules, turns a job into a :class:`Draft`;
:func:`.per_category.draft_item` makes the schema-valid item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.counterfactual import query_shapes
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import item_id
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
    table: str | None = None  # the parent's main table, when the job's planner knew it

    @property
    def main_table(self) -> str | None:
        """The first table the parent's SQL reads (:func:`main_table`), as planned."""
        return self.table or main_table(self.parent)

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


def item_draft(item: dict, parent: dict) -> Draft:
    """The draft ``item`` was made from (:func:`.per_category.draft_item` read backwards), with
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
