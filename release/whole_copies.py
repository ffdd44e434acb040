"""Whole edited copies of a release's variants, for tools that cannot ATTACH a second
database (``answerable materialize RELEASE --full``).

A release ships each edited variant as a delta over its base
(:mod:`answerable.release.databases`); a whole copy is the base with the item's edit
script applied, the same ops that made the delta, checked to show the delta's schema.
"""

from __future__ import annotations

from pathlib import Path

from answerable.builders.counterfactual.materialize import VariantStore, read_sidecar
from answerable.builders.counterfactual.script import variant_id
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.names import inside, name_problem
from answerable.kernel.records import guard_replace
from answerable.release.databases import ReleaseDatabaseError, item_files
from answerable.release.reader import read_items


def write_full_copies(release_dir: str | Path, out: str | Path, force: bool = False) -> list[Path]:
    """Write a whole edited copy of every variant a release's items use to
    ``<out>/<variant_id>.sqlite``, for tools that cannot ATTACH; return their paths.

    Each copy is the item's base with its edit script applied (the same ops that made the
    delta), and must show the same schema as the delta over its base. A copy already in
    ``out`` is kept when its sidecar matches the base and the ops; a file there without
    a readable sidecar (not one of ours, or damaged) is replaced only with ``force``.
    Every path read or written stays inside the release or ``out``.
    """
    folder = Path(release_dir)
    store = VariantStore(Path(out), full=True)
    made: dict[str, Path] = {}
    for item in read_items(folder):
        database = item.get("database") or {}
        if not database.get("delta") or item["db_variant"] in made:
            continue
        delta, base = item_files(folder, item)
        ops = item["edit"]["ops"]
        target = inside(out, f"{variant_id(_plain_name(item), ops)}.sqlite", "full copy")
        if read_sidecar(target.with_suffix(".json")) is None:  # none, damaged or not ours
            guard_replace(target, force)
        copy = store.ensure(item["db_id"], base, ops)
        if DatabaseSchema.from_sqlite(copy, item["db_id"]) != DatabaseSchema.from_sqlite(
            delta, item["db_id"], base=base
        ):
            raise ReleaseDatabaseError(
                f"{database['delta']}: the full copy differs from the delta over "
                f"{database['base']} (fix: check the release with its manifest's sha256)"
            )
        made[item["db_variant"]] = copy
    return [made[name] for name in sorted(made)]


def _plain_name(item: dict) -> str:
    """The item's ``db_id``, refused when it is not a plain name (see
    :mod:`answerable.kernel.names`)."""
    problem = name_problem(item.get("db_id"))
    if problem:
        raise ReleaseDatabaseError(f"item {item.get('id')}: db_id {problem}")
    return item["db_id"]
