"""Score a system's predictions on a release: the library side of ``answerable evaluate``.

:func:`evaluate` reads the release's items (the columns scoring needs, through
:func:`answerable.release.reader.read_frame`) and the predictions, starts every predicted
SQL on the item's shipped database, turns each item into a :class:`Scored` record while
they run, adds each one's outcome and computes every registered metric, its
breakdowns (split, database, label, category, hardness, operation, generator) and
seeded bootstrap intervals for the headline numbers. The report is a plain dict whose
first keys are the headline numbers; :func:`format_report` prints it as a table.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import polars as pl

from answerable.builders.counterfactual.bio import bio_tags
from answerable.kernel.errors import ConfigError
from answerable.kernel.typed_items import to_items
from answerable.release.evaluate import bootstrap, reliability
from answerable.release.evaluate.compare import MODES
from answerable.release.evaluate.metric import Scored
from answerable.release.evaluate.predictions import Prediction, read_predictions
from answerable.release.evaluate.profiles import PROFILES, Profile
from answerable.release.evaluate.references import REFERENCES, reference_predictions
from answerable.release.evaluate.registry import HEADLINE, all_metrics
from answerable.release.evaluate.run import Outcome, Running, Task
from answerable.release.evaluate.tally import Tally
from answerable.release.reader import (
    Release,
    data_manifest,
    database_paths,
    read_frame,
    release_limits,
    shipped,
)

NONE = "none"  # the group of items without a value
# The item fields scoring reads (reviews, edit scripts and readings are left unread);
# of the nested ones below, only the parts named. The gold result and the database
# paths go to execution only (see _tasks), not into the scored items.
SCORED_FIELDS = ("id", "db_id", "question", "sql", "label", "category", "split", "spans")
SCORED_FIELDS += ("result", "sql_meta", "provenance", "candidates", "database")
SCORED_PARTS = {
    "sql_meta": ("hardness", "operations"),
    "provenance": ("generator",),
    "candidates": ("stratum", "error_type"),
}
EXECUTION_ONLY = ("result", "database")
TASK_FIELDS = ("id", "label", "sql", "result", "database")


def with_limits(opened: Release, timeout_s: float | None, row_cap: int | None) -> Release:
    """``opened`` with its time limit and row cap replaced where given."""
    changes = {"timeout_s": timeout_s, "row_cap": row_cap}
    changes = {name: value for name, value in changes.items() if value is not None}
    return replace(opened, limits=replace(opened.limits, **changes)) if changes else opened


def evaluate(
    release: str | Path,
    predictions: str | Path | None = None,
    *,
    reference: str | None = None,
    split: str | None = None,
    mode: str | None = None,
    resamples: int = bootstrap.RESAMPLES,
    seed: int = 0,
    workers: int | None = None,
    profile: str | None = None,
    timeout_s: float | None = None,
    row_cap: int | None = None,
) -> dict:
    """Score a prediction file (or a reference system) on a release; returns the report.

    ``profile`` scores as one paper does (see :mod:`profiles`); without it, the profile
    the release's manifest names, else every metric. ``mode`` overrides the profile's.
    SQL runs under the execution limits the release records; ``timeout_s`` and
    ``row_cap`` override them.
    """
    opened = with_limits(_opened(release), timeout_s, row_cap)
    chosen = _profile(profile or (opened.manifest.get("scoring") or {}).get("profile"))
    mode = mode or (chosen.mode if chosen else "multiset")
    if mode not in MODES:
        raise ConfigError("--mode", None, f"unknown mode {mode!r}", fix=f"use one of {list(MODES)}")
    if reference is not None and reference not in REFERENCES:
        raise ConfigError(
            "--reference", None, f"unknown reference {reference!r}", fix=f"use one of {REFERENCES}"
        )
    frame = read_frame(opened.path, opened.manifest, SCORED_FIELDS).sort("id", maintain_order=True)
    in_split = _split_frame(frame, split, opened.path)
    items = None
    if reference is not None:
        items = to_items(_scored_columns(in_split))
        given, source = reference_predictions(reference, items, seed), f"reference:{reference}"
    elif predictions is not None:
        given, source = read_predictions(predictions), str(predictions)
        _check_ids(given, frame.get_column("id"), Path(predictions), opened.path)
    else:
        raise ConfigError(
            "evaluate", None, "nothing to score", fix="give PREDICTIONS or --reference"
        )
    runnable = runnable_ids(in_split, opened.path)
    tasks = _tasks(in_split, given, runnable, opened.path)
    with Running(opened.path, tasks, mode, opened.limits, workers) as running:
        # the items' own side is made while the predictions run
        items = items if items is not None else to_items(_scored_columns(in_split))
        unrun = [_scored(item, given.get(item["id"]), item["id"] in runnable) for item in items]
        outcomes = running.outcomes()
    scored = [with_outcome(s, outcomes.get(s.id)) for s in unrun]
    return build_report(scored, given, source, opened, split, mode, resamples, seed, profile=chosen)


def _opened(release: str | Path) -> Release:
    """The release's folder, manifest and limits, its items left to read (as columns)."""
    folder = Path(release)
    manifest = data_manifest(folder)
    return Release(folder, [], manifest, release_limits(manifest))


