"""The composition chart of a release: stacked bars per split, by label and by category.

Made with matplotlib's Agg backend, with fixed size, order, colours and no timestamp or
software metadata in the PNG, so the same counts give the same bytes. Those bytes are
kept in the user's cache (``$ANSWERABLE_CACHE/charts``, by default
``~/.cache/answerable/charts``) under a hash of the counts, this module's code and
matplotlib's version: a chart is drawn (and matplotlib imported, about a second) only
for counts not drawn before. A release starts drawing its chart in a forked child as
soon as it knows its counts (:func:`drawn_ahead`), so the drawing runs on another core
while the data is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

from answerable.kernel.ids import canonical_json
from answerable.kernel.variables import cache_root
from answerable.release.reader import split_order

CHART = "composition.png"


def write_chart(composition: dict[str, dict[str, dict[str, int]]], path: Path) -> Path:
    """The chart of ``composition`` at ``path``: the cached PNG of the same counts (when
    :func:`drawn_ahead` is drawing it, once that is done), or one drawn here by
    :func:`draw_chart` (and cached)."""
    cached = cached_chart(composition)
    _wait_for(_AHEAD.pop(cached, None))
    if not cached.is_file():
        _draw_cached(composition, cached)
    shutil.copyfile(cached, path)
    return Path(path)


@contextmanager
def drawn_ahead(composition: dict[str, dict[str, dict[str, int]]] | None) -> Iterator[None]:
    """While the caller works: the chart of ``composition`` (None: no chart) drawn into
    the cache by a forked child, on another core, when it is not cached yet. The child
    only imports matplotlib and draws; :func:`write_chart` of the same counts waits for
    it, and draws the chart itself if the child left none. The child is waited for on
    leaving, whatever happened."""
    cached = None if composition is None else cached_chart(composition)
    if cached is None or cached.is_file() or cached in _AHEAD:
        yield
        return
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's side; it never returns
        status = 1
        try:
            _draw_cached(composition, cached)
            status = 0
        finally:
            os._exit(status)
    _AHEAD[cached] = pid
    try:
        yield
    finally:
        _wait_for(_AHEAD.pop(cached, None))


_AHEAD: dict[Path, int] = {}  # a chart being drawn ahead -> the child drawing it
AHEAD_SECONDS = 120.0  # a child still drawing after this long is stopped; the writer draws


def _wait_for(pid: int | None) -> None:
    """Reap the child drawing ahead; one still running after :data:`AHEAD_SECONDS` (a
    drawing takes about a second) is killed, and :func:`write_chart` then draws the
    chart itself, so a child stuck in the fork can never hold the release up."""
    if pid is None:
        return
    deadline = time.monotonic() + AHEAD_SECONDS
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(0.01)


def _draw_cached(composition: dict, cached: Path) -> None:
    """Draw the chart into the cache under a name of this process, then rename it into
    place (atomic: concurrent builds may draw the same chart)."""
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f".{cached.name}.{os.getpid()}")
    draw_chart(composition, partial)
    partial.replace(cached)


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
