"""The composition chart is drawn once per counts and served from the cache after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from answerable.release.cut import publish
from answerable.release.documents import chart
from answerable.release.documents.card import About
from answerable.release.documents.chart import cached_chart, draw_chart, drawn_ahead, write_chart
from tests.release_helpers import config, make_item

COMPOSITION = {
    "label": {"train": {"answerable": 6}, "test": {"answerable": 2, "unanswerable": 3}},
    "category": {"train": {"seed": 6}, "test": {"seed": 2, "missing-column": 3}},
}


def test_a_cached_chart_has_the_drawn_bytes_and_needs_no_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setenv("ANSWERABLE_CACHE", str(tmp_path / "cache"))
    drawn = draw_chart(COMPOSITION, tmp_path / "drawn.png").read_bytes()
    assert not cached_chart(COMPOSITION).exists()
    assert write_chart(COMPOSITION, tmp_path / "first.png").read_bytes() == drawn
    assert cached_chart(COMPOSITION).read_bytes() == drawn
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from answerable.release.documents.chart import write_chart\n"
        f"write_chart(json.loads({json.dumps(json.dumps(COMPOSITION))}), "
        f"Path({str(tmp_path / 'again.png')!r}))\n"
        "print('matplotlib' in sys.modules)\n"
    )
    env = {**os.environ, "ANSWERABLE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    assert (tmp_path / "again.png").read_bytes() == drawn


def test_other_counts_or_panel_order_are_another_chart(tmp_path, monkeypatch):
    monkeypatch.setenv("ANSWERABLE_CACHE", str(tmp_path))
    more = {**COMPOSITION, "label": {"train": {"answerable": 7}}}
    swapped = dict(reversed(COMPOSITION.items()))
    paths = {cached_chart(c) for c in (COMPOSITION, more, swapped)}
    assert len(paths) == 3


def test_drawing_a_chart_leaves_pyplot_and_the_backend_alone(tmp_path):
    """A chart is drawn on the Agg canvas itself: the caller's process gets no pyplot and
    keeps the backend it chose."""
    code = (
        "import json, sys\n"
        "import matplotlib\n"
        "matplotlib.use('svg')\n"
        "from pathlib import Path\n"
        "from answerable.release.documents.chart import draw_chart\n"
        f"draw_chart(json.loads({json.dumps(json.dumps(COMPOSITION))}), "
        f"Path({str(tmp_path / 'drawn.png')!r}))\n"
        "print('matplotlib.pyplot' in sys.modules, matplotlib.get_backend())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False svg"
    assert (tmp_path / "drawn.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_chart_drawn_ahead_is_the_one_drawn_here_and_its_child_is_reaped(tmp_path, monkeypatch):
    """A chart drawn ahead by a forked child has the bytes drawn in this process; the
    writer waits for the child, and no child outlives the block."""
    monkeypatch.setenv("ANSWERABLE_CACHE", str(tmp_path / "cache"))
    drawn = draw_chart(COMPOSITION, tmp_path / "drawn.png").read_bytes()
    with drawn_ahead(COMPOSITION):
        (child,) = chart._AHEAD.values()
        assert write_chart(COMPOSITION, tmp_path / "ahead.png").read_bytes() == drawn
    assert chart._AHEAD == {}
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)
    with drawn_ahead(COMPOSITION):  # drawn now: cached, no child
        assert chart._AHEAD == {}


def test_a_chart_the_child_failed_to_draw_is_drawn_by_the_writer(tmp_path, monkeypatch):
    monkeypatch.setenv("ANSWERABLE_CACHE", str(tmp_path / "cache"))
    drawn = draw_chart(COMPOSITION, tmp_path / "drawn.png").read_bytes()
    parent, draw = os.getpid(), chart.draw_chart

    def fails_in_child(composition, path):
        if os.getpid() != parent:
            raise RuntimeError("no drawing here")
        return draw(composition, path)

    monkeypatch.setattr(chart, "draw_chart", fails_in_child)
    with drawn_ahead(COMPOSITION):
        assert write_chart(COMPOSITION, tmp_path / "again.png").read_bytes() == drawn


def test_a_child_stuck_drawing_is_stopped_and_the_writer_draws(tmp_path, monkeypatch):
    """A child that never finishes (stuck after the fork) is killed once its time is up,
    and the release's chart is drawn by the writer: the release is never held up."""
    monkeypatch.setenv("ANSWERABLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(chart, "AHEAD_SECONDS", 0.5)
    drawn = draw_chart(COMPOSITION, tmp_path / "drawn.png").read_bytes()
    parent, draw = os.getpid(), chart.draw_chart

    def hangs_in_child(composition, path):
        while os.getpid() != parent:
            time.sleep(1)
        return draw(composition, path)

    monkeypatch.setattr(chart, "draw_chart", hangs_in_child)
    with drawn_ahead(COMPOSITION):
        (child,) = chart._AHEAD.values()
        assert write_chart(COMPOSITION, tmp_path / "again.png").read_bytes() == drawn
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)


def test_a_release_draws_its_chart_while_it_writes_its_data(tmp_path, monkeypatch):
    """The chart's counts are known once the items are chosen: it is being drawn by
    the time the data is written, and the release's chart is the one drawn."""
    monkeypatch.setenv("ANSWERABLE_CACHE", str(tmp_path / "cache"))
    seen, write_data = [], publish.write_data

    def watched(*args, **kwargs):
        seen.append(dict(chart._AHEAD))
        return write_data(*args, **kwargs)

    monkeypatch.setattr(publish, "write_data", watched)
    items = [make_item(f"q{i}") for i in range(6)]
    items += [make_item(f"u{i}", label="unanswerable", sql=None) for i in range(3)]
    release = publish.cut_release(
        items,
        out=tmp_path / "out",
        dataset="ahead",
        version="0.1.0",
        seed=1,
        recipe_signature="0" * 16,
        inputs=[],
        config=config(split={"ratios": {"train": 0.5, "test": 0.5}}),
        about=About(description="Drawn ahead.", license="MIT"),
    )
    (ahead,) = seen
    (cached,) = ahead
    png = (release.path / chart.CHART).read_bytes()
    assert png == cached.read_bytes()
    assert chart._AHEAD == {}
