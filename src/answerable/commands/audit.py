"""``answerable audit PATH``: the shortcut audit of a recipe's candidates or a release.

The library code is imported inside the command, so ``--help`` imports none of it.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command("audit")
@click.argument("path", type=click.Path(path_type=Path))
def command(path: Path) -> None:
    """Shortcut audit of a RECIPE's candidates or a RELEASE: can the label be guessed?"""
    from answerable.release.cut.audit import format_audit

    click.echo(format_audit(audit_path(path)))


def audit_path(path: Path) -> dict:
    """The audit of a recipe's candidates (``RECIPE.yaml``; also written to its
    ``reports/audit.json``) or of a release folder or items file."""
    from answerable.builders.sources import load_sources
    from answerable.kernel.errors import ConfigError
    from answerable.kernel.recipe import load_recipe
    from answerable.kernel.records import iter_parquet, write_json
    from answerable.pipeline import Workspace
    from answerable.release.cut.audit import audit, release_schemas, schemas_of
    from answerable.release.inspect import load_items

    path = Path(path)
    if path.suffix not in (".yaml", ".yml"):
        folder = path / "databases" if path.is_dir() else path.parent / "databases"
        shipped = {file.stem: file for file in folder.glob("*.sqlite")}  # its databases
        return audit(load_items(path), release_schemas(shipped))
    recipe = load_recipe(path)
    workspace = Workspace(recipe.workdir, recipe.dataset)
    if not workspace.candidates.is_file():
        raise ConfigError(path, None, "no candidates yet", fix=f"answerable build {path}")
    report = audit(
        iter_parquet(workspace.candidates),
        schemas_of(load_sources(recipe).databases),
        seed=recipe.seed,  # the build's sample, when there is one
    )
    write_json(report, workspace.reports / "audit.json")
    return report
