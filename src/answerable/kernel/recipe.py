"""Build recipes: read, check against ``schemas/recipe.schema.json``, resolve paths.

A recipe is YAML (or JSON). Every problem is reported as a :class:`ConfigError` that
names the recipe file, the key (``sources[0].path``) and the fix, before anything runs.
Relative input paths resolve against the recipe's folder; ``workdir`` and ``out``
resolve against the current directory. ``${NAME}`` in a string is an environment
variable (:mod:`answerable.kernel.variables`; ``${ANSWERABLE_DATA}`` has a default beside the
checkout), put in place before the checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from answerable.kernel.errors import ConfigError
from answerable.kernel.ids import content_hash
from answerable.kernel.variables import DATA, data_root, names
from answerable.kernel.variables import expand as expand_variables
from answerable.kernel.yamlfile import load_yaml
from answerable.schemas import first_error

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

INPUT_KEYS = ("path", "tables", "labels", "database", "databases", "schema")
FOLDER_KEYS = frozenset({"databases"})  # every other input key names a file
DEFAULT_WORKDIR = ".answerable"
DEFAULT_OUT = "releases"


@dataclass
class Recipe:
    """A checked recipe with resolved paths; ``data`` is the recipe with its variables put
    in place, ``written`` the recipe as written (``data`` when not given)."""

    file: Path
    data: dict[str, Any]
    workdir: Path
    out: Path
    written: dict[str, Any] | None = None
    base: Path = field(init=False)

    def __post_init__(self) -> None:
        self.base = self.file.parent

    @property
    def dataset(self) -> str:
        return self.data["dataset"]

    @property
    def version(self) -> str:
        return self.data["version"]

    @property
    def seed(self) -> int:
        return self.data["seed"]

    def section(self, name: str) -> dict[str, Any]:
        """One top-level section (``execution``, ``release`` ...), empty when absent."""
        return self.data.get(name) or {}

    def signature(self) -> str:
        """A hash of what the recipe asks for: of the recipe as written, so a data root
        set by a variable does not change it (the input files' hashes are in the
        manifest), and not of how many processes and how large shards build it (those
        never change an output)."""
        written = self.data if self.written is None else self.written
        return content_hash(without_keys(written, HOW_TO_RUN))

    def resolve(self, value: str) -> Path:
        """An input path from the recipe, resolved against the recipe's folder."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else (self.base / path)

    @property
    def demo_dir(self) -> Path:
        """Where the demo databases are generated when the recipe asks for them."""
        return self.workdir / "demo"


HOW_TO_RUN = (
    ("workers",),
    ("execution", "shard_size"),
    ("templates", "workers"),
    ("execution", "backend"),
    ("execution", "ray_address"),
)
"""Recipe keys that change how fast a build runs, never what it makes."""


def without_keys(data: dict, paths: tuple[tuple[str, ...], ...]) -> dict:
    """``data`` without the keys at ``paths`` (each a key, or a section and its key).

    >>> without_keys({"a": 1, "b": {"c": 2, "d": 3}}, (("a",), ("b", "c")))
    {'b': {'d': 3}}
    """
    kept = dict(data)
    for path in paths:
        holder = kept
        for key in path[:-1]:
            if not isinstance(holder.get(key), dict):
                break
            holder[key] = holder = dict(holder[key])
        else:
            holder.pop(path[-1], None)
    return kept


def load_recipe(path: str | Path, cwd: Path | None = None) -> Recipe:
    """Read and check a recipe; raise :class:`ConfigError` on the first problem."""
    file = Path(path)
    written = _read_yaml(file)
    data = expand_variables(written, file)
    _check_integers(file, data, [])
    error = first_error("recipe", data)
    if error is not None:
        raise _config_error(file, error)
    cwd = cwd or Path.cwd()
    workdir, out = data.get("workdir", DEFAULT_WORKDIR), data.get("out", DEFAULT_OUT)
    recipe = Recipe(file, data, cwd / workdir, cwd / out, written)
    _check_license(file, (data.get("release") or {}).get("license"))
    _check_inputs(recipe)
    return recipe


INTEGER_RANGE = (-(2**63), 2**63 - 1)
"""The integers a recipe may hold: what SQLite, Parquet and numpy can store (64 bits)."""


def _check_integers(file: Path, value, parts: list) -> None:
    """Refuse an integer outside :data:`INTEGER_RANGE` anywhere in the recipe (YAML reads
    any number of digits; the schema's bounds say nothing of the other end)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_integers(file, item, [*parts, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_integers(file, item, [*parts, index])
    elif isinstance(value, int) and not INTEGER_RANGE[0] <= value <= INTEGER_RANGE[1]:
        raise ConfigError(
            file,
            key_path(parts) or None,
            f"{len(str(abs(value)))}-digit integer is out of range",
            fix=f"use a number between {INTEGER_RANGE[0]:,} and {INTEGER_RANGE[1]:,}",
        )


def _check_license(file: Path, license_id: str | None) -> None:
    """``release.license`` must be an SPDX license id or a ``LicenseRef-`` of one's own:
    the card, LICENSE file and Croissant metadata link it as SPDX's."""
    if license_id is None or license_id.startswith("LicenseRef-"):
        return
    from license_expression import get_spdx_licensing  # its list loads in ~0.1 s

    if get_spdx_licensing().validate(license_id).errors:
        raise ConfigError(
            file,
            "release.license",
            f"{license_id!r} is not an SPDX license id",
            fix="use an id from the SPDX license list (e.g. CC-BY-4.0, MIT) or "
            "LicenseRef-<name> for a license of your own",
        )


