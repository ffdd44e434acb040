"""What every command shares: one clean line for an error the user can fix, and the
progress lines ``-q``/``-v`` ask for.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

import click

from answerable.kernel.errors import AnswerableError, os_error_line
from answerable.kernel.extras import missing_extra
from answerable.kernel.untrusted_text import mask_secrets, printable

AGAIN_S = 0.05
"""Seconds after which a swallowed Ctrl-C is raised again."""


class insistent_interrupt:
    """Python swallows an exception raised inside a ``__del__`` or a garbage collector's
    callback ("Exception ignored ..."): a Ctrl-C landing there would let a build run on.
    Inside this block such a swallowed KeyboardInterrupt is raised again 0.05 s later
    (main thread only; a KeyboardInterrupt that propagates is left as it is)."""

    def __enter__(self):
        self._previous = None
        if threading.current_thread() is threading.main_thread():
            self._previous = sys.unraisablehook
            sys.unraisablehook = self._swallowed
            signal.signal(signal.SIGALRM, self._again)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            sys.unraisablehook = self._previous

    def _swallowed(self, unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            signal.setitimer(signal.ITIMER_REAL, AGAIN_S)
            return
        self._previous(unraisable)

    def _again(self, signum, frame) -> None:
        raise KeyboardInterrupt


class Group(click.Group):
    """A click group that turns domain errors into one clean line and exit code 1."""

    def invoke(self, ctx: click.Context):
        try:
            with insistent_interrupt():
                return super().invoke(ctx)
        except AnswerableError as error:
            line = printable(mask_secrets(str(error)), keep_newlines=True)
            click.echo(f"error: {line}", err=True)
            sys.exit(error.exit_code)
        except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback per worker
            click.echo(
                "interrupted (fix: run the same command again: finished work is kept)", err=True
            )
            sys.exit(130)
        except BrokenPipeError:  # the reader left (``| head -1``): nothing to say to it
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        except OSError as error:  # permissions, a full disk, a read-only file system
            click.echo(f"error: {printable(os_error_line(error))}", err=True)
            sys.exit(1)
        except ImportError as error:  # an optional package this command needs
            if missing_extra(error) is None:
                raise
            click.echo(f"error: {missing_extra(error)}", err=True)
            sys.exit(1)


def progress():
    """The progress display -q/-v and stderr ask for (a bar on a terminal, lines in a log)."""
    from answerable.kernel.progress import Progress

    meta = click.get_current_context().meta
    quiet, verbose = meta.get("answerable.quiet"), meta.get("answerable.verbose")
    return Progress.for_stream(sys.stderr, quiet, verbose)


def say(message: str) -> None:
    """A progress line on stderr, unless ``-q`` asked for results only."""
    context = click.get_current_context(silent=True)  # None in a server thread
    if context is None or not context.meta.get("answerable.quiet"):
        click.echo(mask_secrets(message), err=True)
