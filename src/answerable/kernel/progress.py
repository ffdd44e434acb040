"""How far a long step is: a bar on a terminal, a line now and then in a log.

A step asks for a :class:`Task` with its total and advances it as work finishes. What
the user sees depends on where stderr goes:

- a terminal: one bar redrawn in place, ``name [#####-----] 1200/5000 340/s ETA 0:11``,
  shown once the step has run for about a second (short steps draw nothing);
- anything else (CI logs, a file): ``name: 1200/5000 (24%), 340/s, ETA 0:11``, at most
  one line every 10 seconds, so a long step leaves a few lines and a short one none;
- ``-q``: nothing.

``-v`` adds detail lines (:meth:`Progress.detail`): how a step was cut into shards and
how many an earlier run had finished.

The clock is a parameter, so tests drive the lines with a fake one instead of sleeping.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

BAR_DELAY_S = 1.0  # a bar appears once a step has run this long
BAR_REDRAW_S = 0.2  # and is redrawn at most this often
LINE_EVERY_S = 10.0  # a log gets at most one line this often
BAR_WIDTH = 24


class Progress:
    """Where a build's steps report how far they are (see the module's docstring).

    ``mode`` is ``"bar"`` (a terminal), ``"lines"`` (a log) or ``"off"``; ``verbose``
    lets :meth:`detail` lines through.
    """

    def __init__(
        self,
        mode: str = "off",
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        every_s: float | None = None,
        verbose: bool = False,
    ):
        self.mode, self.stream, self.clock = mode, stream, clock
        self.every_s = LINE_EVERY_S if every_s is None else every_s
        self.verbose = verbose

    @classmethod
    def for_stream(cls, stream: TextIO, quiet: bool = False, verbose: bool = False) -> Progress:
        """A bar when ``stream`` is a terminal, lines otherwise, nothing when ``quiet``."""
        if quiet:
            return cls()
        return cls("bar" if _is_terminal(stream) else "lines", stream, verbose=verbose)

    def detail(self, message: str) -> None:
        """A line for ``-v`` only."""
        if self.verbose:
            write(self.stream, message + "\n")

    def task(self, name: str, total: int) -> Task:
        """A counter for one step of ``total`` units (items, shards, templates ...)."""
        return Task(self, name, total)


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


SILENT = Progress()


class Task:
    """One step's counter; use it as a context manager so the bar ends its line."""

    def __init__(self, progress: Progress, name: str, total: int):
        self.progress, self.name, self.total = progress, name, max(total, 0)
        self.done = 0
        self.started = progress.clock()
        self._shown_at: float | None = None  # when a bar or line was last written

    def __enter__(self) -> Task:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def advance(self, count: int = 1) -> None:
        """``count`` more units are done."""
        self.done += count
        mode = self.progress.mode
        if mode == "off":
            return
        now = self.progress.clock()
        if mode == "bar":
            self._bar(now)
        else:
            self._line(now)

    def close(self) -> None:
        """The step is over: a drawn bar gets its final state and a newline."""
        if self.progress.mode == "bar" and self._shown_at is not None:
            self._write("\r" + self.bar_text(self.progress.clock()) + "\n")

    def _bar(self, now: float) -> None:
        if now - self.started < BAR_DELAY_S:
            return
        if self._shown_at is not None and now - self._shown_at < BAR_REDRAW_S:
            return
        self._shown_at = now
        self._write("\r" + self.bar_text(now))

    def _line(self, now: float) -> None:
        last = self.started if self._shown_at is None else self._shown_at
        if now - last < self.progress.every_s:
            return
        self._shown_at = now
        self._write(self.line_text(now) + "\n")

    def _write(self, text: str) -> None:
        write(self.progress.stream, text)

    def rate(self, now: float) -> float:
        """Units per second so far."""
        elapsed = now - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def eta(self, now: float) -> str:
        """Time left at the rate so far, as ``h:mm:ss`` (``?`` before any unit is done)."""
        rate = self.rate(now)
        if rate <= 0:
            return "?"
        return clock_text(max(self.total - self.done, 0) / rate)

    def bar_text(self, now: float) -> str:
        """``name [#####-----] done/total rate/s ETA h:mm:ss``."""
        filled = BAR_WIDTH * self.done // self.total if self.total else BAR_WIDTH
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        counts = f"{self.done}/{self.total}"
        return f"{self.name} [{bar}] {counts} {self.rate(now):.0f}/s ETA {self.eta(now)}"

    def line_text(self, now: float) -> str:
        """``name: done/total (pct%), rate/s, ETA h:mm:ss``."""
        share = 100 * self.done // self.total if self.total else 100
        counts = f"{self.done}/{self.total} ({share}%)"
        return f"{self.name}: {counts}, {self.rate(now):.0f}/s, ETA {self.eta(now)}"


def write(stream: TextIO | None, text: str) -> None:
    """Write and flush at once (stderr when no stream is given): progress is read live."""
    stream = stream or sys.stderr
    stream.write(text)
    stream.flush()


def clock_text(seconds: float) -> str:
    """Seconds as ``h:mm:ss``.

    >>> clock_text(3725.4)
    '1:02:05'
    """
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
