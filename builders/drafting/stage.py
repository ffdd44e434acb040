"""The two build stages of drafting (their steps: :mod:`.step`), and the recipe section
that turns them on.

``drafting`` drafts every configured category for every answerable item built so far,
with the model when an endpoint is configured (``drafting.llm.base_url`` or
``OPENAI_BASE_URL``) and with the offline rules otherwise; checks each draft, drops
near-duplicates, and returns the kept drafts as items. ``candidates`` then gives every
item its candidate SQL and SCARE stratum. Both are cached steps; model replies are
also cached one by one (``<workdir>/llm/replies.sqlite``), so a killed build, rerun,
sends only the requests that had not come back.
"""

from __future__ import annotations

import bisect
import copy
import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from answerable.builders.drafting import candidates as sql_candidates
from answerable.builders.drafting.cache import ReplyCache
from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.checks import Failure, NearDuplicates, near_synonym
from answerable.builders.drafting.context import (
    DatabaseContext,
    ForeignQuestion,
    foreign_columns,
    load_context,
)
from answerable.builders.drafting.drafts import (
    LLM_DRAFTER,
    Draft,
    item_draft,
    job_reject,
    main_table,
)
from answerable.builders.drafting.offline import GENERATOR as OFFLINE_DRAFTER
from answerable.builders.drafting.offline import unlinked_questions
from answerable.builders.drafting.per_category import (
    check_draft,
    draft_item,
    draft_offline,
    make_twin,
    plan_jobs,
)
from answerable.builders.drafting.prompts import schema_text
from answerable.builders.drafting.settings import LLMSettings, Usage
from answerable.builders.drafting.text import name_words
from answerable.builders.drafting.twins import GENERATOR as TWIN_GENERATOR
from answerable.builders.drafting.twins import TwinQueries, twin_example, twin_item
from answerable.builders.schema import DatabaseSchema
from answerable.builders.seeds import SqlChecks, Unverified, in_engine_dialect, verified_many
from answerable.builders.sources.common import spider_schema, spider_tables
from answerable.builders.sources.ddl import ddl_schema
from answerable.kernel.errors import ConfigError
from answerable.kernel.ids import canonical_json, content_hash, rng_for, sha256_file
from answerable.kernel.records import RUN_ROWS, RowReader, write_jsonl
from answerable.kernel.untrusted_text import redact_url
from answerable.pipeline import (
    BuildContext,
    ItemsSoFar,
    Rejects,
    StepOutput,
    reject,
    with_fields,
)
from answerable.pipeline.shards import (
    PerProcess,
    ShardItems,
    ShardRejects,
    StoredUnits,
    UnitsInPlace,
    run_in_shards,
)

STEP = "drafting"
CANDIDATES_STEP = "candidate_sql"
DEFAULT_THRESHOLD = 0.8
SURFACE_SAME_KIND = "same-kind"
SURFACE_ANY_TABLE = "any-table"


