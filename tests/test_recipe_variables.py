"""``${NAME}`` in recipes: values from the environment, written defaults, the data root
beside the checkout, and one clear line when a variable or the data is missing."""

from __future__ import annotations

import textwrap

import pytest

from answerable.kernel.errors import ConfigError
from answerable.kernel.recipe import load_recipe
from answerable.kernel.variables import DATA, checkout_data
from tests.conftest import run_in
from tests.test_cli import assert_clean_error

RECIPE = """\
dataset: tiny
version: 0.1.0
seed: 3
sources:
  - name: seeds
    format: jsonl
    path: {path}
    databases: {databases}
    origin: example.org/tiny-data
"""


def project(tmp_path, path="${ANSWERABLE_DATA}/seeds.jsonl", databases="dbs"):
    """A checkout (``repo/`` with a pyproject.toml) holding a recipe, and ``shared/data``
    beside it with a seeds file."""
    repo, data = tmp_path / "repo", tmp_path / "shared" / "data"
    (repo / "raw" / "recipes").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (repo / "raw" / "recipes" / "dbs").mkdir()
    data.mkdir(parents=True)
    (data / "seeds.jsonl").write_text('{"db_id": "d", "question": "q", "sql": "SELECT 1"}\n')
    recipe = repo / "raw" / "recipes" / "recipe.yaml"
    recipe.write_text(textwrap.dedent(RECIPE.format(path=path, databases=databases)))
    return recipe, data


def test_the_data_root_defaults_to_shared_data_beside_the_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA, raising=False)
    recipe, data = project(tmp_path)
    assert checkout_data(recipe) == data
    loaded = load_recipe(recipe, cwd=tmp_path / "elsewhere")
    assert loaded.resolve(loaded.data["sources"][0]["path"]) == data / "seeds.jsonl"
    assert loaded.written["sources"][0]["path"] == "${ANSWERABLE_DATA}/seeds.jsonl"


def test_the_environment_points_the_data_root_elsewhere(tmp_path, monkeypatch):
    recipe, data = project(tmp_path)
    copy = tmp_path / "my-copy"
    copy.mkdir()
    (copy / "seeds.jsonl").write_text((data / "seeds.jsonl").read_text())
    monkeypatch.delenv(DATA, raising=False)
    default = load_recipe(recipe)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(DATA, "my-copy")  # relative: from the current directory
    moved = load_recipe(recipe)
    assert moved.data["sources"][0]["path"] == f"{copy}/seeds.jsonl"
    assert moved.signature() == default.signature()  # the recipe as written is the same


def test_other_variables_and_written_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("TINY_DBS", raising=False)
    recipe, _ = project(tmp_path, databases="${TINY_DBS:-dbs}")
    assert load_recipe(recipe).data["sources"][0]["databases"] == "dbs"
    monkeypatch.setenv("TINY_DBS", str(tmp_path / "repo" / "raw" / "recipes" / "dbs"))
    assert load_recipe(recipe).data["sources"][0]["databases"] == str(
        tmp_path / "repo" / "raw" / "recipes" / "dbs"
    )


def test_an_unset_variable_names_file_key_and_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("TINY_DBS", raising=False)
    recipe, _ = project(tmp_path, databases="${TINY_DBS}")
    with pytest.raises(ConfigError) as caught:
        load_recipe(recipe)
    assert caught.value.file == str(recipe)
    assert caught.value.key == "sources[0].databases"
    assert "${TINY_DBS} is not set" in str(caught.value)
    assert "export TINY_DBS=" in caught.value.fix


def test_the_data_root_outside_a_checkout_must_be_set(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA, raising=False)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(RECIPE.format(path="${ANSWERABLE_DATA}/seeds.jsonl", databases="dbs"))
    if checkout_data(recipe) is not None:
        pytest.skip("the temporary folder is inside a checkout")
    with pytest.raises(ConfigError, match=r"\$\{ANSWERABLE_DATA\} is not set"):
        load_recipe(recipe)


def test_missing_data_says_which_path_and_where_to_get_it(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA, raising=False)
    recipe, data = project(tmp_path)
    (data / "seeds.jsonl").unlink()
    result = run_in(tmp_path, "build", recipe)
    assert_clean_error(
        result,
        "sources[0].path",
        f"not found: {data / 'seeds.jsonl'}",
        "${ANSWERABLE_DATA}/seeds.jsonl",
        f"ANSWERABLE_DATA={data}",
        "get it from example.org/tiny-data",
        "export ANSWERABLE_DATA=",
    )


def test_a_missing_data_folder_is_said_so(tmp_path, monkeypatch):
    recipe, _ = project(tmp_path)
    monkeypatch.setenv(DATA, str(tmp_path / "absent"))
    assert_clean_error(
        run_in(tmp_path, "validate", recipe), "the data folder does not exist", "absent"
    )
