"""The build's end summary names each step's time and cache state, then the time of the
checks, audit and release after the steps; -q keeps only results."""

from __future__ import annotations

import re

from tests.conftest import DEMO_RECIPE, run_in


def test_the_summary_names_every_step_its_time_and_the_cache(demo_build):
    cwd, first = demo_build
    steps = re.search(r"^steps: (.*)$", first.output, re.MULTILINE).group(1).split(", ")
    names = [step.split()[0] for step in steps]
    stages = ["seed_v1", "template_v1", "counterfactual", "drafting", "candidate_sql"]
    assert names == [*stages, "checks", "audit", "release"]
    assert all(re.fullmatch(r"\S+ \d+\.\d s", step) for step in steps), steps
    rerun = run_in(cwd, "build", DEMO_RECIPE)
    assert rerun.exit_code == 0, rerun.output
    again = re.search(r"^steps: (.*)$", rerun.output, re.MULTILINE).group(1).split(", ")
    assert all(step.endswith("(cached)") for step in again[: len(stages)]), again
    assert not any(step.endswith("(cached)") for step in again[len(stages) :]), again


def test_quiet_prints_the_results_only(demo_build):
    cwd, _first = demo_build
    quiet = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""
    assert "candidates: " in quiet.stdout and "release: " in quiet.stdout
    loud = run_in(cwd, "build", DEMO_RECIPE)
    assert "steps: " in loud.stderr and "loaded " in loud.stderr
