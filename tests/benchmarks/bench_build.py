"""The whole build at two sizes, then the large one again with everything cached.

Run with ``python tests/benchmarks/bench_build.py [QUOTA_SMALL QUOTA_LARGE]`` (nice it on
a shared machine). The recipe is the demo's (seeds, the 45 templates, counterfactual
edits, offline drafting with candidate SQL, release cut), without human review, with
every template's quota set to QUOTA_SMALL, then QUOTA_LARGE (defaults 200 and 3150: about
20,000 and 200,000 candidates; measured: quota 10, 50, 160, 200, 3000, 3100 gave 2,064,
6,591, 16,159, 19,279 (19,022 after the drafting checks tightened), 193,463, 198,827.
Most drafts of templated parents repeat an earlier question and are dropped, so the
drafts grow slower than the quota; the templates, 45 x quota, and their edits make the
rest). Each build runs in a fresh folder as its own process (``answerable build``) on
the machine's cores; the large one then runs again in its folder, where every step is
cached. Each build's progress log is kept in its folder while it runs, and its line of
step times is printed after its figures.

The last line is exactly
``items_small=<n1> seconds_small=<s1> items_large=<n2> seconds_large=<s2> growth=<g>
rerun_seconds=<r> peak_rss_mb=<m>`` with ``growth = (s2 / s1) / (n2 / n1)`` and ``m``
the largest resident memory of any process of the large build (the build or one of its
workers, from ``wait4``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

DEMO = Path(__file__).resolve().parents[2] / "raw" / "demo"
COMMAND = [sys.executable, "-c", "from answerable.cli import main; main()"]


def recipe_in(folder: Path, quota: int) -> Path:
    """The demo's inputs in ``folder`` and a recipe with this template quota, no review."""
    shutil.copytree(DEMO, folder / "demo")
    recipe = folder / "demo" / "recipe.yaml"
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data["templates"]["quota"] = quota
    data.pop("review", None)
    data["drafting"].pop("llm", None)  # offline drafting whatever the environment says
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return recipe


def timed_build(recipe: Path, cwd: Path) -> tuple[int, float, float]:
    """``(candidates, wall seconds, peak RSS in MB of the build's process tree)``; prints
    the build's line of step times."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    log = cwd / "build.log"
    started = time.perf_counter()
    with log.open("a", encoding="utf-8") as err:
        build = subprocess.Popen(
            [*COMMAND, "build", str(recipe)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        out = build.stdout.read()
        _pid, status, usage = os.wait4(build.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"build failed ({status}):\n{out}\n{log.read_text(encoding='utf-8')[-4000:]}")
    candidates = int(re.search(r"^candidates: (\d+) items", out, re.MULTILINE).group(1))
    steps = re.findall(r"^steps: .*$", log.read_text(encoding="utf-8"), re.MULTILINE)
    print(f"  {steps[-1]}" if steps else "  (no step times in the log)")
    return candidates, seconds, usage.ru_maxrss / 1024  # Linux reports KiB


def main(small: int = 200, large: int = 3150) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        figures = {}
        for name, quota in (("small", small), ("large", large)):
            (root / name).mkdir()
            recipe = recipe_in(root / name, quota)
            figures[name] = timed_build(recipe, root / name)
            n, s, rss = figures[name]
            print(f"{name}: quota {quota}: {n} candidates in {s:.1f} s, peak {rss:.0f} MB")
        _n, rerun, rerun_rss = timed_build(root / "large" / "demo" / "recipe.yaml", root / "large")
        print(f"large again, cached: {rerun:.1f} s, peak {rerun_rss:.0f} MB")
    (n1, s1, _), (n2, s2, peak) = figures["small"], figures["large"]
    growth = (s2 / s1) / (n2 / n1)
    print(
        f"items_small={n1} seconds_small={s1:.1f} items_large={n2} seconds_large={s2:.1f} "
        f"growth={growth:.2f} rerun_seconds={rerun:.1f} peak_rss_mb={peak:.0f}"
    )


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