@dataclass(frozen=True)
class DraftingConfig:
    """The recipe's ``drafting`` section, checked, with the model settings resolved."""

    categories: tuple[str, ...]
    per_item: int
    dedup_threshold: float
    candidates_per_item: int
    llm: LLMSettings | None
    rate: float = 1.0
    unrelated_from: tuple[Path, ...] = ()
    candidate_models: tuple[str, ...] = ()  # candidates.models; default: the llm's model
    candidates_batch: int = sql_candidates.DEFAULT_BATCH  # questions per text-to-SQL request
    twin_rate: float = 0.0  # share of offline jobs that make an answerable twin instead
    surface_from: str = SURFACE_SAME_KIND  # or any-table: TrustSQL's column-surface

    @classmethod
    def from_recipe(cls, recipe, env: dict | None = None) -> DraftingConfig | None:
        """The configuration, or None when the recipe has no ``drafting`` section."""
        if "drafting" not in recipe.data:
            return None
        section = recipe.section("drafting")
        llm = llm_settings(recipe, env)
        return cls(
            categories=tuple(section.get("categories") or CATEGORIES),
            per_item=section.get("per_item", 1),
            dedup_threshold=section.get("dedup_threshold", DEFAULT_THRESHOLD),
            candidates_per_item=(section.get("candidates") or {}).get("per_item", 1),
            llm=llm,
            rate=section.get("rate", 1.0),
            unrelated_from=tuple(recipe.resolve(p) for p in section.get("unrelated_from", [])),
            candidate_models=tuple((section.get("candidates") or {}).get("models") or ()),
            candidates_batch=(section.get("candidates") or {}).get(
                "batch", sql_candidates.DEFAULT_BATCH
            ),
            twin_rate=section.get("twin_rate", 0.0),
            surface_from=section.get("surface_from", SURFACE_SAME_KIND),
        )

    def sql_models(self) -> list[LLMSettings]:
        """The settings of each model that writes candidate SQL (none offline)."""
        if self.llm is None:
            return []
        return [replace(self.llm, model=m) for m in self.candidate_models or (self.llm.model,)]

    @property
    def drafter(self) -> str:
        """The generator that drafts: the model's or the offline rules'."""
        return LLM_DRAFTER if self.llm else OFFLINE_DRAFTER

    @property
    def surface_any_kind(self) -> bool:
        """Whether a column-surface attribute may come from a table of any kind."""
        return self.surface_from == SURFACE_ANY_TABLE

    def identity(self) -> dict:
        """What decides the drafts (the step signature): not concurrency, retries or keys."""
        return {
            "categories": list(self.categories),
            "per_item": self.per_item,
            "dedup_threshold": self.dedup_threshold,
            "drafter": self.drafter,
            "llm": self.llm.identity() if self.llm else None,
            **({"rate": self.rate} if self.rate < 1 else {}),
            **({"twin_rate": self.twin_rate} if self.twin_rate and not self.llm else {}),
            **({"surface_from": self.surface_from} if self.surface_any_kind else {}),
            **(
                {"unrelated_from": [sha256_file(p) for p in self.unrelated_from]}
                if self.unrelated_from
                else {}
            ),
        }


def llm_settings(recipe, env: dict | None = None) -> LLMSettings | None:
    """The model endpoint of the recipe (``drafting.llm`` and the environment), or None
    offline; an endpoint without a model name is a configuration error."""
    llm = LLMSettings.from_section(recipe.section("drafting").get("llm") or {}, env)
    if llm is not None and not llm.model:
        raise ConfigError(
            recipe.file,
            "drafting.llm.model",
            f"a model endpoint is configured ({redact_url(llm.base_url)}) but no model is named",
            fix="add drafting.llm.model: the name the server serves the model under",
        )
    return llm


def cache_file(recipe) -> Path:
    """Where model replies are cached: shared by every dataset of the work directory."""
    return recipe.workdir / "llm" / "replies.sqlite"


def answerable_parents(items: Iterable[dict]) -> list[dict]:
    """The items drafts and candidates start from: answerable, with SQL, on a plain database."""
    return [i for i in items if is_answerable_parent(i)]


def is_answerable_parent(item: dict) -> bool:
    """Whether drafts and candidates may start from ``item`` (see :func:`answerable_parents`)."""
    return item["label"] == "answerable" and bool(item.get("sql")) and not item.get("db_variant")


def drafted_parents(items: list[dict], rate: float, seed: int) -> list[dict]:
    """The answerable parents drafts are made from: each kept when its seeded draw is
    below ``rate`` (all at 1), so a parent chosen stays chosen as the pool grows."""
    return list(iter_drafted_parents(items, rate, seed))


def iter_drafted_parents(items: Iterable[dict], rate: float, seed: int) -> Iterator[dict]:
    """:func:`drafted_parents` one at a time, for a stream of items."""
    for item in items:
        if is_answerable_parent(item) and is_drafted(item["id"], rate, seed):
            yield item


def is_drafted(parent_id: str, rate: float, seed: int) -> bool:
    """Whether drafts are made from the answerable parent ``parent_id``: its seeded draw
    is below ``rate`` (always at 1)."""
    return rate >= 1 or rng_for(seed, "drafting-parent", parent_id).random() < rate


