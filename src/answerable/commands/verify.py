"""``answerable verify RELEASE [--execute]``."""

from __future__ import annotations

from pathlib import Path

import click

SHOWN_INLINE = 5  # up to this many problems fit the one error line


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
    if not found.problems:
        click.echo(found.summary(release))
        return
    if len(found.problems) <= SHOWN_INLINE:
        raise ReleaseDiffersError(f"{found.summary(release)}: " + "; ".join(found.problems))
    for problem in found.problems:
        click.echo(problem)
    raise ReleaseDiffersError(found.summary(release) + " (listed above)")
