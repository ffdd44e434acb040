"""Drafting at its edges: a missing-column trigger written as words, the near-duplicate
threshold exactly, Retry-After above the wait cap, and a failed request whose duplicates
are waiting for it.

Each test names the single-line mutant it kills (issue 18).
"""

from __future__ import annotations

import asyncio

import pytest

from answerable.builders.drafting.cache import ReplyCache
from answerable.builders.drafting.checks import NearDuplicates, ngrams, similarity
from answerable.builders.drafting.client import ChatClient, LLMError, describe
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft, Job
from answerable.builders.drafting.per_category import check_draft
from answerable.builders.schema import Column, DatabaseSchema, Table
from tests.llm_server import LLMServer, rate_limited, server_error
from tests.test_drafting_client import PROMPT, settings

PARENT = {"id": "p" * 16, "db_id": "ward", "question": "How many patients are there?"}
WARD = DatabaseSchema(
    "ward", [Table("patients", [Column("patient_id", "INTEGER"), Column("admit_time", "TEXT")])]
)


def missing_column(trigger: str):
    question = f"What is the {trigger} of each patient?"
    draft = Draft(Job(PARENT, "missing-column", 0), question, trigger, "test_v1", derived=True)
    return check_draft(draft, DatabaseContext("ward", WARD))


@pytest.mark.parametrize("trigger", ["admit time", "Admit-Time", "ADMIT TIME"])
def test_a_trigger_in_words_is_the_column_it_names(trigger):
    """Kills: the missing-column trigger looked up unnormalized (``admit time`` is the
    column ``admit_time``, not merely a near-synonym of it), and the reject's detail
    reworded (it names the trigger and the column for the rejects report)."""
    failure = missing_column(trigger)
    assert failure == ("column-in-schema", f"'{trigger}' is the column patients.admit_time")


def test_a_trigger_no_column_names_passes():
    assert missing_column("shoe size") is None


def test_a_reference_the_question_still_settles_is_rejected_by_name():
    """Kills: another reason code for an ambiguous reference whose referent the draft
    names anyway (the parent asked about Ann, and so does the draft)."""
    schema = DatabaseSchema(
        "ward", [Table("patients", [Column("name", "TEXT"), Column("admit_time", "TEXT")])]
    )
    parent = {**PARENT, "sql": "SELECT admit_time FROM patients WHERE name = 'Ann'"}

    def check(question: str):
        draft = Draft(Job(parent, "ambiguous-reference", 0), question, "that patient", "t")
        return check_draft(draft, DatabaseContext("ward", schema))

    assert check("When was that patient admitted?") is None
    assert check("When was that patient Ann admitted?") == (
        "reference-determined",
        "'that patient' is determined: the question names 'Ann'",
    )


# ---- the near-duplicate threshold, exactly ------------------------------------------------

QUESTION = "Which players scored in the final?"
OTHER = "Which players scored in the finals?"


def test_a_similarity_exactly_at_the_threshold_is_a_near_duplicate():
    """Kills: ``score >= threshold`` -> ``>``, and the size pre-filter
    ``small / large < threshold`` -> ``<=``: both at exactly the threshold."""
    score = similarity(ngrams(QUESTION), ngrams(OTHER))
    assert 0.5 < score < 1.0
    at = NearDuplicates(score, [{"id": "x", "db_id": "league", "question": QUESTION}])
    failure = at.check("league", OTHER, frozenset())
    assert failure is not None and failure[0] == "near-duplicate"
    above = NearDuplicates(score + 1e-9, [{"id": "x", "db_id": "league", "question": QUESTION}])
    assert above.check("league", OTHER, frozenset()) is None


def test_the_size_filter_stops_at_exactly_the_threshold():
    """Kills: the size pre-filter ``<`` -> ``<=``: sets whose size ratio equals the
    threshold, and whose similarity does too, are still compared."""
    short, long = "abcd", "abcd abcd"
    a, b = ngrams(short), ngrams(long)
    ratio = min(len(a), len(b)) / max(len(a), len(b))
    assert similarity(a, b) == ratio  # every n-gram of the short one is in the long one
    seen = NearDuplicates(ratio, [{"id": "x", "db_id": "d", "question": short}])
    assert seen.check("d", long, frozenset())[0] == "near-duplicate"


# ---- the client ---------------------------------------------------------------------------


@pytest.fixture
def server():
    with LLMServer() as running:
        yield running


def run(client_settings, cache_file, calls: int = 1):
    """``calls`` concurrent completions of the same prompt; sleeps recorded, not slept.
    Returns the outcomes (completion or exception) and the delays."""
    delays = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    async def go():
        client = ChatClient(client_settings, ReplyCache(cache_file), sleep=record)
        try:
            jobs = [client.complete(PROMPT) for _ in range(calls)]
            return await asyncio.wait_for(asyncio.gather(*jobs, return_exceptions=True), 20)
        finally:
            await client.aclose()

    return asyncio.run(go()), delays


@pytest.mark.parametrize(("asked", "waited"), [("500", 7.0), ("7", 7.0), ("6", 6.0)])
def test_retry_after_is_capped_at_max_wait(server, tmp_path, asked, waited):
    """Kills: Retry-After not capped by ``max_wait_s`` (and the cap applied when the
    server asks for less)."""
    server.then(rate_limited(asked))
    [completion], delays = run(settings(server, max_wait_s=7.0), tmp_path / "c.sqlite")
    assert delays == [waited]
    assert "question" in completion.text


def test_a_failed_request_fails_its_waiting_duplicates_too(server, tmp_path):
    """Kills: a failed in-flight request leaving the callers that wait for the same prompt
    hanging (they must get the same error, not wait for ever: ``wait_for`` turns a hang
    into a TimeoutError here)."""
    server.then(*[server_error(500)] * 3)
    outcomes, _delays = run(settings(server, max_retries=0), tmp_path / "c.sqlite", calls=3)
    assert len(outcomes) == 3
    assert all(isinstance(o, LLMError) for o in outcomes), outcomes
    assert server.requests == 1


def test_an_sdk_error_is_described_by_its_message_or_else_its_kind():
    """Kills: ``message or kind`` -> ``and`` (every error with a message would be reported
    by its class name alone); a key in the message is still redacted."""
    assert describe(ValueError("bad reply")) == "bad reply"
    assert describe(ValueError("")) == "ValueError"
    assert "sk-secret123456789" not in describe(RuntimeError("key sk-secret123456789 refused"))
