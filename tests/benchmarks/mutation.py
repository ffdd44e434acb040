"""Mutation testing (mutmut 2) of the modules that decide labels, results and releases,
each against its own test modules, so that a module takes minutes rather than hours.

    pip install -e '.[test,mutation]'
    nice -n 10 python tests/benchmarks/mutation.py annotation/policy.py     # one module
    nice -n 10 python tests/benchmarks/mutation.py --per-module 0 annotation/policy.py
    nice -n 10 python tests/benchmarks/mutation.py --reuse /tmp/mutation   # the table

Each module runs a seeded sample of ``--per-module`` of its mutants (9 by default; 0
runs every mutant). The sample is chosen by a hash of the mutated line's text and the
mutation's place in it, so it stays put when other lines change. mutmut edits the
module in place, one mutant at a time, runs the module's tests, and puts the file back;
its cache lives in a temporary folder, never in the repository, and the module is checked
byte for byte afterwards. Do not edit the module while it runs.

A mutant is killed when its tests fail in any way (a failing test, an import or
collection error); mutmut's "suspicious" (killed, but slowly) is killed too. A survivor
is printed as ``file:line: code`` so it can be killed by a test or listed in the README
as equivalent. With ``--reuse DIR`` each module's result is kept in DIR and used again
while the module, its table entry, its test files and the test helpers are unchanged.

A table of the modules, then the last line, exactly:
``mutants=<n> killed=<k> survived=<s> timeout=<t> score=<k/(k+s)>``
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import json
import os
import select
import shlex
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from mutmut import Context, RelativeMutationID, list_mutations, mutate

REPO = Path(__file__).resolve().parents[2]
DOCTESTS = "tests/test_doctests.py::test_docstring_examples[answerable.{}]"
METRICS = ["tests/test_evaluate_metrics.py", "tests/test_evaluate_ehrsql.py"]
SCORER = [*METRICS, "tests/test_evaluate_predictions.py"]
COUNTERFACTUAL = [
    "tests/test_counterfactual.py",
    "--deselect=tests/test_counterfactual.py::test_doctests[candidates]",  # 45 s, another module
    "tests/test_mutants_counterfactual.py",
]

# module -> its test modules, doctests, or other pytest arguments (the slow end-to-end
# tests that build the demo are left out: they would cost a minute per mutant)
MODULES = {
    "builders/executor.py": [
        "tests/test_executor.py",
        "tests/test_mutants_executor.py",
        DOCTESTS.format("builders.executor"),
    ],
    "builders/counterfactual/verify.py": COUNTERFACTUAL,
    "builders/counterfactual/leaks.py": COUNTERFACTUAL,
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
    "src/answerable/kernel/ids.py": [
        "tests/test_records.py",
        "tests/test_templates.py",  # its golden file fixes the ids
        "tests/test_mutants_ids.py",
        DOCTESTS.format("ids"),
    ],
    "release/cut/sample.py": ["tests/test_release_sample.py"],
    "release/cut/split.py": ["tests/test_release_split.py", DOCTESTS.format("release.split")],
    "release/cut/leakage.py": ["tests/test_release_leakage.py"],
    "release/cut/guards.py": ["tests/test_release_guards.py"],
    "release/cut/write.py": [
        "tests/test_release_write.py",
        "--deselect=tests/test_release_write.py::"
        "test_the_demo_releases_a_question_split_with_unanswerable_items_only_in_test",
        "--deselect=tests/test_release_write.py::"
        "test_the_readme_consumer_runs_a_gold_query_from_the_release_folder_alone",
    ],
    "release/verify.py": [
        "tests/test_verify.py",
        "--deselect=tests/test_verify.py::test_the_build_refuses_a_damaged_release",
    ],
    "release/cut/publish.py": [
        "tests/test_release_guards.py",
        "tests/test_cli.py::test_published_version_is_never_rewritten",
        "tests/test_cli.py::test_rerun_reuses_finished_steps",
    ],
    "release/evaluate/accuracy.py": METRICS,
    "release/evaluate/bootstrap.py": METRICS,
    "src/answerable/commands/evaluate.py": [
        "tests/test_evaluate_cli.py::"
        "test_writing_and_endless_sql_are_errors_and_the_database_is_unchanged",
        *METRICS,
    ],
    "release/evaluate/compare.py": METRICS,
    "release/evaluate/detection.py": METRICS,
    "release/evaluate/metric.py": METRICS,
    "release/evaluate/predictions.py": SCORER,
    "release/evaluate/references.py": METRICS,
    "release/evaluate/registry.py": METRICS,
    "release/evaluate/reliability.py": METRICS,
    "release/evaluate/report.py": SCORER,
    "release/evaluate/run.py": SCORER,
    "release/evaluate/scare.py": METRICS,
    "release/evaluate/tally.py": METRICS,
}
COUNTS = ("mutants", "killed", "survived", "timeout")
KILLED = ("ok_killed", "ok_suspicious")  # suspicious: the tests failed, slowly
# What mutmut runs per mutant: ask the test server to run pytest with these arguments.
# Any failure of pytest (exit code 2 is an import or collection error) is a kill, which
# mutmut 2 reads from exit code 1 only.
CLIENT = (
    "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect({socket!r}); "
    "s.sendall(chr(0).join(sys.argv[1:]).encode() + bytes(1)); "
    "sys.exit(1 if s.makefile().readline().strip() != '0' else 0)"
)
# The third-party modules the package and its tests import, loaded once by the server
# (inflect alone takes seconds); never the package itself, which each run imports anew.
PRELOAD = (
    "pytest", "hypothesis", "pytest_timeout", "polars", "pyarrow", "numpy", "sqlglot",
    "jsonschema", "jsonschema_rs", "referencing", "click", "yaml", "faker", "openai",
    "inflect", "nltk", "sklearn", "matplotlib",
)  # fmt: skip
# mutmut imports this from its working folder: it skips the mutants outside the sample
SAMPLE_HOOK = """import json
CHOSEN = {tuple(key) for key in json.load(open("chosen.json"))}
def pre_mutation(context):
    key = (context.mutation_id.line_number, context.mutation_id.index)
    context.skip = key not in CHOSEN