def drafting_parents(
    items: Iterable[dict], rate: float, seed: int, folder: Path, find_tables: bool
) -> tuple[UnitsInPlace | StoredUnits, list[str], dict[str, str | None] | None]:
    """The drafted parents as the shards' units (:func:`iter_drafted_parents`' choice),
    their databases in the units' order, and, when ``find_tables``, the main table of
    every answerable parent (:func:`parent_tables`), else None: all from one pass over
    the items' short fields. The units are read where the earlier steps stored them, or
    (items held in memory) written to the step's folder first."""
    databases: dict[str, str] = {}
    tables: dict[str, str | None] | None = {} if find_tables else None
    for item in with_fields(items, *PARENT_FIELDS, "db_id"):
        if not is_answerable_parent(item):
            continue
        if tables is not None:
            tables[item["id"]] = main_table(item)
        if is_drafted(item["id"], rate, seed):
            databases[item["id"]] = item["db_id"]
    places = items.places() if isinstance(items, ItemsSoFar) else None
    if places is not None:
        units = UnitsInPlace(places, databases)
    else:
        chosen = (item for item in items if item["id"] in databases)
        units = StoredUnits(chosen, folder / "shards" / "units.parquet")
    return units, [databases[parent_id] for parent_id in units.ids], tables


def contexts_for(
    ctx: BuildContext,
    db_ids,
    extra: tuple[Path, ...] = (),
    questions: tuple[ForeignQuestion, ...] = (),
    parents: dict[str, list[str]] | None = None,
    surface_any_kind: bool = False,
) -> dict[str, DatabaseContext]:
    """The drafting context of each database, with the column names of the schema files
    ``extra`` (``drafting.unrelated_from``: TrustSQL's column-unrelated, asked for on
    purpose; the build's other databases are not sampled, since a question about a
    patient's shirt number is one no one asks), of ``questions`` those of the other
    databases, its ids in ``parents`` (the parents drafted from, by database), and
    whether a column-surface attribute may come from a table of any kind."""
    schemas = {}
    for path in extra:
        schemas.update({db: s for db, s in schema_files(path).items() if db not in schemas})
    contexts = {}
    for db in sorted(set(db_ids)):
        schema = ctx.schema(db)
        others = tuple(c for c in foreign_columns(db, schemas) if near_synonym(c, schema) is None)
        theirs = tuple(q for q in questions if q.db_id != db)
        mine = tuple(sorted((parents or {}).get(db, ())))
        contexts[db] = load_context(
            db, schema, ctx.database(db), others, theirs, mine, surface_any_kind
        )
    return contexts


def parent_tables(items: Iterable[dict]) -> dict[str, str | None]:
    """The main table (its SQL's first table) of every answerable parent, by id: found
    once for the whole stage, where a shard's jobs (:func:`plan_jobs`) and the
    out-of-domain drafts' topics (:func:`foreign_questions`) read it. Of the build's
    items, only the fields it reads are decoded."""
    return {
        item["id"]: main_table(item)
        for item in with_fields(items, *PARENT_FIELDS)
        if is_answerable_parent(item)
    }


PARENT_FIELDS = ("label", "sql", "db_variant", "dialect")
"""What :func:`parent_tables` reads of an item (and its id)."""


def foreign_questions(
    items: Iterable[dict], tables: dict[str, str | None] | None = None
) -> tuple[ForeignQuestion, ...]:
    """The questions an out-of-domain draft of one database may borrow from another: every
    answerable parent (verified SQL on a plain database), with the noun of its first table
    (``tables``: :func:`parent_tables` of ``items``, found here when not given)."""
    tables = parent_tables(items) if tables is None else tables
    found = []
    for item in with_fields(items, "db_id", "question"):
        if item["id"] in tables:
            table = tables[item["id"]]
            topic = " ".join(name_words(table)) if table else item["db_id"]
            found.append(ForeignQuestion(item["id"], item["db_id"], item["question"], topic))
    return tuple(sorted(found, key=lambda q: (q.db_id, q.item_id)))


def schema_files(path: Path) -> dict[str, DatabaseSchema]:
    """Every schema in a Spider-style ``tables.json``, or the one of a DDL file."""
    if path.suffix.lower() == ".sql":
        return {path.stem: ddl_schema(path, path.stem)}
    tables = spider_tables(path)
    return {db: spider_schema(tables, db, path) for db in sorted(tables)}


# ---- the drafting stage ----------------------------------------------------------------


