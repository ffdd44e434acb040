"""The databases a release ships, and opening an item's database from a release.

A release is self-contained: ``databases/<db_id>.sqlite`` is a byte copy of every source
database its items use, and ``databases/variants/<variant_id>.sqlite`` is the DELTA of
every edited variant they use (only the columns the edit added or rewrote, and the
views that show the merged tables; see
:mod:`answerable.builders.counterfactual.materialize`). Each item names its files with
paths relative to the release root::

    "database": {"base": "databases/league.sqlite",
                 "delta": "databases/variants/league.1f0c2a9e4b7d.sqlite"}

``delta`` is null for an item over the unedited database. To run an item's SQL, open the
delta (or the base when there is none), ATTACH the base read-only as ``base`` and run the
delta's view statements (``SELECT view FROM answerable_delta ORDER BY seq``): with
Python's ``sqlite3`` that is :func:`open_item_database` (through
:func:`answerable.builders.sqlite_files.connect`); the README shows it by hand and with
the ``sqlite3`` shell. Consumers whose tools cannot attach run ``answerable materialize
RELEASE --full`` for full copies.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.source_files import ship_copy
from answerable.kernel.errors import AnswerableError
from answerable.kernel.ids import sha256_file

DATABASES = "databases"
VARIANTS = f"{DATABASES}/variants"
FULL = f"{DATABASES}/full"  # whole copies of the variants (release.variants: full)


class ReleaseDatabaseError(AnswerableError):
    """An item's database cannot be found or opened from a release."""


def base_path(db_id: str) -> str:
    """Where a source database goes in a release (relative to its root)."""
    return f"{DATABASES}/{db_id}.sqlite"


def delta_path(variant: str) -> str:
    """Where a variant's delta goes in a release (relative to its root)."""
    return f"{VARIANTS}/{variant}.sqlite"


def ship_files(
    used: pl.DataFrame,
    folder: Path,
    sources: dict[str, Path | None],
    variants: Path,
    layout: str = "delta",
) -> list[dict]:
    """Copy into ``folder`` the base and delta of each (``db_id``, ``db_variant``,
    ``edit``) row of ``used`` (one row per distinct database), and with ``layout`` full
    a whole copy of each variant too; the files' manifest entries, sorted by path. A
    delta or copy is reused from the build's ``variants`` folder (copies: beside it)
    only when its sidecar says it was made from this very base; otherwise it is made
    again from the edit script."""
    from answerable.builders.counterfactual.materialize import VariantStore  # sqlglot

    store = VariantStore(variants)
    whole = VariantStore(Path(variants).with_name("variants-full"), full=True)
    wanted: dict[str, Path] = {}
    for db_id, variant, edit in used.sort("db_id", "db_variant").iter_rows():
        source = sources.get(db_id)
        if source is None:
            continue
        wanted[base_path(db_id)] = Path(source)
        if variant:
            ops = json.loads(edit)["ops"]
            wanted[delta_path(variant)] = store.ensure(db_id, Path(source), ops)
            if layout == "full":
                wanted[full_path(variant)] = whole.ensure(db_id, Path(source), ops)
    return [_copy(wanted[path], Path(folder), path) for path in sorted(wanted)]


def full_path(variant: str) -> str:
    """Where a variant's whole copy goes in a release (relative to its root)."""
    return f"{FULL}/{variant}.sqlite"


def with_database(
    frame: pl.DataFrame, sources: dict[str, Path | None], layout: str = "delta"
) -> pl.DataFrame:
    """``frame`` with its ``database`` column: the paths of each item's base, delta and
    (``layout`` full) whole copy in the release, null for a schema-only source (made by
    polars, so it may be a chunk)."""
    shipped = [db for db, source in sources.items() if source is not None]
    variant = pl.col("db_variant")
    edited = variant.is_not_null() & (variant != "")
    database = pl.struct(
        base=pl.format(f"{DATABASES}/{{}}.sqlite", pl.col("db_id")),
        delta=pl.when(edited).then(pl.format(f"{VARIANTS}/{{}}.sqlite", variant)).otherwise(None),
        full=pl.when(edited & pl.lit(layout == "full"))
        .then(pl.format(f"{FULL}/{{}}.sqlite", variant))
        .otherwise(None),
    )
    column = pl.when(pl.col("db_id").is_in(shipped)).then(database).otherwise(None)
    return frame.with_columns(column.cast(frame.schema["database"]).alias("database"))


def _copy(source: Path, folder: Path, relative: str) -> dict:
    target = folder / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    ship_copy(source, target)
    return {"path": relative, "sha256": sha256_file(target), "bytes": target.stat().st_size}


def shown_files(files: list[dict]) -> list[str]:
    """The manifest's file paths for a one-line summary, the databases as one entry."""
    shown = [f["path"] for f in files if not f["path"].startswith(f"{DATABASES}/")]
    count = len(files) - len(shown)
    return shown + ([f"{DATABASES}/ ({count} files)"] if count else [])


