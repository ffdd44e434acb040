"""``answerable materialize RELEASE --full``: whole copies of a release's variants.

A release ships each edited variant as a delta over its base (see
:mod:`answerable.release.databases`); tools that cannot ATTACH a second database get
whole edited copies from this command instead, named ``<out>/<db_variant>.sqlite``.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command("materialize")
@click.argument("release", type=click.Path(path_type=Path))
@click.option("--full", is_flag=True, required=True, help="Write whole copies (required).")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder for the copies [default: ./<dataset>-<version>-full].",
)
@click.option("--force", is_flag=True, help="Replace files in --out that it did not write.")
def command(release: Path, full: bool, out: Path | None, force: bool) -> None:
    """Whole edited copies of every variant in RELEASE, for tools that cannot ATTACH."""
    from answerable.release.whole_copies import write_full_copies  # keeps `answerable` quick

    out = out or Path(f"{release.parent.name}-{release.name}-full")
    copies = write_full_copies(release, out, force)
    size = sum(p.stat().st_size for p in copies)
    click.echo(f"{len(copies)} full copies in {out} ({size // 1024} KiB): <db_variant>.sqlite")
