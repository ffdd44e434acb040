"""Releases ship their databases: bases as byte copies, variants as deltas.

The consumer's view: a copy of the demo release alone (no work directory, no raw/) runs
every gold query to its stored result hash, with our helper and with plain ``sqlite3``;
``answerable materialize --full`` gives whole copies that do the same.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from answerable.builders.executor import ReadOnlyDatabase, result_hash
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.ids import sha256_file
from answerable.kernel.typed_items import to_frame, to_items
from answerable.release.databases import (
    ReleaseDatabaseError,
    open_item_database,
    ship_files,
    storage_line,
    with_database,
)
from answerable.release.reader import read_items
from answerable.release.reader import read_release_manifest as read_manifest
from answerable.release.verify import verify_release
from answerable.schemas import validate
from tests.conftest import REPO, run_in


@pytest.fixture(scope="module")
def alone(demo_build, tmp_path_factory):
    """The demo release copied alone into an empty folder: ``(release dir, items)``."""
    cwd, _ = demo_build
    target = tmp_path_factory.mktemp("consumer") / "answerable-demo-0.1.0"
    shutil.copytree(cwd / "releases" / "answerable-demo" / "0.1.0", target)
    return target, read_items(target)


def executed(items: list[dict]) -> list[dict]:
    return [i for i in items if i.get("sql") and i.get("result")]


def test_the_release_lists_its_databases_with_sha256(alone):
    folder, items = alone
    assert verify_release(folder).problems == []
    entries = {e["path"]: e for e in read_manifest(folder)["files"]}
    shipped = {p.relative_to(folder).as_posix() for p in (folder / "databases").rglob("*")}
    assert {p for p in shipped if p.endswith(".sqlite")} == {
        p for p in entries if p.startswith("databases/")
    }
    for item in items:
        validate("item", item)
        database = item["database"]
        assert database["base"] == f"databases/{item['db_id']}.sqlite"
        assert database["delta"] == (
            f"databases/variants/{item['db_variant']}.sqlite" if item["db_variant"] else None
        )
        assert entries[database["base"]]["bytes"] == (folder / database["base"]).stat().st_size


def test_a_consumer_runs_every_gold_query_from_the_release_alone(alone):
    folder, items = alone
    runnable = executed(items)
    assert len(runnable) >= 150 and any(i["db_variant"] for i in runnable)
    for item in runnable:
        with open_item_database(folder, item) as db:
            result = db.execute(item["sql"], ordered=item["result"]["ordered"])
        assert result.hash == item["result"]["hash"], item["id"]


def plain_merged(folder: Path, item: dict) -> sqlite3.Connection:
    """What the documentation tells a consumer without answerable to do: open the delta,
    ATTACH its base as ``base``, run its view statements in order."""
    delta, base = folder / item["database"]["delta"], folder / item["database"]["base"]
    con = sqlite3.connect(f"file:{delta}?mode=ro", uri=True)
    con.execute("ATTACH DATABASE ? AS base", (f"file:{base}?mode=ro",))
    for (view,) in con.execute("SELECT view FROM answerable_delta ORDER BY seq").fetchall():
        con.execute(view)
    return con


def test_plain_sqlite3_sees_the_same_merged_view(alone):
    """No answerable code: gold SQL gives its stored result, a dropped column is gone."""
    folder, items = alone
    edited = [i for i in executed(items) if i["db_variant"]]
    assert edited
    for item in edited:
        con = plain_merged(folder, item)
        rows = con.execute(item["sql"]).fetchall()
        con.close()
        ordered = item["result"]["ordered"]
        assert result_hash(rows, ordered, len(item["result"]["columns"])) == item["result"]["hash"]
    dropped = [i for i in items if i["provenance"]["generator"] == "drop_column_v1"]
    assert dropped
    for item in dropped:
        table, _, column = item["trigger"]["column"].rpartition(".")
        con = plain_merged(folder, item)
        with pytest.raises(sqlite3.OperationalError, match="no such column"):
            con.execute(f"SELECT `{column}` FROM `{table}`")  # "x" would fall back to a string
        con.close()


DATABASES_PAGE = REPO / "docs" / "explanation" / "databases-in-a-release.md"


def readme_shell_lines() -> list[str]:
    """The documentation's sqlite3 shell example (the bash block of "Databases in a
    release", docs/explanation/databases-in-a-release.md)."""
    text = DATABASES_PAGE.read_text()
    block = text[text.index("```bash\n") + len("```bash\n") :]
    return block[: block.index("```")].strip().splitlines()


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="no sqlite3 shell (apt: sqlite3)")
def test_the_readme_shell_lines_run_a_gold_query(alone):
    """The documentation's three lines, with an edited item's files and its gold SQL wrapped in a
    count, run from the release root, give the item's row count."""
    folder, items = alone
    lines = readme_shell_lines()
    assert lines[0].startswith("delta=databases/variants/") and len(lines) == 3
    for item in [i for i in executed(items) if i["db_variant"]][:5]:
        first = f"delta={item['database']['delta']} base={item['database']['base']}"
        query = f"SELECT count(*) FROM ({item['sql']})"
        last = lines[2].replace('"SELECT count(*) FROM matches"', shlex.quote(query))
        assert last != lines[2]
        script = "\n".join([first, lines[1], last])
        shell = subprocess.run(
            ["bash", "-c", script], cwd=folder, capture_output=True, text=True, check=True
        )
        assert shell.stdout.strip() == str(item["result"]["row_count"]), shell.stderr


