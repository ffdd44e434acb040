"""Every command's --help ends with an example, and every example parses."""

from __future__ import annotations

import shlex

import click
import pytest
from click.testing import CliRunner

from answerable.cli import main
from answerable.commands.examples import EXAMPLES
from tools.docs_pages import walk_commands

COMMANDS = [("answerable", main), *walk_commands(main, "answerable")]


def test_every_command_has_an_example_and_no_example_is_left_over():
    assert sorted(EXAMPLES) == sorted(name for name, _ in COMMANDS)


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[name for name, _ in COMMANDS])
def test_the_example_is_at_the_end_of_the_help(name, command):
    help_text = CliRunner().invoke(main, [*name.split()[1:], "--help"]).output
    assert help_text.rstrip().splitlines()[-1].strip() in {
        *EXAMPLES[name],
        'Shell completion (bash): eval "$(_ANSWERABLE_COMPLETE=bash_source answerable)"',
    }
    for line in EXAMPLES[name]:
        assert line in help_text  # unwrapped, as typed


@pytest.mark.filterwarnings("ignore:'protected_args':DeprecationWarning")
@pytest.mark.parametrize(
    ("name", "line"),
    [(name, line) for name, lines in EXAMPLES.items() for line in lines],
)
def test_each_example_names_its_command_and_parses(name, line):
    """Each line runs the command it documents, with options and arguments click accepts
    (parsed only, not run)."""
    words = shlex.split(line, comments=True)
    command: click.Command = main
    context = main.make_context("answerable", words[1:], resilient_parsing=False)
    path = ["answerable"]
    while isinstance(command, click.Group) and context.protected_args + context.args:
        rest = [*context.protected_args, *context.args]
        sub = command.get_command(context, rest[0])
        path.append(rest[0])
        command, context = sub, sub.make_context(rest[0], rest[1:], parent=context)
    assert " ".join(path).startswith(name)
