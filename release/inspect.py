"""``answerable inspect``: what a release, a candidates file or an items file holds."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from answerable.kernel.errors import ConfigError
from answerable.kernel.records import read_jsonl, read_parquet
from answerable.kernel.typed_items import to_items
from answerable.release.cut.write import read_split
from answerable.release.reader import MANIFEST, count_items, read_frame, tally

BREAKDOWNS = (("label", "by_label"), ("category", "by_category"), ("db_id", "by_db"))


SUMMARY_FIELDS = ("label", "category", "db_id", "provenance")
"""What :func:`summarize` counts: a release's other columns need not be read for it."""


def load_items(path: Path, fields: Iterable[str] | None = None) -> list[dict]:
    """Items from a release directory (every split, read by
    :func:`~answerable.release.reader.read_frame`: only ``fields`` when given), a
    candidates or items file or the folder holding one, or one data file of a release."""
    path = Path(path)
    if path.is_dir() and ((path / MANIFEST).is_file() or (path / "data").is_dir()):
        return to_items(read_frame(path, columns=fields))
    if path.is_dir():
        for name in ("items.parquet", "candidates.parquet", "items.jsonl"):
            if (path / name).is_file():
                return load_items(path / name)
        raise ConfigError(
            path,
            None,
            "no items.parquet, candidates.parquet or items.jsonl here",
            fix="give a release directory or an items file",
        )
    if not path.is_file():
        raise ConfigError(path, None, "not found", fix="give a release directory or an items file")
    try:
        if path.parent.name == "data":  # a release's typed data file
            return to_items(read_split(path))
        return read_parquet(path) if path.suffix == ".parquet" else list(read_jsonl(path))
    except Exception as error:  # polars and json raise many kinds; all mean "unreadable"
        raise ConfigError(
            path,
            None,
            f"cannot read items: {error}".splitlines()[0],
            fix="give a file written by answerable",
        ) from None


def summarize(items: list[dict]) -> dict:
    """Counts by label, category, database and generator."""
    counts = count_items(items)
    counts["by_generator"] = dict(
        sorted(tally([i.get("provenance") or {} for i in items], "generator").items())
    )
    return counts


def format_summary(path: Path, counts: dict) -> str:
    """A plain-text table of the counts, for the terminal."""
    lines = [f"{path}: {counts['total']} items"]
    for title, key in (*BREAKDOWNS, ("generator", "by_generator")):
        lines.append(f"  by {title}:")
        width = max((len(k) for k in counts[key]), default=0)
        lines += [f"    {name:<{width}}  {n:>7}" for name, n in counts[key].items()]
    return "\n".join(lines)
