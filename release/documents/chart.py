"""The composition chart of a release: stacked bars per split, by label and by category.

Made with matplotlib's Agg backend, with fixed size, order, colours and no timestamp or
software metadata in the PNG, so the same counts give the same bytes. Those bytes are
kept in the user's cache (``$ANSWERABLE_CACHE/charts``, by default
``~/.cache/answerable/charts``) under a hash of the counts, this module's code and
matplotlib's version: a chart is drawn (and matplotlib imported, about a second) only
for counts not drawn before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from importlib import metadata
from pathlib import Path

from answerable.kernel.ids import canonical_json
from answerable.kernel.variables import cache_root
from answerable.release.reader import split_order

CHART = "composition.png"


def write_chart(composition: dict[str, dict[str, dict[str, int]]], path: Path) -> Path:
    """The chart of ``composition`` at ``path``: the cached PNG of the same counts, or
    one drawn by :func:`draw_chart` (and cached)."""
    cached = cached_chart(composition)
    if not cached.is_file():
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(f".{cached.name}.{os.getpid()}")
        draw_chart(composition, partial)
        partial.replace(cached)  # atomic: concurrent builds may draw the same chart
    shutil.copyfile(cached, path)
    return Path(path)


def cached_chart(composition: dict) -> Path:
    """Where the cache keeps the chart of these counts, drawn by this code."""
    panels = canonical_json(list(composition.items()))  # the panels' order is drawn
    key = hashlib.sha256(panels.encode())
    key.update(Path(__file__).read_bytes())
    key.update(metadata.version("matplotlib").encode())
    return cache_root() / "charts" / f"{key.hexdigest()[:32]}.png"


def draw_chart(composition: dict[str, dict[str, dict[str, int]]], path: Path) -> Path:
    """Draw ``{"label": {split: {value: n}}, "category": {...}}`` as stacked-bar panels
    (one per key, in order) and save the PNG at ``path``.

    The figure is drawn on matplotlib's Agg canvas directly: pyplot is not imported and
    the process's backend is left as the caller set it (a notebook's stays interactive).
    The bytes are those pyplot's Agg backend gives."""
    from matplotlib import colormaps, rc_context  # imported when a chart is drawn
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with rc_context({"svg.hashsalt": "answerable", "font.family": "DejaVu Sans"}):
        figure = Figure(figsize=(10, 4), dpi=100)
        FigureCanvasAgg(figure)  # the one backend whose output is byte-stable
        axes = figure.subplots(1, 2)
        colours = colormaps["tab20"].colors
        for axis, (title, by_split) in zip(axes, composition.items(), strict=True):
            stacked_bars(axis, title, by_split, colours)
        figure.tight_layout()
        figure.savefig(path, format="png", metadata={"Software": None})
    return Path(path)


def stacked_bars(axis, title: str, by_split: dict[str, dict[str, int]], colours) -> None:
    """One panel: a bar per split, stacked by the values of ``title``, each value in the
    next of ``colours``."""
    splits = split_order(by_split)
    values = sorted({value for counts in by_split.values() for value in counts})
    bottoms = [0] * len(splits)
    for index, value in enumerate(values):
        heights = [by_split[split].get(value, 0) for split in splits]
        axis.bar(splits, heights, bottom=bottoms, label=value, color=colours[index % 20])
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    axis.set_title(f"items per split, by {title}")
    axis.set_ylabel("items")
    axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
