"""A real model in the loop: a small build drafts through llama.cpp serving SmolLM2-135M
(``tests/llama_server.py``) with the real ``openai`` client, and a rerun sends nothing.

The assertions are about structure, never wording: a 135M model writes what it writes.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from answerable.kernel.records import read_jsonl, read_parquet
from tests.conftest import run_in
from tests.llama_server import MODEL, LlamaServer, missing

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

WORK = Path(".answerable") / "tiny-real"
CATEGORIES = ["vague-word", "missing-column", "out-of-domain"]
TEAMS = [
    (1, "Rovers", "Leeds", 1904),
    (2, "Albion", "Brighton", 1901),
    (3, "United", "Carlisle", 1904),
]


def tiny_database(folder: Path) -> None:
    """One small table: a short schema keeps each prompt within a few hundred tokens."""
    folder.mkdir()
    with sqlite3.connect(folder / "league.sqlite") as db:
        db.execute(
            "CREATE TABLE teams (team_id INTEGER PRIMARY KEY, name TEXT, city TEXT,"
            " founded_year INTEGER)"
        )
        db.executemany("INSERT INTO teams VALUES (?, ?, ?, ?)", TEAMS)
    db.close()


def tiny_recipe(cwd: Path, base_url: str) -> Path:
    tiny_database(cwd / "dbs")
    seed = {
        "db_id": "league",
        "question": "Which teams were founded before 1903?",
        "sql": "SELECT name FROM teams WHERE founded_year < 1903",
    }
    (cwd / "seeds.jsonl").write_text(json.dumps(seed) + "\n")
    recipe = {
        "dataset": "tiny-real",
        "version": "0.1.0",
        "seed": 13,
        "sources": [
            {"name": "seeds", "format": "jsonl", "path": "seeds.jsonl", "databases": "dbs"}
        ],
        "drafting": {
            "categories": CATEGORIES,
            "per_item": 1,
            "candidates": {"per_item": 0},
            "llm": {
                "base_url": base_url,
                "model": MODEL,
                "temperature": 0.0,
                "max_tokens": 80,
                "concurrency": 1,
                "validation_retries": 1,
                "json_schema": True,  # llama.cpp decodes only replies the schema accepts
                "timeout_s": 600,
                "max_retries": 1,
            },
        },
    }
    path = cwd / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    return path


@pytest.mark.slow
def test_a_build_drafts_through_a_real_model_and_a_rerun_sends_nothing(tmp_path):
    with LlamaServer() as server:
        recipe = tiny_recipe(tmp_path, server.base_url)
        first = run_in(tmp_path, "build", recipe, "--no-release")
        assert first.exit_code == 0, first.output
        items = read_parquet(tmp_path / WORK / "candidates.parquet")
        report = json.loads((tmp_path / WORK / "reports" / "build.json").read_text())
        rejects = list(read_jsonl(tmp_path / WORK / "reports" / "rejects.jsonl"))

        usage = report["llm"][MODEL]
        assert usage["requests"] >= len(CATEGORIES)
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0

        # every job ended as a draft (kept or rejected by a check) or a named reject
        drafted = [i for i in items if i["provenance"]["generator"] == "llm_drafter_v1"]
        model_rejects = [r for r in rejects if r["step"].startswith(("llm_drafter", "drafting"))]
        assert all(r["reason"] and r["detail"] for r in rejects)
        assert len(drafted) + len(model_rejects) >= len(CATEGORIES), (drafted, rejects)
        for item in drafted:
            assert item["category"] in CATEGORIES
            assert item["provenance"]["model"] == MODEL
            assert len(item["provenance"]["prompt_hash"]) == 16

        # a rerun without the finished steps is answered by the reply cache alone
        shutil.rmtree(tmp_path / WORK / "steps")
        again = run_in(tmp_path, "build", recipe, "--no-release")
        assert again.exit_code == 0, again.output
        replayed = json.loads((tmp_path / WORK / "reports" / "build.json").read_text())["llm"]
        assert replayed[MODEL]["requests"] == 0
        assert replayed[MODEL]["cached_replies"] >= usage["replies"]
