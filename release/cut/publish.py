"""Cut a release: ``<out>/<dataset>/<version>/`` with its items sampled, split,
checked for leakage and written as typed files per split (``data/<split>.parquet``,
``data/<split>.jsonl``), a ``report.json`` (sampling, splits, leakage) and a
``manifest.json`` holding counts and a sha256 per file.

Each step takes a frame of items and returns one (see sample.py, split.py, leakage.py,
write.py); :func:`cut_release` composes them. The directory is written beside its final
place and renamed into it, so a reader never sees half a release. A published version
is never rewritten: cutting the same version again with identical content is a no-op,
with different content an error. A release that would be empty, or short of a required
stratum, publishes nothing and uses up no version.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from answerable import __version__
from answerable.builders.executor import Limits
from answerable.kernel.errors import AnswerableError
from answerable.kernel.ids import canonical_json
from answerable.kernel.item_model import polars_schema
from answerable.kernel.records import RUN_ROWS, ItemFiles, in_chunks, row_count, write_json
from answerable.kernel.typed_items import to_frame, to_items
from answerable.release.cut.audit import audit, release_schemas
from answerable.release.cut.config import ReleaseConfig
from answerable.release.cut.debias import aflite
from answerable.release.cut.dialects import GoldInDialects
from answerable.release.cut.earlier import check_resplit, earlier_versions, pins
from answerable.release.cut.expressions import FIELD_ALIASES
from answerable.release.cut.guards import require_items
from answerable.release.cut.leakage import check_leakage
from answerable.release.cut.sample import balance_test, kept_rows, sampled
from answerable.release.cut.split import split_items
from answerable.release.cut.write import write_data
from answerable.release.databases import ship_files, with_database
from answerable.release.documents.beside_data import write_documents
from answerable.release.documents.card import PROVENANCE, About, composition
from answerable.release.documents.chart import drawn_ahead
from answerable.release.documents.record_schema import RECORD_SCHEMA, write_record_schema
from answerable.release.reader import file_entry, frame_tally, read_release_manifest
from answerable.release.verify import ReleaseDiffersError, check_files
from answerable.schemas import validate


class ReleaseExistsError(AnswerableError):
    """The version is published already with other content."""


@dataclass
class Release:
    """Where a release went, what it holds, and whether this call wrote it."""

    path: Path
    manifest: dict
    written: bool


def frame_counts(frame: pl.DataFrame) -> dict:
    """The manifest's counts of a frame of items: total, per label, category, database and
    split (null shows as ``none``)."""

    def by(column: str) -> dict[str, int]:
        return frame_tally(frame, column)

    counts = {"total": frame.height, "by_label": by("label"), "by_category": by("category")}
    return {**counts, "by_db": by("db_id"), "by_split": by("split")}


def prepare_release(
    frame: pl.DataFrame,
    config: ReleaseConfig,
    seed: int,
    name: str,
    schemas: dict | None = None,
    pinned: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, dict]:
    """Debias (when configured), sample, split and check a frame of items: the released
    frame and its report (``schemas``: the audit's schema words per db_id; ``pinned``:
    the splits earlier versions gave their items, kept, see :func:`split_items`).

    The frame is handed over: sampling frees each of its columns once the chosen rows
    of it are copied (:func:`~answerable.release.cut.sample.kept_rows`), which lowers
    the peak of memory when the caller keeps no reference to it."""
    require_items(frame.height, name)
    debiased = {}
    if config.debias == "aflite":
        kept, debiased["debias"] = aflite(
            to_items(frame), seed, schemas, config.max_shortcut_gain, config.debias_max_share
        )
        frame = to_frame(kept)
        require_items(frame.height, name)
    chosen, sampling = sampled(frame, config, seed)
    if chosen is not None:
        columns = frame.get_columns()
        del frame  # the pool's columns are held by ``columns`` alone, and freed one by one
        frame = kept_rows(columns, chosen)
    frame, splits = split_items(frame, config, seed, pinned)
    frame, balanced = balance_test(frame, config, seed)
    if balanced:
        sampling["per_answerable_test"] = balanced
        splits["counts_after_balance"] = frame_counts(frame)["by_split"]
    require_items(frame.height, name)
    leakage = check_leakage(frame, config)
    frame = frame.drop("question_key")  # the split's, for the leakage check only
    shortcut = check_shortcut(frame, config, schemas)
    report = {**debiased, "sampling": sampling, "splits": splits, "leakage": leakage}
    return frame, report | ({"shortcut": shortcut} if shortcut else {})


def check_shortcut(frame: pl.DataFrame, config: ReleaseConfig, schemas: dict | None) -> dict:
    """With ``release.max_shortcut_gain``, the audit of the released items; a gain above
    the bound stops the release, naming what carries the label."""
    if config.max_shortcut_gain is None:
        return {}
    report = audit(to_items(frame), schemas)
    if "skipped" in report:
        return {"skipped": report["skipped"], "max": config.max_shortcut_gain}
    found = {
        "gain": report["shortcut_gain"],
        "max": config.max_shortcut_gain,
        "carriers": report["carriers"],
    }
    if found["gain"] > found["max"]:
        raise config.error(
            "max_shortcut_gain",
            f"the release's shortcut gain is {found['gain']}, above {found['max']}: the label "
            f"is carried by {', '.join(found['carriers'][:4])}",
            fix="draft minimal pairs, set release.debias: aflite, or raise the bound",
        )
    return found


def items_frame(items: Iterable[dict]) -> pl.DataFrame:
    """:func:`to_frame` of ``items`` made :data:`RUN_ROWS` at a time, so only the typed
    frame is held whole, never every item as a dict (``items`` may be a stream)."""
    frames = [to_frame(chunk) for chunk in in_chunks(items, RUN_ROWS)] or [to_frame([])]
    return _sorted(frames)


def _sorted(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """The frames as one, sorted by id: pieces already in id order are kept as its
    chunks (a rechunk would copy the whole frame once more)."""
    frame = pl.concat(frames, rechunk=False) if len(frames) > 1 else frames[0]
    return frame if frame["id"].is_sorted() else frame.sort("id")


# The item fields that sampling, splitting and the leakage check never read (unless a
# stratum names one): the bulk of an item (result rows, readings, edit scripts ...). The
# choice is made on a frame without them, and they join only the released items.
UNREAD_BY_CHOICE = (
    "spans",
    "trigger",
    "explanation",
    "edit",
    "result",
    "review",
    "readings",
    "answer",
    "tags",
    "database",
    "sql_by_dialect",
)

# The parts of the nested fields that the choice and the documents read (the family's
# parent, the card's generators); a stratum adds the part it names, and a query split or
# a skeleton check the skeleton (:func:`_read_parts`). Their other parts (candidate SQL,
# generator parameters, tables and columns) join only the released items, with the
# fields above.
READ_PARTS = {
    "sql_meta": (),
    "provenance": ("parent", *PROVENANCE),
    "candidates": (),
}


def left_out_of_choice(config: ReleaseConfig) -> list[str]:
    """The fields :func:`choose` leaves out: :data:`UNREAD_BY_CHOICE` but those a
    stratum names, and the nested fields of which it reads no part; none when
    debiasing or the shortcut bound, which read whole items."""
    if reads_whole_items(config):
        return []
    named = {path.split(".")[0] for path in _strata_paths(config)}
    unread = [name for name, parts in _read_parts(config).items() if parts == set()]
    return [
        name
        for name in polars_schema()
        if (name in UNREAD_BY_CHOICE and name not in named) or name in unread
    ]


def reads_whole_items(config: ReleaseConfig) -> bool:
    """Whether the choice audits items (debiasing, the shortcut bound): it reads them
    whole, and the databases' schemas."""
    return bool(config.debias) or config.max_shortcut_gain is not None


