"""llm_drafter_v1: drafts (and candidate SQL) from a model, through :mod:`.client`.

Each prompt is sent once (or read from the cache); a reply that is not the JSON object
asked for goes back to the model with the validation error, up to
``validation_retries`` times, and the exchange is part of the next prompt, so it is
cached too. A prompt still without a usable reply becomes a reject
(``invalid-reply``); a prompt the server kept failing stops the run after every other
prompt is done, so that a rerun only sends what is missing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from answerable.builders.drafting import candidates as sql_candidates
from answerable.builders.drafting.cache import ReplyCache
from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.client import ChatClient, LLMError
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import LLM_DRAFTER, Draft, Job, job_reject
from answerable.builders.drafting.per_category import database_examples
from answerable.builders.drafting.prompts import (
    draft_messages,
    prompt_hash,
    schema_text,
    sql_messages,
)
from answerable.builders.drafting.replies import (
    DRAFT_REPLY,
    ReplyError,
    parse_reply,
    queries_by_id,
    retry_message,
    sql_reply,
)
from answerable.builders.drafting.settings import LLMSettings, Usage

GENERATOR = LLM_DRAFTER


@dataclass(frozen=True)
class Prompt:
    """Messages to send, the sample index, the JSON Schema the reply must meet, the
    request's seed, and how many answers the reply carries (a batch of questions)."""

    messages: list[dict]
    sample: int = 0
    reply_schema: dict = field(default_factory=lambda: DRAFT_REPLY)
    seed: int | None = None  # the request's seed; the sample index when None
    answers: int = 1


@dataclass(frozen=True)
class Answer:
    """A parsed reply, or why there is none; how many replies it took."""

    reply: dict | None
    error: str | None
    replies: int


async def ask(client: ChatClient, prompt: Prompt) -> Answer:
    """The parsed reply to one prompt, sending validation errors back to the model."""
    messages, error = list(prompt.messages), None
    for attempt in range(client.settings.validation_retries + 1):
        completion = await client.complete(
            messages, prompt.sample, prompt.seed, prompt.reply_schema, prompt.answers
        )
        try:
            return Answer(parse_reply(completion.text, prompt.reply_schema), None, attempt + 1)
        except ReplyError as failure:
            error = failure
            messages += [
                {"role": "assistant", "content": completion.text},
                retry_message(failure, prompt.reply_schema),
            ]
    return Answer(None, str(error), client.settings.validation_retries + 1)


def ask_all(
    prompts: list[Prompt], settings: LLMSettings, cache: ReplyCache, usage: Usage
) -> list[Answer]:
    """The answers to every prompt, in order, at most ``settings.concurrency`` in flight.

    Raises :class:`LLMError` when the server refused a request, or when some prompts
    still failed after ``max_retries``; every reply received is cached by then.
    """
    return asyncio.run(_ask_all(prompts, settings, cache, usage))


async def _ask_all(
    prompts: list[Prompt], settings: LLMSettings, cache: ReplyCache, usage: Usage
) -> list[Answer]:
    client = ChatClient(settings, cache, usage)
    try:
        answers = await asyncio.gather(*(ask(client, p) for p in prompts), return_exceptions=True)
    finally:
        await client.aclose()
    failures = [a for a in answers if isinstance(a, BaseException)]
    for failure in failures:
        if not isinstance(failure, LLMError):
            raise failure
    if failures:
        raise LLMError(
            f"{len(failures)} of {len(prompts)} prompts failed; the {len(prompts) - len(failures)} "
            f"replies received are cached, rerun to send only the rest. First: {failures[0]}"
        )
    return answers


def draft_prompt(job: Job, schema: str, context: DatabaseContext) -> Prompt:
    """The prompt of one drafting job, its examples written on the job's database."""
    category = CATEGORIES[job.category]
    examples = database_examples(category, context, job.parent)
    messages = draft_messages(category, schema, job.parent["question"], job.focus, examples)
    return Prompt(messages, job.sample, seed=job.seed)


def draft_with_llm(
    jobs: list[Job],
    contexts: dict[str, DatabaseContext],
    settings: LLMSettings,
    cache: ReplyCache,
    usage: Usage,
) -> tuple[list[Draft], list[dict]]:
    """One draft per job from the model, and a reject for each job without a usable reply."""
    schemas = {db_id: schema_text(context) for db_id, context in contexts.items()}
    prompts = [draft_prompt(job, schemas[job.db_id], contexts[job.db_id]) for job in jobs]
    drafts, rejects = [], []
    for job, prompt, answer in zip(
        jobs, prompts, ask_all(prompts, settings, cache, usage), strict=True
    ):
        if answer.reply is None:
            rejects.append(job_reject(job, GENERATOR, "invalid-reply", answer.error or ""))
            continue
        drafts.append(_draft(job, answer.reply, settings.model, prompt_hash(prompt.messages)))
    return drafts, rejects


def _draft(job: Job, reply: dict, model: str, hashed: str) -> Draft:
    details = {}
    if job.category == "missing-column":
        details = {"column": reply["trigger"]}
    return Draft(
        job=job,
        question=reply["question"],
        trigger=reply["trigger"],
        generator=GENERATOR,
        rationale=reply.get("rationale", ""),
        details=details,
        derived=CATEGORIES[job.category].uses_parent,
        model=model,
        prompt_hash=hashed,
    )


def sql_with_llm(
    items: list[dict],
    schemas: dict[str, str],
    models: list[LLMSettings],
    per_item: int,
    batch: int,
    cache: ReplyCache,
    usage: Usage,
) -> list[list[dict]]:
    """llm_sql_v1: each item's candidates, ``per_item`` samples from each of ``models``.

    The questions are asked in requests of up to ``batch`` questions of one database
    (:func:`.candidates.batches`), each question under an id (``q1`` ...), each request
    cached on its own: a killed run resends only the requests that had not come back,
    a rerun none. The SQL is the model's own (``edit`` ``llm_written``); a question the
    reply left out, or a request without a usable reply, gives a candidate without SQL
    that says why (``missing-from-reply``, ``invalid-reply``)."""
    chunks = sql_candidates.batches([item["db_id"] for item in items], batch)
    prompts = []
    for chunk in chunks:
        keys = sql_candidates.batch_ids(len(chunk))
        questions = [(key, items[at]["question"]) for key, at in zip(keys, chunk, strict=True)]
        messages = sql_messages(schemas[items[chunk[0]]["db_id"]], questions)
        prompts += [
            Prompt(messages, sample, sql_reply(keys), answers=len(chunk))
            for sample in range(per_item)
        ]
    found: list[list[dict]] = [[] for _ in items]
    for settings in models:
        # a chunk's samples are in a row, so each item gets its samples in order
        for index, answer in enumerate(ask_all(prompts, settings, cache, usage)):
            chunk = chunks[index // per_item]
            queries = queries_by_id(answer.reply) if answer.reply else None
            for key, at in zip(sql_candidates.batch_ids(len(chunk)), chunk, strict=True):
                found[at].append(sql_candidates.written(queries, key, settings.model))
    return found
