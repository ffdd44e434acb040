"""An example for every command, shown at the end of its ``--help`` (click's epilog)
and on the documentation site's command reference.

Each entry is a command's full name and its example lines; a ``#`` starts a remark.
``tests/test_cli_examples.py`` parses every line against the command it names.
"""

from __future__ import annotations

import click

RELEASE = "releases/answerable-demo/0.1.0"
RECIPE = "raw/demo/recipe.yaml"

EXAMPLES: dict[str, tuple[str, ...]] = {
    "answerable": (
        f"answerable build {RECIPE}",
        f"answerable -q inspect {RELEASE}     # results only, no progress lines",
    ),
    "answerable build": (
        f"answerable build {RECIPE}",
        f"answerable build {RECIPE} --no-release   # stop after the candidates",
    ),
    "answerable validate": (f"answerable validate {RECIPE}",),
    "answerable demo": ("answerable demo init --dir demo-dbs",),
    "answerable demo init": ("answerable demo init --dir demo-dbs --seed 7",),
    "answerable inspect": (
        f"answerable inspect {RELEASE}",
        "answerable inspect .answerable/answerable-demo/candidates.parquet",
    ),
    "answerable audit": (f"answerable audit {RECIPE}", f"answerable audit {RELEASE}"),
    "answerable review": (f"answerable review serve {RECIPE}",),
    "answerable review serve": (f"answerable review serve {RECIPE} --port 8765",),
    "answerable review export": (f"answerable review export {RECIPE} review.csv --annotator ana",),
    "answerable review import": (f"answerable review import {RECIPE} review.csv --annotator ana",),
    "answerable review conflicts": (f"answerable review conflicts {RECIPE}",),
    "answerable review progress": (f"answerable review progress {RECIPE}",),
    "answerable bio": (f"answerable bio {RELEASE} --out bio.jsonl",),
    "answerable materialize": (f"answerable materialize {RELEASE} --full --out full-copies",),
    "answerable evaluate": (
        f"answerable evaluate {RELEASE} predictions.jsonl --split test",
        f"answerable evaluate {RELEASE} predictions.jsonl --json --out report.json",
        f"answerable evaluate {RELEASE} --reference abstain   # the floor",
    ),
    "answerable verify": (f"answerable verify {RELEASE} --execute",),
    "answerable diff": (
        "answerable diff releases/answerable-demo/0.1.0 releases/answerable-demo/0.2.0",
    ),
    "answerable export": (f"answerable export {RELEASE} --format spider --out spider-export",),
}


COMPLETION = 'Shell completion (bash): eval "$(_ANSWERABLE_COMPLETE=bash_source answerable)"'
"""click's own completion, named at the end of ``answerable --help``."""


def epilog(lines: tuple[str, ...]) -> str:
    """The epilog text: ``\\b`` keeps click from rewrapping the lines."""
    title = "Example:" if len(lines) == 1 else "Examples:"
    return "\b\n" + title + "\n" + "\n".join(f"  {line}" for line in lines)


def add_examples(group: click.Group, name: str = "answerable") -> None:
    """Give ``group`` and every command under it its example, as its epilog."""
    context = click.Context(group, info_name=name)
    group.epilog = epilog(EXAMPLES[name])
    if name == "answerable":
        group.epilog += "\n\n\b\n" + COMPLETION
    for sub in group.list_commands(context):
        command = group.get_command(context, sub)
        full = f"{name} {sub}"
        if isinstance(command, click.Group):
            add_examples(command, full)
        else:
            command.epilog = epilog(EXAMPLES[full])
