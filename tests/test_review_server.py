"""The review server holds against other local processes and malformed requests.

Each test speaks HTTP over a raw socket or ``http.client``, as a hostile or broken
client would: no token, a foreign Origin, a look-alike Content-Type, a body too long,
a Content-Length that is not a byte count, invalid UTF-8, a client that goes silent.
"""

from __future__ import annotations

import http.client
import json
import socket

import pytest

from answerable.annotation.policy import Policy
from answerable.annotation.server import ReviewPage, ReviewServerError, make_server, page_url
from tests.conftest import run_in
from tests.review_helpers import filled_queue, review_items
from tests.test_review_page import TOKEN, running


@pytest.fixture
def page(tmp_path, demo_dir):
    queue = filled_queue(tmp_path / "queue.sqlite", demo_dir)
    yield ReviewPage(queue, Policy("majority", 2), "demo")
    queue.close()


@pytest.fixture
def server(page):
    with running(page, max_body=2_000) as server:
        yield server


def request(server, method: str, path: str, body: bytes | None = None, headers=None):
    """(status, JSON reply) of one request with exactly the given headers."""
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    connection.putrequest(method, path, skip_accept_encoding=True)
    for name, value in (headers or {}).items():
        connection.putheader(name, value)
    connection.endheaders(body)
    reply = connection.getresponse()
    data = reply.read()
    connection.close()
    return reply.status, json.loads(data or b"null")


def raw(server, head: bytes, wait: float = 10) -> bytes:
    """Send ``head`` (request line and headers, maybe a partial body) and read until the
    server closes the connection or ``wait`` seconds pass."""
    with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=wait) as sock:
        sock.sendall(head)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def decision_body(item_id: str, annotator: str = "ana") -> bytes:
    return json.dumps({"item_id": item_id, "annotator": annotator, "verdict": "accept"}).encode()


def post_headers(body: bytes, **extra) -> dict:
    headers = {"X-Review-Token": TOKEN, "Content-Type": "application/json"}
    headers["Content-Length"] = str(len(body))
    headers.update(extra)
    return headers


FIRST = min(i["id"] for i in review_items())


def test_the_api_refuses_requests_without_the_session_token(server, page):
    assert request(server, "GET", "/api/meta")[0] == 403
    status, reply = request(server, "GET", "/api/meta", headers={"X-Review-Token": "guess"})
    assert status == 403 and "session token" in reply["error"]
    body = decision_body(FIRST)
    headers = post_headers(body)
    del headers["X-Review-Token"]
    assert request(server, "POST", "/api/decisions", body, headers)[0] == 403
    assert page.queue.history() == []
    assert request(server, "GET", "/api/meta", headers={"X-Review-Token": TOKEN})[0] == 200
    assert request(server, "POST", "/api/decisions", body, post_headers(body))[0] == 201


def test_the_page_itself_is_served_without_the_token_and_its_url_carries_it(server):
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    connection.request("GET", "/")
    assert connection.getresponse().status == 200
    assert page_url(server) == f"http://127.0.0.1:{server.server_address[1]}/?token={TOKEN}"
    fresh = make_server(ReviewPage(None, Policy(), "demo"), port=0)
    try:
        assert len(fresh.token) >= 32 and fresh.token in page_url(fresh)
    finally:
        fresh.server_close()


def test_origin_must_be_the_pages_own_when_sent(server, page):
    body = decision_body(FIRST)
    own = f"http://127.0.0.1:{server.server_address[1]}"
    foreign = post_headers(body, Origin="http://evil.example")
    status, reply = request(server, "POST", "/api/decisions", body, foreign)
    assert status == 403 and "evil.example" in reply["error"]
    wrong_port = post_headers(body, Origin="http://127.0.0.1:1")
    assert request(server, "POST", "/api/decisions", body, wrong_port)[0] == 403
    assert page.queue.history() == []
    assert request(server, "POST", "/api/decisions", body, post_headers(body, Origin=own))[0] == 201


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        ("application/jsonp", 415),
        ("application/json-seq", 415),
        ("text/plain", 415),
        ("application/json; charset=latin-1", 415),
        ("application/json; charset=utf-8", 201),
        ("application/json", 201),
    ],
)
def test_content_type_must_be_exactly_json(server, kind, status):
    body = decision_body(FIRST)
    assert (
        request(
            server, "POST", "/api/decisions", body, post_headers(body, **{"Content-Type": kind})
        )[0]
        == status
    )