"""


def sample(module: str, per_module: int) -> list[tuple[int, int]]:
    """The (line number, index) of the mutants to run: ``per_module`` of them chosen by a
    hash of each mutant's line text and index, or every mutant when ``per_module`` is 0."""
    mutants = list_mutations(Context(filename=str(REPO / module)))

    def rank(m) -> tuple[str, int]:
        text = f"{module}\0{m.line.strip()}\0{m.index}".encode()
        return hashlib.sha256(text).hexdigest(), m.line_number

    chosen = sorted(mutants, key=rank)[: per_module or None]
    return sorted((m.line_number, m.index) for m in chosen)


def run_module(module: str, tests: list[str], per_module: int, server: str) -> dict:
    """Mutate one module against its tests, run by the test server listening at
    ``server``: the module's counts and survivors."""
    path = REPO / module
    original = path.read_bytes()
    # in one process, slow tests included: the default run's -n auto and -m 'not slow' off
    pytest = ["-x", "-q", "-p", "no:cacheprovider", "-n", "0", "-m", "slow or not slow", *tests]
    runner = shlex.join([sys.executable, "-c", CLIENT.format(socket=server), *pytest])
    with tempfile.TemporaryDirectory(prefix="mutation-") as work:
        (Path(work) / "chosen.json").write_text(json.dumps(sample(module, per_module)))
        (Path(work) / "mutmut_config.py").write_text(SAMPLE_HOOK)
        command = [
            sys.executable, "-m", "mutmut", "run",
            "--paths-to-mutate", str(path),
            "--tests-dir", str(REPO / "tests"),
            "--runner", runner,
            "--test-time-multiplier", "3", "--test-time-base", "20",
            "--simple-output", "--no-progress",
        ]  # fmt: skip
        try:
            done = subprocess.run(command, cwd=work, capture_output=True, text=True)
        finally:
            if path.read_bytes() != original:
                path.write_bytes(original)
                path.with_name(f"{path.name}.bak").unlink(missing_ok=True)
                sys.exit(f"{module}: mutmut left it mutated; the original is put back")
        cache = Path(work) / ".mutmut-cache"
        result = read_cache(cache, original.decode()) if cache.is_file() else {"mutants": 0}
        if not result["mutants"]:  # e.g. the tests failed without a mutant
            output = (done.stdout + done.stderr).strip()[-800:]
            sys.exit(f"{module}: mutmut ran no mutant (exit {done.returncode}): {output}")
        return result


def read_cache(cache: Path, source: str) -> dict:
    """Counts by outcome, and each survivor as ``line: code -> mutated code``, from
    mutmut's cache; ``source`` is the module's text."""
    con = sqlite3.connect(cache)
    try:
        rows = con.execute(
            'SELECT m.status, l.line_number, l.line, m."index" FROM Mutant m '
            "JOIN Line l ON m.line = l.id WHERE m.status != 'skipped' "
            'ORDER BY l.line_number, m."index"'
        ).fetchall()
    finally:
        con.close()
    result = {"mutants": len(rows), "killed": 0, "survived": 0, "timeout": 0, "survivors": []}
    for status, line_number, code, index in rows:
        if status in KILLED:
            result["killed"] += 1
        elif status == "bad_survived":
            result["survived"] += 1
            mutated = mutated_line(source, RelativeMutationID(code, index, line_number))
            result["survivors"].append(f"{line_number + 1}: {code.strip()} -> {mutated}")
        elif status == "bad_timeout":
            result["timeout"] += 1
        else:
            sys.exit(f"{cache}: a mutant was left {status}")
    return result


