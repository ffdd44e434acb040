"""Secrets never reach the disk: a build on PostgreSQL (the reader's password in the DSN)
that drafts and writes candidate SQL through a model server named by a URL with a
password, with an API key in the environment, and a server that echoes all three back
in its replies. Every file under the work folder and the release is searched for each
secret as written, URL-encoded and base64-encoded (as an HTTP ``Basic`` header carries
it)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import polars as pl
import pytest
import yaml

from tests import postgres_server as server
from tests.conftest import DEMO_RECIPE, REPO, run_in
from tests.llm_server import LLMServer, draft_reply

pytest.importorskip("psycopg")
postgres_server, postgres_demo, postgres_reader = (  # fixtures
    server.postgres_server,
    server.postgres_demo,
    server.postgres_reader,
)
KEY = "sk-disk-test-1f2e3d4c5b"
USER, PASSWORD = "alice", "url-PW-77q!x"


def forms(secret: str) -> set[str]:
    """A secret as written, URL-encoded and base64-encoded (with and without padding)."""
    encoded = base64.b64encode(secret.encode()).decode()
    return {secret, quote(secret, safe=""), encoded, encoded.rstrip("=")}


def contents(file: Path) -> bytes:
    """A file's bytes; a Parquet file's rows as JSON lines (its pages are compressed)."""
    if file.suffix == ".parquet":
        return pl.read_parquet(file).write_ndjson().encode()
    return file.read_bytes()


def echoing(secrets: list[str]):
    """A responder that puts every secret into each reply's question or query."""
    said = " ".join(secrets)

    def reply(body: dict) -> str:
        value = json.loads(draft_reply(body))
        if "queries" in value:
            for query in value["queries"]:
                query["sql"] = f"SELECT '{said}' AS echo"
        else:
            value["question"] = f"{value['question']} {said}"
            value["rationale"] = said
        return json.dumps(value)

    return reply


def recipe(folder: Path, base_url: str) -> Path:
    """Two seeds of each demo source on the server, drafted and given candidate SQL."""
    data = yaml.safe_load(DEMO_RECIPE.read_text())
    data.pop("templates")
    data.pop("demo")
    for source in data["sources"]:
        source.pop("databases")
        source["path"] = str(REPO / "raw" / "demo" / source["path"])
        source |= {"engine": "postgres", "dsn_env": "ANSWERABLE_TEST_PG_DSN", "limit": 2}
        source["scratch_schema"] = server.SCRATCH
    data["drafting"] = {
        "categories": ["vague-word", "small-talk"],
        "llm": {"base_url": base_url, "model": "m", "max_retries": 0},
        "candidates": {"per_item": 1},
    }
    path = folder / "recipe.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_no_secret_is_written_to_any_file(postgres_reader, tmp_path, monkeypatch):
    pg_password = postgres_reader.password
    secrets = [KEY, PASSWORD, f"{USER}:{PASSWORD}", pg_password]
    monkeypatch.setenv("ANSWERABLE_TEST_PG_DSN", postgres_reader.dsn())
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with LLMServer(responder=echoing(secrets)) as llm:
        url = llm.base_url.replace("http://", f"http://{USER}:{quote(PASSWORD, safe='')}@")
        path = recipe(tmp_path, url)
        result = run_in(tmp_path, "build", path)
    assert result.exit_code == 0, result.output
    assert llm.requests > 0
    written = [f for f in tmp_path.rglob("*") if f.is_file() and f != path]
    assert any(f.suffix == ".parquet" for f in written)
    assert any(f.name == "manifest.json" for f in written)  # the release is there too
    assert any(f.name == "replies.sqlite" for f in written)
    found = [
        (str(f.relative_to(tmp_path)), form)
        for f in written
        for form in set().union(*(forms(s) for s in secrets))
        if form.encode() in contents(f)
    ]
    assert found == []
    for secret in secrets:
        assert secret not in result.output
