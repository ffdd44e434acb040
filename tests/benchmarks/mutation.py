"""Mutation testing (mutmut 2) of the modules that decide labels, results and releases,
each against its own test modules, so that a module takes minutes rather than hours.

    pip install -e '.[mutation]'
    nice -n 19 python tests/benchmarks/mutation.py annotation/policy.py   # one module
    nice -n 19 python tests/benchmarks/mutation.py                        # every module

mutmut edits the module in place, one mutant at a time, runs the module's tests, and
puts the file back; its cache lives in a temporary folder, never in the repository. Do
not edit the module while it runs. A survivor is a mutant the tests let through (mutmut's
"suspicious", slow but passing, counts as one); each is printed as ``file:line: code``
so it can be killed by a test or listed in the README as equivalent.

Last line, exactly: ``mutants=<n> killed=<k> survived=<s> timeout=<t> score=<k/(k+s)>``
"""

from __future__ import annotations

import argparse
import shlex
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCTESTS = "tests/test_doctests.py::test_docstring_examples[answerable.{}]"

# module -> its test modules (and its doctests, when it has examples)
MODULES = {
    "builders/executor.py": [
        "tests/test_executor.py",
        "tests/test_mutants_executor.py",
        DOCTESTS.format("builders.executor"),
    ],
    "builders/counterfactual/verify.py": [
        "tests/test_counterfactual.py",
        "tests/test_mutants_counterfactual.py",
    ],
    "builders/counterfactual/leaks.py": [
        "tests/test_counterfactual.py",
        "tests/test_mutants_counterfactual.py",
    ],
    "builders/templates/writing.py": [
        "tests/test_templates.py",
        "tests/test_mutants_templates.py",
        DOCTESTS.format("builders.templates.writing"),
    ],
    "builders/templates/expand.py": ["tests/test_templates.py", "tests/test_mutants_templates.py"],
    "builders/drafting/checks.py": [
        "tests/test_drafting_checks.py",
        "tests/test_mutants_drafting.py",
        DOCTESTS.format("builders.drafting.checks"),
    ],
    "builders/drafting/client.py": [
        "tests/test_drafting_client.py",
        "tests/test_mutants_drafting.py",
    ],
    "annotation/policy.py": ["tests/test_review_policy.py", "tests/test_mutants_review.py"],
    "annotation/agreement.py": [
        "tests/test_review_agreement.py",
        "tests/test_annotation_doctests.py::test_docstring_examples[agreement]",
    ],
    "annotation/store.py": ["tests/test_review_store.py"],
    "builders/sqlkit/describe.py": [
        "tests/test_sqlkit.py",
        "tests/test_mutants_sqlkit.py",
        DOCTESTS.format("builders.sqlkit.describe"),
    ],
    "builders/sqlkit/binding.py": [
        "tests/test_sqlkit.py",
        DOCTESTS.format("builders.sqlkit.binding"),
    ],
    "src/answerable/ids.py": [
        "tests/test_records.py",
        "tests/test_templates.py",  # its golden file fixes the ids
        "tests/test_mutants_ids.py",
        DOCTESTS.format("ids"),
    ],
    "release/publish.py": ["tests/test_cli.py"],
}
SURVIVED = ("bad_survived", "ok_suspicious")


def run_module(module: str, tests: list[str]) -> dict[str, int]:
    """Mutate one module against its tests; print its survivors; return its counts."""
    pytest = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    runner = f"sh -c {shlex.quote(f'cd {shlex.quote(str(REPO))} && {shlex.join(pytest)}')}"
    with tempfile.TemporaryDirectory(prefix="mutation-") as work:
        command = [
            sys.executable, "-m", "mutmut", "run",
            "--paths-to-mutate", str(REPO / module),
            "--tests-dir", str(REPO / "tests"),
            "--runner", runner,
            "--test-time-multiplier", "3", "--test-time-base", "20",
            "--simple-output",
        ]  # fmt: skip
        done = subprocess.run(command, cwd=work, capture_output=True, text=True)
        cache = Path(work) / ".mutmut-cache"
        if not cache.is_file():
            sys.exit(f"{module}: mutmut did not run: {done.stderr.strip()[-500:]}")
        counts, survivors = read_cache(cache)
    for line_number, code in survivors:
        print(f"  survived {module}:{line_number}: {code.strip()}")
    print(f"{module}: " + " ".join(f"{k}={v}" for k, v in counts.items()), flush=True)
    return counts


def read_cache(cache: Path) -> tuple[dict[str, int], list[tuple[int, str]]]:
    """Counts by outcome, and the lines of the surviving mutants, from mutmut's cache."""
    con = sqlite3.connect(cache)
    try:
        rows = con.execute(
            "SELECT m.status, l.line_number, l.line FROM Mutant m JOIN Line l ON m.line = l.id "
            "ORDER BY l.line_number, m.id"
        ).fetchall()
    finally:
        con.close()
    counts = {"mutants": len(rows), "killed": 0, "survived": 0, "timeout": 0, "untested": 0}
    survivors = []
    for status, line_number, code in rows:
        if status == "ok_killed":
            counts["killed"] += 1
        elif status in SURVIVED:
            counts["survived"] += 1
            survivors.append((line_number + 1, code))
        elif status == "bad_timeout":
            counts["timeout"] += 1
        else:
            counts["untested"] += 1
    return counts, survivors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="paths from the repository root (default: all)")
    args = parser.parse_args()
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        sys.exit(f"no test modules listed for {', '.join(unknown)}; known: {', '.join(MODULES)}")
    total = {"mutants": 0, "killed": 0, "survived": 0, "timeout": 0}
    for module in args.modules or list(MODULES):
        counts = run_module(module, MODULES[module])
        for key in total:
            total[key] += counts[key]
    tested = total["killed"] + total["survived"]
    score = total["killed"] / tested if tested else 0.0
    print(
        f"mutants={total['mutants']} killed={total['killed']} survived={total['survived']} "
        f"timeout={total['timeout']} score={score:.3f}"
    )


if __name__ == "__main__":
    main()
