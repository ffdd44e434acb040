"""Secrets masked by value: a configured key, a URL's password and the ``Basic`` header
they make never show in a message, whatever a server echoes back."""

from __future__ import annotations

import base64

import pytest

from answerable.builders.drafting.client import LLMError
from answerable.builders.drafting.settings import LLMSettings
from answerable.kernel.untrusted_text import mask_secrets, redact_body
from tests.llm_server import LLMServer, Misbehave
from tests.test_drafting_client import PROMPT, complete

KEY = "hunter2-key-value"
PASSWORD = "PWsecret99"


@pytest.fixture
def server():
    with LLMServer() as running:
        yield running


def test_a_server_that_echoes_the_key_and_the_basic_header_shows_neither(server, tmp_path):
    url = server.base_url.replace("http://", f"http://alice:{PASSWORD}@")
    section = {"base_url": url, "model": "test-model", "backoff_s": 0.01}
    settings = LLMSettings.from_section(section, env={"OPENAI_API_KEY": KEY})
    basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    echo = f'{{"error": {{"message": "Invalid key {KEY}; you sent Basic {basic}"}}}}'
    server.then(Misbehave(status=401, body=echo.encode()))
    with pytest.raises(LLMError) as caught:
        complete(settings, tmp_path / "c.sqlite", messages=PROMPT)
    message = str(caught.value)
    for secret in (KEY, PASSWORD, basic, basic.rstrip("=")):
        assert secret not in message, message
    assert "***" in message


def test_masking_is_by_value_not_by_pattern():
    """A secret in no ``key=...`` shape is still hidden once it was configured."""
    LLMSettings.from_section({"base_url": "http://127.0.0.1:9/v1"}, env={"OPENAI_API_KEY": KEY})
    assert mask_secrets(f"the server said: {KEY} is unknown") == "the server said: *** is unknown"
    assert KEY not in redact_body(f"plain text {KEY}")