def draft_offline_in_shards(
    ctx: BuildContext, config: DraftingConfig, so_far: list[dict], folder: Path
) -> StepOutput:
    """:func:`draft_items` with the offline drafter, its jobs in shards (see
    :mod:`answerable.pipeline.shards`): each shard drafts its jobs, then each database's drafts
    go through the pass that drops repeats and checks the rest, in job order (a parent
    is read back from ``parents`` for the check)."""
    seed, categories = ctx.recipe.seed, list(config.categories)
    # the parents stay on disk; a shard of jobs reads its parents back (see UnitsInPlace).
    # Out-of-domain drafts borrow every parent's question and table; without them, a
    # shard finds the tables of its own parents (a rate of 0.005 drafts few of them)
    parents, databases, tables = drafting_parents(
        so_far, config.rate, seed, folder, "out-of-domain" in categories
    )
    borrowed = foreign_questions(so_far, tables) if tables is not None else ()
    by_database = defaultdict(list)
    for parent_id, db in zip(parents.ids, databases, strict=True):
        by_database[db].append(parent_id)
    contexts = contexts_for(
        ctx, databases, config.unrelated_from, borrowed, by_database, config.surface_any_kind
    )
    jobs = [  # (parent, category, sample): plan_jobs' order
        (parent, category, sample)
        for parent in parents.ids
        for category in categories
        for sample in range(config.per_item)
    ]

    checks = TwinVerdicts()  # made before the workers fork: each keeps its own between shards

    def draft(shard: list[tuple]) -> StepOutput:
        wanted = {"/".join(map(str, job)) for job in shard}
        made = plan_jobs(
            parents.load(list(dict.fromkeys(j[0] for j in shard))),
            categories,
            config.per_item,
            seed,
            tables,
        )
        mine = [j for j in made if j.key in wanted]
        drafts, rejects, twins = offline_drafts(ctx, mine, contexts, config.twin_rate, checks)
        return StepOutput([draft_item(draft, seed) for draft in drafts] + twins, rejects)

    drafted = run_in_shards(
        ctx,
        folder,
        STEP,
        jobs,
        draft,
        key=lambda job: "/".join(map(str, job)),
        prepare=lambda: unlinked_once(contexts) if "out-of-domain" in categories else None,
    )
    check = draft_check(contexts, ParentsAhead(parents))
    return without_repeats(
        ctx, drafted, config.dedup_threshold, so_far, folder, Counter(databases), check
    )


class ParentsAhead:
    """A parent by id, read from the stored parents with the ``block`` rows after it:
    the pass that checks a database's drafts asks for their anchors in id order (the
    stored parents' order; the rows between are other databases'), so one read serves
    the next anchors instead of one read for each."""

    def __init__(self, parents: UnitsInPlace | StoredUnits, block: int = 64):
        self.parents, self.block = parents, block
        self._read: dict[str, dict] = {}

    def __call__(self, parent_id: str) -> dict:
        if parent_id not in self._read:
            start = bisect.bisect_left(self.parents.ids, parent_id)
            ids = self.parents.ids[start : start + self.block]
            self._read = {parent["id"]: parent for parent in self.parents.load(ids)}
        return self._read[parent_id]


def unlinked_once(contexts: dict[str, DatabaseContext]) -> None:
    """Each context's foreign questions that do not link to its database (what
    out-of-domain drafts are dealt), worked out here once, before the workers fork, so
    that they share them instead of each working them out again."""
    for context in contexts.values():
        unlinked_questions(context)


def draft_with_model(
    ctx: BuildContext, config: DraftingConfig, so_far: list[dict], folder: Path
) -> StepOutput:
    """The model's drafts as items, after the same pass as the offline drafts (repeats
    dropped, the others checked); a reject for every job without a usable reply and
    every draft that failed."""
    parents = drafted_parents(so_far, config.rate, ctx.recipe.seed)
    databases = (p["db_id"] for p in parents)
    contexts = contexts_for(
        ctx, databases, config.unrelated_from, surface_any_kind=config.surface_any_kind
    )
    jobs = plan_jobs(parents, list(config.categories), config.per_item, ctx.recipe.seed)
    drafts, rejects = llm_drafts(ctx, config, jobs, contexts)
    items = StepOutput([draft_item(draft, ctx.recipe.seed) for draft in drafts], rejects)
    weights = Counter(draft.job.db_id for draft in drafts)
    check = draft_check(contexts, {parent["id"]: parent for parent in parents}.__getitem__)
    return without_repeats(ctx, items, config.dedup_threshold, so_far, folder, weights, check)