def _strata_paths(config: ReleaseConfig) -> list[str]:
    strata = config.sample.strata if config.sample else []
    return [FIELD_ALIASES.get(name, name) for name in strata]


def _read_parts(config: ReleaseConfig) -> dict[str, set[str]]:
    """:data:`READ_PARTS` and the parts the strata name (a field a stratum names whole
    is read whole, so it is not there)."""
    parts = {name: set(read) for name, read in READ_PARTS.items()}
    if config.split.kind == "query" or config.severity.get("same_skeleton", "off") != "off":
        parts["sql_meta"].add("skeleton")  # a text as long as the SQL: read only when used
    if "scare_stratum" in _strata_paths(config):
        parts["candidates"].add("stratum")  # keys.field_expr: the first candidate's
    for head, _, rest in (path.partition(".") for path in _strata_paths(config)):
        if head in parts and not rest:
            del parts[head]
        elif head in parts:
            parts[head].add(rest.split(".")[0])
    return parts


def narrow_schema(config: ReleaseConfig) -> pl.Schema:
    """The schema of :func:`choose_narrow`'s frame: every item field, those left out of
    the choice (:func:`left_out_of_choice`) null, and the nested fields it reads in part
    typed with only those parts (:data:`READ_PARTS`)."""
    full = polars_schema()
    if reads_whole_items(config):
        return full
    parts = {name: read for name, read in _read_parts(config).items() if read}
    return pl.Schema(
        {
            name: _pruned(dtype, parts[name]) if name in parts else dtype
            for name, dtype in full.items()
        }
    )


