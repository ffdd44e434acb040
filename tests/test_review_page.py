"""The local review page: its JSON API over HTTP, and end to end in headless Chromium.

The browser test drives Debian's ``chromium`` (installed by ``.ci/run``) with Playwright
for Python, launched by path: Playwright's own browser download is not used.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from answerable.annotation.decisions import TAXONOMY
from answerable.annotation.policy import Policy
from answerable.annotation.readings import ReadingRunner
from answerable.annotation.server import ReviewPage, guidelines, make_server
from answerable.builders.drafting.categories import definitions
from tests.review_helpers import by_category, demo_verifier, filled_queue, review_items

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
    verifier = demo_verifier(demo_dir)
    page = ReviewPage(queue, Policy("majority", 2), "demo", verifier=verifier)
    with running(page) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", queue
    queue.close()
    verifier.close()


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


def launched_chromium():
    """Debian's chromium launched headless by Playwright (a generator: yields the browser,
    closes it after); skips when either is missing."""
    playwright = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def browser():
    yield from launched_chromium()


def test_annotator_decides_three_items_with_clicks_and_keys(served, browser, tmp_path):
    url, queue = served
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/?token={TOKEN}")
    page.wait_for_selector("#empty:not([hidden])")  # the page asks once its data came
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
    _shown(page)  # the queue is loaded before the filter is chosen
    page.select_option("#filter-category", "vague-word")
    page.wait_for_function(
        "document.getElementById('trigger').textContent.startsWith('vague-word')"
    )
    assert page.text_content("#question mark") == "recently"
    assert page.text_content("#trigger") == "vague-word: word recently"
    page.click("#clear-spans")
    _mark_val(page, 6, 14)
    assert page.text_content("#question mark") == "patients"
    page.click("#accept")
    page.wait_for_selector("#empty:not([hidden])")
    [kept] = queue.pull()
    assert kept["spans"] == [{"start": 6, "end": 14, "tag": "VAL"}]


def _mark_val(page, start: int, end: int) -> None:
    """Select characters ``start``-``end`` of the question's first text and mark them VAL."""
    page.evaluate(
        """([start, end]) => {
            const text = document.getElementById('question').firstChild;
            const range = document.createRange();
            range.setStart(text, start);
            range.setEnd(text, end);
            getSelection().removeAllRanges();
            getSelection().addRange(range);
        }""",
        [start, end],
    )
    page.click(".spans-edit [data-tag=VAL]")


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


# ---- readings, guidelines, hotkeys, undo, spans -----------------------------------


