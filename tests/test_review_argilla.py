"""The Argilla backend against the real ``argilla-server`` application.

Contract tests: the server of ``argilla-server`` 2.8 (FastAPI app, its SQLite database
and migrations, validation, users, responses) runs from its own virtual environment on
127.0.0.1 (``tests/argilla_server``: its pins clash with the project's); Redis is
``fakeredis`` and the search engine a small in-memory stand-in registered by the test
server only (Elasticsearch/OpenSearch cannot be installed here). The project's SDK
talks to it over HTTP. Set ``ANSWERABLE_SKIP_ARGILLA_SERVER=1`` to skip them.

The live test at the end runs only when ``ARGILLA_API_URL`` and ``ARGILLA_API_KEY`` are
set: it pushes to and pulls from that real deployment, then deletes its dataset.
"""

from __future__ import annotations

import logging
import os
import uuid

import httpx
import pytest

from answerable.annotation.argilla_mapping import record_for
from answerable.annotation.argilla_queue import ArgillaQueue, connect
from answerable.kernel.ids import item_id
from answerable.schemas import validate
from tests.argilla_server import harness
from tests.conftest import run_in
from tests.review_helpers import by_category, review_items
from tests.test_cli import seed, tiny_project

ITEMS = by_category(review_items())

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if os.environ.get("ANSWERABLE_SKIP_ARGILLA_SERVER"):
        pytest.skip("ANSWERABLE_SKIP_ARGILLA_SERVER is set")
    python = harness.server_python()
    running = harness.start(tmp_path_factory.mktemp("argilla-home"), python)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def client(server):
    return connect(api_url=server.url, api_key=server.api_key)


@pytest.fixture
def queue(client):
    """A queue over a fresh dataset of its own."""
    return ArgillaQueue(client, dataset=f"t-{uuid.uuid4().hex[:8]}", workspace="contract")


def listing(server, queue) -> list[dict]:
    dataset = queue.dataset()
    reply = httpx.get(
        f"{server.url}/api/v1/datasets/{dataset.id}/records",
        params={"include": ["responses", "suggestions"], "limit": 1000},
        headers={"X-Argilla-Api-Key": server.api_key},
    )
    reply.raise_for_status()
    return reply.json()["items"]


def server_ids(server, queue) -> dict[str, str]:
    """Item id -> Argilla's own record id."""
    return {r["external_id"]: r["id"] for r in listing(server, queue)}


def test_push_creates_the_dataset_with_its_settings(server, queue):
    report = queue.push(review_items())
    assert (report.added, report.updated, report.rejects) == (6, 0, [])
    dataset = queue.dataset()
    settings = dataset.settings
    assert [f.name for f in settings.fields] == [
        "question",
        "schema",
        "sql",
        "result",
        "readings",
        "explanation",
    ]
    questions = {q.name: q for q in settings.questions}
    assert questions["verdict"].required and questions["verdict"].labels == [
        "accept",
        "reject",
        "relabel",
    ]
    assert "vague-word" in questions["category"].labels
    reply = httpx.get(
        f"{server.url}/api/v1/datasets/{dataset.id}/questions",
        headers={"X-Argilla-Api-Key": server.api_key},
    )
    stored = {q["name"]: q for q in reply.json()["items"]}  # as the server keeps them
    options = {o["value"]: o for o in stored["category"]["settings"]["options"]}
    assert options["vague-word"]["description"].startswith("ambiguous: The answerable question")
    assert questions["comment"].required is False
    assert "## Categories" in settings.guidelines
    assert questions["spans"].field == "question"
    assert sorted((m.name, type(m).__name__) for m in settings.metadata) == [
        ("database", "TermsMetadataProperty"),
        ("generator", "TermsMetadataProperty"),
        ("hardness", "IntegerMetadataProperty"),
        ("item_category", "TermsMetadataProperty"),
        ("item_label", "TermsMetadataProperty"),
        ("row_count", "IntegerMetadataProperty"),
        ("tables", "IntegerMetadataProperty"),
    ]
    assert settings.distribution.min_submitted == 1
    records = {r["external_id"]: r for r in listing(server, queue)}
    assert set(records) == {i["id"] for i in review_items()}
    vague = records[ITEMS["vague-word"]["id"]]
    assert vague["metadata"]["generator"] == "draft_v1"
    league = ITEMS["answerable-league"]
    counted = records[league["id"]]["metadata"]
    assert counted["row_count"] == league["result"]["row_count"] and counted["tables"] >= 1
    assert records[league["id"]]["fields"]["result"].startswith("| ")
    suggested = sorted(str(s["value"]) for s in vague["suggestions"])
    assert suggested == ["[{'label': 'AMB', 'start': 29, 'end': 37}]", "vague-word"]


