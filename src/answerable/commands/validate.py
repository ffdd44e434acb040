"""``answerable validate RECIPE``: a recipe checked and its sources read, nothing built."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("validate")
@click.argument("recipe", type=click.Path(path_type=Path))
def command(recipe: Path) -> None:
    """Check a recipe and read its sources, without building anything."""
    from answerable.build import check_sources
    from answerable.kernel.recipe import load_recipe

    loaded = load_recipe(recipe)
    read, examples = check_sources(loaded)
    total = len(loaded.data["sources"])
    later = (
        f"; {total - read} over the demo databases are read at build time" if read < total else ""
    )
    click.echo(f"{recipe}: ok: {read} of {total} sources read, {examples} examples{later}")
