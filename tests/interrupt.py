"""A Ctrl-C stops the whole test run, wherever it lands.

click turns a KeyboardInterrupt inside a command into ``Aborted!`` and exit code 1, so
a Ctrl-C that lands while a test (or a shared fixture) runs a command through click's
runner would only fail that test, and pytest would go on with the next one. This
plugin notes every SIGINT and, once the test in progress has finished, raises
KeyboardInterrupt where pytest itself stops the run (with its summary; with
pytest-xdist, the workers are stopped too). Loaded with ``-p tests.interrupt``.
"""

from __future__ import annotations

import signal

import pytest

INTERRUPTED: list[int] = []  # the signals received; empty until a Ctrl-C


def on_interrupt(signum, frame):
    """Note the Ctrl-C, then interrupt whatever runs, as Python's own handler does."""
    INTERRUPTED.append(signum)
    raise KeyboardInterrupt


def pytest_configure(config: pytest.Config) -> None:
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_interrupt)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """After each test: stop the run if a Ctrl-C came while it ran, even one that the
    code under test caught."""
    outcome = yield
    if INTERRUPTED:
        raise KeyboardInterrupt
    return outcome
