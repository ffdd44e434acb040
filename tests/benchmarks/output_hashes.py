"""The sha256 of a build's outputs, to prove a change leaves them byte-identical.

Run with ``python tests/benchmarks/output_hashes.py [RECIPE] [--keep FOLDER]``. It builds
the recipe (the demo's by default) with ``answerable build`` in a fresh temporary folder,
offline whatever the environment says (``OPENAI_*`` variables are dropped), and prints one
line ``<sha256>  <path>`` for the candidates, the rejects report and every file of every
release written, sorted by path. Save the output before a change and ``diff`` it with the
output after: no line may differ.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "raw" / "demo" / "recipe.yaml"
COMMAND = [sys.executable, "-c", "from answerable.cli import main; main()"]


def build(recipe: Path, folder: Path) -> None:
    """``answerable build recipe`` with ``folder`` as the working directory, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    subprocess.run(
        [*COMMAND, "build", str(recipe)], cwd=folder, env=env, check=True, capture_output=True
    )


def output_files(folder: Path) -> list[Path]:
    """The candidates, rejects and release files under ``folder``, sorted."""
    work = sorted(folder.glob(".answerable/*/candidates.parquet"))
    work += sorted(folder.glob(".answerable/*/reports/rejects.jsonl"))
    released = sorted(p for p in folder.glob("releases/**/*") if p.is_file())
    return work + released


def sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str]) -> None:
    keep = None
    if "--keep" in argv:
        at = argv.index("--keep")
        keep = Path(argv[at + 1]).resolve()
        argv = argv[:at] + argv[at + 2 :]
    recipe = Path(argv[0]).resolve() if argv else DEMO
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        build(recipe, folder)
        for path in output_files(folder):
            print(f"{sha256(path)}  {path.relative_to(folder)}")
        if keep is not None:
            shutil.copytree(folder, keep, dirs_exist_ok=True)


if __name__ == "__main__":
    main(sys.argv[1:])
