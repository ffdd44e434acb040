"""``answerable build``: from a recipe to verified candidates and a release.

The build runs the steps of :data:`STEPS` that the recipe turns on, in order (or the
recipe's ``steps:`` list); each is cached by the runner (:mod:`answerable.pipeline.steps`),
so rerunning a recipe repeats no finished work. Every record crosses a schema check
before it becomes a candidate, and every dropped record lands in the rejects report.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from answerable import __version__
from answerable.annotation.review import (
    ReviewResult,
    holds_release,
    limits_of,
    review_candidates,
    wants_review,
)
from answerable.backends import checked_backend
from answerable.builders.counterfactual import step as counterfactual_step
from answerable.builders.crosscheck import step as crosscheck_step
from answerable.builders.demo import ensure_demo
from answerable.builders.drafting import step as drafting_step
from answerable.builders.engines import export_sources, needs_export
from answerable.builders.engines import variants as engine_variants
from answerable.builders.engines.exports import portable_to_sqlite
from answerable.builders.engines.pinning import server_inputs
from answerable.builders.seeds import step as seed_step
from answerable.builders.sources import load_source, load_sources
from answerable.builders.tagging import iter_tagged
from answerable.builders.templates import check_templates, template_files
from answerable.builders.templates import step as template_step
from answerable.kernel.errors import ConfigError, RecordError
from answerable.kernel.ids import canonical_json, content_hash, sha256_file
from answerable.kernel.progress import SILENT, Progress
from answerable.kernel.recipe import Recipe
from answerable.kernel.records import (
    ItemFiles,
    read_json,
    without_ids,
    write_json,
    write_jsonl,
    write_parquet,
)
from answerable.pipeline import (
    BuildContext,
    Execution,
    ItemsSoFar,
    Rejects,
    StepOutput,
    Workspace,
    reject,
)
from answerable.pipeline.steps import Step, assemble, run_step
from answerable.release.cut.audit import audit, schemas_of
from answerable.release.cut.config import release_config
from answerable.release.cut.earlier import earlier_signature
from answerable.release.cut.guards import guard_rejects
from answerable.release.cut.publish import Release, cut_release
from answerable.release.documents.beside_data import source_licenses
from answerable.release.documents.card import About
from answerable.release.reader import MANIFEST, count_items, read_release_manifest
from answerable.release.verify import check_files
from answerable.schemas import validate

Log = Callable[[str], None]


@dataclass
class BuildReport:
    """What a build made and where it put it."""

    candidates: Path
    rejects: Path
    report: Path
    counts: dict
    reject_counts: dict
    steps: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)  # per step and after; shown, never written
    release: Release | None = None
    review: ReviewResult | None = None


def check_sources(recipe: Recipe) -> tuple[int, int]:
    """Read every source without building: ``(sources read, examples read)``.

    Sources over the demo databases are read only once those exist (``build`` makes them).
    Templates are checked too (their db_ids once every source is read), and so are the
    release settings, the executor backend and the recipe's steps.
    """
    release_config(recipe.section("release"), recipe.file)
    checked_backend(recipe)
    assemble(recipe, STEPS)
    demo_ready = recipe.demo_dir.is_dir()
    specs = [s for s in recipe.data["sources"] if s.get("databases") != "demo" or demo_ready]
    limits = recipe.section("limits")
    read = [load_source(spec, recipe.base, recipe.demo_dir, limits) for spec in specs]
    if "templates" in recipe.data:
        every = len(specs) == len(recipe.data["sources"])
        check_templates(recipe, {db for data in read for db in data.databases} if every else None)
    return len(specs), sum(len(data.examples) for data in read)


def input_files(recipe: Recipe, databases: dict) -> list[dict]:
    """The manifest's inputs: every source file and database file with its sha256, and
    each server source's tables by checksum (:mod:`answerable.builders.engines.pinning`)."""
    paths = {
        recipe.resolve(spec[key])
        for spec in recipe.data["sources"]
        for key in ("path", "tables", "labels")
        if spec.get(key)
    }
    paths |= {ref.path for ref in databases.values() if ref.path is not None}
    paths |= set(template_files(recipe))
    return [
        {"path": _display(recipe, p), "sha256": sha256_file(p)}
        for p in sorted(paths, key=lambda p: _display(recipe, p))
    ] + server_inputs(databases)  # a server's tables, by checksum


def _display(recipe: Recipe, path: Path) -> str:
    path = Path(path).resolve()
    for root, prefix in ((recipe.workdir.resolve(), "<workdir>/"), (recipe.base.resolve(), "")):
        if path.is_relative_to(root):
            return prefix + path.relative_to(root).as_posix()
    return Path(os.path.relpath(path, recipe.base.resolve())).as_posix()


