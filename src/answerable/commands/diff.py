"""``answerable diff OLD NEW [--json]``."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("diff")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="The whole diff as JSON, for machines.")
def command(old: Path, new: Path, as_json: bool) -> None:
    """Items added, removed and changed (by id, with the fields), counts per label,
    category and split before and after, and files changed between two releases."""
    from answerable.release.diff import diff_releases

    found = diff_releases(old, new)
    if as_json:
        for warning in found.warnings:
            click.echo(f"warning: {warning}", err=True)
        click.echo(json.dumps(found.to_json(), indent=2, sort_keys=True))
    else:
        click.echo("\n".join(found.lines()))
