"""A local OpenAI-compatible chat server for the tests and the benchmark.

It serves ``POST /v1/chat/completions`` on 127.0.0.1 from a thread, answers drafting
and text-to-SQL prompts with deterministic replies made from the prompt, and can be
told to misbehave for the next requests: malformed JSON, 429 with Retry-After, 500,
a body that is not JSON, slow replies. It logs every request (a hash of model,
messages and parameters) and whether it was answered, so tests can prove what was
sent. ``GET /stats`` returns the counts.

    with LLMServer(latency=0.2) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="x")
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # a burst of new connections must not overflow the backlog


@dataclass
class Misbehave:
    """What the server does to one request instead of answering it well."""

    status: int = 200
    content: str | None = None  # the assistant's text, when it should not be the default
    body: bytes | None = None  # the raw HTTP body, when it should not be JSON at all
    headers: dict = field(default_factory=dict)
    delay: float = 0.0


def malformed_json() -> Misbehave:
    """A 200 reply whose assistant text is not JSON."""
    return Misbehave(content='{"question": "Which recent admissions?", "trigger": ')


def wrong_shape() -> Misbehave:
    """A 200 reply whose JSON misses required keys."""
    return Misbehave(content='{"question": "Which recent admissions?"}')


def rate_limited(retry_after: str = "1") -> Misbehave:
    """A 429 with a Retry-After header."""
    return Misbehave(
        status=429,
        body=b'{"error": {"message": "slow down", "type": "rate_limit"}}',
        headers={"Retry-After": retry_after},
    )


def server_error(status: int = 500) -> Misbehave:
    """A 5xx."""
    return Misbehave(status=status, body=b'{"error": {"message": "boom", "type": "server"}}')


def broken_body() -> Misbehave:
    """A 200 whose body is cut in the middle of the JSON."""
    return Misbehave(body=b'{"id": "x", "choices": [')


def slow(seconds: float) -> Misbehave:
    """A good reply, late."""
    return Misbehave(delay=seconds)


def request_key(body: dict) -> str:
    """The hash of what decides a reply: model, messages and sampling parameters."""
    keep = {k: body.get(k) for k in ("model", "messages", "temperature", "seed", "max_tokens")}
    text = json.dumps(keep, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _field(text: str, name: str) -> str | None:
    match = re.search(rf"^{name}: (.*)$", text, flags=re.MULTILINE)
    return match.group(1).strip() if match else None


NAME_QUALIFIERS = ("primary", "secondary", "admission", "discharge", "home", "away")


def column_names(column: str) -> list[str]:
    """Names proposed for a column, good and bad alike (the gate must sort them): the
    column under default-marked, stay and match qualifiers, and the column itself."""
    return [f"{q}_{column}" for q in NAME_QUALIFIERS] + [column]


TOPICS = ("chess", "jazz", "volcanoes", "origami", "surfing", "tea", "comets", "kites")


def draft_reply(body: dict) -> str:
    """A reply that fits the prompt: a draft for its category, or SQL for its questions.

    Deterministic in the request (``seed`` included), and built to pass the checks:
    the vague word and the reference are in the question, the missing column is one no
    demo table has, the out-of-scope request asks for a plot or a prediction.
    """
    prompt = body["messages"][-1]["content"] if body.get("messages") else ""
    prompt = next((m["content"] for m in body["messages"] if m["role"] == "user"), prompt)
    variant = int(request_key(body), 16)
    column = _field(prompt, "Column to replace")
    if column is not None:
        return json.dumps({"names": column_names(column)})
    if "\nQuestions:\n" in prompt:
        return sql_reply(prompt)
    category = (_field(prompt, "Category") or "").split(" ")[0]
    parent = (_field(prompt, "Parent question") or "the data").rstrip("?. ")
    focus = _field(prompt, "Focus") or "records"
    topic = TOPICS[variant % len(TOPICS)]
    number = variant % 997
    replies = {
        "vague-question": (f"{focus} {number}?", focus),
        "vague-word": (f"{parent}, only the recent ones (case {number})?", "recent"),
        "ambiguous-reference": (f"{parent} for that one (case {number})?", "that one"),
        "missing-column": (f"What is the shoe size {number} of each entry?", "shoe_size"),
        "out-of-scope": (f"Plot this as a chart: {parent} (case {number}).", "Plot"),
        "out-of-domain": (f"Tell me something fun about {topic}, story {number}.", topic),
    }
    text, trigger = replies.get(category, (f"Question {number}?", "question"))
    return json.dumps({"question": text, "trigger": trigger, "rationale": "local test server"})


def asked_ids(prompt: str) -> list[str]:
    """The ids of the questions a text-to-SQL prompt asks for, in order."""
    block = prompt.split("\nQuestions:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(":", 1)[0] for line in block.splitlines()]


def sql_reply(prompt: str) -> str:
    """A query for every question of a text-to-SQL prompt, under its id."""
    queries = [{"id": key, "sql": "SELECT COUNT(*) FROM patients"} for key in asked_ids(prompt)]
    return json.dumps({"queries": queries})


def _words(messages: list[dict]) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in messages)


class LLMServer:
    """The server, its script of misbehaviours, and its request log."""

    def __init__(self, latency: float = 0.0, responder=draft_reply):
        self.latency = latency
        self.responder = responder
        self.script: deque[Misbehave] = deque()
        self.log: list[dict] = []
        self.usage = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        # Once this many are answered, requests are held; released, they are dropped
        # unanswered (the SIGKILL test kills the client that sent them meanwhile).
        self.pause_after: int | None = None
        self.open = threading.Event()
        self.open.set()
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The URL to give the client (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> LLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.open.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *_) -> None:
        self.stop()

    def then(self, *behaviours: Misbehave) -> LLMServer:
        """Misbehave this way for the next requests, one each, in order."""
        self.script.extend(behaviours)
        return self

    @property
    def requests(self) -> int:
        """How many chat requests arrived."""
        return len(self.log)

    def answered(self) -> Counter:
        """How many good (200, JSON) replies each request key got."""
        with self._lock:
            return Counter(e["key"] for e in self.log if e["answered"])

    def requested(self) -> Counter:
        """How many times each request key arrived."""
        with self._lock:
            return Counter(e["key"] for e in self.log)

    # ---- request handling ------------------------------------------------------------

    def _next(self, body: dict) -> tuple[dict, Misbehave]:
        with self._lock:
            entry = {"n": len(self.log), "key": request_key(body), "answered": False, "body": body}
            self.log.append(entry)
            behaviour = self.script.popleft() if self.script else Misbehave()
        return entry, behaviour

    def release(self) -> None:
        """Stop pausing: held requests are dropped, new ones answered."""
        self.pause_after = None
        self.open.set()

    def _reply(self, body: dict, entry: dict, behaviour: Misbehave) -> tuple[int, bytes, dict]:
        if not self.open.is_set():
            entry["held"] = True
            self.open.wait()
            raise ConnectionAbortedError("held while paused; the client is gone")
        time.sleep(self.latency + behaviour.delay)
        if behaviour.body is not None:
            return behaviour.status, behaviour.body, behaviour.headers
        content = behaviour.content if behaviour.content is not None else self.responder(body)
        usage = {
            "prompt_tokens": _words(body["messages"]),
            "completion_tokens": len(content.split()),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        reply = {
            "id": f"chatcmpl-{entry['n']}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "test-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
        }
        return behaviour.status, json.dumps(reply).encode(), behaviour.headers

    def _answered(self, entry: dict, usage: dict) -> None:
        with self._lock:
            entry["answered"] = True
            self.usage["prompt_tokens"] += usage["prompt_tokens"]
            self.usage["completion_tokens"] += usage["completion_tokens"]
            done = sum(1 for e in self.log if e["answered"])
            if self.pause_after is not None and done >= self.pause_after:
                self.open.clear()

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else headers and body wait on a delayed ACK

            def log_message(self, *_args) -> None:  # quiet
                pass

            def _send(self, status: int, payload: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/stats"):
                    stats = {
                        "requests": server.requests,
                        "answered": sum(server.answered().values()),
                    }
                    self._send(200, json.dumps(stats).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                entry, behaviour = server._next(body)
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    status, payload, headers = server._reply(body, entry, behaviour)
                    self._send(status, payload, headers)
                except OSError:  # the client gave up (timeout) or was killed
                    return
                finally:
                    with server._lock:
                        server.in_flight -= 1
                if status == 200 and behaviour.body is None:
                    server._answered(entry, json.loads(payload)["usage"])

        return Handler


def main(argv: list[str] | None = None) -> int:
    """Serve until killed; print the base URL on the first line."""
    import argparse

    parser = argparse.ArgumentParser(description="local OpenAI-compatible test server")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per reply")
    args = parser.parse_args(argv)
    server = LLMServer(latency=args.latency).start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
