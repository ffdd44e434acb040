"""Every tutorial of the documentation site runs end to end (see tests/tutorials.py)."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from tests.conftest import REPO, shared_data
from tests.tutorials import run_tutorial

pytestmark = pytest.mark.slow


def test_first_benchmark_on_your_own_sqlite_database(tmp_path):
    """Chinook from ../shared/data stands in for the reader's own database."""
    chinook = shared_data("chinook", "chinook.sqlite")
    (tmp_path / "music" / "databases").mkdir(parents=True)
    shutil.copy(chinook, tmp_path / "music" / "databases" / "chinook.sqlite")
    run = run_tutorial("first-benchmark.md", tmp_path)

    assert "ok: 1 of 1 sources read, 11 examples" in run.output("answerable validate")
    first_build = next(r.output for line, r in run.results if line.startswith("answerable build"))
    assert "release: not cut:" in first_build and "await review" in first_build
    assert "me" in run.output("answerable review progress")
    release = tmp_path / "music" / "releases" / "music-benchmark" / "0.1.0"
    manifest = json.loads((release / "manifest.json").read_text())
    labels = manifest["counts"]["by_label"]
    assert labels.get("answerable") and labels.get("unanswerable") and labels.get("ambiguous")
    assert set(manifest["counts"]["by_split"]) == {"train", "dev", "test"}
    gold = run.output("answerable evaluate releases/music-benchmark/0.1.0 --reference gold")
    assert re.search(r"^  ex: .* 1\.0000 ", gold, re.M), gold
    abstain = run.output("answerable evaluate releases/music-benchmark/0.1.0 --reference abstain")
    assert re.search(r"^  rs_0: .* [0-9]+\.[0-9]{4} ", abstain, re.M), abstain


def test_rebuild_a_papers_benchmark(tmp_path):
    """The NAQ recipe from the repository, over the TSV in ../shared/data."""
    data = shared_data("querycarefully").parent
    (tmp_path / "raw").symlink_to(REPO / "raw")
    run = run_tutorial("rebuild-a-papers-benchmark.md", tmp_path, {"ANSWERABLE_DATA": str(data)})
    assert "80 items" in run.output("answerable inspect")
    export = (tmp_path / "naq-export" / "test.tsv").read_text().splitlines()
    left_file = tmp_path / "naq-export" / "left_out.jsonl"  # written when an item is left out
    left_out = left_file.read_text().splitlines() if left_file.exists() else []
    assert export[0].split("\t")[:2] == ["question", "category"]
    assert len(export) - 1 + len(left_out) == 80  # each item written or listed with a reason


def test_score_your_system(tmp_path):
    (tmp_path / "raw").symlink_to(REPO / "raw")
    run = run_tutorial("score-your-system.md", tmp_path)
    scored = run.output(
        "answerable evaluate releases/answerable-demo/0.1.0 predictions.jsonl --split test"
    )
    assert re.search(r"^  rs_0: .* -?[0-9]+\.[0-9]{4} ", scored, re.M), scored
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["settings"]["split"] == "test" and report["answered"] > 0
    # the stand-in system answers what it should not: the abstainer beats it, as the text says
    assert report["rs_0"] < report["references"]["abstain_rs"]
    floor = run.output(
        "answerable evaluate releases/answerable-demo/0.1.0 --split test --reference abstain"
    )
    ceiling = run.output(
        "answerable evaluate releases/answerable-demo/0.1.0 --split test --reference gold"
    )
    assert re.search(r"^  ex: .* 0\.0000 ", floor, re.M), floor
    assert re.search(r"^  ex: .* 1\.0000 ", ceiling, re.M), ceiling


@pytest.fixture(scope="module")
def argilla(tmp_path_factory):
    if os.environ.get("ANSWERABLE_SKIP_ARGILLA_SERVER"):
        pytest.skip("ANSWERABLE_SKIP_ARGILLA_SERVER is set")
    from tests.argilla_server import harness

    running = harness.start(tmp_path_factory.mktemp("argilla-home"), harness.server_python())
    yield running
    running.stop()


def test_review_with_a_team_in_argilla(tmp_path, argilla):
    """The first tutorial's folder, then the team's recipe; two annotators accept every
    record through Argilla's REST API, as the web app would."""
    from answerable.annotation.argilla_queue import ArgillaQueue, connect
    from tests.argilla_server import harness
    from tests.test_review_argilla import server_ids

    test_first_benchmark_on_your_own_sqlite_database(tmp_path)
    env = {"ARGILLA_API_URL": argilla.url, "ARGILLA_API_KEY": argilla.api_key}

    def team_reviews(_cwd):
        queue = ArgillaQueue(
            connect(api_url=argilla.url, api_key=argilla.api_key), "music-team", "music"
        )
        records = server_ids(argilla, queue).values()
        for name in ("ana", "ben"):
            key = harness.add_annotator(argilla, name, "music")
            for record in records:
                harness.respond(argilla, key, record, {"verdict": {"value": "accept"}})

    run = run_tutorial(
        "review-with-argilla.md", tmp_path, env, before={"answerable review progress": team_reviews}
    )
    pushed = [r.output for line, r in run.results if line.startswith("answerable build")]
    assert "review them in the Argilla dataset" in pushed[0]
    assert "release: " in pushed[-1] and "not cut" not in pushed[-1]
    assert (tmp_path / "music" / "releases" / "music-team" / "0.1.0" / "manifest.json").is_file()
