"""Packaging: every package folder is listed, so a non-editable install has all of it; the
compiled sqlglot is the one imported where it is installed."""

from __future__ import annotations

import importlib
import tomllib
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.metadata import PackageNotFoundError, version

import pytest

from tests.conftest import REPO


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapping = config["package-dir"]
    found = set()
    for package, folder in mapping.items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(REPO / folder)
            found.add(".".join([package, *relative.parts]))
    assert found - listed == set(), "add these to [tool.setuptools] packages"


def test_license_and_citation_match_pyproject():
    """LICENSE holds the license pyproject names, and CITATION.cff says the same license
    and version."""
    import yaml

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert "Apache License" in (REPO / "LICENSE").read_text()
    assert "Version 2.0, January 2004" in (REPO / "LICENSE").read_text()
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    assert (citation["license"], citation["version"]) == (project["license"], project["version"])
    assert citation["title"] and citation["authors"]


def test_sqlglots_compiled_build_is_the_one_imported():
    """pyproject asks for ``sqlglot[c]``: where its wheel is installed (``sqlglotc``, of the
    same version), sqlglot's parser, tokenizer, generator, expressions and optimizer load
    as compiled modules, not the pure Python files beside them."""
    try:
        compiled = version("sqlglotc")
    except PackageNotFoundError:
        pytest.skip("sqlglotc is not installed (no wheel for this platform): pure sqlglot")
    assert compiled == version("sqlglot")
    names = ["parser", "tokenizer_core", "generator", "expressions.core", "optimizer.qualify"]
    for name in names:
        module = importlib.import_module(f"sqlglot.{name}")
        assert module.__file__.endswith(tuple(EXTENSION_SUFFIXES)), module.__file__
