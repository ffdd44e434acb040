"""The composition chart is drawn once per counts and served from the cache after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import polars as pl
import pytest

from answerable.release.cut import publish
from answerable.release.cut.dialects import DialectSettings
from answerable.release.documents import chart
from answerable.release.documents.card import About, composition
from answerable.release.documents.chart import CHART, cached_chart, draw_chart, write_chart
from answerable.release.reader import read_frame
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


def test_a_chart_drawn_ahead_is_drawn_in_a_thread_into_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ANSWERABLE_CACHE", str(tmp_path / "cache"))
    drawn = draw_chart(COMPOSITION, tmp_path / "drawn.png").read_bytes()
    threads = []

    def recorded(composition, path):
        threads.append(threading.current_thread())
        return draw_chart(composition, path)

    monkeypatch.setattr(chart, "draw_chart", recorded)
    with chart.drawn_ahead(COMPOSITION) as wait:
        wait()
        assert cached_chart(COMPOSITION).read_bytes() == drawn
    assert len(threads) == 1 and threads[0] is not threading.main_thread()
    with chart.drawn_ahead(COMPOSITION) as wait:  # cached: nothing is drawn again
        wait()
    with chart.drawn_ahead(None) as wait:
        wait()
    assert len(threads) == 1


def test_a_chart_drawn_ahead_raises_its_error_when_waited_for(tmp_path, monkeypatch):
    monkeypatch.setenv("ANSWERABLE_CACHE", str(tmp_path / "cache"))

    def broken(composition, path):
        raise OSError("no room for the chart")

    monkeypatch.setattr(chart, "draw_chart", broken)
    with chart.drawn_ahead(COMPOSITION) as wait, pytest.raises(OSError, match="no room"):
        wait()
    assert not cached_chart(COMPOSITION).exists()


def test_a_release_draws_its_chart_while_its_data_is_written(tmp_path, monkeypatch):
    """The data's writer waits until the chart is being drawn: were the chart drawn
    after the data, as it was, the writer would wait in vain."""
    monkeypatch.setenv("ANSWERABLE_CACHE", str(tmp_path / "cache"))
    drawing = threading.Event()

    def drawn(composition, path):
        drawing.set()
        return draw_chart(composition, path)

    def write_data(chunks, folder, formats):
        assert drawing.wait(timeout=10), "the chart was not being drawn"
        return publish_write_data(chunks, folder, formats)

    publish_write_data = publish.write_data
    monkeypatch.setattr(chart, "draw_chart", drawn)
    monkeypatch.setattr(publish, "write_data", write_data)
    items = [make_item(f"i{n}", parent=f"p{n}", sql=f"SELECT {n}") for n in range(12)]
    cut = publish.cut_release(
        items,
        out=tmp_path / "out",
        dataset="toy",
        version="1.0.0",
        seed=7,
        recipe_signature="0" * 16,
        inputs=[],
        config=config(),
        about=About(description="toy", license="Apache-2.0"),
    )
    png = (cut.path / CHART).read_bytes()
    assert png == cached_chart(composition(read_frame(cut.path, cut.manifest))).read_bytes()


def test_a_release_that_translates_its_gold_sql_draws_its_chart_after_its_data():
    """Translating parses SQL under a CPU limit the process's threads share (and may drop
    items), so no chart is drawn beside it."""
    frame = pl.DataFrame(
        {"split": ["train", "test"], "label": ["answerable"] * 2, "category": ["seed"] * 2}
    )
    plain, about = config(), About(description="toy")
    translating = config()
    translating.dialects = DialectSettings(engines=("duckdb",))
    assert publish._chart_ahead(frame, plain, about) == composition(frame)
    assert publish._chart_ahead(frame, translating, about) is None
    assert publish._chart_ahead(frame, plain, None) is None
