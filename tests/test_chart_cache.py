"""The composition chart is drawn once per counts and served from the cache after."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from answerable.release.documents.chart import cached_chart, draw_chart, write_chart

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
