"""The local review page: its JSON API over HTTP, and end to end in headless Chromium.

The browser test drives Debian's ``chromium`` (installed by ``.ci/run``) with Playwright
for Python, launched by path: Playwright's own browser download is not used.
"""

from __future__ import annotations

import json
import shutil
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from answerable.annotation.policy import Policy
from answerable.annotation.server import ReviewPage, make_server
from tests.review_helpers import by_category, filled_queue, review_items

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ITEMS = by_category(review_items())


TOKEN = "test-token"


@contextmanager
def running(page: ReviewPage, **options):
    """``page`` served on a free port with the session token ``TOKEN``; yields the server."""
    server = make_server(page, port=0, token=TOKEN, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def served(tmp_path, demo_dir):
    """The review page of the fixture items on a free port; yields (url, queue)."""
    queue = filled_queue(tmp_path / "queue.sqlite", demo_dir)
    with running(ReviewPage(queue, Policy("majority", 2), "demo")) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", queue
    queue.close()


def call(url: str, body=None, headers=None):
    """(status, JSON) of one request, with the session token unless ``headers`` are given."""
    data = None if body is None else json.dumps(body).encode()
    if headers is None:
        headers = {"X-Review-Token": TOKEN}
        if body is not None:
            headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request) as reply:
            return reply.status, json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_api_serves_items_one_at_a_time_and_records_decisions(served):
    url, queue = served
    status, meta = call(f"{url}/api/meta")
    assert status == 200
    assert meta["databases"] == ["clinic", "league"]
    assert "vague-word" in meta["taxonomy"]["ambiguous"]
    status, first = call(f"{url}/api/next?annotator=ana")
    assert first["remaining"] == 6
    item = first["item"]
    assert item["id"] == min(i["id"] for i in review_items())
    assert item["result"]["rows"] == [[103]] and item["schema"][0]["name"] == "players"
    status, saved = call(
        f"{url}/api/decisions", {"item_id": item["id"], "annotator": "ana", "verdict": "accept"}
    )
    assert status == 201 and saved["progress"]["decided_by_you"] == 1
    status, second = call(f"{url}/api/next?annotator=ana")
    assert second["item"]["id"] != item["id"] and second["remaining"] == 5
    status, other = call(f"{url}/api/next?annotator=ben")  # ben has not decided it yet
    assert other["item"]["id"] == item["id"]
    assert [d["annotator"] for d in queue.pull()] == ["ana"]


def test_api_filters_by_database_category_and_status(served):
    url, _ = served
    _, league = call(f"{url}/api/next?annotator=ana&db=league")
    assert league["remaining"] == 1 and league["item"]["db_id"] == "league"
    _, vague = call(f"{url}/api/next?annotator=ana&category=vague-word")
    assert vague["item"]["id"] == ITEMS["vague-word"]["id"]
    _, none = call(f"{url}/api/next?annotator=ana&status=accepted")
    assert none["item"] is None
    target = ITEMS["out-of-scope"]["id"]
    for name in ("ben", "cy"):
        call(f"{url}/api/decisions", {"item_id": target, "annotator": name, "verdict": "reject"})
    _, rejected = call(f"{url}/api/next?annotator=ana&status=rejected")
    assert rejected["item"]["id"] == target and rejected["remaining"] == 1
    _, skipped = call(f"{url}/api/next?annotator=ana&after={ITEMS['vague-word']['id']}")
    assert skipped["item"]["id"] > ITEMS["vague-word"]["id"]


def test_api_reports_bad_decisions_and_refuses_foreign_requests(served):
    url, queue = served
    status, error = call(
        f"{url}/api/decisions", {"item_id": "f" * 16, "annotator": "ana", "verdict": "accept"}
    )
    assert status == 400 and "unknown item id 'ffffffffffffffff'" in error["error"]
    vague = ITEMS["vague-word"]["id"]
    status, error = call(
        f"{url}/api/decisions",
        {"item_id": vague, "annotator": "ana", "verdict": "relabel", "category": "vagueish"},
    )
    assert status == 400 and "unknown category 'vagueish'" in error["error"]
    status, error = call(f"{url}/api/decisions", {"item_id": vague, "verdict": "accept"})
    assert status == 400 and "no annotator name" in error["error"]
    form = {"Content-Type": "application/x-www-form-urlencoded", "X-Review-Token": TOKEN}
    assert call(f"{url}/api/decisions", {"x": 1}, headers=form)[0] == 415
    foreign = {"Host": "evil.example:80", "X-Review-Token": TOKEN}
    assert call(f"{url}/api/meta", headers=foreign)[0] == 403
    assert call(f"{url}/api/nothing")[0] == 404
    assert queue.history() == []


