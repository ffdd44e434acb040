"""A drafting run killed with SIGKILL halfway loses only its requests in flight.

The run is a subprocess (``tests/drafting_run.py``) drafting 500 prompts against the
local server. The server pauses after 250 replies; once the client has committed them
all to its cache, the client is killed with SIGKILL while its next requests are in
flight. Run again, it writes exactly 500 drafts, and the server's log shows that no
prompt was answered twice: the only prompts requested twice are the ones in flight at
the kill.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO
from tests.llm_server import LLMServer

COUNT, HALF, CONCURRENCY = 500, 250, 8


def cached_replies(cache: Path) -> int:
    if not cache.exists():
        return 0
    con = sqlite3.connect(f"{cache.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return con.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0
    finally:
        con.close()


def settled(server: LLMServer, cache: Path) -> bool:
    """Every answered reply is in the cache and every request in flight is held."""
    held = sum(1 for e in server.log if e.get("held"))
    answered = sum(server.answered().values())
    return 0 < server.in_flight == held and cached_replies(cache) == answered


def wait_for(condition, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def start(server: LLMServer, cache: Path, demo: Path, out: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "tests.drafting_run", "--base-url", server.base_url]
    command += ["--cache", str(cache), "--demo", str(demo), "--count", str(COUNT)]
    command += ["--out", str(out), "--concurrency", str(CONCURRENCY)]
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_killed_run_resumes_and_asks_no_answered_prompt_again(tmp_path, demo_dir):
    cache, first_out, second_out = (
        tmp_path / "replies.sqlite",
        tmp_path / "1.jsonl",
        tmp_path / "2.jsonl",
    )
    with LLMServer(latency=0.01) as server:
        server.pause_after = HALF
        run = start(server, cache, demo_dir, first_out)
        wait_for(lambda: sum(server.answered().values()) >= HALF)
        wait_for(lambda: settled(server, cache))  # replies committed; next requests held
        answered = sum(server.answered().values())
        run.send_signal(signal.SIGKILL)
        assert run.wait(timeout=30) == -signal.SIGKILL
        assert not first_out.exists()

        # A request the client sent just before the kill may still be in the server's
        # socket buffer: let the server take it in before counting what was in flight.
        wait_for(lambda: server.in_flight == sum(1 for e in server.log if e.get("held")))
        time.sleep(0.5)
        in_flight = {e["key"] for e in server.log if e.get("held")}
        assert 0 < len(in_flight) <= CONCURRENCY
        assert cached_replies(cache) == answered

        server.release()
        rerun = start(server, cache, demo_dir, second_out)
        stdout, stderr = rerun.communicate(timeout=180)
        assert rerun.returncode == 0, stderr.decode()

        drafts = [json.loads(line) for line in second_out.read_text().splitlines()]
        assert len(drafts) == COUNT
        assert len({d["job"] for d in drafts}) == COUNT
        answers = server.answered()
        assert len(answers) == COUNT and set(answers.values()) == {1}, "a prompt was answered twice"
        asked_twice = {key for key, n in server.requested().items() if n > 1}
        # Only prompts in flight at the kill may be asked again (a crash loses those).
        assert asked_twice <= in_flight
        summary = json.loads(stdout.decode().splitlines()[-1])
        assert summary["usage"]["test-model"]["cached_replies"] == answered
        assert summary["usage"]["test-model"]["replies"] == COUNT - answered
