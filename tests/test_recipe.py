"""Recipes: every mistake is one clear ConfigError naming file, key and fix."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from answerable.builders.demo import generate_demo
from answerable.kernel.errors import ConfigError
from answerable.kernel.recipe import load_recipe
from tests.conftest import REPO, run_in

GOOD = """\
dataset: tiny
version: 0.1.0
seed: 3
sources:
  - name: seeds
    format: jsonl
    path: seeds.jsonl
    databases: dbs
"""


def write(tmp_path, text, name="recipe.yaml"):
    (tmp_path / "seeds.jsonl").write_text('{"db_id": "d", "question": "q", "sql": "SELECT 1"}\n')
    (tmp_path / "dbs").mkdir(exist_ok=True)
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_good_recipe_resolves_paths(tmp_path):
    recipe = load_recipe(write(tmp_path, GOOD), cwd=tmp_path / "here")
    assert recipe.resolve("seeds.jsonl") == tmp_path / "seeds.jsonl"
    assert recipe.workdir == tmp_path / "here" / ".answerable"
    assert recipe.out == tmp_path / "here" / "releases"
    assert recipe.signature() == load_recipe(write(tmp_path, GOOD)).signature()


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        (GOOD + "colour: red\n", "colour", "unknown key"),
        (GOOD + "    bogus: 1\n", "sources[0].bogus", "unknown key"),
        (GOOD.replace("seed: 3", "seed: three"), "seed", "not of type 'integer'"),
        (GOOD.replace("version: 0.1.0\n", ""), None, "missing key 'version'"),
        (GOOD.replace("format: jsonl", "format: xlsx"), "sources[0].format", "is not one of"),
        (GOOD.replace("path: seeds.jsonl", "path: nowhere.jsonl"), "sources[0].path", "not found"),
        (GOOD.replace("path: seeds.jsonl", "path: dbs"), "sources[0].path", "is a folder"),
        (
            GOOD.replace("databases: dbs", "databases: seeds.jsonl"),
            "sources[0].databases",
            "is a file, not a folder",
        ),
        (GOOD.replace("    path: seeds.jsonl\n", ""), "sources[0]", "missing key 'path'"),
        (GOOD.replace("    databases: dbs\n", ""), "sources[0]", "missing key 'databases'"),
        (
            GOOD.replace("databases: dbs", "databases: demo"),
            "sources[0].databases",
            "no 'demo' section",
        ),
        ("dataset: [unclosed\n", None, "not valid YAML: line"),
        ("- just\n- a list\n", None, "must be a mapping"),
        (GOOD + "release:\n  license: NOT-A-LICENSE\n", "release.license", "not an SPDX license"),
        (
            GOOD + "execution:\n  row_cap: 99999999999999999999\n",
            "execution.row_cap",
            "out of range",
        ),
    ],
)
def test_config_errors_name_file_key_and_fix(tmp_path, text, key, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_recipe(path)
    error = caught.value
    assert error.file == str(path)
    assert error.key == key
    assert words in str(error)
    assert error.fix


def test_licenses_of_the_spdx_list_and_own_refs_are_accepted(tmp_path):
    for license_id in ("CC-BY-4.0", "MIT", "LicenseRef-ours"):
        recipe = load_recipe(write(tmp_path, GOOD + f"release:\n  license: {license_id}\n"))
        assert recipe.section("release")["license"] == license_id


def test_missing_recipe_file(tmp_path):
    with pytest.raises(ConfigError, match="recipe file not found"):
        load_recipe(tmp_path / "absent.yaml")


def snapshot(folder) -> dict:
    """Every file under ``folder`` with its bytes."""
    return {f: f.read_bytes() for f in sorted(folder.rglob("*")) if f.is_file()}


def test_inputs_outside_the_recipe_folder_are_read_and_nothing_is_written_beside_them(tmp_path):
    """A recipe may name inputs in another folder (``../shared/...``): they resolve
    against the recipe's folder and are only read; the build writes into the work folder
    and the release folder alone."""
    shared, project, run = tmp_path / "shared", tmp_path / "project", tmp_path / "run"
    generate_demo(shared / "dbs", 7)
    shutil.copy(REPO / "raw" / "demo" / "seeds" / "clinic.jsonl", shared / "clinic.jsonl")
    project.mkdir()
    run.mkdir()
    recipe = project / "recipe.yaml"
    recipe.write_text(
        GOOD.replace("seeds.jsonl", "../shared/clinic.jsonl").replace("dbs", "../shared/dbs")
    )
    before = snapshot(tmp_path)
    result = run_in(run, "build", recipe)
    assert result.exit_code == 0, result.output
    after = snapshot(tmp_path)
    assert {f: after[f] for f in before} == before  # inputs and the recipe untouched
    new = [f.relative_to(run) for f in after if f not in before]
    assert new and all(f.parts[0] in (".answerable", "releases") for f in new), new