def without_repeats(
    ctx: BuildContext,
    drafted: StepOutput,
    threshold: float,
    built: Iterable[dict],
    folder: Path,
    weights: Counter,
    check: Callable[[dict], Failure | None],
) -> StepOutput:
    """The drafted items that repeat no question built so far nor an earlier kept draft
    and pass their ``check`` (:func:`unrepeated_questions`), after the drafting's rejects.

    A draft is only compared with its own database's questions, so each database is a
    shard of its own (:func:`answerable.pipeline.shards.run_in_shards`): the databases are checked
    on every worker at once, and a killed build resumes from the databases done. Each
    database's process reads its drafts and built questions from where they are and
    writes its kept drafts and its repeats' rejects to a file of its own
    (:func:`write_unrepeated`), which the step's writer reads once: no process holds
    them. ``weights`` weighs each database's drafts (their parents do: only the order
    counts), and the heaviest start first, so the last to finish is a light one. The
    step's writer sorts the items by id and the rejects by id and reason, so the order
    of the databases' files does not change a byte.
    """
    step_dir = folder / "shards" / "repeats"  # removed with the step's shards once stored
    files = {db: step_dir / f"{content_hash(db)}.jsonl" for db in weights}

    def unrepeated(shard: list[str]) -> StepOutput:
        for db_id in shard:
            write_unrepeated(drafted.items, threshold, built, db_id, files[db_id], check)
        return StepOutput()  # the shard's file only says that its databases are done

    databases = sorted(weights, key=lambda db: (-weights[db], db))
    size = ctx.execution.shard_size
    run_in_shards(ctx, step_dir, "near-duplicates", databases, unrepeated, str, lambda _db: size)
    kept = [files[db] for db in databases]
    return StepOutput(ShardItems(kept), Rejects(drafted.rejects) + ShardRejects(kept))


def write_unrepeated(
    drafts: Iterable[dict],
    threshold: float,
    built: Iterable[dict],
    db_id: str,
    file: Path,
    check: Callable[[dict], Failure | None],
) -> Path:
    """The pass over the drafts of one database: its kept drafts and its other drafts'
    rejects, in the drafts' order, as the lines of one shard file (see
    :func:`answerable.pipeline.shards.store_shard`), written as they are found."""
    mine = database_drafts(drafts, db_id)
    own = (item for item in with_fields(built, *BUILT_FIELDS) if item["db_id"] == db_id)
    seen = NearDuplicates(threshold, own)
    return write_jsonl(unrepeated_questions(mine, seen, check), file)


BUILT_FIELDS = ("db_id", "question", "provenance")  # what the near-duplicate index reads


def database_drafts(drafts: Iterable[dict], db_id: str) -> Iterator[dict]:
    """The drafts of one database, in order; of stored shards, only its lines are decoded."""
    if isinstance(drafts, ShardItems):  # a line that can be one of its drafts
        drafts = drafts.containing(f'"db_id":{canonical_json(db_id)}')
    return (item for item in drafts if item["db_id"] == db_id)


def draft_check(
    contexts: dict[str, DatabaseContext], parent: Callable[[str], dict]
) -> Callable[[dict], Failure | None]:
    """:func:`~answerable.builders.drafting.per_category.check_draft` of a drafted item: its
    draft made again from the item and its anchor (``parent`` of its id). The drafts
    come in job order, each parent's in a row, so the last anchor looked up is kept (in a
    plain dict: the check travels to Ray's workers by cloudpickle, which cannot carry an
    ``lru_cache`` around a local function). An answerable twin's SQL passed the checks
    of every answerable item; it fails only when it repeats an earlier twin's
    (:class:`~answerable.builders.drafting.twins.TwinQueries`)."""
    last: dict[str, dict] = {}
    twin_queries = TwinQueries()

    def check(item: dict) -> Failure | None:
        if item["label"] == "answerable":
            return twin_queries.check(item)
        anchor_id = item["provenance"]["params"]["anchor"]
        if anchor_id not in last:
            last.clear()
            last[anchor_id] = parent(anchor_id)
        return check_draft(item_draft(item, last[anchor_id]), contexts[item["db_id"]])

    return check