def test_page_files_are_served(served):
    url, _ = served
    for path, kind in (("/", "text/html"), ("/review.js", "javascript"), ("/review.css", "css")):
        with urllib.request.urlopen(url + path) as reply:
            assert kind in reply.headers["Content-Type"]


# ---- end to end in a real browser -------------------------------------------------


@pytest.fixture
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def test_annotator_decides_three_items_with_clicks_and_keys(served, browser, tmp_path):
    url, queue = served
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/?token={TOKEN}")
    assert "Type your name" in page.text_content("#empty")
    page.fill("#annotator", "ana")
    page.press("#annotator", "Enter")
    first = _shown(page)

    page.fill("#comment", "reads fine")
    page.click("#accept")  # 1: a click
    second = _next(page, first)

    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("r")  # 2: a key
    third = _next(page, second)

    page.select_option("#category", "vague-question")
    page.fill("#corrected", "Which patients were admitted in the last 30 days?")
    page.locator("#card h2").first.click()  # leave the text box so the key is a shortcut
    page.keyboard.press("l")  # 3: relabel by key
    _next(page, third)
    assert "Saved: relabel" in page.text_content("#message")
    assert "you: 3 done, 3 left" in page.text_content("#progress-text")
    page.screenshot(path=str(tmp_path / "review-page.png"), full_page=True)

    decisions = {d["item_id"]: d for d in queue.pull()}
    assert set(decisions) == {first, second, third}
    assert all(d["annotator"] == "ana" for d in decisions.values())
    assert decisions[first]["verdict"] == "accept"
    assert decisions[first]["comment"] == "reads fine"
    assert decisions[second]["verdict"] == "reject"
    relabel = decisions[third]
    assert (relabel["verdict"], relabel["label"], relabel["category"]) == (
        "relabel",
        "ambiguous",
        "vague-question",
    )
    assert relabel["question"] == "Which patients were admitted in the last 30 days?"
    assert errors == []


def test_relabel_without_category_asks_for_one_and_records_nothing(served, browser):
    url, queue = served
    page = browser.new_page()
    page.goto(f"{url}/?token={TOKEN}")
    page.fill("#annotator", "ben")
    page.press("#annotator", "Enter")
    _shown(page)
    page.click("#relabel")
    assert "Choose the new category first" in page.text_content("#message")
    assert queue.history() == []


def test_spans_marked_on_the_page_are_kept(served, browser):
    url, queue = served
    page = browser.new_page()
    page.goto(f"{url}/?token={TOKEN}")
    page.fill("#annotator", "cy")
    page.press("#annotator", "Enter")
    page.select_option("#filter-category", "vague-word")
    _shown(page)
    assert page.text_content("#question mark") == "recently"
    assert page.text_content("#trigger") == "vague-word: word recently"
    page.click("#clear-spans")
    page.evaluate(
        """() => {
            const text = document.getElementById('question').firstChild;
            const range = document.createRange();
            range.setStart(text, 6);
            range.setEnd(text, 14);
            getSelection().removeAllRanges();
            getSelection().addRange(range);
        }"""
    )
    page.click(".spans-edit [data-tag=VAL]")
    assert page.text_content("#question mark") == "patients"
    page.click("#accept")
    page.wait_for_selector("#empty:not([hidden])")
    [kept] = queue.pull()
    assert kept["spans"] == [{"start": 6, "end": 14, "tag": "VAL"}]


def _shown(page) -> str:
    page.wait_for_selector("#card:not([hidden])")
    return page.text_content("#item-id")


def _next(page, previous: str) -> str:
    """Wait until the page shows another item (or none left); its id."""
    page.wait_for_function(
        "previous => document.getElementById('item-id').textContent !== previous"
        " || !document.getElementById('empty').hidden",
        arg=previous,
    )
    return page.text_content("#item-id")
