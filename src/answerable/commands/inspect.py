"""``answerable inspect PATH``: counts of a release or items file."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("inspect")
@click.argument("path", type=click.Path(path_type=Path))
def command(path: Path) -> None:
    """Counts by label, category, database and generator of a release or items file."""
    from answerable.release.inspect import SUMMARY_FIELDS, format_summary, load_items, summarize

    click.echo(format_summary(path, summarize(load_items(path, SUMMARY_FIELDS))))
