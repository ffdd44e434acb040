"""Variants any tool can open: the card's ``sqlite3`` shell lines open a delta over its
base (run here with the sqlite3 binary), and ``release.variants: full`` ships whole
copies that ``database.full`` names and that open alone."""

from __future__ import annotations

import re
import shlex
import shutil
import sqlite3
import subprocess

import polars as pl
import pytest
import yaml

from answerable.release.reader import read_items
from answerable.release.verify import verify_release
from tests.conftest import DEMO_RECIPE, run_in

SQLITE3 = shutil.which("sqlite3")


def _shell_lines(card: str) -> str:
    """The bash block of the card's Databases section."""
    section = card[card.index("## Databases") : card.index("## Data fields")]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1)


def _edited_answerable(release) -> list[dict]:
    items = read_items(release)
    return [i for i in items if i["db_variant"] and i["sql"] and i["result"]["row_count"] > 0]


@pytest.mark.skipif(SQLITE3 is None, reason="the sqlite3 shell is not installed")
def test_the_cards_sqlite3_lines_open_a_delta_over_its_base(demo_build):
    cwd, _ = demo_build
    release = cwd / "releases" / "answerable-demo" / "0.1.0"
    lines = _shell_lines((release / "README.md").read_text())
    shown = subprocess.run(["bash", "-c", lines], cwd=release, capture_output=True, text=True)
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    assert shown.stdout.split()  # the views the delta makes over its base
    item = _edited_answerable(release)[0]
    delta, base = item["database"]["delta"], item["database"]["base"]
    mine = re.sub(r"^delta=.*$", f"delta={delta} base={base}", lines, flags=re.M)
    mine = re.sub(r"^sql=.*$", f"sql={shlex.quote(item['sql'])}", mine, flags=re.M)
    mine = mine.replace('"$sql"', '".mode list" "$sql"')
    ran = subprocess.run(["bash", "-c", mine], cwd=release, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert len(ran.stdout.splitlines()) == item["result"]["row_count"]
    alone = subprocess.run([SQLITE3, "-readonly", delta, item["sql"]], cwd=release, text=True,
                           capture_output=True)  # fmt: skip
    assert alone.returncode != 0 or alone.stdout != ran.stdout  # a bare delta is not the variant


def test_release_variants_full_ships_whole_copies_any_tool_opens(tmp_path):
    recipe = yaml.safe_load(DEMO_RECIPE.read_text())
    recipe["release"]["variants"] = "full"
    for source in recipe["sources"]:
        source["path"] = str(DEMO_RECIPE.parent / source["path"])
    recipe["templates"]["paths"] = [
        str(DEMO_RECIPE.parent / p) for p in recipe["templates"]["paths"]
    ]
    (tmp_path / "recipe.yaml").write_text(yaml.safe_dump(recipe))
    built = run_in(tmp_path, "build", tmp_path / "recipe.yaml")
    assert built.exit_code == 0, built.output
    release = tmp_path / "releases" / "answerable-demo" / "0.1.0"
    assert verify_release(release).problems == []
    items = read_items(release)
    for item in items:
        database = item["database"]
        assert (database.get("full") is None) == (not item["db_variant"])
        assert not database.get("full") or (release / database["full"]).is_file()
    checked = 0
    for item in _edited_answerable(release):
        with sqlite3.connect(f"file:{release / item['database']['full']}?mode=ro", uri=True) as db:
            rows = db.execute(item["sql"]).fetchall()
        assert len(rows) == item["result"]["row_count"]
        checked += 1
    assert checked > 0
    plain = pl.read_parquet(release / "data" / "test.parquet")["database"].struct.field("full")
    assert plain.null_count() < plain.len()
    assert "Whole copies ship too" in (release / "README.md").read_text()
