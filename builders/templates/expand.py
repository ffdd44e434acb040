"""template_v1: expand templates into verified question/SQL pairs with gold results.

For each template, value sets are drawn from its database (see :mod:`.values`); each
becomes a question (through the paraphrase hook) and a SQL text (through the tree, see
:mod:`.writing`), and is executed on a read-only connection. A pair is kept when its
result is non-empty, not all NULL and within the row cap; every other expansion is a
reject with its reason (``empty-result``, ``null-result``, ``too-many-rows``,
``timeout``, ``duplicate``, ``unrepresentable-value`` ...). A template stops at its
quota of kept pairs, or after ``quota * attempts`` tries.

Templates are independent (each has its own random generator, from the recipe seed and
the template id), so they run in parallel processes and the merged output, in template
order and then sorted by id, does not depend on the scheduling.
"""

from __future__ import annotations

import multiprocessing
import re
from dataclasses import asdict, dataclass
from itertools import islice
from typing import Any

from sqlglot import exp

from answerable import __version__
from answerable.builders import sqlkit
from answerable.builders.executor import Limits, ReadOnlyDatabase, Result
from answerable.builders.templates.model import GENERATOR, Template, template_reject
from answerable.builders.templates.paraphrase import OFFLINE, Paraphraser
from answerable.builders.templates.problems import TemplateError
from answerable.builders.templates.values import domains_of, draws
from answerable.builders.templates.writing import (
    SQLWriter,
    bound_value,
    fill_question,
    text_placeholders,
)
from answerable.errors import SQLError
from answerable.ids import canonical_json, item_id, rng_for
from answerable.pipeline import StepOutput, reject

QUANTITY_TEXT = re.compile(
    r"\s*[-+]?\d+(\.\d*)?([eE][-+]?\d+)?\s*|\d{4}(-\d{2}(-\d{2})?)?([ T].*)?"
)


@dataclass(frozen=True)
class Settings:
    """How templates are expanded. ``workers`` only changes how fast, never the output."""

    seed: int = 0
    quota: int = 10  # kept pairs per template that sets no quota of its own
    row_cap: int = 100  # a result with more rows is rejected (too-many-rows)
    attempts: int = 4  # at most quota * attempts expansions are tried per template
    timeout_s: float = 2.0
    keep_rows: int = 100  # rows of each result stored on the item
    workers: int = 1

    def signature(self) -> dict:
        """The settings that change the output (the cache key's part)."""
        fields = asdict(self)
        fields.pop("workers")
        return fields


class Expander:
    """Expands one template on one open database; :meth:`run` gives its output."""

    def __init__(
        self,
        template: Template,
        db: ReadOnlyDatabase,
        schema,
        settings: Settings,
        paraphraser: Paraphraser = OFFLINE,
    ):
        self.template, self.db, self.schema = template, db, schema
        self.settings, self.paraphraser = settings, paraphraser
        self.writer = SQLWriter(template.tree, template.dialect)
        self.ordered = sqlkit.has_order_by(template.tree)
        self.binds = binds_safely(template.tree)
        self._metas: dict[tuple, dict | SQLError] = {}
        self._seen: set[tuple[str, str]] = set()

    def run(self, quota: int) -> StepOutput:
        """Up to ``quota`` verified pairs, and a reject for every other expansion tried."""
        out = StepOutput()
        domains = domains_of(self.template, self.db, self.schema)
        rng = rng_for(self.settings.seed, GENERATOR, self.template.id)
        for values in islice(draws(domains, rng), quota * self.settings.attempts):
            made = self.expand(values)
            (out.rejects if "reason" in made else out.items).append(made)
            if len(out.items) >= quota:
                break
        return out

    def expand(self, values: dict[str, Any]) -> dict:
        """The item made from one value set, or its reject."""
        question, sql = None, None
        try:
            question = self.question(values)
            sql = self.writer.sql(values)
            if (question, sql) in self._seen:
                raise TemplateError("duplicate", "same question and SQL as an earlier pair")
            self._seen.add((question, sql))
            result = self.execute(sql, values)
            meta = self.meta(sql, values)
        except (TemplateError, SQLError) as error:
            return self.reject(values, question, sql, error.reason, str(error))
        return self.item(values, question, sql, result, meta)

    def question(self, values: dict[str, Any]) -> str:
        """The question of one expansion: the paraphraser's choice, filled with the values."""
        key = f"{self.template.id}\x1f{canonical_json(values)}"
        rng = rng_for(self.settings.seed, f"{GENERATOR}.question", key)
        text = self.paraphraser.paraphrase(self.template.questions[0], self.template, rng)
        if sorted(set(text_placeholders(text))) != self.template.names:
            raise TemplateError("paraphrase-lost-placeholder", f"{text!r} changed the placeholders")
        return fill_question(text, values)

    def execute(self, sql: str, values: dict[str, Any]) -> Result:
        """Run the pair and check its result: non-empty, not all NULL, within the cap."""
        if self.binds:
            params = {name: bound_value(values[name]) for name in self.writer.names}
            result = self.db.execute(self.writer.param_sql, params, ordered=self.ordered)
        else:
            result = self.db.execute(sql, ordered=self.ordered)
        if result.row_count == 0:
            raise TemplateError("empty-result", "the SQL returns no rows")
        if result.row_count > self.settings.row_cap:
            raise TemplateError(
                "too-many-rows",
                f"{result.row_count} rows, above the cap of {self.settings.row_cap}",
            )
        if not result.truncated and all(v is None for row in result.rows for v in row):
            raise TemplateError("null-result", "every value of the result is NULL")
        return result

    def meta(self, sql: str, values: dict[str, Any]) -> dict:
        """``sql_meta``, analyzed once per kind of value set (values do not change it)."""
        key = tuple(value_kind(values[name]) for name in self.writer.names)
        meta = self._metas.get(key)
        if meta is None:
            try:
                meta = sqlkit.analyze(sql, self.schema, self.template.dialect)
            except SQLError as error:
                meta = error
            self._metas[key] = meta
        if isinstance(meta, SQLError):
            raise meta
        return meta

    def item(self, values, question: str, sql: str, result: Result, meta: dict) -> dict:
        """The verified item of one pair."""
        template = self.template
        return {
            "id": item_id(template.db_id, question, sql),
            "db_id": template.db_id,
            "db_variant": None,
            "question": question,
            "sql": sql,
            "dialect": "sqlite",
            "label": "answerable",
            "category": None,
            "result": result.to_record(),
            "sql_meta": meta,
            "provenance": {
                "generator": GENERATOR,
                "tool_version": __version__,
                "source": template.source,
                "external_id": template.id,
                "params": {
                    "template": template.id,
                    "values": values,
                    "paraphraser": self.paraphraser.name,
                    "verified_by": "execution",
                },
                "seed": self.settings.seed,
                "parent": None,
            },
        }

    def reject(self, values, question, sql, reason: str, detail: str) -> dict:
        """The rejects-report line of one expansion."""
        template = self.template
        record_id = item_id(template.db_id, question, sql) if question and sql else None
        return reject(
            record_id,
            GENERATOR,
            reason,
            detail,
            template=template.id,
            db_id=template.db_id,
            question=question,
            sql=sql,
            values=values,
        )


