"""Paths stay inside their roots: a ``db_id`` holding ``../`` never makes a command read
or write outside the release or ``--out``; ``export`` and ``evaluate --out`` replace
nothing without ``--force``."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from answerable.kernel.errors import RecordError
from answerable.schemas import validate
from tests.conftest import run_in
from tests.release_fixture import default_splits, fixture_items, write_release
from tests.test_cli import assert_clean_error

ESCAPE = "../../escaped"


@pytest.fixture(scope="module")
def release(tmp_path_factory, demo_dir) -> Path:
    folder = tmp_path_factory.mktemp("inside") / "fixture" / "0.1.0"
    databases = {name: demo_dir / f"{name}.sqlite" for name in ("clinic", "league")}
    return write_release(folder, default_splits(fixture_items()), databases)


def tampered(release: Path, target: Path) -> Path:
    """A copy of ``release`` whose items' db_id holds ``../`` (written past the schema,
    as an attacker would)."""
    import shutil

    shutil.copytree(release, target)
    for path in sorted((target / "data").glob("*.parquet")):
        frame = pl.read_parquet(path).with_columns(pl.lit(ESCAPE).alias("db_id"))
        frame.write_parquet(path)
    for path in sorted((target / "data").glob("*.jsonl")):
        path.unlink()
    return target


def test_the_item_schema_refuses_a_db_id_that_is_not_a_plain_name():
    item = dict(fixture_items()[0])
    for bad in (ESCAPE, ".", "a/b", "x\x1b[31m"):
        with pytest.raises(RecordError):
            validate("item", {**item, "db_id": bad})


@pytest.mark.parametrize("fmt", ["trustsql", "scare"])
def test_export_of_a_tampered_db_id_writes_nothing_outside_out(release, tmp_path, fmt):
    bad = tampered(release, tmp_path / "bad" / "fixture" / "0.1.0")
    out = tmp_path / "deep" / "er" / "out"
    result = run_in(tmp_path, "export", bad, "--format", fmt, "--out", out)
    assert result.exit_code != 0 or not list((tmp_path / "deep").rglob("*escaped*"))
    outside = [p for p in tmp_path.rglob("*escaped*") if not p.is_relative_to(out)]
    assert outside == []
    if result.exit_code:
        assert "Traceback" not in result.output and "outside" in result.output, result.output


def test_export_replaces_a_users_file_only_with_force(release, tmp_path):
    out = tmp_path / "out"
    mine = out / "tables.json"
    mine.parent.mkdir()
    mine.write_text("my own tables\n")
    result = run_in(tmp_path, "export", release, "--format", "spider", "--out", out)
    assert_clean_error(result, "tables.json", "already exists", "--force")
    assert mine.read_text() == "my own tables\n"
    again = run_in(tmp_path, "export", release, "--format", "spider", "--out", out, "--force")
    assert again.exit_code == 0, again.output
    assert mine.read_text() != "my own tables\n"


def test_evaluate_out_replaces_a_file_only_with_force(release, tmp_path):
    out = tmp_path / "report.json"
    out.write_text("my notes\n")
    result = run_in(tmp_path, "evaluate", release, "--reference", "gold", "--out", out)
    assert_clean_error(result, "report.json", "already exists", "--force")
    assert out.read_text() == "my notes\n"
    forced = run_in(tmp_path, "evaluate", release, "--reference", "gold", "--out", out, "--force")
    assert forced.exit_code == 0, forced.output
    assert out.read_text().startswith("{")


def _symlinked_source(tmp_path: Path) -> Path:
    """The tiny project with its shop database moved away and linked back."""
    from tests.test_cli import seed, tiny_project

    recipe = tiny_project(
        tmp_path, [seed("How many items are there?", "SELECT count(*) FROM item")]
    )
    elsewhere = tmp_path / "elsewhere.sqlite"
    (tmp_path / "dbs" / "shop.sqlite").rename(elsewhere)
    (tmp_path / "dbs" / "shop.sqlite").symlink_to(elsewhere)
    return recipe


def test_a_symlinked_source_database_is_refused(tmp_path):
    recipe = _symlinked_source(tmp_path)
    result = run_in(tmp_path, "build", recipe)
    assert_clean_error(result, "shop.sqlite", "symbolic link", "follow_symlinks: true")
    assert not (tmp_path / "releases").exists()


def test_a_recipe_may_follow_symlinks_on_purpose(tmp_path):
    recipe = _symlinked_source(tmp_path)
    text = recipe.read_text().replace("databases: dbs", "databases: dbs\n    follow_symlinks: true")
    recipe.write_text(text)
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("resamples", ["-5", "100000000"])
def test_evaluate_resamples_outside_a_sane_range_is_a_usage_error(release, tmp_path, resamples):
    result = run_in(tmp_path, "evaluate", release, "--reference", "gold", "--resamples", resamples)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "--resamples" in result.output


def test_review_serve_on_port_99999_is_a_usage_error(tmp_path):
    result = run_in(tmp_path, "review", "serve", "recipe.yaml", "--port", "99999")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "--port" in result.output


def test_a_second_build_in_the_same_work_folder_is_refused_at_once(tmp_path):
    """Two builds in one workdir replaced each other's step outputs; the second now
    stops with one line while the first holds the folder's lock."""
    from answerable.build import workdir_lock
    from tests.test_cli import seed, tiny_project

    recipe = tiny_project(
        tmp_path, [seed("How many items are there?", "SELECT count(*) FROM item")]
    )
    with workdir_lock(tmp_path / ".answerable" / "tiny"):
        result = run_in(tmp_path, "build", recipe)
    assert_clean_error(result, "another build is running in this work folder")
    assert run_in(tmp_path, "build", recipe).exit_code == 0


@pytest.mark.parametrize("listed", ["../secret.txt", "/etc/hostname", "data/link.txt"])
def test_verify_refuses_a_manifest_listing_a_file_outside_the_release(release, tmp_path, listed):
    import json
    import shutil

    bad = tmp_path / "bad" / "fixture" / "0.1.0"
    shutil.copytree(release, bad)
    secret = tmp_path / "bad" / "fixture" / "secret.txt"
    secret.write_text("not the release's\n")
    (bad / "data" / "link.txt").symlink_to(secret)
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["files"].append({"path": listed, "sha256": "0" * 64, "bytes": 18})
    (bad / "manifest.json").write_text(json.dumps(manifest))
    result = run_in(tmp_path, "verify", bad)
    assert result.exit_code == 1, result.output
    assert_clean_error(result)
    assert f"{listed!r} is outside the release folder" in result.output


@pytest.mark.parametrize(
    "command",
    [
        ["verify"],
        ["diff"],
        ["export", "--format", "dte", "--out", "exported"],
        ["inspect"],
        ["evaluate", "--reference", "gold"],
    ],
    ids=lambda command: command[0],
)
def test_every_command_reading_a_release_refuses_a_path_outside_it(release, tmp_path, command):
    """verify, diff, export, inspect and evaluate open a release through one reader, so
    each refuses a manifest listing a file outside the release with the same line."""
    import json
    import shutil

    bad = tmp_path / "bad" / "fixture" / "0.1.0"
    shutil.copytree(release, bad)
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["files"].append({"path": "../secret.txt", "sha256": "0" * 64, "bytes": 18})
    (bad / "manifest.json").write_text(json.dumps(manifest))
    name, *options = command
    folders = [release, bad] if name == "diff" else [bad]  # diff: the good one, then the bad
    result = run_in(tmp_path, name, *folders, *options)
    assert result.exit_code == 1, result.output
    assert_clean_error(result)
    assert "'../secret.txt' is outside the release folder" in result.output
