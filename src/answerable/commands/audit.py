"""``answerable audit PATH``: the shortcut audit of a recipe's candidates or a release."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("audit")
@click.argument("path", type=click.Path(path_type=Path))
def command(path: Path) -> None:
    """Shortcut audit of a RECIPE's candidates or a RELEASE: can the label be guessed?"""
    from answerable.release.audit import audit_path, format_audit

    click.echo(format_audit(audit_path(path)))