STEPS: tuple[Step, ...] = (
    seed_step.STEP,
    template_step.STEP,
    counterfactual_step.STEP,
    drafting_step.DRAFTING,
    drafting_step.CANDIDATES,
    crosscheck_step.STEP,
)
"""Every step a build can run, in the order it runs them. A step runs when the recipe's
section turns it on; a recipe's ``steps:`` list may choose and order them (checked by
:func:`~answerable.pipeline.steps.assemble`)."""


def check_items(output: StepOutput, progress: Progress = SILENT) -> StepOutput:
    """The schema check before items become candidates: invalid ones become rejects."""
    checked = StepOutput(rejects=list(output.rejects))
    checked.items = list(valid_items(output.items, checked.rejects, progress, len(output.items)))
    return checked


def valid_items(
    items: Iterable[dict], rejects: list[dict], progress: Progress, total: int
) -> Iterator[dict]:
    """The items that pass the schema check, one at a time; a reject added to
    ``rejects`` for each of the others."""
    with progress.task("item checks", total) as task:
        for item in items:
            task.advance()
            try:
                validate("item", item)
            except RecordError as error:
                generator = (item.get("provenance") or {}).get("generator", "unknown")
                rejects.append(reject(item.get("id"), generator, "invalid-item", str(error)))
                continue
            yield item


def finished_items(
    output: StepOutput, databases: dict, file: Path, progress: Progress = SILENT
) -> StepOutput:
    """The stages' items as the build's candidates: tagged (DTE's spans and responses),
    schema-checked and without the items the release guards withdraw (contradictory,
    superseded), written to ``file`` sorted by id and read back from it as they are
    used; the rejects of those checks added to the output's. The items stream from the
    stages' files to ``file``: none is held on the way."""
    rejects = output.rejects if isinstance(output.rejects, Rejects) else Rejects(output.rejects)
    invalid: list[dict] = []
    tagged = iter_tagged(output.items, databases)
    write_parquet(valid_items(tagged, invalid, progress, len(output.items)), file)
    rejects += invalid
    withdrawn = guard_rejects(lambda: ItemFiles([file]))
    if withdrawn:
        rejects += [withdrawn[key] for key in sorted(withdrawn)]  # the file's (id) order
        without_ids(file, set(withdrawn))  # from the stored columns: no item decoded
    return StepOutput(ItemFiles([file]), rejects)


def finished_once(
    workspace: Workspace, output: StepOutput, databases: dict, progress: Progress = SILENT
) -> tuple[StepOutput, dict]:
    """:func:`finished_items` and the candidates' counts, or what an earlier build found
    from the same steps (``steps/candidates-<hash of the steps used>.json``) when the
    candidates file is still the one it wrote: a cached rerun then reads no item."""
    marker = workspace.steps / f"candidates-{content_hash(workspace.served)[:16]}.json"
    file = workspace.candidates
    rejects = output.rejects if isinstance(output.rejects, Rejects) else Rejects(output.rejects)
    if marker.is_file() and file.is_file():
        stored = read_json(marker)
        if stored["sha256"] == workspace.digests.sha256(file):
            rejects += stored["rejects"]
            return StepOutput(ItemFiles([file]), rejects), stored["counts"]
    earlier = len(rejects.parts)
    finished = finished_items(StepOutput(output.items, rejects), databases, file, progress)
    counts = count_items(finished.items.fields("label", "category", "db_id"))
    own = [r for part in rejects.parts[earlier:] for r in part]  # the checks' rejects
    digest = workspace.digests.sha256(file)
    write_json({"sha256": digest, "rejects": own, "counts": counts}, marker)
    return finished, counts


def build(
    recipe: Recipe,
    log: Log = lambda _msg: None,
    release: bool = True,
    progress: Progress = SILENT,
) -> BuildReport:
    """Run the recipe: sources, verification, candidates, rejects report and release.

    ``progress`` shows how far each long step is (see :mod:`answerable.kernel.progress`)."""
    settings = release_config(recipe.section("release"), recipe.file)  # bad settings fail first
    checked_backend(recipe)  # so does a backend that cannot run here
    steps = assemble(recipe, STEPS)  # and a wrong list of steps or a step's section
    with workdir_lock(recipe.workdir / recipe.dataset):
        return _run(recipe, log, release, progress, settings, steps)


