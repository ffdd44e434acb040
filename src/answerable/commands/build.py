"""``answerable build RECIPE``: candidates, rejects and a release, with one line each."""

from __future__ import annotations

from pathlib import Path

import click

from answerable.commands.console import progress, say


def _step_times(report) -> str:
    """Each step's seconds, cached ones marked, then the checks, audit and release after."""
    cached = {name: line["cached"] for name, line in report.steps.items()}
    return ", ".join(
        f"{name} {spent:.1f} s" + (" (cached)" if cached.get(name) else "")
        for name, spent in report.seconds.items()
    )


@click.command("build")
@click.argument("recipe", type=click.Path(path_type=Path))
@click.option("--no-release", is_flag=True, help="Stop after the candidates.")
def command(recipe: Path, no_release: bool) -> None:
    """Build a recipe: verified candidates, a rejects report and a release."""
    from answerable.build import build as run_build
    from answerable.kernel.recipe import load_recipe

    loaded = load_recipe(recipe)
    report = run_build(loaded, log=say, release=not no_release, progress=progress())
    click.echo(f"candidates: {report.counts['total']} items in {report.candidates}")
    rejected = sum(report.reject_counts.values())
    reasons = ", ".join(f"{k} {v}" for k, v in report.reject_counts.items()) or "none"
    click.echo(f"rejects: {rejected} ({reasons}) listed in {report.rejects}")
    say(f"steps: {_step_times(report)}")
    if report.review is not None and report.review.awaiting:
        from answerable.annotation.review import where_to_review

        waiting = f"{report.review.awaiting} items await review; {where_to_review(loaded)}"
        if report.release is None and not no_release:
            click.echo(f"release: not cut: {waiting}, then build again")
        else:
            click.echo(f"review: {waiting}; they join a later version once accepted")
    if report.release:
        from answerable.release.databases import shown_files

        state = "written" if report.release.written else "unchanged, already published"
        released = report.release.manifest["counts"]
        labels = ", ".join(f"{k} {v}" for k, v in released["by_label"].items())
        click.echo(
            f"release: {report.release.path} ({state}): {released['total']} items "
            f"({labels}); files: "
            + ", ".join(shown_files(report.release.manifest["files"]))
            + ", manifest.json"
        )
