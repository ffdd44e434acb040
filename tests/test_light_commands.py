"""Commands that only read a release import nothing that building needs.

A core install (``pip install answerable`` without extras) holds polars, sqlglot,
jsonschema, click and pyyaml and what they pull; ``inspect``, ``verify``, ``diff``,
``export``, ``evaluate`` and ``--help`` must run there. Each check starts a fresh
interpreter, so what an earlier test imported cannot hide an import.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

import pytest

from answerable.kernel.extras import EXTRA_OF
from tests.conftest import REPO
from tests.release_fixture import default_splits, fixture_items, write_release

# The modules each reading command runs (cli.py imports its click commands up front).
COMMAND_MODULES = [
    "answerable.cli",
    "answerable.commands.verify",
    "answerable.commands.diff",
    "answerable.commands.export",
    "answerable.commands.evaluate",
    "answerable.release.inspect",
    "answerable.release.verify",
    "answerable.release.diff",
    "answerable.release.export.run",
    "answerable.release.evaluate.report",
]
OPTIONAL = sorted(EXTRA_OF)  # matplotlib, sklearn, nltk, argilla, faker, pyarrow ...

PROBE = """
import json, sys
{run}
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({optional!r}))))
"""


def optional_modules_after(run: str, watched: list[str] = OPTIONAL) -> list[str]:
    """The ``watched`` packages (default: the optional ones) in ``sys.modules`` after
    ``run`` in a fresh interpreter."""
    code = PROBE.format(run=run, optional=watched)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def command_run(*args: str) -> str:
    """Python that runs ``answerable ARGS`` in-process and keeps going after its exit."""
    return (
        "from answerable.cli import main\n"
        f"try:\n    main({list(args)!r}, standalone_mode=False)\n"
        "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
    )


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_reading_command_modules_import_no_optional_package(module):
    assert optional_modules_after(f"import {module}") == []


@pytest.fixture
def release(tmp_path, demo_dir):
    databases = {name: demo_dir / f"{name}.sqlite" for name in ("clinic", "league")}
    return write_release(tmp_path / "fixture" / "0.1.0", default_splits(fixture_items()), databases)


def test_reading_commands_run_without_optional_packages(release, tmp_path):
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"id": fixture_items()[0]["id"], "sql": None}) + "\n")
    runs = [
        ("--help",),
        ("inspect", str(release)),
        ("verify", str(release), "--execute"),
        ("diff", str(release), str(release)),
        ("export", str(release), "--format", "trustsql", "--out", str(tmp_path / "out")),
        ("evaluate", str(release), str(predictions), "--resamples", "10"),
        ("materialize", str(release), "--full", "--out", str(tmp_path / "full")),
        ("bio", str(release), "--out", str(tmp_path / "bio.jsonl")),
    ]
    for args in runs:
        assert optional_modules_after(command_run(*args)) == [], args


def test_reading_a_release_parses_and_explains_nothing(release, tmp_path):
    """Counting, checking (without executing), comparing and exporting a release's items
    need polars and the manifest's compiled schema check: neither sqlglot nor
    jsonschema's explaining validator (a tenth of a second each), nor numpy."""
    watched = [*OPTIONAL, "sqlglot", "jsonschema", "referencing", "numpy"]
    out = str(tmp_path / "out")
    runs = [
        ("inspect", str(release)),
        ("verify", str(release)),
        ("diff", str(release), str(release)),
        ("export", str(release), "--format", "trustsql", "--out", out),
    ]
    for args in runs:
        assert optional_modules_after(command_run(*args), watched) == [], args


def test_a_missing_extra_is_named_in_one_line(tmp_path):
    """A build on an install without Faker says which extra to install, no traceback."""
    code = (
        "import sys\n"
        "sys.modules['faker'] = None  # as if the [build] extra were not installed\n"
        "from answerable.cli import main\n"
        f"main(['demo', 'init', '--dir', {str(tmp_path / 'demo')!r}])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "error: this needs faker: install answerable's [build] extra (from a checkout: "
        "pip install -e '.[build]'; from a wheel: pip install '<wheel>[build]')"
    ]


def requirement_names(requirements: list[str]) -> set[str]:
    """The distribution names of requirement strings, as importable module names."""
    names = {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in requirements}
    return {name.replace("-", "_").replace("scikit_learn", "sklearn") for name in names}


def test_the_core_holds_no_optional_package_and_each_extra_holds_its_own():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert requirement_names(project["dependencies"]) & set(EXTRA_OF) == set()
    pulled = {"scipy"}  # by scikit-learn
    for module, extra in EXTRA_OF.items():
        if module not in pulled:
            assert module in requirement_names(extras[extra]), (module, extra)
    assert "answerable[build,review,llm,postgres,duckdb,embeddings]" in extras["test"]


def test_inspect_counts_from_its_columns_what_the_whole_items_give(release):
    from answerable.release.inspect import SUMMARY_FIELDS, load_items, summarize

    whole = summarize(load_items(release))
    assert summarize(load_items(release, SUMMARY_FIELDS)) == whole
    assert whole["total"] > 0 and len(whole["by_generator"]) > 1
