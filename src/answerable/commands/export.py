"""``answerable export RELEASE --format F --out DIR``."""

from __future__ import annotations

from pathlib import Path

import click


class RegisteredFormats(click.Choice):
    """The export formats registered in :data:`answerable.release.export.FORMATS`, read
    from the registry when click first asks (so ``answerable --help`` imports no format)."""

    def __init__(self):
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from answerable.release.export import FORMATS

        return tuple(FORMATS)

    @choices.setter
    def choices(self, _value) -> None:
        """Ignored: the registry says the choices."""


@click.command("export")
@click.argument("release", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    required=True,
    type=RegisteredFormats(),
    help="The paper whose file layout to write.",
)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder to write.")
@click.option("--force", is_flag=True, help="Replace files already in --out.")
def command(release: Path, fmt: str, out: Path, force: bool) -> None:
    """Write a release in a paper's file layout (TrustSQL, EHRSQL 2024, SCARE, OncoMX-NAQ,
    BiomedSQL, DTE, Spider); items the layout cannot hold are listed with the reason."""
    from answerable.release.export.run import LEFT_OUT, export_release

    result = export_release(release, fmt, out, force)
    click.echo(f"{fmt}: {len(result.files)} files in {out}")
    if result.left_out:
        reasons = "; ".join(f"{n}: {reason}" for reason, n in result.reasons().items())
        click.echo(f"left out {len(result.left_out)} items ({reasons}); listed in {out / LEFT_OUT}")
