"""The review policy at its edges: a human's reject over auto-accept, the latest
correction winning, and the majority and min-annotator counts exactly.

Each test names the single-line mutant of ``annotation/policy.py`` it kills (issue 18).
"""

from __future__ import annotations

import pytest

from answerable.annotation.decisions import check_decision
from answerable.annotation.policy import (
    ACCEPTED,
    CONFLICT,
    OPEN,
    REJECTED,
    Policy,
    apply_policy,
    resolve,
)
from answerable.kernel.ids import item_id
from tests.review_helpers import by_category, decision, review_items

ITEMS = by_category(review_items())
VAGUE = ITEMS["vague-word"]
SEED = ITEMS["answerable-clinic"]


def checked(item: dict, annotator: str, verdict: str, minute: int, **fields) -> dict:
    made = decision(item["id"], annotator, verdict, minute=minute, **fields)
    return check_decision(made, item, "t")


def test_a_human_reject_beats_auto_accept():
    """Kills: auto-accept applied before looking at the decisions (a machine-verified
    item that a person rejected would still be released)."""
    policy = Policy("single", auto_accept=(SEED["provenance"]["generator"],))
    assert resolve(SEED, [], policy).status == ACCEPTED
    resolution = resolve(SEED, [checked(SEED, "ana", "reject", 1)], policy)
    assert resolution.status == REJECTED and resolution.auto is False
    assert apply_policy([SEED], [checked(SEED, "ana", "reject", 1)], policy).accepted == []


def test_the_latest_corrected_question_wins_whatever_the_order_given():
    """Kills: the earliest corrected question winning (``next`` over the winners without
    ``reversed``), and winners taken in the order given rather than by time."""
    early = "Which patients were admitted in the last 7 days?"
    late = "Which patients were admitted in the last 30 days?"
    decided = [
        checked(VAGUE, "bo", "accept", 9, question=late),
        checked(VAGUE, "ana", "accept", 2, question=early),
    ]
    for order in (decided, decided[::-1]):
        [final] = apply_policy([VAGUE], order, Policy("majority", 2)).accepted
        assert final["question"] == late
        assert final["review"]["original_question"] == VAGUE["question"]


@pytest.mark.parametrize(
    ("verdicts", "status"),
    [
        (("accept", "accept", "reject", "reject"), CONFLICT),  # exactly half: no majority
        (("accept", "accept", "accept", "reject"), ACCEPTED),
        (("accept", "reject"), CONFLICT),
    ],
)
def test_majority_means_more_than_half(verdicts, status):
    """Kills: ``count * 2 <= len`` -> ``<`` (a half is not a majority)."""
    decided = [checked(VAGUE, f"a{n}", v, n) for n, v in enumerate(verdicts, start=1)]
    assert resolve(VAGUE, decided, Policy("majority", 2)).status == status


@pytest.mark.parametrize(("decided", "status"), [(2, OPEN), (3, ACCEPTED)])
def test_min_annotators_exactly(decided, status):
    """Kills: ``len(decisions) < min_annotators`` -> ``<=`` or the count off by one."""
    votes = [checked(VAGUE, f"a{n}", "accept", n) for n in range(1, decided + 1)]
    resolution = resolve(VAGUE, votes, Policy("majority", 3))
    assert resolution.status == status
    if status == OPEN:
        assert resolution.reason == "needs 1 more decision(s)"


def test_a_corrected_question_gets_the_id_of_its_new_content():
    """Kills: the schema edit left out of the recomputed id (two edits of one question
    would share an id), and the review's ``reason`` stored under another key."""
    edited = next(item for item in review_items() if item.get("edit"))
    question = edited["question"].rstrip("?") + " today?"
    decided = [checked(edited, "ana", "accept", 1, question=question)]
    policy = Policy("single")
    [final] = apply_policy([edited], decided, policy).accepted
    args = (edited["db_id"], question, edited.get("sql"), edited.get("db_variant"))
    assert final["id"] == item_id(*args, edited["edit"]) != item_id(*args)
    assert final["review"]["reviewed_id"] == edited["id"]
    assert final["review"]["reason"] == resolve(edited, decided, policy).reason