def test_unanswerable_edits_hold_in_the_release(alone):
    """A dropped column is gone from the merged view though the base still has it."""
    folder, items = alone
    dropped = [i for i in items if i["provenance"]["generator"] == "drop_column_v1"]
    assert dropped
    for item in dropped:
        table, _, column = item["trigger"]["column"].rpartition(".")
        merged = DatabaseSchema.from_sqlite(
            folder / item["database"]["delta"], base=folder / item["database"]["base"]
        )
        base = DatabaseSchema.from_sqlite(folder / item["database"]["base"])
        assert merged.table(table).column(column) is None
        assert base.table(table).column(column) is not None


def test_materialize_full_writes_whole_copies_that_answer_alike(alone, tmp_path):
    folder, items = alone
    before = {p: sha256_file(p) for p in folder.rglob("*") if p.is_file()}
    result = run_in(tmp_path, "materialize", folder, "--full", "--out", tmp_path / "full")
    assert result.exit_code == 0, result.output
    variants = {i["db_variant"] for i in items if i["db_variant"]}
    assert f"{len(variants)} full copies in" in result.output
    for item in (i for i in executed(items) if i["db_variant"]):
        with ReadOnlyDatabase(tmp_path / "full" / f"{item['db_variant']}.sqlite") as db:
            assert db.execute(item["sql"]).hash == item["result"]["hash"]
    again = run_in(tmp_path, "materialize", folder, "--full", "--out", tmp_path / "full")
    assert again.output == result.output
    assert {p: sha256_file(p) for p in folder.rglob("*") if p.is_file()} == before
    default = run_in(tmp_path, "materialize", folder, "--full")
    assert (tmp_path / f"{folder.parent.name}-{folder.name}-full").is_dir(), default.output


def test_a_damaged_sidecar_is_one_line_and_force_remakes_the_copy(alone, tmp_path):
    folder, _ = alone
    out = tmp_path / "full"
    assert run_in(tmp_path, "materialize", folder, "--full", "--out", out).exit_code == 0
    sidecar = sorted(out.glob("*.json"))[0]
    sidecar.write_text("garbage{")
    refused = run_in(tmp_path, "materialize", folder, "--full", "--out", out)
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert refused.output.strip().splitlines() == [
        f"error: {sidecar.with_suffix('.sqlite')}: already exists (fix: pass --force to "
        "replace it, or choose another path)"
    ]
    forced = run_in(tmp_path, "materialize", folder, "--full", "--out", out, "--force")
    assert forced.exit_code == 0, forced.output
    assert json.loads(sidecar.read_text())["layout"] == "full"


