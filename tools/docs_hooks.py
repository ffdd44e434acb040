"""mkdocs hooks of the documentation site (mkdocs.yml: ``hooks``).

mkdocstrings' Python handler fixes the folders griffe searches when the handler is made,
in its ``on_config``; a folder of ``paths`` that does not exist then is dropped without a
word, and griffe falls back to the installed ``answerable``, whose stage packages it cannot
find. So :func:`on_config` lays out the package tree first, on every build, before any
other plugin's ``on_config`` runs.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from mkdocs.plugins import event_priority

REPO = Path(__file__).resolve().parents[1]
API_TREE = REPO / "build" / "docs-api"
"""Where :func:`api_tree` lays out the package as one folder (mkdocs.yml: ``paths``)."""


def api_tree(target: Path = API_TREE) -> Path:
    """The ``answerable`` package as one folder of links, for mkdocstrings to read.

    The stage folders live at the top of the repository and are mapped into the package
    by ``package-dir`` in pyproject.toml, which griffe does not follow; the links give it
    the layout the import system sees. The folder is laid out afresh each time, so a
    module removed from the code leaves no link behind.
    """
    mapping = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    package = target / "answerable"
    shutil.rmtree(package, ignore_errors=True)  # links only: their targets are not touched
    package.mkdir(parents=True)
    root = REPO / mapping["package-dir"]["answerable"]
    links = {entry.name: entry for entry in root.iterdir() if entry.name != "__pycache__"}
    for name, folder in mapping["package-dir"].items():
        if name != "answerable":
            links[name.split(".", 1)[1]] = REPO / folder
    for name, source in links.items():
        (package / name).symlink_to(source)
    return target


@event_priority(100)  # before mkdocstrings' on_config (priority 0) reads mkdocs.yml's paths
def on_config(config):
    """Lay out the package tree before mkdocstrings makes its Python handler."""
    api_tree()
    return config
