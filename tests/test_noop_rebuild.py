"""A rebuild with nothing changed does no work it did before: the rejects report is
kept as the earlier build wrote it, and written again only when it is not that file."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import DEMO_RECIPE, run_in

REJECTS = ("reports", "rejects.jsonl")


def _rejects_line(output: str) -> str:
    return re.search(r"^rejects: .*$", output, re.MULTILINE).group(0)


def _rebuilt(demo_build) -> tuple[Path, Path, str]:
    """The demo rebuilt in its folder: ``(folder, its rejects report, output)``."""
    cwd, _first = demo_build
    first = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert first.exit_code == 0, first.output
    return cwd, cwd.joinpath(".answerable", "answerable-demo", *REJECTS), first.output


def test_a_cached_rebuild_keeps_the_rejects_report_it_finds_unchanged(demo_build):
    cwd, report, first = _rebuilt(demo_build)
    written, stamp = report.read_bytes(), report.stat().st_mtime_ns
    again = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert again.exit_code == 0, again.output
    assert report.stat().st_mtime_ns == stamp  # not written again
    assert report.read_bytes() == written
    assert _rejects_line(again.output) == _rejects_line(first)


def test_a_changed_or_unremembered_rejects_report_is_written_again_the_same(demo_build):
    cwd, report, first = _rebuilt(demo_build)
    written = report.read_bytes()
    report.write_bytes(written[: len(written) // 2])  # damaged
    damaged = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert damaged.exit_code == 0, damaged.output
    assert report.read_bytes() == written
    for note in (report.parents[1] / "steps").glob("rejects-*.json"):
        note.unlink()
    forgotten = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert forgotten.exit_code == 0, forgotten.output
    assert report.read_bytes() == written
    assert _rejects_line(forgotten.output) == _rejects_line(first)
