"""Drafting in the build, end to end through the CLI: offline by default, the model when
an endpoint is configured (the local server), cached, accounted, and failing cleanly."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from answerable.builders.drafting.categories import CATEGORIES
from answerable.kernel.ids import sha256_file
from answerable.kernel.records import read_jsonl, read_parquet
from answerable.schemas import validate
from tests.conftest import DEMO_RECIPE, REPO, run_in
from tests.llm_server import LLMServer

WORK = Path(".answerable") / "answerable-demo"
DEMO_CATEGORIES = yaml.safe_load(DEMO_RECIPE.read_text(encoding="utf-8"))["drafting"]["categories"]
STRATA = {"answerable-correct", "answerable-incorrect", "ambiguous", "unanswerable"}


def built(cwd: Path) -> tuple[list[dict], dict, list[dict]]:
    items = read_parquet(cwd / WORK / "candidates.parquet")
    report = json.loads((cwd / WORK / "reports" / "build.json").read_text())
    return items, report, list(read_jsonl(cwd / WORK / "reports" / "rejects.jsonl"))


@pytest.fixture()
def offline_build(demo_build):
    return demo_build


def test_the_demo_drafts_every_category_offline(offline_build):
    cwd, result = offline_build
    items, report, rejects = built(cwd)
    drafted = [i for i in items if i["provenance"]["generator"] == "offline_drafter_v1"]
    assert set(DEMO_CATEGORIES) <= set(CATEGORIES)
    assert {i["category"] for i in drafted} == set(DEMO_CATEGORIES)
    assert all(i["label"] in ("ambiguous", "unanswerable") for i in drafted)
    assert report["drafting"] == {"drafter": "offline_drafter_v1"}
    assert "llm" not in report
    assert "drafting:" in result.output
    drafters = {r["step"] for r in rejects if "drafter" in r["step"]}
    assert drafters == {"offline_drafter_v1"}
    assert all(r["reason"] and r["detail"] for r in rejects)


def test_every_item_has_candidates_and_all_four_strata_occur(offline_build):
    cwd, _ = offline_build
    items, _report, _rejects = built(cwd)
    strata = Counter()
    for item in items:
        validate("item", item)
        for found in item["candidates"]:
            strata[found["stratum"]] += 1
            # Only items on an edited copy (db_variant) go without a stratum.
            assert found["stratum"] is not None or item["db_variant"] is not None
        if item["label"] == "answerable" and item["db_variant"] is None:
            # Controls on edited copies get no perturbations: they would need the variant.
            assert len(item["candidates"]) == 2
    assert set(strata) - {None} == STRATA, strata


@pytest.mark.slow  # among the longest of the default run: CI's second pass
def test_with_an_endpoint_the_same_recipe_drafts_with_the_model(tmp_path, monkeypatch):
    with LLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = run_in(tmp_path, "build", DEMO_RECIPE, "--no-release")
        assert result.exit_code == 0, result.output
        items, report, rejects = built(tmp_path)
        drafted = [i for i in items if i["provenance"]["generator"] == "llm_drafter_v1"]
        assert {i["category"] for i in drafted} == set(DEMO_CATEGORIES)
        for item in drafted:
            assert item["provenance"]["model"] == "gpt-4o-mini"
            assert len(item["provenance"]["prompt_hash"]) == 16
        assert all(c["generator"] == "llm_sql_v1" for i in items for c in i["candidates"])
        assert report["drafting"] == {"drafter": "llm_drafter_v1"}
        usage = report["llm"]["gpt-4o-mini"]
        assert usage["requests"] == server.requests
        assert usage["input_tokens"] == server.usage["prompt_tokens"]
        assert usage["output_tokens"] == server.usage["completion_tokens"]
        sent, first = server.requests, sha256_file(tmp_path / WORK / "candidates.parquet")

        # a rerun finds finished steps; without them, the reply cache still answers
        again = run_in(tmp_path, "build", DEMO_RECIPE, "--no-release")
        assert again.exit_code == 0 and "(cached)" in again.output
        shutil.rmtree(tmp_path / WORK / "steps")
        third = run_in(tmp_path, "build", DEMO_RECIPE, "--no-release")
        assert third.exit_code == 0, third.output
        assert server.requests == sent
        assert sha256_file(tmp_path / WORK / "candidates.parquet") == first
        replayed = json.loads((tmp_path / WORK / "reports" / "build.json").read_text())["llm"]
        assert replayed["gpt-4o-mini"]["requests"] == 0
        assert replayed["gpt-4o-mini"]["cached_replies"] >= sent
    assert rejects is not None


def tiny_recipe(tmp_path: Path, llm: dict, **drafting) -> Path:
    recipe = yaml.safe_load(DEMO_RECIPE.read_text())
    for source in recipe["sources"]:
        source["path"] = str(REPO / "raw" / "demo" / source["path"])
        source["limit"] = 2
    recipe.pop("templates", None)  # these tests are about drafting from the seeds
    recipe["drafting"] = {"categories": ["vague-word"], "llm": llm, **drafting}
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


def test_candidates_can_be_turned_off(tmp_path):
    result = run_in(tmp_path, "build", tiny_recipe(tmp_path, {}, candidates={"per_item": 0}))
    assert result.exit_code == 0, result.output
    items, report, _rejects = built(tmp_path)
    assert {i["category"] for i in items} == {None, "vague-word"}
    assert all(i["candidates"] is None for i in items)
    assert report["steps"].get("candidate_sql", {"items": 0})["items"] == 0


def test_an_endpoint_without_a_model_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    result = run_in(tmp_path, "build", tiny_recipe(tmp_path, {}))
    assert result.exit_code == 1
    assert "drafting.llm.model" in result.output and "Traceback" not in result.output


def test_an_unreachable_server_stops_the_build_with_one_line(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends: nothing listens
    llm = {"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "max_retries": 1}
    llm["backoff_s"] = 0.01
    result = run_in(tmp_path, "build", tiny_recipe(tmp_path, llm))
    assert result.exit_code == 1, result.output
    assert "prompts failed" in result.output and "rerun" in result.output


def test_an_unknown_drafting_key_names_the_known_ones(tmp_path):
    path = tiny_recipe(tmp_path, {"model": "m", "temprature": 0.3})
    result = run_in(tmp_path, "build", path)
    assert result.exit_code == 1
    assert "drafting.llm.temprature: unknown key" in result.output
    assert "temperature" in result.output


def test_reading_a_recipe_imports_no_model_client():
    code = (
        "import sys, answerable.build, answerable.builders.drafting.stage;"
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_candidates_come_from_every_listed_model(tmp_path):
    with LLMServer() as server:
        llm = {"base_url": server.base_url, "model": "drafter"}
        candidates = {"per_item": 2, "models": ["model-a", "model-b", "model-c"]}
        path = tiny_recipe(tmp_path, llm, candidates=candidates)
        recipe = yaml.safe_load(path.read_text())
        recipe["drafting"]["categories"] = ["vague-word", "small-talk"]
        path.write_text(yaml.safe_dump(recipe))
        result = run_in(tmp_path, "build", path, "--no-release")
        assert result.exit_code == 0, result.output
        items, report, _rejects = built(tmp_path)
    for item in items:
        models = Counter(c["model"] for c in item["candidates"])
        assert models == {"model-a": 2, "model-b": 2, "model-c": 2}, item["question"]
        assert {c["edit"] for c in item["candidates"]} == {"llm_written"}
    parentless = [i for i in items if i["category"] == "small-talk"]
    assert parentless and all(i["provenance"].get("parent") is None for i in parentless)
    assert all(c["stratum"] == "unanswerable" for i in parentless for c in i["candidates"])
    assert {"model-a", "model-b", "model-c"} <= set(report["llm"])
