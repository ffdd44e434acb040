"""The demo databases, generated deterministically from a seed.

``clinic`` is a small MIMIC-like hospital database and ``league`` a football league.
The same seed always gives byte-identical SQLite files; another seed gives other data.

>>> from tempfile import TemporaryDirectory
>>> with TemporaryDirectory() as folder:
...     sorted(generate_demo(Path(folder)))
['clinic', 'league']
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from answerable.builders.demo.writer import TableRows, write_database
from answerable.kernel.recipe import Recipe
from answerable.kernel.records import guard_replace, read_json, write_json

DEMO_DATABASES = ("clinic", "league")


def _builder(db_id: str) -> tuple[str, Callable[[int], list[TableRows]]]:
    """A demo database's DDL and row builder (Faker is imported only to make one)."""
    from answerable.builders.demo import clinic, league

    return {
        "clinic": (clinic.DDL, clinic.build_clinic),
        "league": (league.DDL, league.build_league),
    }[db_id]


def generate_demo(target_dir: Path, seed: int = 7, replace: bool = True) -> dict[str, Path]:
    """Write ``<target_dir>/<db_id>.sqlite`` for every demo database; return ``{db_id: path}``.

    Each file is written to a temporary name in ``target_dir`` and renamed into place, so
    an existing file is replaced atomically and a killed run leaves no half file. With
    ``replace=False`` (a folder the user chose) an existing file is a ConfigError and
    nothing is written.
    """
    target_dir = Path(target_dir)
    for db_id in DEMO_DATABASES:
        guard_replace(target_dir / f"{db_id}.sqlite", force=replace)
    return {db_id: generate_one(db_id, target_dir, seed) for db_id in DEMO_DATABASES}


def generate_one(db_id: str, target_dir: Path, seed: int = 7) -> Path:
    """Write one demo database, ``<target_dir>/<db_id>.sqlite``, and return its path."""
    ddl, build = _builder(db_id)
    return write_database(Path(target_dir) / f"{db_id}.sqlite", ddl, build(seed))


def demo_engines(sources: list[dict]) -> list[str]:
    """The engines other than SQLite that a recipe's demo sources name, sorted."""
    named = {s.get("engine") for s in sources if s.get("databases") == "demo"}
    return sorted(named - {None, "sqlite"})


def copy_demo(paths: dict[str, Path], engines: list[str]) -> None:
    """Beside each demo SQLite file, its copy for each of ``engines`` (``clinic.duckdb``)."""
    from answerable.builders.engines import engine

    for name in engines:
        for path in paths.values():
            engine(name).copy_from_sqlite(path, path.with_suffix(f".{name}"))


def ensure_demo(recipe: Recipe, log: Callable[[str], None]) -> None:
    """Generate the demo databases into the work directory unless they are current."""
    seed = recipe.section("demo").get("seed", 7)
    marker = recipe.demo_dir / "demo.json"
    engines = demo_engines(recipe.data["sources"])
    wanted = {"seed": seed, "databases": list(DEMO_DATABASES)}
    wanted |= {"engines": engines} if engines else {}
    present = all((recipe.demo_dir / f"{name}.sqlite").is_file() for name in DEMO_DATABASES)
    if present and marker.is_file() and read_json(marker) == wanted:
        return
    log(f"generating demo databases (seed {seed}) in {recipe.demo_dir}")
    made = generate_demo(recipe.demo_dir, seed)
    copy_demo(made, engines)
    write_json(wanted, marker)


__all__ = [
    "DEMO_DATABASES",
    "copy_demo",
    "demo_engines",
    "ensure_demo",
    "generate_demo",
    "generate_one",
]