def _read_yaml(file: Path) -> dict:
    if not file.is_file():
        raise ConfigError(
            file,
            None,
            "recipe file not found",
            fix="give the path of a YAML recipe, e.g. raw/demo/recipe.yaml",
        )
    try:
        data = load_yaml(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(
            file,
            None,
            f"not valid YAML: {where}{problem}",
            fix="correct the YAML syntax at that place",
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(file, None, "not a text file", fix="give a YAML recipe") from None
    if not isinstance(data, dict):
        raise ConfigError(
            file,
            None,
            "a recipe must be a mapping of keys to values",
            fix="start from raw/demo/recipe.yaml",
        )
    return data


def key_path(parts) -> str:
    """``sources[0].path`` from a JSON path (``['sources', 0, 'path']``)."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _config_error(file: Path, error: ValidationError) -> ConfigError:
    parts = list(error.absolute_path)
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(known))
        return ConfigError(
            file,
            key_path([*parts, unknown[0]]),
            "unknown key",
            fix=f"remove it or use one of: {', '.join(known)}",
        )
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return ConfigError(
            file,
            key_path(parts) or None,
            f"missing key '{missing}'",
            fix=_describe_key(error.schema, missing),
        )
    fix = error.schema.get("description") or f"expected {error.validator}: {error.validator_value}"
    return ConfigError(file, key_path(parts) or None, error.message, fix=fix)


def _describe_key(schema: dict, key: str) -> str:
    described = schema.get("properties", {}).get(key, {}).get("description")
    return f"add '{key}' ({described})" if described else f"add '{key}'"


def _check_inputs(recipe: Recipe) -> None:
    written = (recipe.written or recipe.data)["sources"]
    seen: dict[str, int] = {}
    for index, source in enumerate(recipe.data["sources"]):
        first = seen.setdefault(source["name"], index)
        if first != index:
            raise ConfigError(
                recipe.file,
                f"sources[{index}].name",
                f"{source['name']!r} is also the name of sources[{first}]",
                fix="give each source its own name",
            )
        for key in INPUT_KEYS:
            value = source.get(key)
            if value is None or (key == "databases" and value == "demo"):
                continue
            origin = source.get("origin")
            kind = "folder" if key in FOLDER_KEYS else "file"
            where = f"sources[{index}].{key}"
            _check_exists(recipe, where, value, written[index][key], origin, kind)
        if source.get("databases") == "demo" and "demo" not in recipe.data:
            raise ConfigError(
                recipe.file,
                f"sources[{index}].databases",
                "'demo' databases are used but the recipe has no 'demo' section",
                fix="add 'demo: {seed: 7}' at the top level",
            )
    listed = (("templates", "paths", None), ("drafting", "unrelated_from", "file"))
    for section, key, kind in listed:
        paths = recipe.section(section).get(key, [])
        as_written = ((recipe.written or recipe.data).get(section) or {}).get(key, [])
        for index, (value, text) in enumerate(zip(paths, as_written, strict=True)):
            _check_exists(recipe, f"{section}.{key}[{index}]", value, text, kind=kind)
    entries = recipe.section("templates").get("text2sql", [])
    written = ((recipe.written or recipe.data).get("templates") or {}).get("text2sql", [])
    for index, (entry, text) in enumerate(zip(entries, written, strict=True)):
        for key in ("path", "database"):
            where = f"templates.text2sql[{index}].{key}"
            _check_exists(recipe, where, entry[key], text[key], kind="file")


def _check_exists(
    recipe: Recipe,
    key: str,
    value: str,
    written: str,
    origin: str | None = None,
    kind: str | None = None,
) -> None:
    """An input path must exist, and be a ``kind`` (``file`` or ``folder``; None: either).

    A recipe may name inputs anywhere (``../shared/data/...``): they are only read. What
    a build writes goes to the work folder and the release folder alone."""
    path = recipe.resolve(value)
    if path.exists():
        if kind == "file" and path.is_dir():
            raise ConfigError(recipe.file, key, f"{path} is a folder", fix="name a file in it")
        if kind == "folder" and not path.is_dir():
            fix = "name the folder that holds the files"
            raise ConfigError(recipe.file, key, f"{path} is a file, not a folder", fix=fix)
        return
    if DATA not in names(written):
        raise ConfigError(
            recipe.file,
            key,
            f"not found: {path}",
            fix="correct the path; relative paths are resolved against the recipe's folder",
        )
    raise ConfigError(recipe.file, key, *_missing_data(recipe, path, written, origin))


def _missing_data(recipe: Recipe, path: Path, written: str, origin: str | None) -> tuple:
    """What is missing under ``${ANSWERABLE_DATA}``, and where to get it."""
    root = data_root(recipe.file)
    where = "the data folder does not exist" if root and not root.is_dir() else "no such file"
    get = f"get it from {origin}" if origin else "get the data (its README names each source)"
    return (
        f"not found: {path} ({written}, with {DATA}={root}: {where})",
        f"{get} and put it there, or export {DATA}=<the folder that holds your copy>",
    )