def _start(browser, url: str, name: str):
    """A page opened from the printed URL with ``name`` typed and started."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/?token={TOKEN}")
    assert page.is_hidden("#decide")  # no decision panel before a name is set
    page.wait_for_selector("#empty:not([hidden])")  # the page asks once its data came
    assert "Type your name" in page.text_content("#empty")
    page.fill("#annotator", name)
    page.press("#annotator", "Enter")
    page.wait_for_selector("#card:not([hidden])")
    page.errors = errors
    return page


def _away_from_fields(page) -> None:
    page.locator("#card h2").first.click()


READINGS_SQL = [
    "SELECT count(*) FROM icu_stays WHERE length_of_stay > 2",
    "SELECT count(*) FROM icu_stays WHERE length_of_stay > 5",
]


@pytest.fixture
def with_readings(tmp_path, demo_dir):
    """The fixture queue whose column-ambiguous item lists two readings in its trigger,
    served with a runner over a copy of the clinic database as its edited database."""
    item = dict(ITEMS["column-ambiguous"])
    item["trigger"] = dict(
        item["trigger"], readings=READINGS_SQL, candidates=["icu.over_two", "icu.over_five"]
    )
    variants = tmp_path / "variants"
    variants.mkdir()
    shutil.copy(demo_dir / "clinic.sqlite", variants / f"{item['db_variant']}.sqlite")
    queue = filled_queue(tmp_path / "queue.sqlite", demo_dir)
    queue.push([item])
    page = ReviewPage(queue, Policy("majority", 2), "demo", ReadingRunner(variants))
    with running(page) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", queue, item
    queue.close()


def test_readings_are_shown_side_by_side_with_their_results(with_readings, browser, demo_dir):
    url, _, item = with_readings
    expected = []
    with sqlite3.connect(demo_dir / "clinic.sqlite") as db:
        expected = [str(db.execute(sql).fetchone()[0]) for sql in READINGS_SQL]
    assert expected[0] != expected[1]
    page = _start(browser, url, "ana")
    page.select_option("#filter-category", "column-ambiguous")
    page.wait_for_selector(f"#item-id:text('{item['id']}')")
    readings = page.locator("#readings .reading")
    assert readings.count() == 2
    for n, name in enumerate(["icu.over_two", "icu.over_five"]):
        reading = readings.nth(n)
        assert reading.locator("h3").text_content() == name
        assert reading.locator("pre").text_content() == READINGS_SQL[n]
        assert reading.locator("td").first.text_content() == expected[n]
    assert "readings" not in page.text_content("#trigger")  # no run-on SQL in the trigger
    assert page.is_visible("#readings-box") and page.errors == []


def test_stored_readings_are_shown_as_stored(served):
    _, queue = served
    item = dict(ITEMS["vague-word"])
    stored = {
        "name": "patients.gender",
        "sql": "SELECT 1",
        "columns": ["x"],
        "rows": [[n] for n in range(8)],
        "row_count": 8,
        "result_hash": "abc",
    }
    item["readings"] = [stored, dict(stored, name="other")]
    queue.push([item])
    view = ReviewPage(queue, Policy(), "demo").view(item["id"], "open", 0)
    assert [r["name"] for r in view["readings"]] == ["patients.gender", "other"]
    assert view["readings"][0]["rows"] == [[n] for n in range(5)]  # the first five
    assert view["readings"][0]["row_count"] == 8


def test_guidelines_panel_defines_every_category_with_an_example(served, browser):
    url, _ = served
    page = _start(browser, url, "ana")
    assert page.is_hidden("#guidelines")
    _away_from_fields(page)
    page.keyboard.press("g")
    assert page.is_visible("#guidelines")
    shown = page.text_content("#guidelines")
    for entry in definitions():
        assert entry.name in shown and entry.definition in shown and entry.example in shown
    taxonomy = {c for cats in TAXONOMY.values() for c in cats if c}
    assert taxonomy <= {d.name for d in definitions()}


def test_category_hotkeys_choose_the_category_and_l_relabels(served, browser):
    url, queue = served
    page = _start(browser, url, "ana")
    page.select_option("#filter-category", "out-of-scope")
    page.wait_for_selector(f"#item-id:text('{ITEMS['out-of-scope']['id']}')")
    _away_from_fields(page)
    fourth = guidelines()[3]
    page.keyboard.press("4")
    assert page.input_value("#category") == fourth["name"]
    page.keyboard.press("l")
    page.wait_for_selector("#message:text('Saved: relabel')")
    [kept] = queue.pull()
    assert (kept["verdict"], kept["category"]) == ("relabel", fourth["name"])
    assert kept["label"] == fourth["label"]


def test_undo_records_a_retraction_and_shows_the_item_again(served, browser):
    url, queue = served
    page = _start(browser, url, "ana")
    first = _shown(page)
    _away_from_fields(page)
    page.keyboard.press("a")
    _next(page, first)
    page.click("#undo")
    page.wait_for_selector(f"#item-id:text('{first}')")
    assert "Undone: accept" in page.text_content("#message")
    assert [d["verdict"] for d in queue.history(first)] == ["accept", "retract"]
    assert queue.pull() == []  # the retracted decision no longer counts
    page.keyboard.press("r")
    _next(page, first)
    assert [d["verdict"] for d in queue.history(first)] == ["accept", "retract", "reject"]
    assert page.errors == []


def test_ctrl_z_undoes_the_decision_and_never_touches_the_name(served, browser):
    url, queue = served
    page = _start(browser, url, "ana")
    first = _shown(page)
    page.fill("#comment", "typed, then left")
    _away_from_fields(page)
    page.keyboard.press("a")
    _next(page, first)
    page.keyboard.press("Control+z")  # focus on the page, not in a text box
    page.wait_for_selector(f"#item-id:text('{first}')")
    assert page.text_content("#who-name") == "ana"
    assert page.evaluate("document.activeElement.tagName") not in ("INPUT", "TEXTAREA")
    page.keyboard.press("a")  # a shortcut again, never a letter typed into a field
    _next(page, first)
    history = queue.history(first)
    assert [(d["annotator"], d["verdict"]) for d in history] == [
        ("ana", "accept"),
        ("ana", "retract"),
        ("ana", "accept"),
    ]
    assert page.text_content("#who-name") == "ana"


def test_one_span_is_removed_and_the_others_kept(served, browser):
    url, queue = served
    page = _start(browser, url, "cy")
    page.select_option("#filter-category", "vague-word")
    page.wait_for_selector(f"#item-id:text('{ITEMS['vague-word']['id']}')")
    _mark_val(page, 6, 14)
    assert page.locator("#span-list li").count() == 2
    page.locator("#span-list li", has_text="recently").locator("button").click()
    assert page.locator("#span-list li").count() == 1
    assert page.text_content("#question mark") == "patients"
    page.click("#accept")
    page.wait_for_selector("#message:text('Saved: accept')")
    [kept] = queue.pull()
    assert kept["spans"] == [{"start": 6, "end": 14, "tag": "VAL"}]


def test_the_page_without_its_token_says_how_to_open_it(served, browser):
    url, queue = served
    page = browser.new_page()
    page.goto(url + "/")
    page.wait_for_selector("#empty:not([hidden])")
    assert "open the URL `answerable review serve` printed" in page.text_content("#empty")
    assert page.is_hidden("#decide") and queue.history() == []