def rejoined(config: ReleaseConfig) -> list[str]:
    """The fields the released items take from the items again, whole: those left out
    of the choice and those it reads in part."""
    full, narrow, left_out = polars_schema(), narrow_schema(config), left_out_of_choice(config)
    return [name for name in full if name in left_out or narrow[name] != full[name]]


def _pruned(dtype: pl.DataType, keep: set[str]) -> pl.DataType:
    """A struct type (or a list of one) with only the fields ``keep``, in their order."""
    if isinstance(dtype, pl.List):
        return pl.List(_pruned(dtype.inner, keep))
    return pl.Struct([field for field in dtype.fields if field.name in keep])


def choose(
    items: Sequence[dict], config: ReleaseConfig, seed: int, name: str, schemas: dict | None
) -> tuple[pl.DataFrame, dict]:
    """:func:`prepare_release` on the items without the fields it never reads, then those
    fields added to the released items: the whole released frame (see
    :func:`choose_narrow` and :func:`released_chunks`, which never hold it whole)."""
    frame, report = choose_narrow(items, config, seed, name, schemas)
    return pl.concat(list(released_chunks(items, frame, config))), report  # never empty


def choose_narrow(
    items: Sequence[dict],
    config: ReleaseConfig,
    seed: int,
    name: str,
    schemas: dict | None,
    pinned: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, dict]:
    """:func:`prepare_release` on the items' :func:`narrow_frame`: the released items,
    sorted by id, so far without the fields and parts the choice leaves out, and the
    report."""
    # handed over, not held here: sampling frees the pool's columns as it copies them
    return prepare_release(narrow_frame(items, config), config, seed, name, schemas, pinned)


def narrow_frame(items: Sequence[dict], config: ReleaseConfig) -> pl.DataFrame:
    """The items typed as :func:`narrow_schema` says, sorted by id, made from their
    stored columns (:func:`stored_frames`, typed as a release is), each struct cast to
    only the parts read: no item becomes a Python dict."""
    schema = narrow_schema(config)
    read = [field for field in schema if field not in left_out_of_choice(config)]
    narrowed = {field: schema[field] for field in read}
    # a piece cast at a time: only one piece's wide columns are held, never all of them
    frames = [frame.cast(narrowed).collect() for frame in stored_frames(items, read)]
    frame = _sorted(frames or [pl.DataFrame(schema=narrowed)])
    left_out = [pl.lit(None, schema[field]).alias(field) for field in schema if field not in read]
    return frame.with_columns(left_out).select(list(schema))


def stored_frames(items: Sequence[dict], names: list[str]) -> Iterator[pl.LazyFrame]:
    """The fields ``names`` of the items in their stored form (typed as a release is,
    :func:`~answerable.kernel.typed_items.to_frame`): the Parquet files of
    :class:`ItemFiles` scanned, else the items put in that form, :data:`RUN_ROWS` at a
    time either way (a slice of a file reads only the row groups it covers)."""
    if isinstance(items, ItemFiles):
        yield from _pieces(items.files, names)
        return
    for chunk in in_chunks(fields_of(items, names), RUN_ROWS):
        yield to_frame(chunk).lazy().select(names)


