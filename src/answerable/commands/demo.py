"""``answerable demo init``: the bundled demo databases."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("demo")
def group() -> None:
    """The bundled demo databases."""


@group.command("init")
@click.option(
    "--dir",
    "target",
    type=click.Path(path_type=Path),
    default=Path(".answerable/demo"),
    show_default=True,
    help="Folder that receives the SQLite files.",
)
@click.option("--seed", type=int, default=7, show_default=True, help="Generation seed.")
@click.option("--force", is_flag=True, help="Replace demo files already in the folder.")
def demo_init(target: Path, seed: int, force: bool) -> None:
    """Generate the demo SQLite databases (clinic, league) with Faker."""
    from answerable.builders.demo import generate_demo

    for db_id, path in sorted(generate_demo(target, seed, replace=force).items()):
        click.echo(f"{db_id}: {path} ({path.stat().st_size // 1024} KiB)")
