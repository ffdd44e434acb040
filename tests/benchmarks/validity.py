"""Issue 12's figures: ambiguous items that pass the plausibility gate, the gate against
the hand labels, and the time of ``answerable audit`` on the demo candidates.

Run with ``python tests/benchmarks/validity.py``. It surveys Spider dev (schema level)
and GeoQuery with the counterfactual edits (every parent, every applicable edit), counts
the ambiguous items emitted, scores the gate against ``tests/fixtures/validity`` and times
``answerable audit raw/demo/recipe.yaml`` after a demo build in a scratch folder.

It then builds the demo and the four paper recipes and audits what each would ship
(:func:`shortcut_gains`): the shortcut gain, ``(accuracy - majority) / (1 - majority)``
of the larger of the words and surface models, cross-validated by family, with the
schemas the items are asked over. The demo's release holds back its drafts for review,
so the demo is audited on its candidates (what the release is once they are reviewed);
each recipe on its release. The line before the last is exactly
``shortcut_gain demo=<g> scare=<g> trustsql=<g> dte=<g> naq=<g>`` and the last line
exactly ``ambiguous_items=<n> gate_precision=<p> gate_recall=<r> audit_seconds=<s>``.
The gate's and the checks' precision and recall are printed per round of hand labels
(older, from outside, read blind). ``--gains-only`` prints the shortcut figures alone;
with ``--aflite`` it also prints what ``release.debias: aflite`` with its defaults
reaches on each audited set (items dropped, gain before and after).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from answerable.builders.counterfactual.survey import survey  # noqa: E402
from answerable.builders.sources import load_source  # noqa: E402
from tests.benchmarks.counterfactual_counts import SOURCES  # noqa: E402
from tests.validity_cases import load_cases, round_lines, score  # noqa: E402

DATA = REPO.parent / "shared" / "data"
GAINED = ("demo", "scare", "trustsql", "dte", "naq")
RECIPE = REPO / "raw" / "demo" / "recipe.yaml"
RECIPES = {
    "demo": RECIPE,
    **{name: REPO / "raw" / "recipes" / name / "recipe.yaml" for name in GAINED[1:]},
}


def ambiguous(folder: Path) -> int:
    """Ambiguous items the survey emits on Spider dev and GeoQuery."""
    total = 0
    for name in ("spider", "geoquery"):
        spec, base = SOURCES[name]
        found = survey(spec, base, folder / name)
        kinds = Counter(i["category"] for i in found.edited.items if i["label"] == "ambiguous")
        gated = Counter(
            r["reason"] for r in found.edited.rejects if r["reason"].startswith("implausible-")
        )
        print(f"{name}: ambiguous {dict(kinds)}; gate rejects {dict(sorted(gated.items()))}")
        total += sum(kinds.values())
    return total


def audit_seconds(folder: Path) -> float:
    """Wall time of ``answerable audit`` on the demo candidates (built first, untimed)."""
    cli = [str(Path(sys.executable).parent / "answerable")]
    subprocess.run(
        [*cli, "build", str(RECIPE), "--no-release"], cwd=folder, check=True, capture_output=True
    )
    started = time.perf_counter()
    done = subprocess.run(
        [*cli, "audit", str(RECIPE)], cwd=folder, check=True, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    print(done.stdout.rstrip())
    return seconds


def shortcut_gains(folder: Path, with_aflite: bool = False) -> dict[str, float]:
    """Per recipe of :data:`RECIPES`: build it in ``folder`` and audit it (see the module's
    docstring); prints each audit's figures and sizes, and with ``with_aflite`` what
    AFLite by family reaches on the audited items (:func:`aflite_line`)."""
    from answerable.builders.sources import load_sources
    from answerable.kernel.recipe import load_recipe
    from answerable.kernel.records import iter_parquet
    from answerable.pipeline import Workspace
    from answerable.release.cut.audit import audit, schemas_of
    from answerable.release.inspect import load_items

    cli = [str(Path(sys.executable).parent / "answerable")]
    gains = {}
    for name, path in RECIPES.items():
        subprocess.run([*cli, "build", str(path)], cwd=folder, check=True, capture_output=True)
        recipe = load_recipe(path, cwd=folder)
        schemas = schemas_of(load_sources(recipe).databases)
        if name == "demo":
            items = list(iter_parquet(Workspace(recipe.workdir, recipe.dataset).candidates))
        else:
            items = load_items(recipe.out / recipe.dataset / recipe.version)
        report = audit(items, schemas, seed=recipe.seed)
        gains[name] = report["shortcut_gain"]
        print(
            f"{name}: {report['items']} items {report['labels']}; majority "
            f"{report['majority']['accuracy']} surface {report['surface']['accuracy']} "
            f"words {report['words']['accuracy']}; carried by {', '.join(report['carriers'][:4])}"
        )
        if with_aflite:
            print(aflite_line(name, items, schemas, recipe.seed))
    return gains


def aflite_line(name: str, items: list[dict], schemas: dict, seed: int) -> str:
    """What ``release.debias: aflite`` with its defaults (target 0.3, at most a tenth of
    the items) reaches on the audited items."""
    from answerable.release.cut.debias import aflite

    _kept, report = aflite(items, seed, schemas)
    if "skipped" in report:
        return f"{name} aflite: skipped ({report['skipped']})"
    return (
        f"{name} aflite: dropped {report['items'] - report['kept']} of {report['items']} "
        f"in {report['dropped_families']} families {report['dropped_by_label']}; shortcut gain "
        f"{report['before']['shortcut_gain']} -> {report['after']['shortcut_gain']} "
        f"(target {report['target']}, {'reached' if report['reached'] else 'not reached'})"
    )


def gains_line(gains: dict[str, float]) -> str:
    """The benchmark's shortcut line."""
    return "shortcut_gain " + " ".join(f"{name}={gains[name]:.2f}" for name in GAINED)


def main() -> None:
    if "--gains-only" in sys.argv:  # the shortcut line alone, a few minutes shorter
        with tempfile.TemporaryDirectory() as scratch:
            gains = shortcut_gains(Path(scratch), "--aflite" in sys.argv)
        print(gains_line(gains))
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        n = ambiguous(folder)
        databases = {
            "chinook": DATA / "chinook" / "chinook.sqlite",
            "geography": DATA / "geoquery" / "geography.sqlite",
        }
        demo = folder / "demo-dbs"
        from answerable.builders.demo import generate_demo

        generate_demo(demo, 7)
        databases |= {"clinic": demo / "clinic.sqlite", "league": demo / "league.sqlite"}
        cases = load_cases()
        gate = score(cases, databases)
        print(f"gate: tp={gate.tp} fp={gate.fp} fn={gate.fn} tn={gate.tn}")
        for miss in gate.misses:
            print(f"  miss {miss}")
        spec, base = SOURCES["spider"]
        schemas = {k: v.schema for k, v in load_source(spec, base, None).databases.items()}
        print("\n".join(round_lines(cases, databases, schemas)))
        seconds = audit_seconds(folder)
        gains = shortcut_gains(folder)
    print(gains_line(gains))
    print(
        f"ambiguous_items={n} gate_precision={gate.precision:.3f} "
        f"gate_recall={gate.recall:.3f} audit_seconds={seconds:.1f}"
    )


if __name__ == "__main__":
    main()
