"""The real ``openai`` client against the local server: retries, Retry-After, timeouts,
refusals, the reply cache, validation retries, token accounting and concurrency."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from answerable.builders.drafting.cache import ReplyCache
from answerable.builders.drafting.client import ChatClient, LLMError, retry_after
from answerable.builders.drafting.llm import Prompt, ask, ask_all
from answerable.builders.drafting.replies import DRAFT_REPLY
from answerable.builders.drafting.settings import LLMSettings, Usage
from tests.llm_server import (
    LLMServer,
    Misbehave,
    broken_body,
    malformed_json,
    rate_limited,
    server_error,
    slow,
    wrong_shape,
)

PROMPT = [
    {"role": "system", "content": "You write test questions."},
    {"role": "user", "content": "Category: vague-word (ambiguous)\nParent question: How many?"},
]


@pytest.fixture
def server():
    with LLMServer() as running:
        yield running


def settings(server: LLMServer, **overrides) -> LLMSettings:
    values = {"base_url": server.base_url, "model": "test-model", "backoff_s": 0.01}
    values.update(overrides)
    return LLMSettings(**values)


def prompt(n: int = 0) -> list[dict]:
    return [PROMPT[0], {"role": "user", "content": PROMPT[1]["content"] + f" #{n}"}]


def complete(client_settings, cache_file, messages=PROMPT, sample=0):
    """One completion with a client whose sleeps are recorded, not slept."""
    delays = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    async def run():
        client = ChatClient(client_settings, ReplyCache(cache_file), sleep=record)
        try:
            return await client.complete(messages, sample), client.usage
        finally:
            await client.aclose()

    completion, usage = asyncio.run(run())
    return completion, usage.of(client_settings.model), delays


# ---- retries ---------------------------------------------------------------------------


def test_a_429_waits_as_long_as_retry_after_asks(server, tmp_path):
    server.then(rate_limited("3"))
    completion, usage, delays = complete(settings(server), tmp_path / "c.sqlite")
    assert delays == [3.0]
    assert (usage.requests, usage.retries, usage.replies) == (2, 1, 1)
    assert server.requests == 2 and "question" in completion.text


def test_5xx_and_broken_bodies_are_retried_with_growing_jittered_backoff(server, tmp_path):
    server.then(server_error(500), server_error(503), broken_body(), server_error(502))
    _completion, usage, delays = complete(settings(server, backoff_s=1.0), tmp_path / "c.sqlite")
    assert server.requests == 5 and usage.retries == 4 and usage.replies == 1
    for attempt, delay in enumerate(delays):
        ceiling = 2**attempt
        assert ceiling / 2 <= delay <= ceiling, (attempt, delay)


def test_a_timeout_is_retried(server, tmp_path):
    server.then(slow(3.0))
    _completion, usage, _delays = complete(settings(server, timeout_s=0.3), tmp_path / "c.sqlite")
    assert usage.retries == 1 and usage.replies == 1
    assert server.requests == 2


def test_it_gives_up_after_max_retries_and_caches_nothing(server, tmp_path):
    server.then(*[server_error()] * 3)
    with pytest.raises(LLMError, match="gave up after 3 attempts: HTTP 500"):
        complete(settings(server, max_retries=2), tmp_path / "c.sqlite")
    assert server.requests == 3
    assert len(ReplyCache(tmp_path / "c.sqlite")) == 0


def test_a_refusal_stops_at_once_and_says_what_to_fix(server, tmp_path):
    server.then(Misbehave(status=401, body=b'{"error": {"message": "bad key"}}'))
    with pytest.raises(LLMError, match=r"refused: HTTP 401.*api_key_env"):
        complete(settings(server), tmp_path / "c.sqlite")
    assert server.requests == 1


def test_a_refusal_stops_the_other_prompts_too(server, tmp_path):
    server.then(Misbehave(status=404, body=b'{"error": {"message": "no such model"}}'))
    prompts = [Prompt(prompt(n)) for n in range(30)]
    with pytest.raises(LLMError, match="404"):
        ask_all(
            prompts, settings(server, concurrency=1), ReplyCache(tmp_path / "c.sqlite"), Usage()
        )
    assert server.requests == 1


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_headers(headers, seconds):
    assert retry_after(SimpleNamespace(response=SimpleNamespace(headers=headers))) == seconds


# ---- the cache -------------------------------------------------------------------------


def test_a_rerun_sends_no_request(server, tmp_path):
    prompts = [Prompt(prompt(n)) for n in range(20)]
    first = ask_all(prompts, settings(server), ReplyCache(tmp_path / "c.sqlite"), Usage())
    assert server.requests == 20
    usage = Usage()
    again = ask_all(prompts, settings(server), ReplyCache(tmp_path / "c.sqlite"), usage)
    assert server.requests == 20
    assert again == first
    assert usage.of("test-model").cached_replies == 20 and usage.of("test-model").requests == 0


def test_samples_model_and_parameters_are_part_of_the_key(server, tmp_path):
    cache = tmp_path / "c.sqlite"
    complete(settings(server), cache, sample=0)
    complete(settings(server), cache, sample=1)
    complete(settings(server, temperature=0.5), cache, sample=0)
    complete(settings(server, model="other-model"), cache, sample=0)
    complete(settings(server), cache, sample=1)  # cached
    assert server.requests == 4
    assert [e["body"].get("seed") for e in server.log] == [0, 1, 0, 0]


def test_json_schema_sends_the_reply_schema_as_response_format(server, tmp_path):
    cache = ReplyCache(tmp_path / "c.sqlite")
    ask_all([Prompt(PROMPT)], settings(server), cache, Usage())
    ask_all([Prompt(PROMPT)], settings(server, json_schema=True), cache, Usage())
    assert server.requests == 2  # a different request: not answered from the cache
    plain, structured = (e["body"] for e in server.log)
    assert "response_format" not in plain
    assert structured["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": DRAFT_REPLY},
    }
    assert "json_schema" not in settings(server).identity()  # old step signatures stand
    assert settings(server, json_schema=True).identity()["json_schema"] is True


# ---- validation ------------------------------------------------------------------------


def ask_one(client_settings, cache_file, messages=PROMPT):
    async def run():
        client = ChatClient(client_settings, ReplyCache(cache_file))
        try:
            return await ask(client, Prompt(messages))
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_an_invalid_reply_goes_back_with_the_validation_error(server, tmp_path):
    server.then(malformed_json())
    answer = ask_one(settings(server), tmp_path / "c.sqlite")
    assert answer.reply is not None and answer.replies == 2
    retry = server.log[1]["body"]["messages"]
    assert retry[:2] == PROMPT
    assert retry[2]["role"] == "assistant" and retry[2]["content"].startswith('{"question"')
    assert retry[3]["role"] == "user" and "holds no JSON object" in retry[3]["content"]
    # the whole exchange is cached: a rerun replays it without a request
    assert ask_one(settings(server), tmp_path / "c.sqlite") == answer
    assert server.requests == 2


def test_validation_gives_up_after_its_limit(server, tmp_path):
    server.then(wrong_shape(), wrong_shape(), wrong_shape())
    answer = ask_one(settings(server, validation_retries=2), tmp_path / "c.sqlite")
    assert answer.reply is None and answer.replies == 3
    assert "'trigger' is a required property" in answer.error
    assert server.requests == 3


# ---- accounting and concurrency ----------------------------------------------------------


def test_tokens_are_counted_per_model_as_the_server_reports_them(server, tmp_path):
    usage, cache = Usage(), ReplyCache(tmp_path / "c.sqlite")
    ask_all([Prompt(prompt(n)) for n in range(6)], settings(server), cache, usage)
    ask_all([Prompt(prompt(n)) for n in range(4)], settings(server, model="b"), cache, usage)
    report = usage.to_report()
    assert sorted(report) == ["b", "test-model"]
    assert report["test-model"]["replies"] == 6 and report["b"]["replies"] == 4
    total_in = sum(m["input_tokens"] for m in report.values())
    total_out = sum(m["output_tokens"] for m in report.values())
    assert (total_in, total_out) == (
        server.usage["prompt_tokens"],
        server.usage["completion_tokens"],
    )
    assert total_in > 0 and total_out > 0


def test_at_most_concurrency_requests_are_in_flight(tmp_path):
    with LLMServer(latency=0.05) as server:
        prompts = [Prompt(prompt(n)) for n in range(24)]
        ask_all(
            prompts, settings(server, concurrency=4), ReplyCache(tmp_path / "c.sqlite"), Usage()
        )
        assert server.requests == 24
        assert server.max_in_flight <= 4


# ---- settings ----------------------------------------------------------------------------


def test_settings_come_from_the_recipe_or_the_environment():
    assert LLMSettings.from_section({"model": "m"}, env={}) is None
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "k1", "MY_KEY": "k2"}
    from_env = LLMSettings.from_section({"model": "m", "concurrency": 3}, env=env)
    assert (from_env.base_url, from_env.api_key, from_env.concurrency) == (
        env["OPENAI_BASE_URL"],
        "k1",
        3,
    )
    recipe = LLMSettings.from_section(
        {"base_url": "http://127.0.0.1:8/v1", "model": "m", "api_key_env": "MY_KEY"}, env=env
    )
    assert (recipe.base_url, recipe.api_key) == ("http://127.0.0.1:8/v1", "k2")
    local = LLMSettings.from_section({"base_url": "http://127.0.0.1:8/v1", "model": "m"}, env={})
    assert local.api_key == "not-needed"
    assert "api_key" not in local.identity() and "concurrency" not in local.identity()


def test_the_same_prompt_in_flight_twice_is_sent_once(server, tmp_path):
    usage = Usage()
    answers = ask_all(
        [Prompt(PROMPT)] * 5,
        settings(server, concurrency=5),
        ReplyCache(tmp_path / "c.sqlite"),
        usage,
    )
    assert server.requests == 1
    assert len({a.reply["question"] for a in answers}) == 1
    assert usage.of("test-model").replies == 1 and usage.of("test-model").cached_replies == 4
