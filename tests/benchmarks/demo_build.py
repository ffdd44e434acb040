"""The demo build's candidates, for benchmarks that need realistic items."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from answerable.kernel.records import read_parquet

RECIPE = Path(__file__).resolve().parents[2] / "raw" / "demo" / "recipe.yaml"


def demo_candidates() -> list[dict]:
    """Every candidate item of a fresh demo build (built in a temporary folder)."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [sys.executable, "-c", "from answerable.cli import main; main()", "build", RECIPE],
            cwd=folder,
            check=True,
            capture_output=True,
        )
        return read_parquet(next(Path(folder).glob(".answerable/*/candidates.parquet")))