def _split_frame(frame: pl.DataFrame, split: str | None, release: Path) -> pl.DataFrame:
    if split is None:
        return frame
    chosen = frame.filter(pl.col("split") == split)
    if chosen.is_empty():
        present = sorted({str(s) for s in frame.get_column("split").to_list()})
        raise ConfigError(
            release, "--split", f"no items in split {split!r}", fix=f"use one of {present}"
        )
    return chosen


def _scored_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """The columns scoring reads, nested ones cut to the parts it looks at (an item
    without the field, or whose part is null, reads alike either way)."""
    columns = []
    for name in frame.columns:
        if name in EXECUTION_ONLY:
            continue
        column, dtype = pl.col(name), frame.schema[name]
        inner = dtype.inner if isinstance(dtype, pl.List) else dtype
        if name in SCORED_PARTS and isinstance(inner, pl.Struct):
            kept = [f.name for f in inner.fields if f.name in SCORED_PARTS[name]]
            if isinstance(dtype, pl.List):
                parts = pl.element().struct
                cut = column.list.eval(pl.struct([parts.field(f) for f in kept]))
            else:
                cut = pl.struct([column.struct.field(f) for f in kept])
            column = pl.when(column.is_null()).then(None).otherwise(cut).alias(name)
        columns.append(column)
    return frame.select(columns)


def runnable_ids(frame: pl.DataFrame, release: Path) -> set[str]:
    """Ids of the items whose database the release ships; each database's files are
    looked up once, however many items are asked over it."""
    if "database" not in frame.columns:
        return set()
    ships: dict[str, bool] = {}
    runnable = set()
    for id_, database in zip(frame.get_column("id"), frame.get_column("database"), strict=True):
        key = repr(database)
        if key not in ships:
            ships[key] = shipped({"database": database}, release)
        if ships[key]:
            runnable.add(id_)
    return runnable


def _profile(name: str | None) -> Profile | None:
    if name is None:
        return None
    if name not in PROFILES:
        raise ConfigError(
            "--profile", None, f"unknown profile {name!r}", fix=f"use one of {list(PROFILES)}"
        )
    return PROFILES[name]


def _check_ids(given: dict[str, Prediction], ids: pl.Series, file: Path, release: Path) -> None:
    known = set(ids)
    unknown = sorted(set(given) - known)
    if unknown:
        shown = ", ".join(unknown[:3]) + (", ..." if len(unknown) > 3 else "")
        raise ConfigError(
            file,
            None,
            f"{len(unknown)} ids are not items of {release} ({shown})",
            fix="score predictions made for this release",
        )


