"""The model client: chat completions from any OpenAI-compatible server, cached on disk,
with bounded concurrency, retries, and token accounting per model.

The only module that imports ``openai`` (:mod:`.llm` uses it). A reply's text has every
configured secret masked (:func:`~answerable.kernel.untrusted_text.mask_secrets`) before
it is cached or used: a server that echoes the key or the URL's password writes neither
to disk. The SDK's own retries are off (``max_retries=0``): the loop here retries 408,
409, 429, 5xx, timeouts, connection errors and unreadable bodies with exponential
backoff and jitter, waits as long as a ``Retry-After`` header asks, and counts every
attempt. Other errors (401, 404 ...) stop the run with one line that says what to fix.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import openai
from openai.types.chat import ChatCompletion

from answerable.builders.drafting.cache import ReplyCache, cache_key
from answerable.builders.drafting.settings import LLMSettings, Usage
from answerable.kernel.errors import AnswerableError
from answerable.kernel.untrusted_text import mask_secrets, redact_body, redact_url

RETRY_STATUS = frozenset({408, 409, 429})


class LLMError(AnswerableError):
    """The model server refused a request, or kept failing past the retry limit."""


class BadResponse(Exception):
    """A 200 reply whose body is not a chat completion (retried like a 5xx)."""


@dataclass(frozen=True)
class Completion:
    """One reply: its text, whether it came from the cache, and its cache key."""

    text: str
    cached: bool
    key: str


Sleep = Callable[[float], Awaitable[None]]


class ChatClient:
    """Cached chat completions with at most ``concurrency`` requests in flight.

    >>> client = ChatClient(settings, ReplyCache(path))        # doctest: +SKIP
    >>> await client.complete(messages, sample=0)              # doctest: +SKIP
    Completion(text='{"question": ...}', cached=False, key='9f2c...')
    """

    def __init__(
        self,
        settings: LLMSettings,
        cache: ReplyCache,
        usage: Usage | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ):
        self.settings = settings
        self.cache = cache
        self.usage = usage or Usage()
        self._sleep = sleep
        self._rng = rng or random.Random(0)
        self._slots = asyncio.Semaphore(settings.concurrency)
        self._sdk: openai.AsyncOpenAI | None = None
        self._fatal: LLMError | None = None
        self._pending: dict[str, asyncio.Future] = {}

    async def complete(
        self,
        messages: list[dict],
        sample: int = 0,
        seed: int | None = None,
        reply_schema: dict | None = None,
        answers: int = 1,
    ) -> Completion:
        """The reply to ``messages``: from the cache, or from the server and then cached.

        A prompt already on its way (the same key) is not sent again: the second caller
        waits for the first one's reply. ``reply_schema`` is sent as ``response_format``
        when the settings ask for it (``json_schema``); a reply of ``answers`` answers
        may be that many times ``max_tokens`` long.
        """
        params = self.settings.params(sample if seed is None else seed, reply_schema, answers)
        key = cache_key(self.settings.model, messages, params, sample)
        counters = self.usage.of(self.settings.model)
        stored = self.cache.get(key)
        if stored is not None or key in self._pending:
            counters.cached_replies += 1
            text = stored["text"] if stored is not None else await self._pending[key]
            return Completion(mask_secrets(text), True, key)
        self._pending[key] = asyncio.get_running_loop().create_future()
        try:
            text, input_tokens, output_tokens = await self._send(messages, params)
        except BaseException as error:
            self._settle(key, error=error)
            raise
        text = mask_secrets(text)  # a server may echo the key: it is never stored
        reply = {"text": text, "input_tokens": input_tokens, "output_tokens": output_tokens}
        self.cache.put(key, reply, self.settings.model)
        self._settle(key, text=text)
        counters.replies += 1
        counters.input_tokens += input_tokens
        counters.output_tokens += output_tokens
        return Completion(text, False, key)

    def _settle(self, key: str, text: str | None = None, error: BaseException | None = None):
        """Hand the outcome to the callers waiting for the same prompt."""
        waiting = self._pending.pop(key)
        if error is None:
            waiting.set_result(text)
        else:
            waiting.set_exception(error)
            waiting.exception()  # retrieved: no warning when nobody waited

    async def _send(self, messages: list[dict], params: dict) -> tuple[str, int, int]:
        counters = self.usage.of(self.settings.model)
        for attempt in range(self.settings.max_retries + 1):
            try:
                async with self._slots:
                    if self._fatal is not None:  # another request was refused for good
                        raise self._fatal
                    counters.requests += 1
                    return await self._request(messages, params)
            except (openai.APIStatusError, openai.APIConnectionError, BadResponse) as error:
                if not retryable(error):
                    self._fatal = self._fatal or refused(self.settings, error)
                    raise self._fatal from None
                if attempt == self.settings.max_retries:
                    counters.failed += 1
                    raise LLMError(
                        f"{redact_url(self.settings.base_url)}: gave up after "
                        f"{attempt + 1} attempts: {describe(error)}"
                    ) from None
                counters.retries += 1
                await self._sleep(self._delay(attempt, error))
        raise AssertionError("unreachable")

    async def _request(self, messages: list[dict], params: dict) -> tuple[str, int, int]:
        # ``chat.completions.create()`` walks every message through the SDK's TypedDict
        # transform, about 2 ms of CPU per request, which at 16 in flight is most of the
        # event loop's time. The messages are already in wire form, so they go through
        # ``post()``, the SDK's call for any endpoint: same auth, base URL, errors and
        # timeouts, and the reply is still parsed into a ``ChatCompletion``.
        body = {"model": self.settings.model, "messages": messages, **params}
        try:
            response = await self._client().post(
                "/chat/completions", body=body, cast_to=ChatCompletion
            )
            text = response.choices[0].message.content
        except (ValueError, AttributeError, IndexError, TypeError) as error:
            raise BadResponse(f"unreadable reply: {type(error).__name__}: {error}") from None
        if not isinstance(text, str):
            raise BadResponse("the reply has no message content")
        usage = getattr(response, "usage", None)
        return (
            text,
            getattr(usage, "prompt_tokens", 0) or 0,
            getattr(usage, "completion_tokens", 0) or 0,
        )

    def _client(self) -> openai.AsyncOpenAI:
        if self._sdk is None:
            self._sdk = openai.AsyncOpenAI(
                base_url=self.settings.base_url,
                api_key=self.settings.api_key,
                max_retries=0,
                timeout=self.settings.timeout_s,
            )
        return self._sdk

    def _delay(self, attempt: int, error: Exception) -> float:
        """How long to wait before the next attempt: Retry-After when the server says,
        else exponential backoff with jitter (half fixed, half random)."""
        asked = retry_after(error)
        if asked is not None:
            return min(asked, self.settings.max_wait_s)
        ceiling = min(self.settings.max_wait_s, self.settings.backoff_s * 2**attempt)
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._sdk is not None:
            await self._sdk.close()


def retryable(error: Exception) -> bool:
    """Worth another attempt: 408, 409, 429, 5xx, timeouts, lost connections, bad bodies."""
    if isinstance(error, openai.APIStatusError):
        return error.status_code in RETRY_STATUS or error.status_code >= 500
    return isinstance(error, (openai.APIConnectionError, BadResponse))


def retry_after(error: Exception) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms``, ``Retry-After`` in seconds
    or as an HTTP date), or None."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            continue
        return max(0.0, when.timestamp() - time.time())
    return None


def describe(error: Exception) -> str:
    """A short line for an error of the SDK: what the server sent back is redacted (keys,
    Authorization) and cut, since an echoing server may send our own headers back."""
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {redact_body(error.message)}"
    if isinstance(error, openai.APITimeoutError):
        return "the request timed out"
    return redact_body(str(error)) or type(error).__name__


def refused(settings: LLMSettings, error: Exception) -> LLMError:
    """The error that stops the run when the server refuses a request for good."""
    status = getattr(error, "status_code", None)
    fix = {
        401: "set the key in the variable drafting.llm.api_key_env names",
        403: "use a key that may call this model",
        404: "check drafting.llm.base_url (it usually ends in /v1) and drafting.llm.model",
    }.get(status, "check drafting.llm in the recipe")
    return LLMError(
        f"{redact_url(settings.base_url)}: the model server refused: {describe(error)} (fix: {fix})"
    )
