"""``answerable verify RELEASE [--execute]``."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("verify")
@click.argument("release", type=click.Path(path_type=Path))
@click.option(
    "--execute", is_flag=True, help="Also re-run every gold query on the shipped database."
)
def command(release: Path, execute: bool) -> None:
    """Check a release against its manifest: every file's sha256 and size, every item
    against the item schema, the counts, and (--execute) every gold result."""
    from answerable.release.verify import ReleaseDiffersError, verify_release

    found = verify_release(release, execute=execute)
    for problem in found.problems:
        click.echo(problem)
    if found.problems:
        raise ReleaseDiffersError(found.summary(release) + " (listed above)")
    click.echo(found.summary(release))
