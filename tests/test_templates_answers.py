"""Templated triples: an answer per pair, tags, text2sql-data templates from a recipe, and
the model's paraphrases and answers (against the local test server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from answerable.builders.templates.model import Template, check_template
from answerable.builders.templates.problems import TemplateError
from answerable.builders.templates.writing import fill_question
from answerable.kernel.records import read_jsonl, read_parquet
from tests.conftest import REPO, run_in, shared_data
from tests.llm_server import LLMServer, draft_reply

WORK = Path(".answerable") / "triples"
TEMPLATE = {
    "id": "clinic.drug_doses",
    "db_id": "clinic",
    "questions": ["What doses of {drug} did patient {subject_id} get?"],
    "sql": "SELECT start_date, dose_value FROM prescriptions "
    "WHERE subject_id = :subject_id AND drug = :drug ORDER BY start_date, dose_value",
    "bindings": [{"query": "SELECT DISTINCT subject_id, drug FROM prescriptions"}],
    "answer": "Patient {subject_id} got {drug} {row_count} times: {result}.",
    "tags": ["Trial Phase", "dosing"],
}


def recipe(tmp_path: Path, templates: dict | None = None, **section) -> Path:
    """A recipe over the demo clinic with one template file (and ``section`` keys)."""
    (tmp_path / "t.yaml").write_text(yaml.safe_dump([templates or TEMPLATE]))
    data = {
        "dataset": "triples",
        "version": "0.1.0",
        "seed": 13,
        "demo": {"seed": 7},
        "sources": [
            {
                "name": "clinic",
                "format": "jsonl",
                "path": str(REPO / "raw/demo/seeds/clinic.jsonl"),
                "databases": "demo",
                "limit": 1,
            }
        ],
        "templates": {"paths": ["t.yaml"], "quota": 3, **section},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def templated(cwd: Path) -> list[dict]:
    items = read_parquet(cwd / WORK / "candidates.parquet")
    return [i for i in items if i["provenance"]["generator"] == "template_v1"]


def test_each_pair_has_the_templates_answer_and_tags(tmp_path):
    result = run_in(tmp_path, "build", recipe(tmp_path), "--no-release")
    assert result.exit_code == 0, result.output
    items = templated(tmp_path)
    assert len(items) == 3
    for item in items:
        values = item["provenance"]["params"]["values"]
        rows = item["result"]["rows"]
        assert item["answer"].startswith(f"Patient {values['subject_id']} got {values['drug']}")
        assert f"{item['result']['row_count']} times" in item["answer"]
        assert str(rows[0][0]) in item["answer"]
        assert item["tags"] == ["Trial Phase", "dosing"]
        assert item["provenance"]["params"]["answered_by"] == "template"


def test_an_answer_naming_an_unknown_placeholder_is_refused():
    bad = {**TEMPLATE, "answer": "{patient} got {result}"}
    with pytest.raises(TemplateError, match="answer uses patient"):
        check_template(Template(bad))


def test_without_an_endpoint_paraphrases_and_model_answers_stay_offline(tmp_path):
    path = recipe(tmp_path, paraphrases=3, answers="model")
    result = run_in(tmp_path, "build", path, "--no-release")
    assert result.exit_code == 0, result.output
    for item in templated(tmp_path):
        assert item["provenance"]["params"]["paraphraser"] == "offline_v1"
        assert item["provenance"]["params"]["answered_by"] == "template"


def model_reply(body: dict) -> str:
    """Rewrites that keep (or, once, lose) the placeholders, answers, else drafts."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if "reword" in system:
        question = user.splitlines()[0].removeprefix("Question: ")
        rewrites = [f"Tell me: {question}", "A rewrite that lost its placeholders?"]
        return json.dumps({"questions": rewrites})
    if "state the answer" in system:
        return json.dumps({"answer": f"From {len(user)} characters of result: yes."})
    return draft_reply(body)


def test_with_an_endpoint_the_model_paraphrases_and_answers(tmp_path):
    with LLMServer(responder=model_reply) as server:
        path = recipe(tmp_path, paraphrases=2, answers="model")
        data = yaml.safe_load(path.read_text())
        data["drafting"] = {
            "llm": {"base_url": server.base_url, "model": "m"},
            "categories": ["vague-word"],
            "candidates": {"per_item": 0},
        }
        path.write_text(yaml.safe_dump(data))
        result = run_in(tmp_path, "build", path, "--no-release")
        assert result.exit_code == 0, result.output
        sent = server.requests
        again = run_in(tmp_path, "build", path, "--no-release")
        assert again.exit_code == 0 and server.requests == sent  # cached
    items = templated(tmp_path)
    assert len(items) == 3
    for item in items:
        values = item["provenance"]["params"]["values"]
        own = fill_question(TEMPLATE["questions"][0], values)
        assert item["question"] in (own, f"Tell me: {own}")
        assert item["provenance"]["params"]["paraphraser"] == "llm_paraphraser_v1"
        assert "{" not in item["question"] and "lost its placeholders" not in item["question"]
        assert item["answer"].startswith("From ") and item["answer"].endswith("yes.")
        assert item["provenance"]["params"]["answered_by"] == "m"


def test_text2sql_templates_come_from_the_recipe(tmp_path):
    geo = shared_data("geoquery")
    data = {
        "dataset": "triples",
        "version": "0.1.0",
        "seed": 13,
        "sources": [
            {
                "name": "geo",
                "format": "text2sql",
                "path": str(geo / "geography.json"),
                "database": str(geo / "geography.sqlite"),
                "limit": 1,
            }
        ],
        "templates": {
            "text2sql": [
                {"path": str(geo / "geography.json"), "database": str(geo / "geography.sqlite")}
            ],
            "quota": 1,
        },
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data))
    result = run_in(tmp_path, "build", path, "--no-release")
    assert result.exit_code == 0, result.output
    items = templated(tmp_path)
    assert len(items) > 150  # most of the 246 templates give a verified pair
    assert all(i["db_id"] == "geography" and "text2sql" in i["tags"] for i in items)
    rejects = list(read_jsonl(tmp_path / WORK / "reports" / "rejects.jsonl"))
    assert any(r["step"] == "template_v1" for r in rejects)


def test_a_bad_answer_text_stops_the_build_with_one_line(tmp_path):
    path = recipe(tmp_path, {**TEMPLATE, "answer": "{patient} got {result}"})
    result = run_in(tmp_path, "build", path)
    assert result.exit_code == 1
    assert "clinic.drug_doses" in result.output and "answer uses patient" in result.output
    assert "Traceback" not in result.output


def test_a_missing_text2sql_file_is_named(tmp_path):
    path = recipe(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["templates"]["text2sql"] = [{"path": "nowhere.json", "database": "nowhere.sqlite"}]
    path.write_text(yaml.safe_dump(data))
    result = run_in(tmp_path, "build", path)
    assert result.exit_code == 1
    assert "templates.text2sql[0].path: not found" in result.output
