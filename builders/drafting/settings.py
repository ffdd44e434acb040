"""How to reach the model and what it cost: plain data, no network.

:class:`LLMSettings` comes from the recipe's ``drafting.llm`` and the environment;
:class:`Usage` counts requests, replies and tokens per model for the build report.
Kept apart from :mod:`.client` so that reading a recipe never imports ``openai``.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

from answerable.kernel.untrusted_text import register_secret, register_url

LOCAL_KEY = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) accept any key


@dataclass(frozen=True)
class LLMSettings:
    """Where the model is and how to call it; from the recipe's ``drafting.llm``."""

    base_url: str
    model: str
    api_key: str = LOCAL_KEY
    concurrency: int = 8
    temperature: float = 0.0
    max_tokens: int | None = None
    max_retries: int = 5
    timeout_s: float = 60.0
    validation_retries: int = 2
    json_schema: bool = False  # send the reply's JSON Schema as response_format
    backoff_s: float = 1.0
    max_wait_s: float = 120.0

    @classmethod
    def from_section(cls, llm: dict, env: dict | None = None) -> LLMSettings | None:
        """Settings from ``drafting.llm`` and the environment; None when no endpoint is set.

        The endpoint is ``base_url`` or else ``OPENAI_BASE_URL``; the key is read from the
        variable ``api_key_env`` names (``OPENAI_API_KEY`` by default), never the recipe.
        """
        env = os.environ if env is None else env
        base_url = llm.get("base_url") or env.get("OPENAI_BASE_URL")
        if not base_url:
            return None
        known = {k: llm[k] for k in cls.__dataclass_fields__ if k in llm and k != "api_key"}
        known.update(base_url=base_url, model=llm.get("model", ""))
        known["api_key"] = env.get(llm.get("api_key_env", "OPENAI_API_KEY")) or LOCAL_KEY
        if known["api_key"] != LOCAL_KEY:
            register_secret(known["api_key"])
        register_url(base_url)
        return cls(**known)

    def params(self, seed: int, reply_schema: dict | None = None, answers: int = 1) -> dict:
        """The request's sampling parameters (part of the cache key). ``seed`` makes
        samples of one prompt differ, and repeatable where the server honours it; with
        ``json_schema`` on, ``reply_schema`` goes as ``response_format`` (structured
        output: llama.cpp and vLLM decode only replies the schema accepts). A reply that
        carries ``answers`` answers (a batch of questions) may take ``max_tokens`` for each."""
        params = {"temperature": self.temperature, "seed": seed}
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens * answers
        if self.json_schema and reply_schema is not None:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": reply_schema},
            }
        return params

    def identity(self) -> dict:
        """What decides the replies (for step signatures): not where or how fast."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "validation_retries": self.validation_retries,
            **({"json_schema": True} if self.json_schema else {}),
        }


@dataclass
class ModelUsage:
    """What one model cost: requests sent, replies, tokens, and replies from the cache."""

    requests: int = 0
    retries: int = 0
    replies: int = 0
    cached_replies: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class Usage:
    """Token accounting per model, for the build report."""

    models: dict[str, ModelUsage] = field(default_factory=dict)

    def of(self, model: str) -> ModelUsage:
        """The counters of one model."""
        return self.models.setdefault(model, ModelUsage())

    def to_report(self) -> dict:
        """``{model: {requests, retries, replies, cached_replies, failed, input_tokens,
        output_tokens}}``."""
        return {model: asdict(u) for model, u in sorted(self.models.items())}