def unrepeated_questions(
    items: Iterable[dict], seen: NearDuplicates, check: Callable[[dict], Failure | None]
) -> Iterator[dict]:
    """The drafted items in order, each as the line of a shard file
    (:func:`answerable.pipeline.shards.store_shard`): ``{"item": item}`` when it repeats no question
    ``seen`` holds nor an earlier kept one and passes its ``check``, else
    ``{"reject": ...}``, one at a time. A draft is not compared with its own parent's
    family (``kin``), also when its text is not the parent's words (a missing-column
    draft, whose parent stays out of its family): a minimal pair is close to its
    parent on purpose.

    A draft that repeats a remembered question is dropped whatever its check says, so
    it is compared first and checked only when it repeats none (most drafts of a
    templated build repeat an earlier text): what is kept and remembered is what
    checking every draft and then dropping the repeats of the ones that passed would
    keep; only the reason of a draft that fails its check and repeats a question
    differs (the first reason found: the repeat)."""
    for item in items:
        kin = frozenset({anchor_of(item)} - {None})
        failure = seen.check(item["db_id"], item["question"], kin) or check(item)
        if failure is not None:
            yield {"reject": drafted_reject(item, *failure)}
            continue
        seen.add(item["db_id"], item["id"], item["question"], kin)
        yield {"item": item}


def anchor_of(item: dict) -> str | None:
    """The answerable item a draft was made from: its parent, else the anchor its job
    recorded (drafts kept out of their parent's family), None for other items."""
    provenance = item["provenance"]
    return provenance.get("parent") or (provenance.get("params") or {}).get("anchor")


@contextmanager
def model_cache(ctx: BuildContext):
    """The reply cache and a usage counter, whose counts go to the build report at exit."""
    usage = Usage()
    try:
        with ReplyCache(cache_file(ctx.recipe)) as cache:
            yield cache, usage
    finally:
        record_usage(ctx, usage)


def llm_drafts(ctx: BuildContext, config, jobs, contexts) -> tuple[list[Draft], list[dict]]:
    """llm_drafter_v1 over every job; a job without a usable reply is a reject."""
    from answerable.builders.drafting.llm import draft_with_llm  # imports openai

    with model_cache(ctx) as (cache, usage):
        return draft_with_llm(jobs, contexts, config.llm, cache, usage)


def offline_drafts(
    ctx: BuildContext, jobs, contexts, twin_rate: float = 0.0, checks: TwinVerdicts | None = None
) -> tuple[list[Draft], list[dict], list[dict]]:
    """offline_drafter_v1 over every job; a job its rule cannot serve is a reject.

    A seeded ``twin_rate`` share of the jobs make an answerable twin of their device
    instead (:mod:`.twins`): ``(drafts, rejects, twin items)``. A job whose device has no
    twin, or whose twin's SQL fails the checks of every answerable item (a reject),
    makes its draft. The twins' SQL is checked all at once (:func:`verified_twins`)."""
    drafts, rejects, twins = [], [], []
    made_twins = verified_twins(ctx, jobs, contexts, twin_rate, checks) if twin_rate else {}
    for job in jobs:
        made = made_twins.get(job.key)
        if isinstance(made, dict) and "reason" in made:
            rejects.append(made)
        elif made:
            twins.append(made)
            continue
        draft = draft_offline(job, contexts[job.db_id], ctx.rng(OFFLINE_DRAFTER, job.key))
        if draft is None:
            rejects.append(job_reject(job, OFFLINE_DRAFTER, "no-transform", "no rule applies"))
        else:
            drafts.append(draft)
    return drafts, rejects, twins


