"""The demo release's database storage: shipped databases against their sources.

Run with ``python tests/benchmarks/release_storage.py``. It builds the demo recipe in a
temporary folder, then prints one line per shipped variant (the tables and views its
delta shows, with ``+`` where it stores columns, and its bytes) and,
last, exactly ``db_bytes=<all files under the release's databases folder>
base_bytes=<the source databases>`` (issue 9's target: db_bytes <= 1.5 x base_bytes).
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from answerable.build import build
from answerable.builders import sqlite_files
from answerable.kernel.recipe import load_recipe
from answerable.release.databases import VARIANTS, storage_line

REPO = Path(__file__).resolve().parents[2]


def tables_of(path: Path) -> list[str]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        entries = sqlite_files.delta_entries(con)
    finally:
        con.close()
    return [e.name + ("+" if e.columns_table else "") for e in entries]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        report = build(load_recipe(REPO / "raw" / "demo" / "recipe.yaml"))
        release = report.release.path
        for path in sorted((release / VARIANTS).glob("*.sqlite")):
            tables = ",".join(tables_of(path))
            print(f"{path.stem} tables={tables} bytes={path.stat().st_size}", file=sys.stderr)
        print(storage_line(release))


if __name__ == "__main__":
    main()