def _tasks(
    frame: pl.DataFrame, given: dict[str, Prediction], runnable: set[str], release: Path
) -> list[Task]:
    """A task for each runnable item with predicted SQL: its database, the gold SQL of an
    answerable item and its stored result (the rows left as JSON text)."""
    sql = {k: p.sql for k, p in given.items() if p.sql is not None and k in runnable}
    wanted = frame.filter(pl.col("id").is_in(list(sql)))
    if "result" in wanted.columns and isinstance(wanted.schema["result"], pl.Struct):
        fields = [f.name for f in wanted.schema["result"].fields]
        rows = wanted.get_column("result").struct.field("rows") if "rows" in fields else None
        stored = pl.struct([pl.col("result").struct.field(f) for f in fields if f != "rows"])
        wanted = wanted.with_columns(
            pl.when(pl.col("result").is_null()).then(None).otherwise(stored).alias("result")
        )
    else:
        rows = None
    items = to_items(wanted.select([c for c in TASK_FIELDS if c in wanted.columns]))
    rows = rows.to_list() if rows is not None else [None] * len(items)
    tasks = []
    for item, gold_rows in zip(items, rows, strict=True):
        gold_sql = item["sql"] if item["label"] == "answerable" else None
        tasks.append(
            Task(
                item["id"],
                database_paths(item, release),
                sql[item["id"]],
                gold_sql,
                item.get("result"),
                gold_rows,
            )
        )
    return tasks


def _scored(item: dict, prediction: Prediction | None, executable: bool = True) -> Scored:
    """An item as the metrics see it, but its execution's outcome (:func:`with_outcome`)."""
    missing = prediction is None
    prediction = prediction or Prediction(id=item["id"])
    candidates = item.get("candidates") or []
    hits, total, by_class = _tags(item, prediction)
    return Scored(
        id=item["id"],
        label=item["label"],
        category=item.get("category"),
        answered=not prediction.abstains,
        missing=missing,
        predicted_label=prediction.predicted_label,
        predicted_category=prediction.category,
        strata=frozenset(c.get("stratum") for c in candidates if c.get("stratum")),
        error_types=frozenset(
            c["error_type"]
            for c in candidates
            if c.get("stratum") == "answerable-incorrect" and c.get("error_type")
        ),
        tag_hits=hits,
        tag_total=total,
        candidate_strata=tuple(sorted(c["stratum"] for c in candidates if c.get("stratum"))),
        candidate_errors=tuple(
            sorted(
                c["error_type"]
                for c in candidates
                if c.get("stratum") == "answerable-incorrect" and c.get("error_type")
            )
        ),
        tags_by_class=by_class,
        grounding_by_class=_grounding(item, prediction),
        executable=executable,
        groups=groups(item),
    )


def with_outcome(scored: Scored, outcome: Outcome | None) -> Scored:
    """``scored`` with what executing its prediction gave (unchanged without one)."""
    if outcome is None:
        return scored
    correct = outcome.correct and scored.answerable
    return replace(scored, error=outcome.error, correct=correct, jaccard=outcome.jaccard)


def _tags(item: dict, prediction: Prediction) -> tuple[int, int, tuple]:
    """Predicted BIO tags equal to the gold ones, the number of tokens compared, and
    ``(class, hits, tokens)`` per gold tag class (``B-COL`` and ``I-COL`` are ``COL``)."""
    if prediction.tags is None:
        return 0, 0, ()
    gold = bio_tags(item)["tags"]
    predicted = list(prediction.tags) + [None] * max(0, len(gold) - len(prediction.tags))
    by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p, g in zip(predicted, gold, strict=False):
        counts = by_class[g.split("-", 1)[-1]]
        counts[0] += p == g
        counts[1] += 1
    hits = sum(h for h, _ in by_class.values())
    classes = tuple(sorted((c, h, t) for c, (h, t) in by_class.items()))
    return hits, max(len(gold), len(prediction.tags)), classes


def _grounding(item: dict, prediction: Prediction) -> tuple:
    """``(class, spans linked right, spans)`` per gold class: the item's tagged spans
    grounded to a concept (as the ``dte`` export's ``bindings`` give them), each right
    when the prediction links the same token range to the same concept (case aside).
    Empty when the prediction carries no bindings."""
    if prediction.bindings is None:
        return ()
    from answerable.release.export.dte import bindings

    tagged = bio_tags(item)
    gold = bindings(tagged["tags"], tagged["tokens"], item.get("spans") or [])
    said = {(start, end): concept for start, end, concept in prediction.bindings}
    by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for span in gold:
        if span["concept"] is None:
            continue
        linked = said.get((span["start"], span["end"]))
        counts = by_class[span["tag"]]
        counts[0] += linked is not None and linked.lower() == span["concept"].lower()
        counts[1] += 1
    return tuple(sorted((c, h, t) for c, (h, t) in by_class.items()))


