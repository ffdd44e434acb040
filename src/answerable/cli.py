"""The ``answerable`` command line: a thin layer over the library.

Each command loads what it needs, calls one library function and prints the outcome.
Errors the user can fix (:class:`AnswerableError`) print one line and exit 1; usage
errors exit 2; success exits 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from answerable import __version__
from answerable.errors import AnswerableError, os_error_line
from answerable.extras import missing_extra
from answerable.inert import mask_secrets, printable
from answerable.release import full_copies
from answerable.release.evaluate.command import evaluate


class Group(click.Group):
    """A click group that turns domain errors into one clean line and exit code 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except AnswerableError as error:
            line = printable(mask_secrets(str(error)), keep_newlines=True)
            click.echo(f"error: {line}", err=True)
            sys.exit(error.exit_code)
        except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback per worker
            click.echo(
                "interrupted (fix: run the same command again: finished work is kept)", err=True
            )
            sys.exit(130)
        except BrokenPipeError:  # the reader left (``| head -1``): nothing to say to it
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        except OSError as error:  # permissions, a full disk, a read-only file system
            click.echo(f"error: {printable(os_error_line(error))}", err=True)
            sys.exit(1)
        except ImportError as error:  # an optional package this command needs
            if missing_extra(error) is None:
                raise
            click.echo(f"error: {missing_extra(error)}", err=True)
            sys.exit(1)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="answerable")
@click.option("-q", "--quiet", is_flag=True, help="Print results only, no progress lines.")
@click.option("-v", "--verbose", is_flag=True, help="Also print detail lines (shards, workers).")
def main(quiet: bool, verbose: bool) -> None:
    """Build and curate text-to-SQL benchmarks with answerable, ambiguous and
    unanswerable questions.

    Start with:  answerable build raw/demo/recipe.yaml
    """
    if quiet and verbose:
        raise click.UsageError("-q and -v ask for opposite things: give one of them")
    meta = click.get_current_context().meta
    meta.update({"answerable.quiet": quiet, "answerable.verbose": verbose})


def _progress():
    """The progress display -q/-v and stderr ask for (a bar on a terminal, lines in a log)."""
    from answerable.progress import Progress

    meta = click.get_current_context().meta
    quiet, verbose = meta.get("answerable.quiet"), meta.get("answerable.verbose")
    return Progress.for_stream(sys.stderr, quiet, verbose)


def _say(message: str) -> None:
    """A progress line on stderr, unless ``-q`` asked for results only."""
    context = click.get_current_context(silent=True)  # None in a server thread
    if context is None or not context.meta.get("answerable.quiet"):
        click.echo(mask_secrets(message), err=True)


@main.group()
def demo() -> None:
    """The bundled demo databases."""


@demo.command("init")
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


@main.command()
@click.argument("recipe", type=click.Path(path_type=Path))
def validate(recipe: Path) -> None:
    """Check a recipe and read its sources, without building anything."""
    from answerable.build import check_sources
    from answerable.recipe import load_recipe

    loaded = load_recipe(recipe)
    read, examples = check_sources(loaded)
    total = len(loaded.data["sources"])
    later = (
        f"; {total - read} over the demo databases are read at build time" if read < total else ""
    )
    click.echo(f"{recipe}: ok: {read} of {total} sources read, {examples} examples{later}")


def _step_times(report) -> str:
    """Each step's seconds, cached ones marked, then the checks, audit and release after."""
    cached = {name: line["cached"] for name, line in report.steps.items()}
    return ", ".join(
        f"{name} {spent:.1f} s" + (" (cached)" if cached.get(name) else "")
        for name, spent in report.seconds.items()
    )


