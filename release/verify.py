"""``answerable verify``: does a release hold what its manifest says?

Three checks, cheapest first: every file's size and sha256 against the manifest (and no
file the manifest does not list); every item against the item schema and the counts
against the manifest; and, on request, every gold query re-executed on the shipped
database to its stored result hash. ``answerable build`` runs the file check before it
calls a version "already published".

The item check is vectorized: the item schema's rules (required fields, types, enums,
patterns, lengths, minimums, nested structs and lists, and the answerable-item rule) are
compiled once into polars expressions over the typed Parquet columns, so a million items
check in seconds. Fields a release keeps as JSON text (result rows, edit parameters) are
checked as text only.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from answerable.builders.executor import Limits
from answerable.kernel.errors import AnswerableError, SQLError
from answerable.kernel.item_model import item_schema, resolve
from answerable.release.reader import (
    MANIFEST,
    data_files,
    frame_tally,
    read_frame,
    read_items,
    read_release_manifest,
)

SHOWN_PER_RULE = 5  # item ids named per broken rule; the count says how many in all


class ReleaseDiffersError(AnswerableError):
    """A release does not hold what its manifest says."""


@dataclass
class Verification:
    """What a verification found: problems (empty when the release is sound) and what
    it looked at."""

    problems: list[str] = field(default_factory=list)
    files: int = 0
    items: int = 0
    executed: int = 0
    seconds: float = 0.0

    def summary(self, folder: Path) -> str:
        """The one-line outcome."""
        if self.problems:
            return f"{folder}: {len(self.problems)} problems"
        executed = f", {self.executed} gold queries re-executed" if self.executed else ""
        return (
            f"{folder}: ok: {self.files} files match the manifest, {self.items} items match "
            f"the item schema and the counts{executed}"
        )


def verify_release(
    folder: Path, execute: bool = False, limits: Limits | None = None
) -> Verification:
    """Verify the release at ``folder``. Not a release, or a manifest that is not JSON:
    :class:`ConfigError`; anything that differs: listed in ``problems``."""
    started = time.perf_counter()
    folder = Path(folder)
    manifest = read_release_manifest(folder)
    problems, lines = file_problems(folder, manifest)
    found = Verification(problems=problems, files=len(manifest["files"]))
    data = [e["path"] for f in data_files(manifest).values() for e in f.values()]
    if not any(p.startswith(tuple(data)) for p in found.problems):
        frame = read_frame(folder, manifest)
        found.items = frame.height
        found.problems += check_rows(folder, manifest, lines) + check_items(frame)
        found.problems += check_counts(frame, manifest)
        if execute:
            from answerable.release.cut.dialects import check_shipped  # sqlglot: executing

            items = read_items(folder, manifest, frame)
            found.executed, problems = check_results(folder, items, limits)
            found.problems += problems
            in_dialects, problems = check_shipped(folder, items)  # sql_by_dialect
            found.executed += in_dialects
            found.problems += problems
    found.seconds = time.perf_counter() - started
    return found


def check_files(
    folder: Path, manifest: dict, sha256: Callable[[Path], str] | None = None
) -> list[str]:
    """Each manifest file missing, of another size or sha256, and each file in the
    release that the manifest does not list. ``sha256``: where a file's hash comes from
    (a build's kept hashes, :mod:`answerable.kernel.digests`); by default each file is
    read."""
    hashed = None if sha256 is None else lambda path: (sha256(path), 0)  # lines unused
    return file_problems(folder, manifest, hashed)[0]


def file_problems(
    folder: Path, manifest: dict, hashed: Callable[[Path], tuple[str, int]] | None = None
) -> tuple[list[str], dict[str, int]]:
    """:func:`check_files`' problems, and the line count of every file read (JSON Lines
    rows are counted in the same pass as the hash: ``hashed``, by default
    :func:`digest`). Files are read in parallel threads: hashing releases the GIL."""
    folder = Path(folder)
    hashed = hashed or digest
    present = [e for e in manifest["files"] if (folder / e["path"]).is_file()]
    sized = [e for e in present if (folder / e["path"]).stat().st_size == e["bytes"]]
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        digests = dict(
            zip(
                [e["path"] for e in sized],
                pool.map(lambda e: hashed(folder / e["path"]), sized),
                strict=True,
            )
        )
    problems = []
    for entry in manifest["files"]:
        path = folder / entry["path"]
        if entry not in present:
            problems.append(f"{entry['path']}: missing")
        elif entry["path"] not in digests:
            problems.append(
                f"{entry['path']}: {path.stat().st_size} bytes, the manifest says {entry['bytes']}"
            )
        elif digests[entry["path"]][0] != entry["sha256"]:
            problems.append(f"{entry['path']}: sha256 differs from the manifest")
    listed = {entry["path"] for entry in manifest["files"]} | {MANIFEST}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if relative not in listed:
            problems.append(f"{relative}: not in the manifest")
    return problems, {name: lines for name, (_, lines) in digests.items()}


def digest(path: Path, chunk: int = 1 << 24) -> tuple[str, int]:
    """Hex sha256 and number of line ends of a file, in one read."""
    hasher, lines = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            hasher.update(block)
            lines += block.count(b"\n")
    return hasher.hexdigest(), lines


def check_rows(folder: Path, manifest: dict, lines: dict[str, int] | None = None) -> list[str]:
    """Each data file whose number of items differs from the manifest's ``rows``: a
    Parquet file's from its metadata, a JSON Lines file's from ``lines`` (counted while
    hashing) or by reading it."""
    lines = lines or {}
    problems = []
    for files in data_files(manifest).values():
        for fmt, entry in files.items():
            if "rows" not in entry:
                continue
            path = folder / entry["path"]
            if fmt == "parquet":
                rows = pl.scan_parquet(path).select(pl.len()).collect().item()
            else:
                rows = lines[entry["path"]] if entry["path"] in lines else digest(path)[1]
            if rows != entry["rows"]:
                problems.append(f"{entry['path']}: {rows} items, the manifest says {entry['rows']}")
    return problems


def check_counts(frame: pl.DataFrame, manifest: dict) -> list[str]:
    """Each manifest count (total, per label, category, database, split) that the data
    files do not hold."""
    counts = manifest["counts"]
    problems = []
    if counts["total"] != frame.height:
        problems.append(f"counts.total: manifest says {counts['total']}, data has {frame.height}")
    for key, column in (
        ("by_label", "label"),
        ("by_category", "category"),
        ("by_db", "db_id"),
        ("by_split", "split"),
    ):
        if key in counts and column in frame.columns:
            held = frame_tally(frame, column)
            if held != counts[key]:
                problems.append(f"counts.{key}: manifest says {counts[key]}, data has {held}")
    return problems


def check_items(frame: pl.DataFrame) -> list[str]:
    """Each item-schema rule some items break, with how many and the first ids."""
    rules = list(frame_rules(frame))
    if not rules:
        return []
    flags = frame.select([bad.fill_null(False).alias(str(n)) for n, (_, bad) in enumerate(rules)])
    problems = []
    for n, (rule, _) in enumerate(rules):
        mask = flags.get_column(str(n))
        broken = int(mask.sum())
        if broken:
            ids = frame.filter(mask).get_column("id").head(SHOWN_PER_RULE).to_list()
            shown = ", ".join(str(i) for i in ids) + (", ..." if broken > len(ids) else "")
            problems.append(f"{broken} items break the item schema at {rule} (items {shown})")
    return problems


def frame_rules(frame: pl.DataFrame) -> Iterator[tuple[str, pl.Expr]]:
    """``(rule, expression true on the items that break it)`` for a frame of items."""
    schema = item_schema()
    required = set(schema.get("required", ()))
    for name, sub in schema["properties"].items():
        if name in frame.columns:
            yield from value_rules(
                pl.col(name), frame.schema[name], sub, f"/{name}", name in required
            )
        elif name in required:
            yield f"/{name}: required field missing", pl.lit(True)
    if schema.get("additionalProperties") is False:
        for name in frame.columns:
            if name not in schema["properties"]:
                yield f"/{name}: not an item field", pl.lit(True)
    for conditional in schema.get("allOf", ()):
        yield from conditional_rules(conditional, frame)


def value_rules(
    expr: pl.Expr, dtype: pl.DataType, sub: dict, pointer: str, required: bool
) -> Iterator[tuple[str, pl.Expr]]:
    """Rules of one value (a column, a struct field or a list element) of type ``dtype``."""
    sub, nullable = resolve(sub)
    types = sub.get("type")
    types = set(types) if isinstance(types, list) else {types} if types else set()
    if required and not nullable:
        yield f"{pointer}: must not be null", expr.is_null()
    present = expr.is_not_null()
    if dtype == pl.String and types & {"object", "array"} and "string" not in types:
        return  # an open field kept as JSON text
    if dtype == pl.String:
        if "enum" in sub:
            allowed = [v for v in sub["enum"] if v is not None]
            yield (
                f"{pointer}: not one of {', '.join(map(str, allowed))}",
                present & ~expr.is_in(allowed),
            )
        if "pattern" in sub:
            yield (
                f"{pointer}: does not match {sub['pattern']}",
                present & ~expr.str.contains(sub["pattern"]),
            )
        if "minLength" in sub:
            yield (
                f"{pointer}: shorter than {sub['minLength']}",
                present & (expr.str.len_chars() < sub["minLength"]),
            )
    elif dtype.is_integer() and "minimum" in sub:
        yield f"{pointer}: below {sub['minimum']}", present & (expr < sub["minimum"])
    elif isinstance(dtype, pl.Struct) and "properties" in sub:
        inner = set(sub.get("required", ()))
        for fld in dtype.fields:
            if fld.name in sub["properties"]:
                rules = value_rules(
                    expr.struct.field(fld.name),
                    fld.dtype,
                    sub["properties"][fld.name],
                    f"{pointer}/{fld.name}",
                    fld.name in inner,
                )
                for rule, bad in rules:
                    yield rule, present & bad
        names = {fld.name for fld in dtype.fields}
        for name in sorted(inner - names):
            yield f"{pointer}/{name}: required field missing", present
    elif isinstance(dtype, pl.List) and "items" in sub:
        for rule, bad in value_rules(pl.element(), dtype.inner, sub["items"], f"{pointer}/*", True):
            yield rule, present & expr.list.eval(bad.fill_null(False)).list.any()


def conditional_rules(conditional: dict, frame: pl.DataFrame) -> Iterator[tuple[str, pl.Expr]]:
    """The schema's ``if {field: const} then {field: type string | const null}`` rules
    (an answerable item has SQL and no category)."""
    condition = conditional.get("if", {}).get("properties", {})
    consequence = conditional.get("then", {}).get("properties", {})
    when = pl.lit(True)
    for name, rule in condition.items():
        if name not in frame.columns or "const" not in rule:
            return
        when = when & (pl.col(name) == rule["const"])
    said = " and ".join(f"{name} is {rule['const']}" for name, rule in condition.items())
    for name, rule in consequence.items():
        if name not in frame.columns:
            continue
        if rule.get("type") == "string":
            yield f"/{name}: must be a string when {said}", when & pl.col(name).is_null()
        elif "const" in rule and rule["const"] is None:
            yield f"/{name}: must be null when {said}", when & pl.col(name).is_not_null()


def shipped_sql(item: dict) -> str:
    """The item's gold SQL as it runs on the release's SQLite files: written for SQLite
    by sqlglot when it was verified in another dialect (a server source; the build
    releases such an item only when that gives its stored result)."""
    dialect = (item.get("result") or {}).get("dialect") or "sqlite"
    if dialect == "sqlite":
        return item["sql"]
    from answerable.builders import sqlkit

    return sqlkit.transpile(item["sql"], dialect, "sqlite")


def check_results(folder: Path, items: list[dict], limits: Limits | None) -> tuple[int, list[str]]:
    """Re-execute every answerable item's gold SQL on its shipped database and compare
    with its stored result hash: ``(queries run, problems)``."""
    from answerable.release.databases import ItemDatabases

    with ItemDatabases(folder, limits or Limits(timeout_s=30.0)) as opened:
        return _checked_results(opened, items)


def _checked_results(opened, items: list[dict]) -> tuple[int, list[str]]:
    problems, executed = [], 0
    for item in items:
        if item["label"] != "answerable" or not item.get("result") or not item.get("database"):
            continue
        stored = item["result"]
        try:
            got = opened.of(item).execute(shipped_sql(item), ordered=stored.get("ordered"))
        except (SQLError, AnswerableError) as error:
            problems.append(f"item {item['id']}: gold SQL does not run ({error})")
            continue
        executed += 1
        if got.hash != stored["hash"]:
            problems.append(
                f"item {item['id']}: gold result differs from the stored one "
                f"({got.row_count} rows, hash {got.hash[:12]}; stored {stored['row_count']} rows, "
                f"hash {stored['hash'][:12]})"
            )
    return executed, problems