def groups(item: dict) -> dict[str, tuple[str, ...]]:
    """The breakdown groups an item belongs to (operation is multi-valued)."""
    meta = item.get("sql_meta") or {}
    return {
        "split": (item.get("split") or NONE,),
        "database": (item["db_id"],),
        "label": (item["label"],),
        "category": (item.get("category") or NONE,),
        "hardness": (meta.get("hardness") or NONE,),
        "operation": tuple(meta.get("operations") or ()) or (NONE,),
        "generator": ((item.get("provenance") or {}).get("generator") or NONE,),
    }


def build_report(
    scored: list[Scored],
    given: dict[str, Prediction],
    source: str,
    release: Release,
    split: str | None,
    mode: str,
    resamples: int,
    seed: int,
    profile: Profile | None = None,
) -> dict:
    """The report of scored items: headline numbers first, then the details. With a
    ``profile``, its metrics and its table's columns are the headline."""
    metrics = profile.metrics(scored) if profile else all_metrics(scored)
    headline = tuple(name for _, name in profile.columns) if profile else HEADLINE
    tally = Tally(metrics, scored)
    values = {name: _round(value) for name, value in tally.values(tally.counts()).items()}
    values.update(dict.fromkeys(unavailable(tally.metrics, scored)))
    groups = breakdowns(scored, tally, headline)
    missing = sorted(s.id for s in scored if s.missing)
    errors: dict[str, int] = defaultdict(int)
    for s in scored:
        if s.error:
            errors[s.error] += 1
    return {
        "items": len(scored),
        **{name: values[name] for name in headline},
        "abstained": sum(not s.answered for s in scored),
        "missing": len(missing),
        "missing_ids": missing,
        "answered": sum(s.answered for s in scored),
        "errors": dict(sorted(errors.items())),
        "not_available": not_available(scored),
        "metrics": values,
        "ci95": {
            name: None if values[name] is None else interval
            for name, interval in bootstrap.intervals(
                tally, list(headline), resamples, seed
            ).items()
        },
        "references": {
            "abstain_rs": _round(reliability.abstain_all(scored)),
            "gold_rs": 100.0 if scored else None,
        },
        "breakdowns": groups,
        "table": paper_table(profile, values, groups) if profile else None,
        "settings": {
            "release": str(release.path),
            "predictions": source,
            "split": split,
            "mode": mode,
            "profile": profile.name if profile else None,
            "timeout_s": release.limits.timeout_s,
            "row_cap": release.limits.row_cap,
            "resamples": resamples,
            "seed": seed,
            "ignored_other_splits": len(set(given) - {s.id for s in scored}),
        },
    }


NO_DATABASE = "the release does not ship the item's database (a schema-only source)"


def not_available(scored: list[Scored]) -> dict:
    """The items execution metrics leave out: how many, and why (empty when none). RS(c)
    still counts the ones that are not answerable (it runs no SQL for them)."""
    left = sum(not s.executable for s in scored)
    if not left:
        return {}
    answerable = sum(not s.executable and s.answerable for s in scored)
    return {
        "execution": {
            "items": left,
            "of": len(scored),
            "answerable": answerable,
            "reason": NO_DATABASE,
        }
    }


def unavailable(metrics: list, scored: list[Scored]) -> list[str]:
    """The whole-set metrics (a reliability score) that miss some of these items'
    execution: over part of the answerable items they would overstate the score."""
    return [
        m.name
        for m in metrics
        if m.whole and any(not s.executable and not m.scored_unrun(s) and m.den(s) for s in scored)
    ]


def breakdowns(scored: list[Scored], tally: Tally, headline: tuple = HEADLINE) -> dict:
    """The headline metrics per group value, for every breakdown (RS(N) with the
    group's own N)."""
    members: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for position, s in enumerate(scored):
        for group, values in s.groups.items():
            for value in values:
                members[group][value].append(position)
    found: dict[str, dict] = {}
    for group, by_value in sorted(members.items()):
        found[group] = {}
        for value, positions in sorted(by_value.items()):
            every = tally.values(tally.counts(positions))
            members_of = [scored[p] for p in positions]
            if "rs_n" in every:
                every["rs_n"] = reliability.rs_n(members_of).value(members_of)
            every.update(dict.fromkeys(unavailable(tally.metrics, members_of)))
            found[group][value] = {
                "items": len(positions),
                **{name: _round(every[name]) for name in headline},
            }
    return found