def _pieces(files: list[Path], names: list[str]) -> Iterator[pl.LazyFrame]:
    """The columns ``names`` of Parquet files, :data:`RUN_ROWS` rows at a time: a slice
    reads only the row groups it covers, and polars' allocator serves it (pyarrow's pool
    kept about 60 MB more of the pages it read through)."""
    for file in files:
        for start in range(0, row_count(file), RUN_ROWS):
            yield pl.scan_parquet(file).slice(start, RUN_ROWS).select(names)


def released_chunks(
    items: Sequence[dict], frame: pl.DataFrame, config: ReleaseConfig
) -> Iterator[pl.DataFrame]:
    """The released items whole, a chunk of :data:`RUN_ROWS` at a time in id order: the
    rows of ``frame`` (:func:`choose_narrow`'s) with the fields and parts left out of
    the choice read again from ``items`` (which are read once more)."""
    left_out = rejoined(config)
    if not left_out:
        yield from (frame.slice(start, RUN_ROWS) for start in range(0, frame.height, RUN_ROWS))
        return
    done = 0
    for rest in _released_fields(items, frame["id"], left_out):
        rows = frame.slice(done, rest.height)
        if not rest["id"].equals(rows["id"]):  # the same items, both in id order
            raise ValueError("the released items changed while the release was cut")
        done += rest.height
        if rest.height:
            yield rows.with_columns(rest.select(left_out).get_columns())
    if done != frame.height:
        raise ValueError("the released items changed while the release was cut")


def _released_fields(
    items: Sequence[dict], released: pl.Series, names: list[str]
) -> Iterator[pl.DataFrame]:
    """``id`` and the fields ``names`` of the released items, :data:`RUN_ROWS` items read
    at a time in id order, from their stored form (typed as the release writes them)."""
    kept, wanted = ["id", *names], released.implode()
    for chunk in stored_chunks(items, kept):
        yield chunk.filter(pl.col("id").is_in(wanted))


def stored_chunks(items: Sequence[dict], names: list[str]) -> Iterator[pl.DataFrame]:
    """The fields ``names`` of the items in their stored form (as :func:`stored_frames`),
    in id order, :data:`RUN_ROWS` items at a time: the Parquet files of :class:`ItemFiles`
    read a batch at a time when their ids are sorted, else the items sorted
    (:func:`in_id_order`) and put in that form."""
    if isinstance(items, ItemFiles) and pl.Series(items.ids()).is_sorted():
        yield from (piece.collect() for piece in _pieces(items.files, names))
        return
    for chunk in in_chunks(fields_of(in_id_order(items), names), RUN_ROWS):
        yield to_frame(chunk).select(names)


def in_id_order(items: Sequence[dict]) -> Sequence[dict]:
    """``items`` sorted by id: items in Parquet files as they are when their ids are
    sorted (a build's candidates are), else every item read and sorted."""
    if isinstance(items, ItemFiles) and pl.Series(items.ids()).is_sorted():
        return items
    return sorted(items, key=lambda item: item["id"])


def used_databases(items: Sequence[dict], frame: pl.DataFrame, config: ReleaseConfig):
    """``db_id``, ``db_variant`` and ``edit`` of one released item per distinct database
    and variant (what :func:`answerable.release.databases.ship_files` copies); the edits
    are read again from ``items`` when the choice left them out."""
    pairs = frame.unique(["db_id", "db_variant"], keep="first", maintain_order=True)
    if "edit" not in left_out_of_choice(config):
        return pairs.select("db_id", "db_variant", "edit")
    wanted = pairs["id"].implode()  # the stored text of an edit is what the release writes
    chunks = stored_chunks(items, ["id", "edit"])
    edits = pl.concat([chunk.filter(pl.col("id").is_in(wanted)) for chunk in chunks])
    return pairs.drop("edit").join(edits, on="id", how="left").select("db_id", "db_variant", "edit")


def fields_of(items: Iterable[dict], names: list[str]) -> Iterable[dict]:
    """The items with only the fields ``names``: of items in Parquet files, only those
    columns are read."""
    if isinstance(items, ItemFiles):
        return items.fields(*names)
    wanted = set(names)  # looked up once per field of every item
    return ({k: v for k, v in item.items() if k in wanted} for item in items)


