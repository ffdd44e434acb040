"""Spot-check choice, retraction rules, and the review page's index of the queue."""

from __future__ import annotations

import pytest

from answerable.annotation import spot_check
from answerable.annotation.decisions import DecisionError
from answerable.annotation.policy import Policy
from answerable.annotation.server import ReviewPage
from answerable.annotation.store import LocalQueue
from tests.review_helpers import by_category, decision, filled_queue, review_items

ITEMS = by_category(review_items())


def machine_items(count: int, generator: str, start: int = 0) -> list[dict]:
    ids = range(start, start + count)
    return [{"id": f"{n:016x}", "provenance": {"generator": generator}} for n in ids]


def test_spot_checks_are_seeded_per_generator_and_grow_as_supersets():
    items = machine_items(40, "seed_v1") + machine_items(10, "drop_column_v1", 100)[::-1]
    shares = {"seed_v1": 0.1, "drop_column_v1": 0.25}
    chosen = spot_check.choose(items, shares, seed=3)
    by = {g: [i for i in chosen if i["provenance"]["generator"] == g] for g in shares}
    assert (len(by["seed_v1"]), len(by["drop_column_v1"])) == (4, 3)  # ceil(share * n)
    assert chosen == spot_check.choose(list(reversed(items)), shares, seed=3)
    assert chosen != spot_check.choose(items, shares, seed=4)
    larger = spot_check.choose(items, {"seed_v1": 0.5, "drop_column_v1": 0.5}, seed=3)
    assert {i["id"] for i in chosen} <= {i["id"] for i in larger}
    assert spot_check.choose(items, {"seed_v1": 0.0}, seed=3) == []


def test_a_retraction_needs_a_decision_to_take_back(tmp_path, demo_dir):
    with filled_queue(tmp_path / "q.sqlite", demo_dir) as queue:
        target = ITEMS["vague-word"]["id"]
        with pytest.raises(DecisionError, match="ana has no decision on item"):
            queue.record(decision(target, "ana", "retract"))
        queue.record(decision(target, "ana", "accept", 1))
        queue.record(decision(target, "ana", "retract", 2))
        assert queue.pull() == [] and queue.current(target) == []
        with pytest.raises(DecisionError, match="no decision"):
            queue.record(decision(target, "ana", "retract", 3))  # already taken back
        assert [d["verdict"] for d in queue.history(target)] == ["accept", "retract"]


def test_the_index_follows_decisions_made_elsewhere(tmp_path, demo_dir):
    path = tmp_path / "q.sqlite"
    with filled_queue(path, demo_dir) as queue, LocalQueue(path) as other:
        page = ReviewPage(queue, Policy("single"), "demo")
        first = page.next_item("ana")
        assert first["remaining"] == 6
        other.record(decision(first["item"]["id"], "ana", "reject"))  # an import, meanwhile
        after = page.next_item("ana")
        assert after["remaining"] == 5 and after["item"]["id"] != first["item"]["id"]
        assert page.progress("ana")["by_status"]["rejected"] == 1


def test_the_index_counts_like_a_full_resolution(tmp_path, demo_dir):
    with filled_queue(tmp_path / "q.sqlite", demo_dir) as queue:
        page = ReviewPage(queue, Policy("majority", 2), "demo")
        ids = sorted(i["id"] for i in review_items())
        for n, item_id in enumerate(ids):
            page.decide({"item_id": item_id, "annotator": "ana", "verdict": "accept"})
            if n % 2:
                page.decide({"item_id": item_id, "annotator": "ben", "verdict": "reject"})
        page.decide({"item_id": ids[0], "annotator": "ana", "verdict": "retract"})
        fresh = ReviewPage(queue, Policy("majority", 2), "demo")  # built from the store
        assert page.progress("ana") == fresh.progress("ana")
        assert page.progress("ana")["decided_by_you"] == len(ids) - 1
        assert page.next_item("ana", item=ids[0])["item"]["id"] == ids[0]


def test_an_undecided_spot_check_awaits_a_person_on_the_page(tmp_path):
    with LocalQueue(tmp_path / "q.sqlite") as queue:
        item = dict(ITEMS["answerable-clinic"])
        queue.push([item], contexts={item["id"]: {"spot_check": True}})
        page = ReviewPage(queue, Policy(auto_accept=("seed_v1",)), "demo")
        shown = page.next_item("ana")
        assert shown["item"]["id"] == item["id"] and shown["item"]["spot_check"] is True
        assert shown["item"]["status"] == "open"
        page.decide({"item_id": item["id"], "annotator": "ana", "verdict": "reject"})
        assert page.progress()["by_status"]["rejected"] == 1
