"""Sentence embeddings without torch: the int8 ONNX MiniLM ranks names as the exact
model does (its rankings recorded in tests/fixtures/embeddings/ by make_golden.py), and
a build with ``counterfactual.embeddings: true`` ranks the model's names with it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from answerable.builders.drafting import embeddings
from answerable.builders.lexical import wordnet
from tests.conftest import DEMO_RECIPE, run_in
from tests.llm_server import LLMServer

GOLDEN = Path(__file__).parent / "fixtures" / "embeddings" / "minilm_rankings.json"
pytestmark = pytest.mark.skipif(not embeddings.available(), reason=embeddings.MISSING)


def test_vectors_have_unit_length_and_follow_meaning():
    vectors = embeddings.model().encode(["blood type", "shoe size", "blood group of a patient"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[2] > vectors[1] @ vectors[2]


TIE = 0.005  # exact scores this close are a tie at int8 precision


def test_the_int8_model_ranks_names_as_the_exact_model_does():
    """What is asserted, over the 296 recorded rankings (a question against the columns
    of one table, ranked by the exact fp32 model):

    - on the rankings the exact model decides (its two best scores at least TIE apart,
      267 when recorded), the int8 model picks the same top name in at least 0.99 of
      them (267 of 267 when recorded);
    - over all rankings, raw top-1 agreement is at least 0.97 (290 of 296 = 0.98 when
      recorded: below 0.99), and every ranking where the top names differ is a near-tie
      of the exact model (its scores of the two names within TIE, 0.004 at most);
    - each ranking's scores correlate with the exact model's above 0.95."""
    cases = json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 250
    model, decided, agree, raw, near = embeddings.model(), 0, 0, 0, []
    for case in cases:
        vectors = model.encode([case["question"], *case["names"]])
        scores = vectors[1:] @ vectors[0]
        top = sorted(range(len(scores)), key=lambda k: (-round(float(scores[k]), 6), k))[0]
        exact = case["scores"]
        best, second = sorted(exact, reverse=True)[:2]
        decided += best - second >= TIE
        agree += best - second >= TIE and top == case["ranking"][0]
        raw += top == case["ranking"][0]
        if top != case["ranking"][0]:
            near.append(exact[case["ranking"][0]] - exact[top])
        assert np.corrcoef(scores, exact)[0, 1] > 0.95  # the scores move together
    assert agree / decided >= 0.99, f"top-1 agrees in {agree} of {decided} decided rankings"
    assert raw / len(cases) >= 0.97, f"top-1 agrees in {raw} of {len(cases)} rankings"
    assert all(gap < TIE for gap in near), near


@pytest.mark.skipif(not wordnet.available(), reason=str(wordnet.missing()))
def test_a_build_ranks_the_models_names_by_embeddings(tmp_path, monkeypatch):
    ranked = []
    real = embeddings.MiniLM.encode

    def encode(self, texts):
        ranked.append(list(texts))
        return real(self, texts)

    monkeypatch.setattr(embeddings.MiniLM, "encode", encode)
    shutil.copytree(DEMO_RECIPE.parent, tmp_path / "demo")
    recipe = tmp_path / "demo" / "recipe.yaml"
    data = yaml.safe_load(recipe.read_text())
    data["counterfactual"].update(model_candidates=True, embeddings=True)
    data["drafting"] = {"categories": ["vague-word"], "llm": {"model": "m"}}
    data.pop("templates")
    recipe.write_text(yaml.safe_dump(data))
    with LLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = run_in(tmp_path, "build", recipe, "--no-release")
    assert result.exit_code == 0, result.output
    asked = [r["body"]["messages"][-1]["content"] for r in server.log]
    questions = {a.split("Asked: ")[1].split("\n")[0] for a in asked if "Asked: " in a}
    assert ranked, "no names were ranked"
    assert {texts[0] for texts in ranked} <= questions  # each ranking is of a question's names