def verified_twins(
    ctx: BuildContext, jobs, contexts, rate: float, checks: TwinVerdicts | None = None
) -> dict[str, dict]:
    """Job key -> the verified twin item of each job drawn for a twin (a seeded draw
    below ``rate``) that has one, or its reject when the twin's SQL fails a check. The
    twins' SQL is checked as a batch (:meth:`TwinVerdicts.verified`: one exchange with
    each database, analyses and verdicts remembered in ``checks``)."""
    made = {}
    for job in jobs:
        if ctx.rng("drafting-twin", job.key).random() >= rate:
            continue
        rng = ctx.rng(TWIN_GENERATOR, job.key)
        twin = make_twin(job, contexts[job.db_id], rng, ctx.database(job.db_id))
        if twin is not None:
            made[job.key] = twin
    checks = checks or TwinVerdicts()
    verdicts = checks.verified([twin_example(twin) for twin in made.values()], ctx)
    return {
        key: twin_outcome(ctx, twin, verdict)
        for (key, twin), verdict in zip(made.items(), verdicts, strict=True)
    }


class TwinVerdicts:
    """What checking the twins' SQL remembers between a process's shards: each
    database's analyses per shape (:class:`~answerable.builders.seeds.SqlChecks`) and
    each verdict by database, dialect and SQL text. The twins of templated parents
    often write the same SQL (the rows of one table holding one value), and a verdict
    depends on those three alone: a later twin takes the first one's, with its own
    example, instead of its SQL being analyzed and run again. At most ``limit``
    verdicts are kept: a full memo starts again empty (one more check per text)."""

    def __init__(self, limit: int = 4096):
        self.checks, self.limit = SqlChecks(), limit
        self._verdicts: dict[tuple, tuple | Unverified] = {}

    def verified(self, examples: list[dict], ctx: BuildContext) -> list:
        """:func:`~answerable.builders.seeds.verified_many` of ``examples``: each
        verdict, the texts not met before checked as one batch."""
        if len(self._verdicts) >= self.limit:
            self._verdicts.clear()
        keys = [(e["db_id"], e.get("dialect", "sqlite"), e["sql"]) for e in examples]
        new: dict[tuple, dict] = {}
        for key, example in zip(keys, examples, strict=True):
            if key not in self._verdicts:
                new.setdefault(key, example)
        found = verified_many(list(new.values()), ctx, self.checks)
        self._verdicts.update(zip(new, found, strict=True))
        return [self._own(self._verdicts[k], e, ctx) for k, e in zip(keys, examples, strict=True)]

    @staticmethod
    def _own(verdict: tuple | Unverified, example: dict, ctx: BuildContext):
        """``verdict`` for ``example``: a failure as it is (only its reason and detail
        are read), a verified triple with the example in the engine's dialect and its
        own copies of the result and ``sql_meta``."""
        if isinstance(verdict, Unverified):
            return verdict
        checked, result, sql_meta = verdict
        if checked is not example:
            checked = in_engine_dialect(example, ctx.database(example["db_id"]))
        return checked, copy.deepcopy(result), copy.deepcopy(sql_meta)


def twin_outcome(ctx: BuildContext, twin, verdict) -> dict:
    """The twin's item, or its job's reject when its SQL failed a check (``verdict``:
    see :func:`~answerable.builders.seeds.verified_many`)."""
    if isinstance(verdict, Unverified):
        return job_reject(twin.job, TWIN_GENERATOR, verdict.reason, verdict.detail)
    return twin_item(twin, *verdict, ctx.recipe.seed)


def drafted_reject(item: dict, reason: str, detail: str) -> dict:
    """The rejects-report line of a drafted item (its draft failed a check or repeats
    a question); an answerable twin has no trigger."""
    return reject(
        item["id"],
        item["provenance"]["generator"],
        reason,
        detail,
        db_id=item["db_id"],
        category=item["category"],
        question=item["question"],
        trigger=item["trigger"]["text"] if item.get("trigger") else None,
        parent=item["provenance"]["params"]["anchor"],
    )


def record_usage(ctx: BuildContext, usage: Usage) -> None:
    """Add a stage's token accounting to the build report's ``llm`` section."""
    report = ctx.report.setdefault("llm", {})
    for model, counts in usage.to_report().items():
        mine = report.setdefault(model, dict.fromkeys(counts, 0))
        for name, value in counts.items():
            mine[name] += value


# ---- the candidates stage --------------------------------------------------------------


