"""``${NAME}`` in recipe strings: environment variables, with defaults.

A recipe names its data root by a variable so that each user points it at their own
copy: ``path: ${ANSWERABLE_DATA}/querycarefully/unanswerable_questions.tsv``. A value is
taken, in order, from the environment, from a default written in the recipe
(``${NAME:-default}``), and for ``ANSWERABLE_DATA`` alone from the built-in default:
``shared/data`` beside the checkout that holds the recipe (the nearest folder above the
recipe with a ``.git`` or ``pyproject.toml``, then ``../shared/data`` from there), which
is where this project's public test data sits. A relative ``ANSWERABLE_DATA`` from the
environment is taken from the current directory. Any other variable is plain text put
in place. A variable with no value is a :class:`ConfigError` naming the recipe, the key
and the variable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from answerable.kernel.errors import ConfigError

DATA = "ANSWERABLE_DATA"
"""The variable that names the folder of public data a recipe reads."""

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
CHECKOUT_MARKERS = (".git", "pyproject.toml")


def checkout_data(recipe_file: Path) -> Path | None:
    """``../shared/data`` seen from the checkout holding ``recipe_file``; None outside one.

    >>> checkout_data(Path("/nowhere/at/all/recipe.yaml")) is None
    True
    """
    for folder in Path(recipe_file).resolve().parents:
        if any((folder / marker).exists() for marker in CHECKOUT_MARKERS):
            return folder.parent / "shared" / "data"
    return None


def data_root(recipe_file: Path, environ: Mapping[str, str] | None = None) -> Path | None:
    """The folder ``${ANSWERABLE_DATA}`` stands for in ``recipe_file``, None when unknown."""
    value = (os.environ if environ is None else environ).get(DATA)
    if value:
        return Path(value).expanduser().absolute()
    return checkout_data(recipe_file)


def expand(data: Any, file: Path, environ: Mapping[str, str] | None = None, key: str = "") -> Any:
    """``data`` (a recipe as read) with every ``${NAME}`` in its strings put in place.

    >>> expand({"path": "${HOME_X}/a.tsv"}, Path("r.yaml"), {"HOME_X": "/d"})
    {'path': '/d/a.tsv'}
    >>> expand(["${NOPE:-x}"], Path("r.yaml"), {})
    ['x']
    """
    environ = os.environ if environ is None else environ
    if isinstance(data, dict):
        return {k: expand(v, file, environ, _join(key, k)) for k, v in data.items()}
    if isinstance(data, list):
        return [expand(v, file, environ, f"{key}[{i}]") for i, v in enumerate(data)]
    if isinstance(data, str) and "${" in data:
        return REFERENCE.sub(lambda m: _value(m, file, environ, key), data)
    return data


def names(text: str) -> list[str]:
    """The variables a string refers to.

    >>> names("${ANSWERABLE_DATA}/spider/${X:-dev}.json")
    ['ANSWERABLE_DATA', 'X']
    """
    return [match.group(1) for match in REFERENCE.finditer(text)]


def _join(key: str, part: str) -> str:
    return f"{key}.{part}" if key else str(part)


def _value(match: re.Match, file: Path, environ: Mapping[str, str], key: str) -> str:
    name, default = match.group(1), match.group(2)
    if environ.get(name):
        return str(data_root(file, environ)) if name == DATA else environ[name]
    if default is not None:
        return default
    if name == DATA and checkout_data(file) is not None:
        return str(checkout_data(file))
    raise ConfigError(
        file,
        key or None,
        f"${{{name}}} is not set",
        fix=f"export {name}=<value>, or write ${{{name}:-<default>}} in the recipe",
    )


def cache_root() -> Path:
    """The user's cache folder (WordNet's index, charts): ``$ANSWERABLE_CACHE``, by
    default ``~/.cache/answerable``."""
    root = os.environ.get("ANSWERABLE_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "answerable"
