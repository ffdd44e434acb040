"""``answerable bio PATH``: DTE's BIO token tags of a release or items file."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("bio")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("bio.jsonl"),
    show_default=True,
    help="JSON Lines file that receives one {id, tokens, tags} line per item.",
)
@click.option("--force", is_flag=True, help="Replace --out even if it is not a BIO file.")
def command(path: Path, out: Path, force: bool) -> None:
    """DTE's BIO token tags (COL, VAL, AMB, UNK, O) of a release or items file."""
    from answerable.builders.counterfactual import write_bio
    from answerable.release.inspect import load_items

    items = load_items(path)
    click.echo(f"{len(items)} items tagged in {write_bio(items, out, force)}")
