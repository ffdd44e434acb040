"""What the ``answerable review`` commands do; the CLI only parses and prints.

Each function takes a loaded recipe and returns lines of text (or serves until stopped).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from answerable.annotation.agreement import agreement_report
from answerable.annotation.corrections import Verifier
from answerable.annotation.policy import ACCEPTED, CONFLICT, OPEN, REJECTED, STATUSES
from answerable.annotation.queue import count_progress
from answerable.annotation.readings import ReadingRunner
from answerable.annotation.review import (
    backend_of,
    hotkeys_of,
    limits_of,
    open_local_queue,
    policy_of,
    queue_state,
    variants_of,
)
from answerable.annotation.server import (
    HOTKEYS,
    ReviewPage,
    ReviewServerError,
    make_server,
    page_url,
)
from answerable.annotation.spot_check import awaits_person
from answerable.annotation.transfer import (
    EXPORT_START,
    export_rows,
    file_format,
    import_decisions,
    write_rows,
)
from answerable.builders.sources import load_sources
from answerable.kernel.errors import AnswerableError, ConfigError
from answerable.kernel.recipe import Recipe
from answerable.kernel.records import guard_replace
from answerable.kernel.untrusted_text import printable


class ReviewCommandError(AnswerableError):
    """A review command cannot run as asked (empty queue, bad import rows ...)."""


def serve(recipe: Recipe, port: int, say: Callable[[str], None]) -> None:
    """Serve the review page on 127.0.0.1 until interrupted."""
    queue = open_local_queue(recipe)
    if not queue.summaries():
        queue.close()
        raise ReviewCommandError(
            f"{recipe.file}: the review queue is empty (fix: run `answerable build "
            f"{recipe.file}` first; items from auto_accept generators are not queued)"
        )
    page = None
    try:
        page = review_page(recipe, queue)
        server = make_server(page, port)
    except (ReviewServerError, ConfigError):
        queue.close()
        if page is not None:
            page.verifier.close()
        raise
    say(f"review page: {page_url(server)}  ({len(queue.summaries())} items; Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        say("stopped")
    finally:
        server.server_close()
        queue.close()
        page.verifier.close()


def review_page(recipe: Recipe, queue) -> ReviewPage:
    """The review page of a recipe's local queue: its policy, the readings run on the
    edited databases, corrections verified on the recipe's databases under its limits,
    and its keys. Close ``page.verifier`` when done."""
    hotkeys = hotkeys_of(recipe, HOTKEYS)
    readings = ReadingRunner(variants_of(recipe))
    verifier = verifier_of(recipe)
    return ReviewPage(queue, policy_of(recipe), recipe.dataset, readings, verifier, hotkeys)


def verifier_of(recipe: Recipe) -> Verifier:
    """What verifies corrections for the review commands: the recipe's databases, the
    build's edited copies, the recipe's execution limits."""
    databases = load_sources(recipe).databases
    return Verifier(databases, variants_of(recipe), limits_of(recipe))


def export(
    recipe: Recipe, path: Path, annotator: str | None, everything: bool, force: bool = False
) -> str:
    """Write the items to review (or all) to a CSV or JSONL file; a file already there is
    replaced only when it is an earlier export, or with ``force``."""
    guard_replace(path, force, ours=EXPORT_START[file_format(path)])
    with open_local_queue(recipe) as queue:
        skip: set[str] = set()
        if not everything:
            state = queue_state(recipe)
            spot = {s["id"] for s in queue.summaries() if s["spot_check"]}
            resolutions = state.outcome.resolutions
            auto = {i for i in spot if awaits_person(resolutions[i], spot_check=True)}
            settled = set(state.outcome.ids(ACCEPTED)) - auto | set(state.outcome.ids(REJECTED))
            mine = {d["item_id"] for d in state.decisions if d["annotator"] == annotator}
            skip = settled | mine
        rows = export_rows(queue, skip)
    write_rows(rows, path)
    who = f" for {annotator}" if annotator else ""
    return f"exported {len(rows)} items{who} to {path}"


def import_file(recipe: Recipe, path: Path, annotator: str | None) -> list[str]:
    """Record a filled-in export file; raises when any row was not recorded."""
    with open_local_queue(recipe) as queue, verifier_of(recipe) as verifier:
        done = import_decisions(queue, path, annotator, verifier)
    summary = (
        f"imported {path}: {done['recorded']} decisions recorded, {done['already']} already "
        f"recorded, {done['undecided']} rows without a verdict"
    )
    if done["problems"]:
        shown = [printable(p) for p in done["problems"][:20]]
        more = len(done["problems"]) - len(shown)
        raise ReviewCommandError(
            f"{summary}; {len(done['problems'])} rows not recorded (fix them and import the "
            "file again; recorded rows are not repeated):\n  "
            + "\n  ".join(shown)
            + (f"\n  ... and {more} more" if more > 0 else "")
        )
    return [summary]


def conflicts(recipe: Recipe) -> list[str]:
    """The items that need adjudication, with each annotator's decision."""
    state = queue_state(recipe)
    items = {i["id"]: i for i in state.items}
    ids = state.outcome.ids(CONFLICT)
    lines = [f"{len(ids)} items in conflict ({policy_of(recipe).describe()})"]
    for item_id in ids:
        item, resolution = items[item_id], state.outcome.resolutions[item_id]
        lines.append(f"{item_id}  {item['db_id']}  {item['label']}/{item.get('category') or '-'}")
        lines.append(f"  question: {item['question']}")
        for d in resolution.decisions:
            target = f" -> {d['label']}/{d['category'] or '-'}" if d["verdict"] == "relabel" else ""
            comment = f"  ({d['comment']})" if d.get("comment") else ""
            lines.append(f"  {d['annotator']}: {d['verdict']}{target}{comment}")
    if ids and policy_of(recipe).adjudicator is None:
        lines.append("settle them: name review.adjudicator in the recipe, then decide as them")
    lines += [f"note: {p}" for p in state.problems]
    return [printable(line) for line in lines]  # comments and names are other people's text


