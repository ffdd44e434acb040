"""template_v1: expand templates into verified question/SQL pairs with gold results.

For each template, value sets are drawn from its database (see :mod:`.values`); each
becomes a question (through the paraphrase hook) and a SQL text (through the tree, see
:mod:`.writing`), and is executed on a read-only connection. A pair is kept when its
result is non-empty, not all NULL and within the row cap; every other expansion is a
reject with its reason (``empty-result``, ``null-result``, ``too-many-rows``,
``timeout``, ``duplicate``, ``unrepresentable-value`` ...). A template keeps the first
``quota`` pairs of its draw order that pass, trying at most ``quota * attempts`` draws.

The draws of a template are cut into segments that worker processes execute in any
order; a template's output is then read off its segments in draw order, as if one
process had gone through them one by one. So the output never depends on the number
of workers or on the scheduling.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from itertools import islice
from math import ceil
from typing import Any

from sqlglot import exp

from answerable.backends.local import worker_ignores_interrupts
from answerable.builders import sqlkit
from answerable.builders.executor import Limits, ReadOnlyDatabase, Result
from answerable.builders.items import plain_item
from answerable.builders.sqlkit.describe import _is_number_or_date  # what Threshold counts
from answerable.builders.templates.model import GENERATOR, Template, template_reject
from answerable.builders.templates.paraphrase import OFFLINE, Paraphraser
from answerable.builders.templates.problems import TemplateError
from answerable.builders.templates.values import decode, domains_of, product_size, shuffled
from answerable.builders.templates.writing import (
    SQLWriter,
    bound_value,
    fill_answer,
    fill_question,
    text_placeholders,
)
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import canonical_json, item_id, rng_for
from answerable.kernel.untrusted_text import control_character
from answerable.pipeline import StepOutput, first_of_each_id, reject

DEFAULT_ANSWER = "{result}"  # a template without an answer text: its result's first values


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
    segment: int = 128  # draws per job sent to a worker

    def signature(self) -> dict:
        """The settings that change the output (the cache key's part)."""
        fields = asdict(self)
        del fields["workers"], fields["segment"]
        return fields


class Expander:
    """Expands one template on one open database, a segment of its draws at a time.

    Building it reads the template's value domains (``TemplateError``/``SQLError`` when
    that fails); :meth:`segment` expands draws ``start`` to ``stop``.
    """

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
        # written straight in the dialect of the engine that runs it (sqlglot's generator)
        self.dialect = getattr(db, "dialect", template.dialect)
        tree = template.tree
        if self.dialect != template.dialect:
            tree = sqlkit.portable(tree.copy(), template.dialect, self.dialect)
        self.writer = SQLWriter(tree, self.dialect)
        # on another engine, the SQL as the template writes it too (provenance as_written)
        self.as_written = (
            SQLWriter(template.tree, template.dialect) if tree is not template.tree else None
        )
        self.ordered = sqlkit.has_order_by(template.tree)
        self.binds = binds_safely(template.tree)
        self.domains = domains_of(template, db, schema)
        self._metas: dict[tuple, dict | SQLError] = {}
        self._kinds: dict[tuple, str] = {}  # (type, value) -> value_kind: values repeat
        self._texts: dict[str, bool] = {}  # question text -> it keeps the placeholders
        self._draws: tuple[int, Iterator[int]] = (-1, iter(()))  # (next draw, the shuffle)

    def segment(self, start: int, stop: int) -> list[dict]:
        """The item or reject of each draw from ``start`` to ``stop`` (fewer at the end)."""
        return [self.expand(decode(self.domains, index)) for index in self.draws(start, stop)]

    def draws(self, start: int, stop: int) -> list[int]:
        """Draws ``start`` to ``stop`` of the template's seeded shuffle. A segment that
        starts where this expander's last one stopped (the usual case: one process
        expands a template's segments in order) goes on from there instead of drawing
        the first ``start`` again, which made a template's time grow with its quota
        squared."""
        at, rest = self._draws
        if at != start:
            rng = rng_for(self.settings.seed, GENERATOR, self.template.id)
            rest = shuffled(product_size(self.domains), rng)
            at = 0
        taken = list(islice(rest, start - at, stop - at))
        self._draws = (start + len(taken), rest)
        return taken

    def expand(self, values: dict[str, Any]) -> dict:
        """The item made from one value set, or its reject."""
        question, sql = None, None
        try:
            question = self.question(values)
            sql = self.writer.sql(values)
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
        kept = self._texts.get(text)
        if kept is None:
            kept = self._texts[text] = sorted(set(text_placeholders(text))) == self.template.names
        if not kept:
            raise TemplateError("paraphrase-lost-placeholder", f"{text!r} changed the placeholders")
        question = fill_question(text, values)
        control = control_character(question)
        if control is not None:  # from a value of the database, or the paraphrase
            raise TemplateError("control-character", f"the question holds {control}")
        return question

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
        key = tuple(self._kind(values[name]) for name in self.writer.names)
        meta = self._metas.get(key)
        if meta is None:
            try:
                meta = sqlkit.analyze(sql, self.schema, self.dialect)
            except SQLError as error:
                meta = error
            self._metas[key] = meta
        if isinstance(meta, SQLError):
            raise meta
        return meta

    def _kind(self, value: Any) -> str:
        """:func:`value_kind`, remembered per value (by type too: 1 and 1.0 and True)."""
        key = (type(value), value)
        kind = self._kinds.get(key)
        if kind is None:
            kind = self._kinds[key] = value_kind(value)
        return kind

    def item(self, values, question: str, sql: str, result: Result, meta: dict) -> dict:
        """The verified item of one pair, with its answer text (the template's ``answer``
        filled, else the result's first values) and the template's tags."""
        template = self.template
        record = result.to_record()
        item = plain_item(
            template.db_id,
            question,
            sql,
            result=record,
            sql_meta=meta,
            dialect=self.dialect,
            provenance={
                "generator": GENERATOR,
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
        )
        item["answer"] = fill_answer(template.record.get("answer", DEFAULT_ANSWER), values, record)
        item["provenance"]["params"]["answered_by"] = "template"
        if self.as_written is not None:
            written = {"dialect": template.dialect, "sql": self.as_written.sql(values)}
            item["provenance"]["params"]["as_written"] = written
        if template.record.get("tags"):
            item["tags"] = list(template.record["tags"])
        return item

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
    return "quantity" if _is_number_or_date(str(value)) else "text"


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
    quotas = {template.id: quota} if quota else None
    return expand_templates([template], {template.db_id: ref}, settings, quotas, paraphraser)


@dataclass
class Plan:
    """One template's expansion: which draws were asked for and what came back."""

    template: Template
    ref: Any
    quota: int
    budget: int  # at most this many draws
    results: dict[int, list[dict]] = field(default_factory=dict)  # start -> made, in order
    asked: int = 0
    failure: dict | None = None
    exhausted: bool = False

    def next_ranges(self, size: int) -> list[tuple[int, int]]:
        """The draw ranges to run next: enough, at the success rate so far, to fill the
        quota, cut into segments of ``size``; none when done."""
        made = [m for start in sorted(self.results) for m in self.results[start]]
        kept = sum("reason" not in m for m in made)
        if self.failure or self.exhausted or kept >= self.quota or self.asked >= self.budget:
            return []
        rate = kept / len(made) if made else 1.0
        want = min(self.budget - self.asked, ceil((self.quota - kept) / max(rate, 0.05)))
        ranges = [
            (start, min(start + size, self.asked + want))
            for start in range(self.asked, self.asked + want, size)
        ]
        self.asked += want
        return ranges

    def take(self, start: int, stop: int, made: list[dict] | dict) -> None:
        """Record a segment's output (a dict is the template's own reject)."""
        if isinstance(made, dict):
            self.failure = made
            return
        self.results[start] = made
        self.exhausted = self.exhausted or len(made) < stop - start

    def output(self) -> StepOutput:
        """The first ``quota`` pairs in draw order, and the rejects met before them."""
        out, seen = StepOutput(), set()
        if self.failure:
            out.rejects.append(self.failure)
            return out
        for start in sorted(self.results):
            for made in self.results[start]:
                if len(out.items) >= self.quota:
                    return out
                if "reason" in made:
                    out.rejects.append(made)
                elif made["id"] in seen:
                    out.rejects.append(_duplicate(made, made["provenance"]["external_id"]))
                else:
                    seen.add(made["id"])
                    out.items.append(made)
        return out


def expand_templates(
    templates: list[Template],
    databases: dict,
    settings: Settings,
    quotas: dict[str, int] | None = None,
    paraphraser: Paraphraser = OFFLINE,
) -> StepOutput:
    """Expand every template over ``databases`` ({db_id: DatabaseRef}), in
    ``settings.workers`` processes; the output is the same for any number of them."""
    out, plans = StepOutput(), []
    for template in sorted(templates, key=lambda t: t.id):
        ref = databases.get(template.db_id)
        if ref is None or not ref.runs:
            reason = "unknown-database" if ref is None else "no-database-file"
            detail = f"database {template.db_id!r} is not loaded, or has no file to run on"
            out.rejects.append(template_reject(template.record, reason, detail, template.source))
            continue
        quota = (quotas or {}).get(template.id) or template.quota or settings.quota
        plans.append(Plan(template, ref, quota, quota * settings.attempts))
    with Workers(settings.workers) as run:
        while jobs := [
            (
                index,
                plan.template.record,
                plan.template.source,
                plan.ref,
                settings,
                paraphraser,
                start,
                stop,
            )
            for index, plan in enumerate(plans)
            for start, stop in plan.next_ranges(settings.segment)
        ]:
            for index, start, stop, made in run(jobs):
                plans[index].take(start, stop, made)
    for plan in plans:
        out.extend(plan.output())
    return drop_repeats(out)


class Workers:
    """Runs segment jobs here (one worker) or in a pool of processes, in any order."""

    def __init__(self, count: int):
        self.count, self.pool = count, None

    def __enter__(self):
        if self.count > 1:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            self.pool = context.Pool(self.count, initializer=worker_ignores_interrupts)
        return self.run

    def run(self, jobs: list[tuple]):
        if self.pool is None:
            return map(run_segment, jobs)
        return self.pool.imap_unordered(run_segment, jobs)

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
        close_expanders()


_EXPANDERS: dict[tuple, Expander | dict] = {}
# (process, where, file state, limits) -> this process's open database; see kept_open
_DATABASES: dict[tuple, ReadOnlyDatabase] = {}
_KEPT_BY: int | None = None  # the process inside a kept_open block, if any


@contextlib.contextmanager
def kept_open():
    """Within the block, the databases this process opens to expand templates stay open
    from one :func:`expand_templates` call to the next (one connection per source, file
    state and limits), so that expanding templates one call or one shard at a time
    does not reconnect each time (a DuckDB file takes tens of milliseconds to open, a
    server a round trip or more); they are closed when the block ends.

    Every statement still runs as the engine runs it alone (its own read-only
    transaction or gate, its time limit). A process forked inside the block closes its
    own connections after each call, as outside, and never touches its parent's.
    """
    global _KEPT_BY
    outer, _KEPT_BY = _KEPT_BY, os.getpid()
    try:
        yield
    finally:
        _KEPT_BY = outer
        if outer != os.getpid():
            close_databases()


def run_segment(job: tuple) -> tuple[int, int, int, list[dict] | dict]:
    """Expand draws ``start`` to ``stop`` of one template, reusing this process's
    expander of the template (its domains are read once per process)."""
    index, record, source, ref, settings, paraphraser, start, stop = job
    key = (record["id"], ref.key, settings, paraphraser.name)
    expander = _EXPANDERS.get(key)
    if expander is None:
        expander = _EXPANDERS[key] = _expander(Template(record, source), ref, settings, paraphraser)
    if isinstance(expander, dict):
        return index, start, stop, expander
    return index, start, stop, expander.segment(start, stop)


def _expander(template: Template, ref, settings: Settings, paraphraser) -> Expander | dict:
    try:
        limits = Limits(settings.timeout_s, settings.keep_rows)
        key = (os.getpid(), ref.key, _file_state(ref.path), limits)
        db = _DATABASES.get(key)
        if db is None:
            db = _DATABASES[key] = ref.open(limits)
        return Expander(template, db, ref.schema, settings, paraphraser)
    except (TemplateError, SQLError) as error:
        return template_reject(template.record, error.reason, str(error), template.source)


def _file_state(path) -> tuple | None:
    """What tells a file rewritten in place from the one a kept connection opened."""
    if path is None:
        return None
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


def close_expanders() -> None:
    """Forget this process's expanders; close their database connections unless a
    :func:`kept_open` block of this process keeps them."""
    _EXPANDERS.clear()
    if os.getpid() != _KEPT_BY:
        close_databases()


def close_databases() -> None:
    """Close this process's database connections. A forked process's copies of its
    parent's are left as they are: closing one would end the parent's session."""
    for key in [key for key in _DATABASES if key[0] == os.getpid()]:
        _DATABASES.pop(key).close()


def _duplicate(item: dict, first: str) -> dict:
    return reject(
        item["id"],
        GENERATOR,
        "duplicate",
        f"same pair as template {first}",
        template=item["provenance"]["external_id"],
        db_id=item["db_id"],
        question=item["question"],
        sql=item["sql"],
    )


def drop_repeats(output: StepOutput) -> StepOutput:
    """Keep the first item of each id (templates in id order); later ones become rejects."""
    kept = unique_pairs(output)
    kept.items = list(kept.items)  # read first: the repeats' rejects come with it
    return StepOutput(kept.items, list(kept.rejects))


def unique_pairs(output: StepOutput) -> StepOutput:
    """:func:`drop_repeats` as a stream read once (the template stage's merge of its
    shards: only the ids are held)."""
    return first_of_each_id(output, _duplicate, lambda item: item["provenance"]["external_id"])