def test_pushing_twice_creates_no_duplicates(server, queue):
    queue.push(review_items())
    again = queue.push(review_items())
    assert (again.added, again.updated) == (0, 6)
    assert len(listing(server, queue)) == 6


def test_more_than_one_batch_and_one_page(server, queue, monkeypatch):
    sent_sizes = []
    original = ArgillaQueue._send

    def counting(self, dataset, batch, rejects):
        sent_sizes.append(len(batch))
        return original(self, dataset, batch, rejects)

    monkeypatch.setattr(ArgillaQueue, "_send", counting)
    base = ITEMS["out-of-scope"]
    many = []
    for n in range(520):
        question = f"{base['question']} (copy {n})"
        many.append(dict(base, id=item_id("clinic", question, None), question=question))
    report = queue.push(many)
    assert (report.added, report.rejects) == (520, [])
    assert sent_sizes == [500, 20]
    assert queue.progress().items == 520  # read back through two pages of 500


def test_one_bad_record_is_reported_and_its_batch_still_goes_in(server, queue):
    items = review_items()
    records = [record_for(i, None) for i in items]
    bad = record_for(dict(ITEMS["vague-word"], id="badbadbadbadbad0"), None)
    bad["suggestions"][0]["value"] = "not-a-category"  # only the server checks this one
    sent, rejects = queue.upsert([*records[:3], bad, *records[3:]])
    assert len(sent) == 6
    assert [(r["id"], r["reason"]) for r in rejects] == [("badbadbadbadbad0", "argilla-refused")]
    assert "not-a-category" in rejects[0]["detail"]
    assert len(listing(server, queue)) == 6
    caught = queue.push(
        [dict(ITEMS["out-of-scope"], spans=[{"start": 0, "end": 999, "tag": "UNK"}])]
    )
    assert "outside the question" in caught.rejects[0]["detail"]


def test_responses_become_decisions(server, queue):
    queue.push(review_items())
    ana = harness.add_annotator(server, "ana", "contract")
    ben = harness.add_annotator(server, "ben", "contract")
    ids = server_ids(server, queue)
    vague, oos = ITEMS["vague-word"]["id"], ITEMS["out-of-scope"]["id"]
    harness.respond(
        server,
        ana,
        ids[vague],
        {
            "verdict": {"value": "relabel"},
            "category": {"value": "vague-question"},
            "spans": {"value": [{"label": "VAL", "start": 29, "end": 37}]},
        },
    )
    harness.respond(
        server,
        ben,
        ids[vague],
        {
            "verdict": {"value": "relabel"},
            "category": {"value": "vague-question"},
            "corrected_question": {"value": "Which patients were admitted this month?"},
        },
    )
    harness.respond(server, ana, ids[oos], {"verdict": {"value": "reject"}})
    pulled = {(d["item_id"], d["annotator"]): d for d in queue.pull()}
    assert set(pulled) == {(vague, "ana"), (vague, "ben"), (oos, "ana")}
    first, second = pulled[(vague, "ana")], pulled[(vague, "ben")]
    assert (first["label"], first["category"]) == ("ambiguous", "vague-question")
    assert first["spans"] == [{"start": 29, "end": 37, "tag": "VAL"}]
    assert second["question"] == "Which patients were admitted this month?"
    assert queue.problems == []
    for decision in pulled.values():
        validate("review_decision", decision)
    progress = queue.progress()
    assert (progress.items, progress.decided, progress.by_annotator) == (6, 2, {"ana": 2, "ben": 1})


def test_an_accept_under_another_category_comes_back_as_a_relabel_with_its_comment(server, queue):
    queue.push(review_items())
    eve = harness.add_annotator(server, "eve", "contract")
    ids = server_ids(server, queue)
    vague, oos = ITEMS["vague-word"]["id"], ITEMS["out-of-scope"]["id"]
    moved = {"verdict": {"value": "accept"}, "category": {"value": "vague-question"}}
    harness.respond(server, eve, ids[vague], moved)
    reason = {"verdict": {"value": "reject"}, "comment": {"value": "reads as a real task"}}
    harness.respond(server, eve, ids[oos], reason)
    pulled = {d["item_id"]: d for d in queue.pull()}
    assert (pulled[vague]["verdict"], pulled[vague]["category"]) == ("relabel", "vague-question")
    assert (pulled[oos]["verdict"], pulled[oos]["comment"]) == ("reject", "reads as a real task")
    assert queue.problems == []