def cut_release(
    items: list[dict],
    *,
    out: Path,
    dataset: str,
    version: str,
    seed: int,
    recipe_signature: str,
    inputs: list[dict],
    config: ReleaseConfig | None = None,
    sources: dict[str, Path | None] | None = None,
    variants: Path | None = None,
    about: About | None = None,
    limits: Limits | None = None,
) -> Release:
    """Sample, split, check and write the release of ``items``; where it went. With
    ``sources`` (db_id to database file) and ``variants`` (the build's variants folder),
    the databases the items use ship with them
    (:func:`answerable.release.databases.ship_files`). With ``about``, the card,
    Croissant, changelog and license are written beside the data
    (:func:`answerable.release.documents.beside_data.write_documents`). With ``limits`` (the
    recipe's, which the gold results were verified with), the manifest records them
    (``execution``), and scoring and export run SQL under them.

    Only the chosen items' narrow frame (:func:`choose_narrow`) is held whole: their
    other fields are read a chunk at a time, given their databases and dialects, and
    written to their split's files as they come (:func:`released_chunks`,
    :func:`write_data`); the counts and the
    documents take the narrow frame."""
    config = config or ReleaseConfig()
    target = Path(out) / dataset / version
    schemas = release_schemas(sources) if reads_whole_items(config) else None
    name = f"{dataset} {version}"
    earlier = earlier_versions(target.parent, version, config)
    check_resplit(config, earlier, version)
    frame, report = choose_narrow(items, config, seed, name, schemas, pins(config, earlier))
    # the chart's counts are known: it is drawn on another core while the data is written
    chart = composition(frame) if about is not None else None
    with drawn_ahead(chart), _staging(target) as staging:
        shipped = []
        if sources:
            used = used_databases(items, frame, config)
            shipped = ship_files(used, staging, sources, variants, config.variants)
        with GoldInDialects(staging, config.dialects, config.file) as dialects:
            chunks = (  # the wide fields a chunk at a time, written as they come
                dialects.add(with_database(chunk, sources, config.variants) if sources else chunk)
                for chunk in released_chunks(items, frame, config)
            )
            files = write_data(chunks, staging, config.formats) + shipped
        write_record_schema(staging)
        files.append(file_entry(staging, RECORD_SCHEMA))
        translated = dialects.report()
        if translated:  # the failures in the report, the counts in the manifest
            report["dialects"] = translated
            frame = frame.filter(~pl.col("id").is_in(dialects.dropped()))
        write_json(report, staging / "report.json")
        files.append(file_entry(staging, "report.json"))
        manifest = {
            "dataset": dataset,
            "version": version,
            "seed": seed,
            "tool": {"name": "answerable", "version": __version__},
            "recipe_signature": recipe_signature,
            "inputs": inputs,
            "counts": frame_counts(frame),
            "files": files,
        }
        if config.profile:
            manifest["scoring"] = {"profile": config.profile}
        if limits is not None:
            manifest["execution"] = {"timeout_s": limits.timeout_s, "row_cap": limits.row_cap}
        if translated:
            manifest["dialects"] = {k: v for k, v in translated.items() if k != "failures"}
        if about is not None:
            as_written = json.loads(canonical_json(report))  # sorted keys, as the card expects
            written = write_documents(staging, manifest, about, target.parent, frame, as_written)
            manifest["files"] += written
        validate("manifest", manifest)
        write_json(manifest, staging / "manifest.json")
        return _publish(staging, target, manifest)


@contextmanager
def _staging(target: Path) -> Iterator[Path]:
    """A new empty folder beside ``target`` to write a release into, removed on leaving
    (:func:`_publish` renames it into place first when the release is complete)."""
    staging = target.with_name(f".{target.name}.staging-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _publish(staging: Path, target: Path, manifest: dict) -> Release:
    if target.exists():
        published = read_release_manifest(target)
        damaged = check_files(target, published)
        if damaged:
            raise ReleaseDiffersError(
                f"{target}: the published release differs from its manifest: "
                + "; ".join(damaged)
                + " (fix: restore the folder from a copy, or delete it to publish again)"
            )
        if published != manifest:
            raise ReleaseExistsError(
                f"{target}: version {manifest['version']} is already published with other "
                "content (fix: bump 'version' in the recipe; a published version is never "
                "rewritten)"
            )
        return Release(target, published, written=False)
    os.replace(staging, target)
    return Release(target, manifest, written=True)
