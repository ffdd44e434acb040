"""Every docstring example in the package runs and holds.

The package's folders are mapped onto ``answerable.*`` by ``package-dir`` in
pyproject.toml, so pytest's ``--doctest-modules`` would import them a second time under
their folder names; this module runs :mod:`doctest` on the installed modules instead.
A module is collected when its source holds an example (``>>>``); the annotation
modules that ``test_annotation_doctests.py`` already runs are left to it.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

from tests.test_annotation_doctests import MODULES as ANNOTATION_MODULES

ALREADY_RUN = {f"answerable.annotation.{name}" for name in ANNOTATION_MODULES}
# Mapped from separate folders, so each is walked on its own.
ROOTS = ("answerable", "answerable.builders", "answerable.annotation", "answerable.release")


def modules_with_examples() -> list[str]:
    """Names of the package's modules whose source holds a docstring example."""
    found = set()
    for root in ROOTS:
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(package.__path__, f"{root}."):
            spec = info.module_finder.find_spec(info.name)
            if spec is None or spec.origin is None or info.name in ALREADY_RUN:
                continue
            if ">>> " in Path(spec.origin).read_text(encoding="utf-8"):
                found.add(info.name)
    return sorted(found)


MODULES = modules_with_examples()


def test_the_package_has_examples_to_run():
    """The walk finds the modules the issue names (a broken walk would run nothing)."""
    for name in ("executor", "sqlkit.describe", "templates.writing", "drafting.checks"):
        assert f"answerable.builders.{name}" in MODULES
    assert "answerable.kernel.ids" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    """Every example that is not marked ``+SKIP`` runs, and none fails."""
    module = importlib.import_module(name)
    examples = [e for t in doctest.DocTestFinder().find(module) for e in t.examples]
    runnable = [e for e in examples if not e.options.get(doctest.SKIP)]
    assert examples, f"{name}: '>>> ' in the source but no example found"
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert (failed, attempted) == (0, len(runnable))
