"""Issue 12: near-synonym column names proposed by a model through the drafting client
(the local OpenAI-compatible server), cached like drafts and judged by the gate."""

from __future__ import annotations

import pytest

from answerable.builders.counterfactual import candidates, proposed
from answerable.builders.counterfactual.generators.base import EditEnv, prepare
from answerable.builders.counterfactual.materialize import VariantStore
from answerable.builders.counterfactual.registry import GENERATORS
from answerable.builders.counterfactual.stage import Config
from answerable.builders.drafting.cache import ReplyCache
from answerable.builders.drafting.column_names import (
    EMBEDDINGS_MISSING,
    NameJob,
    clean_names,
    embeddings_available,
    propose_names,
    rank_by_embedding,
)
from answerable.builders.drafting.settings import LLMSettings, Usage
from answerable.builders.executor import Limits
from answerable.builders.lexical import wordnet
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.kernel.errors import ConfigError
from answerable.kernel.recipe import Recipe
from tests.llm_server import LLMServer

needs_wordnet = pytest.mark.skipif(not wordnet.available(), reason=str(wordnet.missing()))
JOB = NameJob(
    "school",
    "Highschooler",
    "grade",
    "grade",
    "What is the grade of Kyle?",
    ("ID", "name", "grade"),
)


class Ref:
    """A schema-only database reference (no file)."""

    def __init__(self, schema):
        self.schema, self.path = schema, None


def school() -> DatabaseSchema:
    columns = [Column("ID", "int"), Column("name", "text"), Column("grade", "int")]
    return DatabaseSchema("school", [Table("Highschooler", columns, primary_key=["ID"])])


def parent_item() -> dict:
    return {
        "id": "p1",
        "db_id": "school",
        "question": "What is the grade of Kyle?",
        "sql": "SELECT grade FROM Highschooler WHERE name = 'Kyle'",
        "label": "answerable",
        "provenance": {"generator": "seed_v1"},
    }


def env_for(tmp_path, proposed_names=None) -> EditEnv:
    env = EditEnv({"school": Ref(school())}, VariantStore(tmp_path, Limits()), 13)
    env.proposed = proposed_names or {}
    return env


def test_names_are_identifiers_new_to_the_table_each_once():
    names = ["letter_grade", "grade", "Name", "LETTER_GRADE", "school grade", "school_grade"]
    assert clean_names(names, JOB) == ("letter_grade", "school_grade")


def test_proposed_groups_drop_synonyms_of_the_column_and_of_each_other():
    names = ("grade_of_highschooler", "letter_grade", "school_grade")
    groups = candidates.proposed_groups(school(), "Highschooler", "grade", names, 2)
    assert groups == [("letter_grade", "school_grade")]  # the first is the column again


def test_the_model_is_asked_once_per_column_and_its_replies_are_cached(tmp_path):
    with LLMServer() as server:
        settings = LLMSettings(server.base_url, "test-model", backoff_s=0.01)
        usage = Usage()
        with ReplyCache(tmp_path / "replies.sqlite") as cache:
            first = propose_names([JOB], settings, cache, usage)
            again = propose_names([JOB], settings, cache, usage)
        sent = len(server.log)
    assert first == again and sent == 1
    assert first[JOB][:2] == ("primary_grade", "secondary_grade")
    assert usage.of("test-model").cached_replies == 1


def test_name_jobs_cover_the_mentioned_columns_but_no_keys(tmp_path):
    jobs = proposed.name_jobs([parent_item()], env_for(tmp_path))
    assert [(j.table, j.column, j.mention) for j in jobs] == [("Highschooler", "grade", "grade")]


@needs_wordnet
def test_the_gate_decides_among_the_models_names(tmp_path, monkeypatch):
    """With no curated pair for the column, the model's default-marked pair is passed
    over and its genuine pair is proposed; with only default-marked names, the edit
    is rejected with the gate's reason."""
    monkeypatch.setattr(candidates, "contrast_groups", lambda table, column: [])
    edit = GENERATORS["add_near_synonyms_v1"]
    parent = prepare(parent_item(), school())
    names = ("primary_grade", "secondary_grade", "school_grade", "letter_grade")
    env = env_for(tmp_path, {("school", "Highschooler.grade"): names})
    chosen = edit.propose(parent, env)
    assert chosen.params["candidates"] == ["school_grade", "letter_grade"]
    assert edit.verify(chosen, env) is None

    bad = env_for(tmp_path, {("school", "Highschooler.grade"): names[:2]})
    failure = edit.verify(edit.propose(parent, bad), bad)
    assert failure.reason == "implausible-default-marked"


def test_model_candidates_need_an_endpoint(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    recipe = Recipe(tmp_path / "r.yaml", {"dataset": "d", "version": "1"}, tmp_path, tmp_path)
    with pytest.raises(ConfigError, match="model_candidates"):
        proposed.model_settings(recipe, Config(model_candidates=True))
    assert proposed.model_settings(recipe, Config()) is None


@pytest.mark.skipif(embeddings_available(), reason="the embeddings extra is installed")
def test_without_the_extra_ranking_says_how_to_install_it():
    with pytest.raises(RuntimeError, match=r"answerable\[embeddings\]"):
        rank_by_embedding("What is the grade?", ("letter_grade", "school_grade"))
    assert "onnxruntime" in EMBEDDINGS_MISSING


@pytest.mark.skipif(not embeddings_available(), reason=EMBEDDINGS_MISSING)
def test_embeddings_rank_the_name_closest_to_the_question_first():
    ranked = rank_by_embedding("Which letter grade did Kyle get?", ("shoe_size", "letter_grade"))
    assert ranked == ("letter_grade", "shoe_size")


@needs_wordnet
def test_a_build_asks_the_model_for_names_and_reports_its_usage(tmp_path, monkeypatch):
    """The demo recipe with ``model_candidates``, against the local server: one name
    prompt per mentioned column (none about a key), counted in the build report."""
    import json
    import shutil

    import yaml

    from tests.conftest import DEMO_RECIPE, run_in

    shutil.copytree(DEMO_RECIPE.parent, tmp_path / "demo")
    recipe = tmp_path / "demo" / "recipe.yaml"
    data = yaml.safe_load(recipe.read_text())
    data["counterfactual"]["model_candidates"] = True
    data["drafting"] = {"categories": ["vague-word"], "llm": {"model": "m"}}
    recipe.write_text(yaml.safe_dump(data))
    with LLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = run_in(tmp_path, "build", recipe, "--no-release")
        asked = [r["body"]["messages"][-1]["content"] for r in server.log]
    asked = [a for a in asked if a.startswith("Table: ")]
    assert result.exit_code == 0, result.output
    columns = [a.split("Column to replace: ")[1].split("\n")[0] for a in asked]
    assert columns and len(set(asked)) == len(asked)
    assert not any(c.endswith("_id") for c in columns)
    report = tmp_path / ".answerable" / "answerable-demo" / "reports" / "build.json"
    assert json.loads(report.read_text())["llm"]["m"]["replies"] >= len(asked)
