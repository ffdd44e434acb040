"""``answerable review ...``: human review of the candidates (the local page,
spreadsheets, conflicts, progress)."""

from __future__ import annotations

from pathlib import Path

import click

from answerable.commands.console import say


@click.group("review")
def group() -> None:
    """Human review of the candidates: the local page, spreadsheets, conflicts, progress."""


@group.command("serve")
@click.argument("recipe", type=click.Path(path_type=Path))
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port on 127.0.0.1 (0 picks a free one).",
)
def review_serve(recipe: Path, port: int) -> None:
    """Serve the review page on 127.0.0.1 (local backend)."""
    from answerable.annotation.commands import serve
    from answerable.kernel.recipe import load_recipe

    serve(load_recipe(recipe), port, say)


@group.command("export")
@click.argument("recipe", type=click.Path(path_type=Path))
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--annotator", help="Leave out the items this annotator decided.")
@click.option("--all", "everything", is_flag=True, help="Every queued item, settled or not.")
@click.option("--force", is_flag=True, help="Replace FILE even if it is not an earlier export.")
def review_export(
    recipe: Path, file: Path, annotator: str | None, everything: bool, force: bool
) -> None:
    """Write the items awaiting review to FILE (.csv or .jsonl) for spreadsheet review."""
    from answerable.annotation.commands import export
    from answerable.kernel.recipe import load_recipe

    click.echo(export(load_recipe(recipe), file, annotator, everything, force))


@group.command("import")
@click.argument("recipe", type=click.Path(path_type=Path))
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--annotator", help="Annotator of rows whose annotator column is empty.")
def review_import(recipe: Path, file: Path, annotator: str | None) -> None:
    """Record the decisions of a filled-in export FILE (.csv or .jsonl)."""
    from answerable.annotation.commands import import_file
    from answerable.kernel.recipe import load_recipe

    for line in import_file(load_recipe(recipe), file, annotator):
        click.echo(line)


@group.command("conflicts")
@click.argument("recipe", type=click.Path(path_type=Path))
def review_conflicts(recipe: Path) -> None:
    """List the items whose annotators disagree, for adjudication."""
    from answerable.annotation.commands import conflicts
    from answerable.kernel.recipe import load_recipe

    for line in conflicts(load_recipe(recipe)):
        click.echo(line)


@group.command("progress")
@click.argument("recipe", type=click.Path(path_type=Path))
def review_progress(recipe: Path) -> None:
    """Items per status, decisions per annotator, and agreement (Cohen's, Fleiss' kappa)."""
    from answerable.annotation.commands import progress
    from answerable.kernel.recipe import load_recipe

    for line in progress(load_recipe(recipe)):
        click.echo(line)