@main.command()
@click.argument("recipe", type=click.Path(path_type=Path))
@click.option("--no-release", is_flag=True, help="Stop after the candidates.")
def build(recipe: Path, no_release: bool) -> None:
    """Build a recipe: verified candidates, a rejects report and a release."""
    from answerable.build import build as run_build
    from answerable.recipe import load_recipe

    loaded = load_recipe(recipe)
    report = run_build(loaded, log=_say, release=not no_release, progress=_progress())
    click.echo(f"candidates: {report.counts['total']} items in {report.candidates}")
    rejected = sum(report.reject_counts.values())
    reasons = ", ".join(f"{k} {v}" for k, v in report.reject_counts.items()) or "none"
    click.echo(f"rejects: {rejected} ({reasons}) listed in {report.rejects}")
    _say(f"steps: {_step_times(report)}")
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


@main.command()
@click.argument("path", type=click.Path(path_type=Path))
def inspect(path: Path) -> None:
    """Counts by label, category, database and generator of a release or items file."""
    from answerable.release.inspect import format_summary, load_items, summarize

    click.echo(format_summary(path, summarize(load_items(path))))


@main.command("audit")
@click.argument("path", type=click.Path(path_type=Path))
def audit_command(path: Path) -> None:
    """Shortcut audit of a RECIPE's candidates or a RELEASE: can the label be guessed?"""
    from answerable.release.audit import audit_path, format_audit

    click.echo(format_audit(audit_path(path)))


@main.group()
def review() -> None:
    """Human review of the candidates: the local page, spreadsheets, conflicts, progress."""


@review.command("serve")
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
    from answerable.recipe import load_recipe

    serve(load_recipe(recipe), port, _say)


@review.command("export")
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
    from answerable.recipe import load_recipe

    click.echo(export(load_recipe(recipe), file, annotator, everything, force))


@review.command("import")
@click.argument("recipe", type=click.Path(path_type=Path))
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--annotator", help="Annotator of rows whose annotator column is empty.")
def review_import(recipe: Path, file: Path, annotator: str | None) -> None:
    """Record the decisions of a filled-in export FILE (.csv or .jsonl)."""
    from answerable.annotation.commands import import_file
    from answerable.recipe import load_recipe

    for line in import_file(load_recipe(recipe), file, annotator):
        click.echo(line)


@review.command("conflicts")
@click.argument("recipe", type=click.Path(path_type=Path))
def review_conflicts(recipe: Path) -> None:
    """List the items whose annotators disagree, for adjudication."""
    from answerable.annotation.commands import conflicts
    from answerable.recipe import load_recipe

    for line in conflicts(load_recipe(recipe)):
        click.echo(line)


@review.command("progress")
@click.argument("recipe", type=click.Path(path_type=Path))
def review_progress(recipe: Path) -> None:
    """Items per status, decisions per annotator, and agreement (Cohen's, Fleiss' kappa)."""
    from answerable.annotation.commands import progress
    from answerable.recipe import load_recipe

    for line in progress(load_recipe(recipe)):
        click.echo(line)


@main.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("bio.jsonl"),
    show_default=True,
    help="JSON Lines file that receives one {id, tokens, tags} line per item.",
)
@click.option("--force", is_flag=True, help="Replace --out even if it is not a BIO file.")
def bio(path: Path, out: Path, force: bool) -> None:
    """DTE's BIO token tags (COL, VAL, AMB, UNK, O) of a release or items file."""
    from answerable.builders.counterfactual import write_bio
    from answerable.release.inspect import load_items

    items = load_items(path)
    click.echo(f"{len(items)} items tagged in {write_bio(items, out, force)}")


main.add_command(full_copies.materialize)
main.add_command(evaluate)  # answerable evaluate (release/evaluate/command.py)


# Commands in their own modules (answerable.commands), one registration line each.
from answerable.commands import diff as _diff  # noqa: E402
from answerable.commands import export as _export  # noqa: E402
from answerable.commands import verify as _verify  # noqa: E402

main.add_command(_export.command)
main.add_command(_verify.command)
main.add_command(_diff.command)

# Every command's example, at the end of its --help (answerable/examples.py).
from answerable.examples import add_examples  # noqa: E402

add_examples(main)