def test_null_values_drafts_and_discarded_responses(server, queue):
    queue.push(review_items())
    cy = harness.add_annotator(server, "cy", "contract")
    dee = harness.add_annotator(server, "dee", "contract")
    ids = server_ids(server, queue)
    vague, oos, missing = (ITEMS[k]["id"] for k in ("vague-word", "out-of-scope", "missing-column"))
    harness.respond(server, cy, ids[vague], None, status="discarded")
    harness.respond(server, dee, ids[vague], {"verdict": {"value": "accept"}}, status="draft")
    harness.respond(server, cy, ids[oos], {"verdict": {"value": "relabel"}})  # no category
    harness.respond(
        server,
        dee,
        ids[missing],
        {
            "verdict": {"value": "accept"},
            "corrected_question": {"value": ""},
        },
    )
    decisions = queue.pull()
    assert [(d["item_id"], d["annotator"], d["verdict"]) for d in decisions] == [
        (missing, "dee", "accept")
    ]
    assert decisions[0]["question"] is None
    assert len(queue.problems) == 1 and "relabel without label" in queue.problems[0]


def test_build_through_argilla_without_showing_the_key(server, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("ARGILLA_API_URL", server.url)
    monkeypatch.setenv("ARGILLA_API_KEY", server.api_key)
    caplog.set_level(logging.DEBUG)
    extra = "review:\n  backend: argilla\n  argilla: {dataset: tiny-build, workspace: builds}\n"
    seeds = [seed("How many items are there?", "SELECT count(*) FROM item")]
    recipe = tiny_project(tmp_path, seeds, extra=extra)
    first = run_in(tmp_path, "build", recipe)
    assert first.exit_code == 0, first.output
    assert "release: not cut: 1 items await review; review them in the Argilla dataset" in (
        first.output
    )
    ana = harness.add_annotator(server, "builder-ana", "builds")
    queue = ArgillaQueue(connect(), "tiny-build", "builds")
    [record_id] = server_ids(server, queue).values()
    harness.respond(server, ana, record_id, {"verdict": {"value": "accept"}})
    second = run_in(tmp_path, "build", recipe)
    assert second.exit_code == 0, second.output
    assert "1 accepted (0 auto)" in second.output and "release: " in second.output
    progress = run_in(tmp_path, "review", "progress", recipe)
    assert "1 accepted" in progress.output and "builder-ana 1" in progress.output
    shown = first.output + second.output + progress.output + caplog.text
    assert server.api_key not in shown


def test_unreachable_server_is_a_clean_error_without_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGILLA_API_URL", f"http://user:pw@127.0.0.1:{harness.free_port()}")
    monkeypatch.setenv("ARGILLA_API_KEY", "secret-key-never-shown")
    recipe = tiny_project(
        tmp_path,
        [seed("How many?", "SELECT count(*) FROM item")],
        extra="review:\n  backend: argilla\n",
    )
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 1
    assert "cannot use Argilla at http://127.0.0.1:" in result.output
    assert "secret-key-never-shown" not in result.output and "pw@" not in result.output


# ---- opt-in: a real deployment -----------------------------------------------------


@pytest.mark.skipif(
    not (os.environ.get("ARGILLA_API_URL") and os.environ.get("ARGILLA_API_KEY")),
    reason="live Argilla test: set ARGILLA_API_URL and ARGILLA_API_KEY to run it",
)
def test_live_argilla_round_trip():
    queue = ArgillaQueue(connect(), dataset=f"answerable-live-{uuid.uuid4().hex[:8]}")
    try:
        report = queue.push(review_items())
        assert (report.added, report.rejects) == (6, [])
        assert queue.push(review_items()).updated == 6
        assert queue.pull() == []
        assert queue.progress().items == 6
    finally:
        dataset = queue.dataset()
        if dataset is not None:
            dataset.delete()


def test_a_corrected_sql_comes_back_as_a_correction_that_makes_the_draft_answerable(server, queue):
    from tests.test_review_corrections import FLUID_SQL, missing_fluid

    draft = missing_fluid()
    queue.push([*review_items(), draft])
    questions = {q.name: q for q in queue.dataset().settings.questions}
    assert type(questions["corrected_sql"]).__name__ == "TextQuestion"
    assert questions["corrected_sql"].required is False
    ida = harness.add_annotator(server, "ida", "contract")
    ids = server_ids(server, queue)
    values = {"verdict": {"value": "accept"}, "corrected_sql": {"value": FLUID_SQL}}
    harness.respond(server, ida, ids[draft["id"]], values)
    [pulled] = queue.pull()
    assert (pulled["item_id"], pulled["verdict"], pulled["label"]) == (
        draft["id"],
        "relabel",
        "answerable",
    )
    assert pulled["sql"] == FLUID_SQL and pulled["category"] is None
    assert queue.problems == []
    validate("review_decision", pulled)