def progress(recipe: Recipe) -> list[str]:
    """Counts per status and annotator, and agreement overall and per category."""
    state = queue_state(recipe)
    counts = state.outcome.counts()
    lines = [
        f"{len(state.items)} items in the queue ({policy_of(recipe).describe()}): "
        + ", ".join(f"{counts[s]} {s}" for s in STATUSES)
    ]
    lines.append(awaiting_line(recipe, state))
    done = count_progress((i["id"] for i in state.items), state.decisions)
    per = ", ".join(f"{a} {n}" for a, n in done.by_annotator.items()) or "none"
    lines.append(f"{done.decided} items have a decision, {done.undecided} none; decisions: {per}")
    groups = {i["id"]: i.get("category") or i["label"] for i in state.items}
    report = agreement_report(state.decisions, groups)
    lines.append("agreement, overall: " + _agreement_line(report["overall"]))
    for group, stats in report["by_category"].items():
        if stats["items"]:
            lines.append(f"agreement, {group}: " + _agreement_line(stats))
    lines += [f"note: {p}" for p in state.problems]
    return [printable(line) for line in lines]


def awaiting_line(recipe: Recipe, state) -> str:
    """How many items await review, as the page counts them: open or in conflict (the
    build's figure) plus the spot checks nobody decided yet (the release counts those as
    accepted meanwhile)."""
    counts = state.outcome.counts()
    build = counts[OPEN] + counts[CONFLICT]
    spot = 0
    if backend_of(recipe) == "local":
        with open_local_queue(recipe) as queue:
            checks = {s["id"] for s in queue.summaries() if s["spot_check"]}
        resolutions = state.outcome.resolutions
        spot = sum(awaits_person(resolutions[i], spot_check=True) for i in checks)
    return (
        f"{build + spot} items await review: {build} open or in conflict (the build's "
        f"figure) + {spot} spot checks nobody decided yet (released as accepted meanwhile)"
    )


def _agreement_line(stats: dict) -> str:
    if not stats["items"]:
        return "no item has two annotators yet"
    parts = [f"{stats['items']} items with 2+ annotators, {_pct(stats['percent_agreement'])} agree"]
    for pair in stats["cohen"]:
        first, second = pair["annotators"]
        kappa = _num(pair["kappa"])
        parts.append(f"Cohen's kappa {first}/{second} {kappa} ({pair['items']} items)")
    fleiss = stats["fleiss"]
    if fleiss["items"]:
        parts.append(f"Fleiss' kappa {_num(fleiss['kappa'])} ({fleiss['items']} items)")
    return "; ".join(parts)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