def mutated_line(source: str, mutant: RelativeMutationID) -> str:
    """The text of the mutant's line once mutated."""
    mutated, _ = mutate(Context(source=source, mutation_id=mutant))
    return mutated.split("\n")[mutant.line_number].strip()


def result_key(module: str, per_module: int) -> str:
    """What a module's result depends on: the module, its table entry and sample size,
    its test files and the test helpers, and mutmut's version."""
    files = [REPO / module, *(REPO / "tests").glob("[!t]*.py"), REPO / "tests/timeouts.py"]
    files += [REPO / t.split("::")[0] for t in MODULES[module] if not t.startswith("-")]
    digest = hashlib.sha256(json.dumps([module, MODULES[module], per_module]).encode())
    digest.update(version("mutmut").encode())
    for file in sorted(set(files)):
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def module_result(module: str, per_module: int, reuse: Path | None, server: str) -> dict:
    """A module's result: kept from an earlier run in ``reuse`` when nothing changed."""
    if reuse is None:
        return run_module(module, MODULES[module], per_module, server)
    kept = reuse / f"{module.replace('/', '.')}-{result_key(module, per_module)}.json"
    if kept.is_file():
        return json.loads(kept.read_text()) | {"reused": True}
    result = run_module(module, MODULES[module], per_module, server)
    reuse.mkdir(parents=True, exist_ok=True)
    kept.write_text(json.dumps(result, indent=1))
    return result


def serve(address: str) -> None:
    """The test server: load the heavy third-party modules once, then for each request
    (pytest's arguments) fork a child that imports the package afresh from its files,
    as they are now, and runs pytest; answer with its exit code. A child whose client
    went away (mutmut's time limit) is killed."""
    sys.dont_write_bytecode = True  # a mutant's bytecode must never outlive it
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    assert not [m for m in sys.modules if m.split(".")[0] in ("answerable", "tests")]
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(address)
    listener.listen()
    while True:
        connection, _ = listener.accept()
        with connection:
            request = b""
            while not request.endswith(b"\0"):
                request += connection.recv(65536) or b"\0"
            arguments = request[:-1].decode().split("\0")
            code = run_tests(arguments, connection, listener)
            with contextlib.suppress(OSError):
                connection.sendall(f"{code}\n".encode())


def run_tests(arguments: list[str], connection: socket.socket, listener: socket.socket) -> int:
    """pytest's exit code for ``arguments``, run in a forked child; -1 when the client
    that asked went away first (the child is then killed)."""
    child = os.fork()
    if child == 0:
        listener.close()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.chdir(REPO)
        import pytest

        code = 3
        try:
            code = int(pytest.main(arguments))
        finally:
            os._exit(code)
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if select.select([connection], [], [], 0.2)[0]:  # readable here means closed
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            return -1


def score(counts: dict) -> float:
    tested = counts["killed"] + counts["survived"]
    return counts["killed"] / tested if tested else 0.0


def run_table(modules: list[str], per_module: int, reuse: Path | None, server: str) -> dict:
    """Each module's result, printed (survivors first) as it comes."""
    results = {}
    for module in modules:
        result = module_result(module, per_module, reuse, server)
        for survivor in result["survivors"]:
            print(f"  survived {module}:{survivor}")
        print(f"{module}: " + " ".join(f"{k}={result[k]}" for k in COUNTS), flush=True)
        results[module] = result
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="paths from the repository root (default: all)")
    parser.add_argument("--per-module", type=int, default=9, help="mutants per module (0: all)")
    parser.add_argument("--reuse", type=Path, help="folder keeping each module's result")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # the test server's socket
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        sys.exit(f"no test modules listed for {', '.join(unknown)}; known: {', '.join(MODULES)}")
    with tempfile.TemporaryDirectory(prefix="mutation-server-") as folder:
        address = str(Path(folder) / "socket")
        server = subprocess.Popen([sys.executable, __file__, "--serve", address])
        try:
            while not Path(address).exists():
                if server.poll() is not None:
                    sys.exit("the test server did not start")
                time.sleep(0.2)
            results = run_table(args.modules or list(MODULES), args.per_module, args.reuse, address)
        finally:
            server.kill()
            server.wait()
    width = max(len(m) for m in results)
    print(f"{'module':<{width}} " + " ".join(f"{k:>8}" for k in (*COUNTS, "score")))
    for module, result in results.items():
        cells = " ".join(f"{result[k]:>8}" for k in COUNTS)
        reused = "  (reused)" if result.get("reused") else ""
        print(f"{module:<{width}} {cells} {score(result):>8.3f}{reused}")
    total = {k: sum(r[k] for r in results.values()) for k in COUNTS}
    print(
        f"mutants={total['mutants']} killed={total['killed']} survived={total['survived']} "
        f"timeout={total['timeout']} score={score(total):.3f}"
    )


if __name__ == "__main__":
    main()
