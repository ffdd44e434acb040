"""Progress: a bar on a terminal, a line at most every 10 s in a log, nothing with -q.

The clock is a fake one the tests move by hand, so no test sleeps.
"""

from __future__ import annotations

import io
import re

from answerable.kernel import progress as progress_module
from answerable.kernel.progress import Progress, clock_text
from tests.conftest import DEMO_RECIPE, run_in


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def lines_of(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_a_log_gets_a_line_at_most_every_ten_seconds():
    clock, log = FakeClock(), io.StringIO()
    progress = Progress.for_stream(log)
    progress.clock = clock
    assert progress.mode == "lines"
    with progress.task("counterfactual", 1000) as task:
        for _ in range(79):  # 79 units over 9.875 s: nothing yet
            clock.now += 0.125
            task.advance()
        assert log.getvalue() == ""
        clock.now += 0.125
        task.advance()  # 10 s in: the first line
        assert lines_of(log) == ["counterfactual: 80/1000 (8%), 8/s, ETA 0:01:55"]
        for _ in range(79):  # 9.875 s more: still one line
            clock.now += 0.125
            task.advance()
        assert len(lines_of(log)) == 1
        clock.now += 0.125
        task.advance()
        assert lines_of(log)[1] == "counterfactual: 160/1000 (16%), 8/s, ETA 0:01:45"
    assert len(lines_of(log)) == 2  # closing adds nothing to a log


def test_a_step_shorter_than_ten_seconds_leaves_no_line_in_a_log():
    clock, log = FakeClock(), io.StringIO()
    task = Progress("lines", log, clock).task("drafting", 50)
    for _ in range(50):
        clock.now += 0.125
        task.advance()
    task.close()
    assert log.getvalue() == ""


def test_a_terminal_gets_a_bar_after_a_second_redrawn_in_place():
    clock, screen = FakeClock(), Terminal()
    progress = Progress.for_stream(screen)
    progress.clock = clock
    assert progress.mode == "bar"
    with progress.task("template_v1", 400) as task:
        clock.now += 0.5
        task.advance(100)
        assert screen.getvalue() == ""  # a short step draws nothing
        clock.now += 0.5
        task.advance(100)
        first = screen.getvalue()
        assert first == "\rtemplate_v1 [" + "#" * 12 + "-" * 12 + "] 200/400 200/s ETA 0:00:01"
        clock.now += 0.125
        task.advance(100)  # within the redraw interval: not drawn again
        assert screen.getvalue() == first
        clock.now += 0.125
        task.advance(50)
        assert screen.getvalue().count("\r") == 2
        assert "350/400" in screen.getvalue()
    assert screen.getvalue().endswith("] 350/400 280/s ETA 0:00:00\n")  # the bar's line ends


def test_quiet_shows_nothing_and_verbose_adds_detail_lines():
    screen = Terminal()
    quiet = Progress.for_stream(screen, quiet=True, verbose=True)
    quiet.clock = FakeClock()
    with quiet.task("candidate_sql", 10) as task:
        quiet.clock.now += 60
        task.advance(10)
    quiet.detail("shards")
    assert screen.getvalue() == ""
    log = io.StringIO()
    Progress.for_stream(log).detail("not without -v")
    Progress.for_stream(log, verbose=True).detail("with -v")
    assert log.getvalue() == "with -v\n"


def test_an_eta_needs_a_rate_and_the_clock_reads_hours():
    clock = FakeClock()
    task = Progress("lines", io.StringIO(), clock).task("x", 10)
    assert task.eta(clock.now) == "?"
    assert clock_text(59.6) == "0:01:00"
    assert clock_text(7322) == "2:02:02"


def test_the_build_prints_progress_lines_and_quiet_silences_them(demo_build, monkeypatch):
    cwd, _first = demo_build
    monkeypatch.setattr(progress_module, "LINE_EVERY_S", 0.0)  # a line on every advance
    # a rebuild from cached steps checks no item again (issue 14) unless the note that
    # remembers the checks is gone: the rebuild writes it again, the same
    for note in (cwd / ".answerable" / "answerable-demo" / "steps").glob("candidates-*.json"):
        note.unlink()
    loud = run_in(cwd, "build", DEMO_RECIPE)
    assert loud.exit_code == 0, loud.output
    assert re.search(r"^item checks: \d+/\d+ \(\d+%\), \d+/s, ETA ", loud.stderr, re.MULTILINE)
    quiet = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""


def test_quiet_and_verbose_together_are_a_usage_error(tmp_path):
    result = run_in(tmp_path, "-q", "-v", "build", DEMO_RECIPE)
    assert result.exit_code == 2
    assert "-q and -v" in result.output
