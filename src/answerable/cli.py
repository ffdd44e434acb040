"""The ``answerable`` command line: a thin layer over the library.

Each command lives in its own module of :mod:`answerable.commands` (a group's
subcommands with it), loads what it needs, calls one library function and prints the
outcome; this module only registers them. Errors the user can fix
(:class:`~answerable.kernel.errors.AnswerableError`) print one line and exit 1; usage errors
exit 2; success exits 0 (:class:`~answerable.commands.console.Group`).
"""

from __future__ import annotations

import click

from answerable import __version__
from answerable.commands import (
    audit,
    bio,
    build,
    demo,
    diff,
    evaluate,
    export,
    inspect,
    materialize,
    review,
    validate,
    verify,
)
from answerable.commands.console import Group
from answerable.commands.examples import add_examples


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="answerable")
@click.option("-q", "--quiet", is_flag=True, help="Print results only, no progress lines.")
@click.option("-v", "--verbose", is_flag=True, help="Also print detail lines (shards, workers).")
def main(quiet: bool, verbose: bool) -> None:
    """Build and curate text-to-SQL benchmarks with answerable, ambiguous and
    unanswerable questions.

    Start with:  answerable build raw/demo/recipe.yaml
    """
    if quiet and verbose:
        raise click.UsageError("-q and -v ask for opposite things: give one of them")
    meta = click.get_current_context().meta
    meta.update({"answerable.quiet": quiet, "answerable.verbose": verbose})


# One line per command (--help lists them by name).
main.add_command(demo.group)
main.add_command(validate.command)
main.add_command(build.command)
main.add_command(inspect.command)
main.add_command(audit.command)
main.add_command(review.group)
main.add_command(bio.command)
main.add_command(materialize.command)
main.add_command(evaluate.command)
main.add_command(export.command)
main.add_command(verify.command)
main.add_command(diff.command)

add_examples(main)  # every command's example, at the end of its --help (examples.py)
