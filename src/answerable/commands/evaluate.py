"""``answerable evaluate``: score a prediction file or a reference system on a release."""

from __future__ import annotations

import json
from pathlib import Path

import click

# The choices, spelled here so that --help needs no scoring import; a test keeps them
# equal to the registries (compare.MODES, references.REFERENCES, profiles.PROFILES).
MODE_CHOICES = ("multiset", "set", "ordered", "ehrsql")
REFERENCE_CHOICES = ("gold", "abstain", "random")
PROFILE_CHOICES = ("trustsql", "ehrsql", "scare", "biomedsql", "naq", "dte")


@click.command("evaluate")
@click.argument("release", type=click.Path(path_type=Path))
@click.argument("predictions", type=click.Path(path_type=Path), required=False)
@click.option("--split", help="Score only the items of this split (e.g. test).")
@click.option(
    "--reference",
    type=click.Choice(REFERENCE_CHOICES),
    help="Score a built-in system instead of a file.",
)
@click.option(
    "--profile",
    type=click.Choice(PROFILE_CHOICES),
    help="Score as one paper does: its metrics, comparison and table"
    " (default: the profile the release names, else every metric).",
)
@click.option(
    "--mode",
    type=click.Choice(MODE_CHOICES),
    help="How results are compared (default: the profile's, else multiset).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(0, min_open=True),
    help="Seconds one query may run (default: the limit the release records).",
)
@click.option(
    "--row-cap",
    type=click.IntRange(1),
    help="Rows kept of one result (default: the cap the release records).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--out", type=click.Path(path_type=Path), help="Also write the report here.")
@click.option("--force", is_flag=True, help="Replace the --out file when it exists.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--resamples",
    type=click.IntRange(1, 100_000),
    default=1000,
    show_default=True,
    help="Bootstrap size.",
)
def command(
    release: Path,
    predictions: Path | None,
    split: str | None,
    reference: str | None,
    profile: str | None,
    mode: str | None,
    timeout_s: float | None,
    row_cap: int | None,
    as_json: bool,
    out: Path | None,
    seed: int,
    resamples: int,
    force: bool,
) -> None:
    """Score PREDICTIONS (JSON Lines, or an EHRSQL {id: sql} object) on RELEASE:
    EX, JAC, SER, RS(c), SCARE's coverage/PR/CR/F1, detection and tag accuracy, or one
    paper's metrics and table with --profile.

    \b
    Examples:
      answerable evaluate releases/answerable-demo/0.1.0 --reference abstain
      answerable evaluate releases/scare-demo/0.1.0 predictions.jsonl --profile scare
    """
    from answerable.kernel.errors import ConfigError
    from answerable.kernel.records import guard_replace, write_json
    from answerable.release.evaluate.report import evaluate as score
    from answerable.release.evaluate.report import format_report

    if (predictions is None) == (reference is None):
        raise ConfigError(
            "evaluate",
            None,
            "give a PREDICTIONS file or --reference, not both or neither",
            fix="answerable evaluate RELEASE PREDICTIONS, or --reference gold|abstain|random",
        )
    if out is not None:
        guard_replace(out, force)
    report = score(
        release,
        predictions,
        reference=reference,
        split=split,
        mode=mode,
        profile=profile,
        timeout_s=timeout_s,
        row_cap=row_cap,
        resamples=resamples,
        seed=seed,
    )
    if out is not None:
        write_json(report, out)
    click.echo(json.dumps(report, sort_keys=False) if as_json else format_report(report))