def candidates_identity(config: DraftingConfig) -> dict:
    """What decides the candidates (the step's signature): how many, by which generator
    and models."""
    return {
        "per_item": config.candidates_per_item,
        "generator": sql_candidates.LLM_GENERATOR
        if config.llm
        else sql_candidates.PERTURB_GENERATOR,
        "llm": config.llm.identity() if config.llm else None,
        "models": [m.model for m in config.sql_models()],
        **({"batch": config.candidates_batch} if config.llm else {}),
    }


class ParentSql:
    """Each unit's parent's SQL, when the parent is a unit with SQL: what a problematic
    item's candidate is made from. Kept on disk, a row per unit in the units' order, and
    read back a shard at a time (:meth:`of`), so no process holds every item's SQL."""

    def __init__(self, units: StoredUnits, file: Path):
        self.units = units
        stored = pl.scan_parquet(units.file)
        sqls = stored.select(parent="id", parent_sql="sql").filter(pl.col("parent_sql") != "")
        parents = stored.select(parent=pl.col("provenance").struct.field("parent"))
        found = parents.join(sqls, on="parent", how="left", maintain_order="left").collect()
        found.write_parquet(file, compression="zstd", statistics=False, row_group_size=RUN_ROWS)
        self._reader = PerProcess(functools.partial(RowReader, file, convert=_rows))

    def of(self, shard: list[str]) -> dict[str, dict]:
        """The parents of a shard's units that have SQL, by id, each as ``{"sql": ...}``
        (the lookup :func:`offline_candidates` takes)."""
        rows = self._reader.get().rows(self.units.start(shard), len(shard))
        return {row["parent"]: {"sql": row["parent_sql"]} for row in rows if row["parent_sql"]}


def _rows(table) -> list[dict]:
    return table.to_pylist()


def with_candidates(
    ctx: BuildContext,
    config: DraftingConfig,
    items: list[dict],
    contexts: dict[str, DatabaseContext] | None = None,
    by_id: dict[str, dict] | None = None,
) -> list[dict]:
    """Every item with its ``candidates``, labelled by execution or by the item's label.

    ``by_id`` holds the items a problematic item's parent is looked up in (default:
    ``items``)."""
    contexts = contexts or contexts_for(ctx, (i["db_id"] for i in items))
    if config.llm is not None:
        found = llm_candidates(ctx, config, items, contexts)
    else:
        found = offline_candidates(ctx, config, items, contexts, by_id)
    return [
        {
            **item,
            "candidates": [sql_candidates.label(item, c, ctx.item_database(item)) for c in made],
        }
        for item, made in zip(items, found, strict=True)
    ]


def offline_candidates(ctx, config, items, contexts, by_id=None) -> list[list[dict]]:
    """perturb_sql_v1: perturbations of the gold SQL; a problematic item gets its parent's
    (looked up in ``by_id``, by default ``items``)."""
    by_id = by_id if by_id is not None else {i["id"]: i for i in items}
    found = []
    for item in items:
        if item["label"] == "answerable" and item.get("sql") and not item.get("db_variant"):
            rng = ctx.rng(sql_candidates.PERTURB_GENERATOR, item["id"])
            context = contexts[item["db_id"]]
            found.append(
                sql_candidates.perturbed_candidates(
                    item["sql"],
                    context,
                    rng,
                    config.candidates_per_item,
                    item.get("dialect", "sqlite"),
                )
            )
            continue
        parent = by_id.get((item.get("provenance") or {}).get("parent") or "")
        sql = (parent or {}).get("sql") or item.get("sql")
        edit = "parent_sql" if (parent or {}).get("sql") else "own_sql"
        found.append(
            [sql_candidates.candidate(sql, sql_candidates.PERTURB_GENERATOR, edit=edit)]
            if sql
            else []
        )
    return found


def llm_candidates(ctx, config, items, contexts) -> list[list[dict]]:
    """llm_sql_v1: ``candidates.per_item`` samples per item from each model of
    ``candidates.models``, asked ``candidates.batch`` questions of one database a request
    (:func:`~answerable.builders.drafting.llm.sql_with_llm`)."""
    from answerable.builders.drafting.llm import sql_with_llm  # imports openai

    schemas = {db: schema_text(context) for db, context in contexts.items()}
    with model_cache(ctx) as (cache, usage):
        return sql_with_llm(
            items,
            schemas,
            config.sql_models(),
            config.candidates_per_item,
            config.candidates_batch,
            cache,
            usage,
        )
