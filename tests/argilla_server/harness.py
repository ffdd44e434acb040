"""Start the real ``argilla-server`` for the contract tests (test setup only).

``argilla-server`` 2.8 pins pydantic~=2.9, httpx~=0.27 and urllib3<2, older than what the
project runs with (pydantic 2.14, httpx 0.28 here), so it cannot share the project's
environment or process. The harness keeps it in its own virtual environment
(``.venv-argilla-server`` beside the repository's ``.venv``, created on first use from
``requirements.txt``, reused while that file is unchanged) and runs :mod:`serve` there on
a free port of 127.0.0.1. The project's own SDK (argilla 2.x in ``.venv``) talks to it
over real HTTP, as it would to a deployed server.
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import time
import venv
from dataclasses import dataclass
from pathlib import Path

import httpx
from filelock import FileLock

HERE = Path(__file__).parent
REQUIREMENTS = HERE / "requirements.txt"
DEFAULT_VENV = HERE.parents[1] / ".venv-argilla-server"
OWNER_KEY = "contract-test-owner-key"  # a throwaway server's key, not a credential


@dataclass
class Server:
    """A running test server: where it is, its owner's key, its process and log."""

    url: str
    api_key: str
    process: subprocess.Popen
    log: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def server_python(folder: Path | None = None) -> Path:
    """The Python of the server's environment, created or refreshed when needed.

    Test workers that ask at once wait for one another (a file lock beside the folder):
    one creates the environment, the others find it made."""
    folder = Path(os.environ.get("ANSWERABLE_ARGILLA_SERVER_VENV") or folder or DEFAULT_VENV)
    with FileLock(f"{folder}.lock"):
        return _made_environment(folder)


def _made_environment(folder: Path) -> Path:
    python = folder / "bin" / "python"
    wanted = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    marker = folder / "answerable-requirements.sha256"
    if python.exists() and marker.is_file() and marker.read_text() == wanted:
        return python
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    install = [str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)]
    done = subprocess.run(install, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"pip could not install argilla-server:\n{done.stderr[-3000:]}")
    marker.write_text(wanted)
    return python


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(home: Path, python: Path, timeout: float = 120) -> Server:
    """Start the server with its data under ``home``; wait until it answers."""
    port = free_port()
    log = home / "server.log"
    home.mkdir(parents=True, exist_ok=True)
    command = [str(python), str(HERE / "serve.py"), "--port", str(port), "--home", str(home)]
    command += ["--api-key", OWNER_KEY]
    with open(log, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", OWNER_KEY, process, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"argilla-server stopped:\n{log.read_text()[-3000:]}")
        try:
            reply = httpx.get(f"{server.url}/api/v1/me", headers={"X-Argilla-Api-Key": OWNER_KEY})
            if reply.status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"argilla-server did not answer in {timeout} s:\n{log.read_text()[-3000:]}")


def add_annotator(server: Server, username: str, workspace: str) -> str:
    """Create an annotator in ``workspace`` through the REST API; returns their API key."""
    owner = {"X-Argilla-Api-Key": server.api_key}
    with httpx.Client(base_url=server.url, headers=owner) as http:
        user = http.post(
            "/api/v1/users",
            json={
                "username": username,
                "first_name": username,
                "password": "password-" + username,
                "role": "annotator",
            },
        )
        user.raise_for_status()
        spaces = http.get("/api/v1/me/workspaces").json()["items"]
        space = next(w for w in spaces if w["name"] == workspace)
        http.post(f"/api/v1/workspaces/{space['id']}/users", json={"user_id": user.json()["id"]})
        return user.json()["api_key"]


def respond(server: Server, api_key: str, record_id: str, values, status="submitted") -> None:
    """Submit (or save as draft, or discard) one response, as Argilla's web app does."""
    body = {"values": values, "status": status}
    reply = httpx.post(
        f"{server.url}/api/v1/records/{record_id}/responses",
        json=body,
        headers={"X-Argilla-Api-Key": api_key},
    )
    if reply.status_code >= 400:
        raise RuntimeError(f"response refused ({reply.status_code}): {reply.text}")


if __name__ == "__main__":  # python harness.py: build the environment ahead of the tests
    print(server_python(), file=sys.stderr)