def value_kind(value: Any) -> str:
    """What about a value can change ``sql_meta``: NULL, number, quantity-like text, text."""
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "number"
    return "quantity" if QUANTITY_TEXT.fullmatch(str(value)) else "text"


def binds_safely(tree: exp.Expr) -> bool:
    """Whether running with bound parameters is the same as running the filled SQL.

    It is not when a placeholder is a bare ``ORDER BY``/``GROUP BY`` term (a literal
    number there is a column position) or sits in a projection without an alias (the
    result's column name is the expression's text).
    """
    for node in tree.find_all(exp.Placeholder):
        if isinstance(node.parent, (exp.Ordered, exp.Group)):
            return False
        for ancestor in _ancestors(node):
            projection = (
                isinstance(ancestor.parent, exp.Select) and ancestor.arg_key == "expressions"
            )
            if projection and not isinstance(ancestor, exp.Alias):
                return False
    return True


def _ancestors(node: exp.Expr):
    while node.parent is not None:
        yield node
        node = node.parent


def expand_template(
    template: Template,
    ref,
    settings: Settings,
    quota: int | None = None,
    paraphraser: Paraphraser = OFFLINE,
) -> StepOutput:
    """Expand one template on its database (``ref``: a ``DatabaseRef`` with a file)."""
    quota = quota or template.quota or settings.quota
    try:
        with ReadOnlyDatabase(ref.path, Limits(settings.timeout_s, settings.keep_rows)) as db:
            return Expander(template, db, ref.schema, settings, paraphraser).run(quota)
    except (TemplateError, SQLError) as error:
        failed = StepOutput()
        failed.rejects.append(
            template_reject(template.record, error.reason, str(error), template.source)
        )
        return failed


def expand_templates(
    templates: list[Template],
    databases: dict,
    settings: Settings,
    quotas: dict[str, int] | None = None,
    paraphraser: Paraphraser = OFFLINE,
) -> StepOutput:
    """Expand every template over ``databases`` ({db_id: DatabaseRef}), in parallel when
    ``settings.workers > 1``; the output is the same either way."""
    out, jobs = StepOutput(), []
    for template in sorted(templates, key=lambda t: t.id):
        ref = databases.get(template.db_id)
        if ref is None or ref.path is None:
            problem = "is not loaded" if ref is None else "has no database file to run on"
            out.rejects.append(
                template_reject(
                    template.record,
                    "unknown-database",
                    f"database {template.db_id!r} {problem}",
                    template.source,
                )
            )
            continue
        quota = (quotas or {}).get(template.id)
        jobs.append((template.record, template.source, ref, settings, quota, paraphraser))
    for made in _run(jobs, settings.workers):
        out.extend(made)
    return drop_repeats(out)


def _run(jobs: list[tuple], workers: int):
    if workers <= 1 or len(jobs) <= 1:
        return map(_expand_job, jobs)
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with context.Pool(min(workers, len(jobs))) as pool:
        return pool.map(_expand_job, jobs, chunksize=1)


def _expand_job(job: tuple) -> StepOutput:
    record, source, ref, settings, quota, paraphraser = job
    return expand_template(Template(record, source), ref, settings, quota, paraphraser)


def drop_repeats(output: StepOutput) -> StepOutput:
    """Keep the first item of each id (templates in id order); later ones become rejects.

    Within a template repeats are already rejected; two templates can still meet.
    """
    kept, first = StepOutput(rejects=list(output.rejects)), {}
    for item in output.items:
        template = item["provenance"]["external_id"]
        if item["id"] in first:
            detail = f"same pair as template {first[item['id']]}"
            kept.rejects.append(
                reject(
                    item["id"],
                    GENERATOR,
                    "duplicate",
                    detail,
                    template=template,
                    db_id=item["db_id"],
                    question=item["question"],
                    sql=item["sql"],
                )
            )
            continue
        first[item["id"]] = template
        kept.items.append(item)
    return kept