def item_files(release_dir: Path, item: dict) -> tuple[Path, Path | None]:
    """``(file to open, base to attach or None)`` of a released item."""
    database = item.get("database")
    if not database:
        raise ReleaseDatabaseError(
            f"item {item.get('id')}: no database in this release (schema-only source)"
        )
    base = _inside(release_dir, database["base"], item)
    if database.get("delta") is None:
        return base, None
    return _inside(release_dir, database["delta"], item), base


def _inside(release_dir: Path, relative: str, item: dict) -> Path:
    """``release_dir / relative``, refused when the path leaves the release."""
    root = Path(release_dir).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root / DATABASES):
        raise ReleaseDatabaseError(
            f"item {item.get('id')}: database path {relative!r} is outside the release's "
            f"{DATABASES}/ folder"
        )
    return path


def open_item_database(
    release_dir: str | Path, item: dict, limits: Limits | None = None
) -> ReadOnlyDatabase:
    """A read-only connection to the item's database in a release: the merged view of
    its delta over its base, or its base alone. Close it (or use it in ``with``).

    >>> with open_item_database(release, item) as db:      # doctest: +SKIP
    ...     db.execute(item["sql"]).hash == item["result"]["hash"]
    True
    """
    path, base = item_files(Path(release_dir), item)
    return ReadOnlyDatabase(path, limits, base=base)


class ItemDatabases:
    """The databases of a release's items, each opened the first time an item needs it
    and kept open until :meth:`close` (use it in ``with``): a run over many items opens
    each base or delta once."""

    def __init__(self, release_dir: str | Path, limits: Limits | None = None):
        self.release_dir, self.limits = Path(release_dir), limits
        self._open: dict[tuple, ReadOnlyDatabase] = {}

    def of(self, item: dict) -> ReadOnlyDatabase:
        """The open database of ``item`` (raises as :func:`open_item_database` does)."""
        key = (item["database"]["base"], item["database"].get("delta"))
        if key not in self._open:
            self._open[key] = open_item_database(self.release_dir, item, self.limits)
        return self._open[key]

    def close(self) -> None:
        """Close every database opened so far."""
        for database in self._open.values():
            database.close()
        self._open.clear()

    def __enter__(self) -> ItemDatabases:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def storage_line(release_dir: str | Path) -> str:
    """``db_bytes=<all files under the release's databases folder> base_bytes=<the source
    databases>``: what the shipped databases weigh against the sources they copy (the
    bases are byte copies, so their sizes are the sources')."""
    folder = Path(release_dir) / DATABASES
    db_bytes = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    base_bytes = sum(p.stat().st_size for p in folder.glob("*.sqlite"))
    return f"db_bytes={db_bytes} base_bytes={base_bytes}"


def card_lines(frame: pl.DataFrame, files: list[dict]) -> list[str]:
    """The card's ``Databases`` section: what the files are, how to open a delta with the
    plain ``sqlite3`` shell (shown on a variant of this release), and how to get whole
    copies. ``files`` are the manifest's entries."""
    paths = {entry["path"] for entry in files}
    if not any(p.startswith(f"{DATABASES}/") for p in paths):
        return []
    lines = [
        "## Databases",
        "",
        f"`{DATABASES}/<db_id>.sqlite` is each source database, whole. Each item's `database` "
        "names the files it runs on, relative to this folder.",
        "",
    ]
    edited = frame.filter(pl.col("db_variant").is_not_null() & (pl.col("db_variant") != ""))
    if edited.is_empty():
        return lines
    example = edited.sort("id").row(0, named=True)
    variant, db_id = example["db_variant"], example["db_id"]
    lines += [
        f"An edited variant (`db_variant`) ships as a delta, `{VARIANTS}/<db_variant>.sqlite`: "
        "only what its edit changed. **A delta is not a whole database**: opened alone it "
        "shows the wrong tables. Open it with its base attached as `base` and run the views "
        "it lists in `answerable_delta`, e.g. with the `sqlite3` shell from this folder "
        "(`sql` is the query to run, an item's `sql`):",
        "",
        "```bash",
        f"delta={delta_path(variant)} base={base_path(db_id)}",
        "sql=\"SELECT name FROM sqlite_temp_master WHERE type = 'view'\"",
        'views=$(sqlite3 "$delta" "SELECT group_concat(view, \';\') FROM '
        '(SELECT view FROM answerable_delta ORDER BY seq)")',
        'sqlite3 -readonly "$delta" "ATTACH \'$base\' AS base" "$views" "$sql"',
        "```",
        "",
    ]
    if any(p.startswith(f"{FULL}/") for p in paths):
        lines.append(
            f"Whole copies ship too: `{FULL}/<db_variant>.sqlite`, named in each item's "
            "`database.full`; any tool opens them alone."
        )
    else:
        lines.append(
            "For whole copies (tools that cannot attach, Spider-style harnesses that open "
            "`<db_variant>.sqlite`), run `answerable materialize . --full --out ../full` from "
            "this folder: it writes `../full/<db_variant>.sqlite` for every variant, outside "
            "the release so that `answerable verify` still matches it. A release cut with "
            f"`release.variants: full` ships them as `{FULL}/<db_variant>.sqlite` and names "
            "each in the item's `database.full`."
        )
    return [*lines, ""]
