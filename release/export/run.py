"""``answerable export``: a release written in one export format's layout."""

from __future__ import annotations

from pathlib import Path

from answerable.kernel.errors import ConfigError
from answerable.kernel.names import inside
from answerable.kernel.records import guard_replace, write_jsonl
from answerable.release.export import FORMATS, PREPARE, Export
from answerable.release.reader import open_release, release_schemas

LEFT_OUT = "left_out.jsonl"


def export_release(folder: Path, fmt: str, out: Path, force: bool = False) -> Export:
    """Write the release at ``folder`` in format ``fmt`` under ``out``; the items the
    format cannot hold are listed in ``out/left_out.jsonl`` with the reason.

    An unknown format, one that can hold none of the release's items, a file that would
    land outside ``out`` (a ``db_id`` holding ``../``), or a file already in ``out``
    without ``force`` is a :class:`ConfigError` and writes nothing.
    """
    if fmt not in FORMATS:
        raise ConfigError(
            "--format",
            None,
            f"unknown export format {fmt!r}",
            fix=f"use one of {', '.join(FORMATS)}",
        )
    folder, out = Path(folder), Path(out)
    opened = open_release(folder)
    items = opened.items
    if fmt in PREPARE:
        items = PREPARE[fmt](folder, items, opened.limits)
    result = FORMATS[fmt](items, release_schemas(folder, items))
    if not result.files:
        reasons = "; ".join(f"{n} items: {reason}" for reason, n in result.reasons().items())
        raise ConfigError(
            folder,
            None,
            f"format {fmt} can hold none of the {len(items)} items ({reasons or 'no items'})",
            fix="choose a format that holds these labels (dte holds every label)",
        )
    names = [*result.files, *([LEFT_OUT] if result.left_out else [])]
    paths = {name: inside(out, name, "export file") for name in names}
    for path in paths.values():
        guard_replace(path, force)
    for name, text in result.files.items():
        paths[name].parent.mkdir(parents=True, exist_ok=True)
        paths[name].write_text(text, encoding="utf-8")
    if result.left_out:
        rows = [{"id": item_id, "reason": reason} for item_id, reason in sorted(result.left_out)]
        write_jsonl(rows, paths[LEFT_OUT])
    return result
