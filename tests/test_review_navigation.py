"""Moving through the review queue: search, combined filters, previous, bulk decisions
and their undo, keys from the recipe, the layout at 800 px and the awaiting count."""

from __future__ import annotations

import pytest

from answerable.annotation.policy import Policy
from answerable.annotation.server import HOTKEYS, Filters, ReviewPage
from tests.review_helpers import by_category, demo_verifier, filled_queue, review_items
from tests.test_review_page import _next, _start, call, launched_chromium, running

ITEMS = by_category(review_items())


@pytest.fixture
def browser():
    yield from launched_chromium()


@pytest.fixture
def served(tmp_path, demo_dir):
    """The fixture queue served under a single-annotator policy, with keys y and n for
    accept and reject; yields (url, queue)."""
    queue = filled_queue(tmp_path / "queue.sqlite", demo_dir)
    verifier = demo_verifier(demo_dir)
    keys = {**HOTKEYS, "accept": "y", "reject": "n"}
    page = ReviewPage(queue, Policy("single"), "demo", verifier=verifier, hotkeys=keys)
    with running(page) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", queue
    queue.close()
    verifier.close()


def test_filters_combine_with_a_search_over_question_and_sql():
    summary = {
        "id": "a",
        "db_id": "clinic",
        "label": "answerable",
        "category": None,
        "generator": "seed_v1",
        "spot_check": True,
        "text": "how many female patients?\nselect count(*) from patients where gender = 'f'",
    }
    assert Filters(q="FEMALE gender").match(summary, "open")
    assert not Filters(q="female insurance").match(summary, "open")
    assert Filters(db="clinic", label="answerable", spot="yes", generator="seed_v1").match(
        summary, "open"
    )
    assert not Filters(spot="no").match(summary, "open")
    assert not Filters(db="league").match(summary, "open")
    assert not Filters(q="female").match(summary, "accepted")  # awaiting by default
    assert Filters(q="female", status="any").match(summary, "accepted")


def test_api_search_and_a_bulk_accept_undone_as_one_step(served):
    url, queue = served
    _, found = call(f"{url}/api/next?annotator=ana&q=preferred_foot")  # in the SQL only
    assert found["remaining"] == 1 and found["item"]["id"] == ITEMS["answerable-league"]["id"]
    _, both = call(f"{url}/api/next?annotator=ana&label=answerable&db=clinic")
    assert both["remaining"] == 1 and both["item"]["id"] == ITEMS["answerable-clinic"]["id"]
    body = {"annotator": "ana", "verdict": "accept", "filters": {"label": "answerable"}}
    status, done = call(f"{url}/api/bulk", body)
    answerable = sorted(i["id"] for i in review_items() if i["label"] == "answerable")
    assert status == 201 and done["item_ids"] == answerable
    kept = {d["item_id"]: d for d in queue.pull()}
    assert sorted(kept) == answerable
    assert all(d["comment"].startswith("bulk accept of 2 items") for d in kept.values())
    assert done["progress"]["by_status"]["accepted"] == 2
    status, undone = call(f"{url}/api/bulk-undo", {"annotator": "ana", "item_ids": answerable})
    assert status == 201 and undone["item_ids"] == answerable
    assert queue.pull() == [] and undone["progress"]["by_status"]["accepted"] == 0
    status, wrong = call(f"{url}/api/bulk", dict(body, verdict="relabel"))
    assert status == 400 and "use accept or reject" in wrong["error"]


def test_search_and_previous_in_the_page(served, browser, tmp_path):
    url, _ = served
    page = _start(browser, url, "ana")
    first = page.text_content("#item-id")
    page.fill("#filter-q", "left foot")
    page.wait_for_selector("#progress-text:text('0 done, 1 left')")
    assert page.text_content("#item-id") == ITEMS["answerable-league"]["id"]
    page.screenshot(path=str(tmp_path / "search.png"), full_page=True)
    page.fill("#filter-q", "")
    page.wait_for_selector("#progress-text:text('0 done, 6 left')")
    page.locator("#card h2").first.click()
    page.keyboard.press("s")  # on to the next item, undecided
    second = _next(page, first)
    page.keyboard.press("y")  # the recipe's key for accept
    page.wait_for_selector("#message:text('Saved: accept')")
    page.keyboard.press("p")
    page.wait_for_selector(f"#item-id:text('{second}')")
    assert "You decided: accept" in page.text_content("#yours")
    page.screenshot(path=str(tmp_path / "previous.png"), full_page=True)
    page.click("#previous")
    page.wait_for_selector(f"#item-id:text('{first}')")
    assert page.is_hidden("#yours") and page.is_disabled("#previous")
    assert "Y accept" in page.text_content("#keys")
    assert page.errors == []


def test_bulk_accept_of_the_filtered_items_and_its_undo(served, browser, tmp_path):
    url, queue = served
    page = _start(browser, url, "ana")
    page.select_option("#filter-label", "answerable")
    page.wait_for_selector("#progress-text:text('0 done, 2 left')")
    page.click("#bulk-accept")
    assert "again to accept all 2 items" in page.text_content("#message")
    assert queue.pull() == []  # the first press only says how many
    page.click("#bulk-accept")
    page.wait_for_selector("#message:text('Saved: bulk accept of 2 items')")
    assert len(queue.pull()) == 2
    assert "2 accepted" in page.text_content("#progress-text")
    page.screenshot(path=str(tmp_path / "bulk.png"), full_page=True)
    page.click("#undo")
    page.wait_for_selector("#message:text('Undone: bulk accept of 2 items')")
    assert queue.pull() == []
    assert [d["verdict"] for d in queue.history()] == ["accept", "accept", "retract", "retract"]
    page.screenshot(path=str(tmp_path / "bulk-undone.png"), full_page=True)
    assert page.errors == []


@pytest.mark.parametrize("width", [800, 1280])
def test_the_decision_panel_is_beside_the_item_from_800_px(served, browser, tmp_path, width):
    url, _ = served
    page = browser.new_page(viewport={"width": width, "height": 700})
    page.goto(f"{url}/?token=test-token")
    page.fill("#annotator", "ana")
    page.press("#annotator", "Enter")
    page.wait_for_selector("#card:not([hidden])")
    card, panel = page.locator("#card").bounding_box(), page.locator("#decide").bounding_box()
    assert panel["x"] >= card["x"] + card["width"]  # beside, not below
    accept = page.locator("#accept").bounding_box()
    assert accept["y"] + accept["height"] <= 700 and accept["x"] + accept["width"] <= width
    page.screenshot(path=str(tmp_path / f"layout-{width}.png"))
    awaiting = page.text_content("#awaiting-text")
    assert awaiting.startswith("6 await review: 6 as the build counts them")