def test_a_body_too_long_is_refused_from_its_headers_before_it_is_read(server, page):
    # 100 MB announced, not one byte sent: the reply can only come from the headers.
    head = (
        b"POST /api/decisions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"X-Review-Token: {TOKEN}\r\n".encode()
        + b"Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
    )
    reply = raw(server, head)
    assert reply.startswith(b"HTTP/1.0 413") or reply.startswith(b"HTTP/1.1 413"), reply[:80]
    assert b"at most 2000" in reply
    assert page.queue.history() == []


@pytest.mark.parametrize(
    ("length", "status", "says"),
    [("abc", 400, "not a byte count"), ("-1", 400, "not a byte count"), (" 1e3", 400, "")],
)
def test_a_bad_content_length_is_a_400(server, length, status, says):
    head = (
        b"POST /api/decisions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + f"X-Review-Token: {TOKEN}\r\nContent-Type: application/json\r\n".encode()
        + f"Content-Length: {length}\r\n\r\n".encode()
    )
    reply = raw(server, head)
    assert reply.split(b" ")[1] == str(status).encode() and says.encode() in reply


def test_a_post_without_a_length_is_refused(server):
    headers = {"X-Review-Token": TOKEN, "Content-Type": "application/json"}
    assert request(server, "POST", "/api/decisions", None, headers)[0] == 411
    chunked = dict(headers, **{"Transfer-Encoding": "chunked"})
    head = (
        b"POST /api/decisions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in chunked.items()).encode()
        + b"\r\n5\r\nhello\r\n0\r\n\r\n"
    )
    assert raw(server, head).split(b" ")[1] == b"411"


def test_invalid_utf8_and_bad_json_are_400_with_one_line(server, page):
    body = b'{"item_id": "\xff\xfe"}'
    status, reply = request(server, "POST", "/api/decisions", body, post_headers(body))
    assert status == 400 and reply["error"] == "the body is not valid UTF-8"
    body = b'{"item_id": '
    status, reply = request(server, "POST", "/api/decisions", body, post_headers(body))
    assert status == 400 and reply["error"].startswith("not JSON")
    assert page.queue.history() == []


def test_json_nested_100000_deep_is_400_not_500(page):
    body = b"[" * 100_000 + b"]" * 100_000
    with running(page, max_body=len(body)) as server:
        status, reply = request(server, "POST", "/api/decisions", body, post_headers(body))
    assert status == 400 and reply["error"] == "JSON nested too deeply"
    assert page.queue.history() == []


def test_a_silent_client_is_dropped_after_the_read_timeout(page):
    with running(page, timeout=0.3) as server:
        # Headers promise 50 bytes; none come. The server must close the connection.
        head = (
            b"POST /api/decisions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"X-Review-Token: {TOKEN}\r\nContent-Type: application/json\r\n".encode()
            + b"Content-Length: 50\r\n\r\n"
        )
        assert raw(server, head, wait=20) == b""
        assert raw(server, b"GET /api/meta HTTP/1.1\r\n", wait=20) == b""
        # and it still serves the next client
        assert request(server, "GET", "/api/meta", headers={"X-Review-Token": TOKEN})[0] == 200


def test_a_taken_port_is_one_line(server, page, tmp_path):
    port = server.server_address[1]
    with pytest.raises(ReviewServerError, match=f"port {port} on 127.0.0.1 is already in use"):
        make_server(page, port=port)


def test_review_serve_on_a_taken_port_prints_one_line(server, tmp_path):
    from tests.test_cli import tiny_project
    from tests.test_review_cli import REVIEW, SEEDS

    recipe = tiny_project(tmp_path, SEEDS, extra=REVIEW)
    assert run_in(tmp_path, "build", recipe, "--no-release").exit_code == 0
    port = server.server_address[1]
    result = run_in(tmp_path, "review", "serve", recipe, "--port", port)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is already in use "
        "(fix: pass another --port, or stop what listens there)"
    ]
    assert "Traceback" not in result.output
