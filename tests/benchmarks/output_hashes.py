"""The sha256 of a build's outputs, to prove a change leaves them byte-identical.

Run with ``python tests/benchmarks/output_hashes.py [RECIPE | chinook | survey NAME]
[--keep FOLDER]``. Save the output before a change and ``diff`` it with the output after:
no line may differ.

- ``RECIPE`` (the demo's by default): builds the recipe with ``answerable build`` in a
  fresh temporary folder, offline whatever the environment says (``OPENAI_*`` variables
  are dropped), and prints one line ``<sha256>  <path>`` for the candidates, the rejects
  report and every file of every release written, sorted by path.
- ``chinook``: the same for a recipe over Chinook from ``../shared/data``, with the
  project's Chinook test questions as its seeds, every counterfactual edit and drafted
  category, and a release cut while drafts await review.
- ``survey NAME``: the counterfactual survey of one real source (``spider``,
  ``geoquery``, ``restaurants`` or ``chinook``, as ``counterfactual_counts.py`` runs it),
  one line per record list (verified parents, their rejects, edited items, their
  rejects), each hashed as canonical JSON Lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from string import Template

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "raw" / "demo" / "recipe.yaml"
DATA = REPO.parent / "shared" / "data"
CHINOOK_QUESTIONS = REPO / "tests" / "fixtures" / "counterfactual" / "chinook.jsonl"
COMMAND = [sys.executable, "-c", "from answerable.cli import main; main()"]

CHINOOK_RECIPE = REPO / "tests" / "fixtures" / "chinook" / "recipe.yaml.tmpl"


def build(recipe: Path, folder: Path) -> None:
    """``answerable build recipe`` with ``folder`` as the working directory, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    subprocess.run(
        [*COMMAND, "build", str(recipe)], cwd=folder, env=env, check=True, capture_output=True
    )


def chinook_recipe(folder: Path) -> Path:
    """Write the Chinook recipe and its seeds into ``folder``; the recipe's path."""
    shutil.copy(CHINOOK_QUESTIONS, folder / "seeds.jsonl")
    recipe = folder / "recipe.yaml"
    template = Template(CHINOOK_RECIPE.read_text(encoding="utf-8"))
    text = template.substitute(databases=DATA / "chinook", version="0.1.0")
    recipe.write_text(text, encoding="utf-8")
    return recipe


def output_files(folder: Path) -> list[Path]:
    """The candidates, rejects and release files under ``folder``, sorted."""
    work = sorted(folder.glob(".answerable/*/candidates.parquet"))
    work += sorted(folder.glob(".answerable/*/reports/rejects.jsonl"))
    released = sorted(p for p in folder.glob("releases/**/*") if p.is_file())
    return work + released


def sha256(data: bytes) -> str:
    """The hex sha256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


def built_hashes(recipe_arg: str | None, folder: Path) -> list[str]:
    """Build a recipe (or the Chinook recipe) in ``folder``; a line per output file."""
    if recipe_arg == "chinook":
        recipe = chinook_recipe(folder)
    else:
        recipe = Path(recipe_arg).resolve() if recipe_arg else DEMO
    build(recipe, folder)
    return [
        f"{sha256(path.read_bytes())}  {path.relative_to(folder)}" for path in output_files(folder)
    ]


def survey_hashes(name: str, folder: Path) -> list[str]:
    """The survey of one real source; a line per record list, as canonical JSON Lines."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from counterfactual_counts import SOURCES  # beside this file

    from answerable.builders.counterfactual.survey import survey

    spec, base = SOURCES[name]
    found = survey(spec, base, folder)
    lists = {
        "parents": found.parents.items,
        "parent-rejects": found.parents.rejects,
        "edited": found.edited.items,
        "edited-rejects": found.edited.rejects,
    }
    return [
        f"{sha256(_json_lines(records))}  survey/{name}/{part} ({len(records)})"
        for part, records in lists.items()
    ]


def _json_lines(records: list[dict]) -> bytes:
    """Records as JSON Lines with sorted keys, in their order."""
    text = "".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in records)
    return text.encode("utf-8")


def main(argv: list[str]) -> None:
    keep = None
    if "--keep" in argv:
        at = argv.index("--keep")
        keep = Path(argv[at + 1]).resolve()
        argv = argv[:at] + argv[at + 2 :]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        if argv[:1] == ["survey"]:
            lines = survey_hashes(argv[1], folder)
        else:
            lines = built_hashes(argv[0] if argv else None, folder)
        print("\n".join(lines))
        if keep is not None:
            shutil.copytree(folder, keep, dirs_exist_ok=True)


if __name__ == "__main__":
    main(sys.argv[1:])