def paper_table(profile: Profile, values: dict, groups: dict) -> dict:
    """The paper's table: its column headings, a row for every item, and a row per
    value of the breakdown its rows run over."""
    names = [name for _, name in profile.columns]
    rows = [{"row": "all", **{name: values[name] for name in names}}]
    named = profile.row_names or {}
    for value, row in (groups.get(profile.rows) or {}).items() if profile.rows else ():
        rows.append({"row": named.get(value, value), **{name: row[name] for name in names}})
    return {
        "profile": profile.name,
        "paper": profile.paper,
        "columns": [list(pair) for pair in profile.columns],
        "rows": rows,
        "differences": list(profile.differences),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


BREAKDOWN_TABLES = ("label", "category", "database", "hardness")


def format_report(report: dict) -> str:
    """The report as text: the settings, every headline metric in words with its value,
    95% bootstrap interval and the source of its definition, the paper's table when a
    profile is used, and the breakdowns per label, category, database and hardness."""
    settings = report["settings"]
    lines = [
        f"Scores of {settings['predictions']} on {settings['release']}",
        f"  split {settings['split'] or 'all'}; results compared as {settings['mode']};"
        f" profile {_profile_words(report)}",
        f"  {report['items']} items: {report['answered']} answered,"
        f" {report['abstained']} abstained ({report['missing']} without a prediction)",
        "",
    ]
    lines += _metric_lines(report)
    if report["errors"]:
        shown = ", ".join(f"{k} {v}" for k, v in report["errors"].items())
        lines.append(f"Errors of the answered SQL: {shown}")
    for family, why in report.get("not_available", {}).items():
        lines.append(
            f"Not available: {family} metrics for {why['items']} of {why['of']} items"
            f" ({why['reason']}); the reliability score counts the"
            f" {why['items'] - why['answerable']} of them that are not answerable"
        )
    refs = report["references"]
    lines.append(
        f"For scale: abstaining on every item gives RS {_shown(refs['abstain_rs'])},"
        f" the gold answers RS {_shown(refs['gold_rs'])}"
    )
    if report.get("table"):
        lines += ["", *_paper_table(report["table"])]
    for group in BREAKDOWN_TABLES:
        if group in report["breakdowns"]:
            lines += ["", *_breakdown_table(group, report["breakdowns"][group], report)]
    return "\n".join(lines)


def _profile_words(report: dict) -> str:
    table = report.get("table")
    return f"{table['profile']} ({table['paper']})" if table else "none (every metric)"


def _metric_lines(report: dict) -> list[str]:
    from answerable.release.evaluate.words import describe

    rows = []
    for name in report["ci95"]:
        words, source = describe(name)
        interval = report["ci95"].get(name)
        ci = f"{interval[0]:.4f} to {interval[1]:.4f}" if interval else "-"
        rows.append([f"{name}: {words}", _shown(report[name]), ci, source])
    return _table(["Metric", "Value", "95% bootstrap interval", "Definition"], rows, (0, 3))


def _paper_table(table: dict) -> list[str]:
    headings = [heading for heading, _ in table["columns"]]
    rows = [
        [row["row"], *(_shown(row[name]) for _, name in table["columns"])] for row in table["rows"]
    ]
    lines = [f"As the paper prints it: {table['paper']}", *_table(["", *headings], rows)]
    lines += [f"  Differs from the paper's code: {note}" for note in table["differences"]]
    return lines


def _breakdown_table(group: str, by_value: dict, report: dict) -> list[str]:
    names = [n for n in report["ci95"] if any(row[n] is not None for row in by_value.values())]
    rows = [
        [value, str(row["items"]), *(_shown(row[n]) for n in names)]
        for value, row in by_value.items()
    ]
    return [f"By {group}", *_table([group, "items", *names], rows)]


def _table(header: list[str], rows: list[list[str]], left: tuple[int, ...] = (0,)) -> list[str]:
    """Aligned text columns: the ``left`` ones flush left, the others (numbers) right."""
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]

    def line(cells: list[str]) -> str:
        shown = [
            c.ljust(w) if k in left else c.rjust(w)
            for k, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return ("  " + "  ".join(shown)).rstrip()

    return [line(header), "  " + "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def _shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"
