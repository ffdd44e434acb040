"""Candidate SQL from a model in batches: one request for up to ``candidates.batch``
questions of one database, each answered under its id, each request cached on its own
(the local OpenAI-compatible server stands in for the model)."""

from __future__ import annotations

import json

import pytest

from answerable.builders.drafting.cache import ReplyCache
from answerable.builders.drafting.candidates import batches
from answerable.builders.drafting.client import LLMError
from answerable.builders.drafting.llm import sql_with_llm
from answerable.builders.drafting.settings import LLMSettings, Usage
from tests.llm_server import LLMServer, Misbehave, draft_reply, server_error

SCHEMAS = {"a": "CREATE TABLE a (x INTEGER);", "b": "CREATE TABLE b (y TEXT);"}
# five questions on a, three on b, interleaved
ITEMS = [{"db_id": db, "question": f"Question {n} on {db}?"} for n, db in enumerate("aabababa")]


def settings(server: LLMServer, **more) -> LLMSettings:
    fields = {"concurrency": 1, "max_retries": 0, "validation_retries": 0, **more}
    return LLMSettings(base_url=server.base_url, model="m", **fields)


def ask(server, cache_file, per_item=1, batch=4, **more) -> tuple[list[list[dict]], Usage]:
    usage = Usage()
    with ReplyCache(cache_file) as cache:
        found = sql_with_llm(
            ITEMS, SCHEMAS, [settings(server, **more)], per_item, batch, cache, usage
        )
    return found, usage


def test_questions_are_grouped_by_database_in_their_order():
    assert batches([i["db_id"] for i in ITEMS], 4) == [[0, 1, 3, 5], [7], [2, 4, 6]]
    assert batches(["a"] * 3, 1) == [[0], [1], [2]]
    assert batches([], 8) == []


def test_one_request_per_batch_and_sample_and_a_rerun_sends_none(tmp_path):
    with LLMServer() as server:
        found, usage = ask(server, tmp_path / "replies.sqlite", per_item=2)
        # a: 4 + 1 questions, b: 3; two samples each: 6 requests for 8 items x 2 samples
        assert server.requests == 6
        assert [len(made) for made in found] == [2] * len(ITEMS)
        for made in found:
            for candidate in made:
                assert candidate["sql"] == "SELECT COUNT(*) FROM patients"
                assert (candidate["edit"], candidate["model"]) == ("llm_written", "m")
                assert candidate["error"] is None
        assert usage.of("m").requests == 6

        again, replayed = ask(server, tmp_path / "replies.sqlite", per_item=2)
        assert server.requests == 6
        assert again == found
        assert (replayed.of("m").requests, replayed.of("m").cached_replies) == (0, 6)


def test_a_run_that_failed_resends_only_the_missing_batches(tmp_path):
    with LLMServer() as server:
        server.then(Misbehave(), server_error())  # the second request fails for good
        with pytest.raises(LLMError, match="1 of 3 prompts failed"):
            ask(server, tmp_path / "replies.sqlite")
        assert server.requests == 3
        found, usage = ask(server, tmp_path / "replies.sqlite")
        assert server.requests == 4  # only the failed batch again
        assert (usage.of("m").requests, usage.of("m").cached_replies) == (1, 2)
        assert all(made[0]["sql"] for made in found)
        assert set(server.answered().values()) == {1}


def test_a_partial_reply_names_the_questions_it_left_out(tmp_path):
    with LLMServer() as server:
        # the first batch (a: q1..q4) answers q2 and q4 only; q3's query is empty
        partial = {"queries": [{"id": "q2", "sql": "SELECT 2"}, {"id": "q4", "sql": "SELECT 4"}]}
        server.then(Misbehave(content=json.dumps(partial)))
        found, _usage = ask(server, tmp_path / "replies.sqlite")
    first = [found[at][0] for at in (0, 1, 3, 5)]
    assert [c["sql"] for c in first] == [None, "SELECT 2", None, "SELECT 4"]
    assert [c["error"] for c in first] == ["missing-from-reply", None, "missing-from-reply", None]
    assert all(found[at][0]["sql"] for at in (2, 4, 6, 7))


@pytest.mark.parametrize(
    "text",
    [
        '{"queries": [{"id": "q1", "sql": "SELECT 1"}',  # cut short
        '{"sql": "SELECT 1"}',  # the one-question shape
        '{"queries": [{"id": "q9", "sql": "SELECT 1"}]}',  # an id nobody asked for
        "I cannot help with that.",
    ],
)
def test_a_malformed_reply_is_an_invalid_reply_for_its_batch_only(tmp_path, text):
    with LLMServer() as server:
        server.then(Misbehave(content=text))
        found, _usage = ask(server, tmp_path / "replies.sqlite")
    for at in (0, 1, 3, 5):
        assert (found[at][0]["sql"], found[at][0]["error"]) == (None, "invalid-reply")
    assert all(found[at][0]["sql"] and not found[at][0]["error"] for at in (2, 4, 6, 7))


def test_with_json_schema_the_request_names_the_ids_and_scales_max_tokens(tmp_path):
    bodies = []

    def recording(body: dict) -> str:
        bodies.append(body)
        return draft_reply(body)

    with LLMServer(responder=recording) as server:
        ask(server, tmp_path / "replies.sqlite", json_schema=True, max_tokens=50)
    first = bodies[0]
    schema = first["response_format"]["json_schema"]["schema"]
    ids = schema["properties"]["queries"]["items"]["properties"]["id"]["enum"]
    assert ids == ["q1", "q2", "q3", "q4"]
    assert first["max_tokens"] == 200
    assert "q4: Question 5 on a?" in first["messages"][1]["content"]
    assert [b["max_tokens"] for b in bodies] == [200, 50, 150]