@contextmanager
def workdir_lock(root: Path) -> Iterator[None]:
    """One build at a time in a dataset's work folder: a second one is refused at once
    (two builds there would replace each other's step outputs)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK_FILE, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                root,
                None,
                "another build is running in this work folder",
                fix="wait for it to finish, or give this one another workdir",
            ) from None
        yield


LOCK_FILE = "build.lock"


def _run(recipe: Recipe, log: Log, release: bool, progress: Progress, settings, steps):
    """The build itself, under the work folder's lock (see :func:`build`)."""
    if "demo" in recipe.data:
        ensure_demo(recipe, log)
    workspace = Workspace(recipe.workdir, recipe.dataset)
    loaded = load_sources(recipe)
    log(
        f"loaded {len(loaded.examples)} examples over {len(loaded.databases)} databases "
        f"from {len(recipe.data['sources'])} sources"
    )
    for note in loaded.notes:
        log(note)
    limits = limits_of(recipe)
    inputs = input_files(recipe, loaded.databases)
    ctx = BuildContext(recipe, loaded.databases, limits, workspace, loaded.examples, inputs)
    ctx.execution, ctx.progress = Execution.from_recipe(recipe), progress
    so_far, lines, seconds = ItemsSoFar(), {}, {}  # the steps' items stay on disk
    output = StepOutput(so_far, Rejects(loaded.rejects))  # stored steps' stay on disk
    try:
        for step in steps:
            started = time.perf_counter()
            made, cached = run_step(step, ctx, so_far)
            seconds[step.name] = time.perf_counter() - started
            lines[step.name] = _step_line(made, cached, log, step.name)
            so_far.add(made.items)
            if step.withdraws:  # its rejects are items made before it
                so_far.withdraw(r["id"] for r in made.rejects)
            output.rejects += made.rejects
    finally:
        ctx.close()
        engine_variants.drop_variants(ctx.databases)  # server variant schemas
    started = time.perf_counter()
    output, counts = finished_once(workspace, output, ctx.databases, progress)
    seconds["checks"] = time.perf_counter() - started  # validation, guard, candidates file
    released, review = output.items, None
    if wants_review(recipe):
        candidates = list(output.items)  # a reviewed build is the size people can review
        review = review_candidates(recipe, candidates, ctx.databases, workspace.reports, log)
        output.rejects += review.rejects()
        released = review.outcome.accepted
    exported = {}  # DuckDB and server databases as the SQLite files a release ships
    if release and any(map(needs_export, ctx.databases.values())):
        exported = export_sources(released, ctx.databases, workspace.root / "exports")
        released, unportable = portable_to_sqlite(released, exported)
        output.rejects += unportable
    started = time.perf_counter()
    ctx.report["audit"] = workspace.cached_report(  # cached
        "audit", lambda: audit(output.items, schemas_of(ctx.databases), seed=recipe.seed)
    )
    report = _write_outputs(workspace, output, counts, lines, recipe, ctx.report)
    seconds["audit"] = time.perf_counter() - started
    report.review, report.seconds = review, seconds
    if release and (review is None or not review.awaiting or not holds_release(recipe)):
        started = time.perf_counter()
        report.release = release_of(recipe, ctx, released, review, settings, exported)
        seconds["release"] = time.perf_counter() - started
    workspace.digests.save()
    return report


def release_of(
    recipe: Recipe,
    ctx: BuildContext,
    released: list[dict],
    review: ReviewResult | None,
    settings,
    exported: dict,
) -> Release:
    """The release of ``released``: cut now, or the one an earlier build cut from the
    same items, inputs and recipe when it is still whole (see :func:`published_before`).
    ``exported``: SQLite files made from server sources, by db_id."""
    workspace = ctx.workspace
    about = release_about(recipe, released, review, ctx.report.get("audit"))
    sources = {db_id: ref.path for db_id, ref in ctx.databases.items()} | exported
    key = content_hash(
        [
            workspace.served,
            items_digest(released, workspace.digests.sha256),
            ctx.inputs,
            asdict(about),
            __version__,
            sorted(map(str, sources.items())),
            recipe.signature(),  # the release settings, seed, dataset and version
            vars(ctx.limits),  # recorded in the manifest
            earlier_signature(recipe.out / recipe.dataset, recipe.version, settings),
        ]
    )
    earlier = published_before(workspace, key, recipe)
    if earlier is not None:
        return earlier
    made = cut_release(
        released,
        out=recipe.out,
        dataset=recipe.dataset,
        version=recipe.version,
        seed=recipe.seed,
        recipe_signature=recipe.signature(),
        inputs=ctx.inputs,
        config=settings,
        sources=sources,
        variants=workspace.root / "variants",
        about=about,
        limits=ctx.limits,
    )
    remember_release(workspace, key, made)
    return made


def items_digest(items: Iterable[dict], sha256: Callable[[Path], str] = sha256_file) -> str:
    """The sha256 of the items' canonical JSON, one after another, hashed as they come
    (never the whole list in one string); of items in Parquet files, the files' sha256
    (their bytes depend on the items alone; ``sha256`` says how a file's is known), so
    a cached rerun decodes no item for it."""
    if isinstance(items, ItemFiles):
        return content_hash([sha256(file) for file in items.files])
    digest = hashlib.sha256()
    for item in items:
        digest.update(canonical_json(item).encode() + b"\n")
    return digest.hexdigest()