def test_inspect_and_audit_read_a_release_that_ships_json_lines_only(alone, tmp_path):
    folder, items = alone
    lines_only = tmp_path / "lines" / "0.1.0"
    shutil.copytree(folder, lines_only)
    manifest = json.loads((lines_only / "manifest.json").read_text())
    for entry in [e for e in manifest["files"] if e["path"].endswith(".parquet")]:
        (lines_only / entry["path"]).unlink()
        manifest["files"].remove(entry)
    (lines_only / "manifest.json").write_text(json.dumps(manifest))
    shown = run_in(tmp_path, "inspect", lines_only)
    assert shown.exit_code == 0, shown.output
    assert f"{len(items)} items" in shown.output.splitlines()[0]
    assert (
        shown.output.splitlines()[1:] == run_in(tmp_path, "inspect", folder).output.splitlines()[1:]
    )
    audited = run_in(tmp_path, "audit", lines_only)
    assert audited.exit_code == 0, audited.output


def test_materialize_needs_a_release_and_the_flag(tmp_path):
    missing = run_in(tmp_path, "materialize", tmp_path / "nope", "--full")
    assert missing.exit_code == 1 and "not a folder" in missing.output
    (tmp_path / "empty").mkdir()
    empty = run_in(tmp_path, "materialize", tmp_path / "empty", "--full")
    assert empty.exit_code == 1 and "not a release: no manifest.json" in empty.output
    assert run_in(tmp_path, "materialize", tmp_path).exit_code == 2


def test_shipping_names_files_and_remakes_a_missing_delta(demo_build, tmp_path):
    cwd, _ = demo_build
    items = read_items(cwd / "releases" / "answerable-demo" / "0.1.0")
    edited = next(i for i in items if i["db_variant"])
    plain = next(i for i in items if not i["db_variant"] and i["db_id"] == edited["db_id"])
    spare = {**plain, "id": "0" * 16, "db_id": "schema_only"}
    sources = {db: cwd / ".answerable" / "demo" / f"{db}.sqlite" for db in ("clinic", "league")}
    sources["schema_only"] = None
    variants = tmp_path / "variants"  # empty: the delta is made again from the edit script
    frame = to_frame([edited, plain, spare])
    used = frame.select("db_id", "db_variant", "edit").unique(["db_id", "db_variant"])
    files = ship_files(used, tmp_path / "out", sources, variants)
    assert [f["path"] for f in files] == sorted(
        [f"databases/{edited['db_id']}.sqlite", edited["database"]["delta"]]
    )
    by_id = {i["id"]: i["database"] for i in to_items(with_database(frame, sources))}
    assert by_id == {i["id"]: i["database"] for i in (edited, plain)} | {spare["id"]: None}
    delta = tmp_path / "out" / edited["database"]["delta"]
    shipped_before = cwd / "releases" / "answerable-demo" / "0.1.0" / edited["database"]["delta"]
    assert sha256_file(delta) == sha256_file(shipped_before)  # same bytes, made afresh
    assert storage_line(tmp_path / "out") == (
        f"db_bytes={sum(f['bytes'] for f in files)} "
        f"base_bytes={sources[edited['db_id']].stat().st_size}"
    )
    with pytest.raises(ReleaseDatabaseError, match="schema-only"):
        open_item_database(tmp_path / "out", {**spare, "database": None})
    escaping = {**edited, "database": {"base": "../../etc/x.sqlite", "delta": None}}
    with pytest.raises(ReleaseDatabaseError, match="outside"):
        open_item_database(tmp_path / "out", escaping)