def published_before(workspace: Workspace, key: str, recipe: Recipe) -> Release | None:
    """The release an earlier build cut from the same items and settings (``key``),
    when its manifest is the one that build wrote and its files still match it: a
    cached rerun then skips cutting it again only to find it unchanged."""
    marker = workspace.steps / f"release-{key[:16]}.json"
    target = recipe.out / recipe.dataset / recipe.version
    if not marker.is_file() or not (target / MANIFEST).is_file():
        return None
    if workspace.digests.sha256(target / MANIFEST) != read_json(marker)["manifest_sha256"]:
        return None
    manifest = read_release_manifest(target)
    if check_files(target, manifest, workspace.digests.sha256):
        return None  # damaged: cut_release says how
    return Release(target, manifest, written=False)


def remember_release(workspace: Workspace, key: str, release: Release) -> None:
    """Note which manifest the release of ``key`` has, for :func:`published_before`, and
    keep the sha256 its manifest lists of each file (just written or checked)."""
    for entry in release.manifest["files"]:
        workspace.digests.adopt(release.path / entry["path"], entry["sha256"])
    digest = workspace.digests.sha256(release.path / MANIFEST)
    write_json({"manifest_sha256": digest}, workspace.steps / f"release-{key[:16]}.json")


def release_about(
    recipe: Recipe, items: list[dict], review: ReviewResult | None, audit: dict | None = None
) -> About:
    """What the release's card says beyond its items: description, license, sources'
    licenses, the review report and the shortcut audit."""
    report = review.report if review is not None else None
    return About(
        description=recipe.data.get("description", ""),
        recipe=recipe.file.name,
        license=recipe.section("release").get("license"),
        source_licenses=source_licenses(sorted(set(_db_ids(items)))),
        review=read_json(report) if report is not None and Path(report).is_file() else None,
        audit=audit,
    )


def _db_ids(items: Iterable[dict]) -> Iterable[str]:
    """The items' db_ids (of a candidates file, its one column read)."""
    return items.column("db_id") if isinstance(items, ItemFiles) else (i["db_id"] for i in items)


def _step_line(output: StepOutput, cached: bool, log: Log, name: str) -> dict:
    line = {"items": len(output.items), "rejects": len(output.rejects), "cached": cached}
    log(
        f"{name}: {line['items']} items, {line['rejects']} rejects"
        + (" (cached)" if cached else "")
    )
    return line


def _write_outputs(
    workspace: Workspace, output: StepOutput, counts: dict, steps: dict, recipe: Recipe, extra: dict
) -> BuildReport:
    candidates = workspace.candidates  # written by finished_items
    rejects_file, reject_counts = written_rejects(workspace, output)
    report_file = write_json(
        {
            "dataset": recipe.dataset,
            "version": recipe.version,
            "recipe_signature": recipe.signature(),
            "steps": steps,
            "candidates": counts,
            "rejects": reject_counts,
            **extra,
        },
        workspace.reports / "build.json",
    )
    return BuildReport(candidates, rejects_file, report_file, counts, reject_counts, steps)


def written_rejects(workspace: Workspace, output: StepOutput) -> tuple[Path, dict]:
    """The rejects report (``reports/rejects.jsonl``, every reject in order) and its
    counts per reason: written from ``output.rejects``, or the one an earlier build wrote from
    the same parts (``steps/rejects-<hash of the parts>.json``) when it is still the
    file it wrote: a cached rerun then reads and writes no reject."""
    file, rejects = workspace.reports / "rejects.jsonl", output.rejects
    marker = workspace.steps / f"rejects-{content_hash(_parts_key(rejects))}.json"
    if marker.is_file() and file.is_file():
        stored = read_json(marker)
        if stored["sha256"] == workspace.digests.sha256(file):
            return file, stored["counts"]
    counts = dict(sorted(output.reject_counts().items()))
    write_jsonl(rejects.in_order(), file)
    write_json({"sha256": workspace.digests.sha256(file), "counts": counts}, marker)
    return file, counts


def _parts_key(rejects: Rejects) -> list:
    """What the rejects are made of: each stored file by path, size and modification
    time (a stored step's, a shard's), each list by its records."""
    key = []
    for part in rejects.parts:
        files = [part.path] if hasattr(part, "path") else getattr(part, "files", None)
        if files is None:
            key.append(list(part))
            continue
        stats = [(path, os.stat(path)) for path in map(str, files)]
        key.append([[path, stat.st_size, stat.st_mtime_ns] for path, stat in stats])
    return key
