"""The acceptance policy: unanimous, majority, single, auto-accept, relabel, adjudication."""

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
from answerable.schemas import validate
from tests.review_helpers import by_category, decision, review_items

ITEMS = by_category(review_items())
VAGUE = ITEMS["vague-word"]


def votes(*verdicts: str, item: dict = VAGUE) -> list[dict]:
    """One checked decision per verdict, by annotators a1, a2 ...; ``relabel:<category>``."""
    made = []
    for n, verdict in enumerate(verdicts, start=1):
        fields = {}
        if verdict.startswith("relabel:"):
            verdict, fields["category"] = "relabel", verdict.split(":", 1)[1]
        made.append(
            check_decision(decision(item["id"], f"a{n}", verdict, minute=n, **fields), item, "t")
        )
    return made


@pytest.mark.parametrize(
    ("policy", "verdicts", "status"),
    [
        (Policy("unanimous", 3), ("accept", "accept", "accept"), ACCEPTED),
        (Policy("unanimous", 3), ("accept", "accept"), OPEN),
        (Policy("unanimous", 3), ("accept", "reject"), CONFLICT),  # can never be unanimous
        (Policy("unanimous", 3), ("reject", "reject", "reject"), REJECTED),
        (Policy("unanimous", 2), ("relabel:vague-question", "relabel:vague-question"), ACCEPTED),
        (Policy("unanimous", 2), ("relabel:vague-question", "relabel:out-of-scope"), CONFLICT),
        (Policy("majority", 3), ("accept", "accept", "reject"), ACCEPTED),
        (Policy("majority", 3), ("accept", "reject"), OPEN),
        (Policy("majority", 2), ("accept", "reject"), CONFLICT),
        (Policy("majority", 3), ("accept", "reject", "relabel:vague-question"), CONFLICT),
        (Policy("majority", 3), ("reject", "reject", "accept", "accept"), CONFLICT),
        (Policy("majority", 3), ("reject", "reject", "accept", "reject"), REJECTED),
        (Policy("single"), ("accept",), ACCEPTED),
        (Policy("single"), ("reject",), REJECTED),
        (Policy("single"), ("accept", "reject"), CONFLICT),
        (Policy("single"), (), OPEN),
    ],
)
def test_policy_statuses(policy, verdicts, status):
    assert resolve(VAGUE, votes(*verdicts), policy).status == status


def test_policy_from_recipe_section():
    policy = Policy.from_recipe(
        {
            "policy": "unanimous",
            "min_annotators": 3,
            "auto_accept": ["seed_v1"],
            "adjudicator": "lea",
        }
    )
    assert policy == Policy("unanimous", 3, ("seed_v1",), "lea")
    assert Policy.from_recipe({"policy": "single", "min_annotators": 4}).min_annotators == 1
    assert Policy.from_recipe({}).describe() == "majority of at least 1 annotator"


def test_machine_verified_generators_are_auto_accepted():
    policy = Policy("unanimous", 3, auto_accept=("seed_v1", "drop_column_v1"))
    outcome = apply_policy(review_items(), [], policy)
    counts = outcome.counts()
    assert (counts[ACCEPTED], counts["auto_accepted"], counts[OPEN]) == (3, 3, 3)
    accepted = {i["provenance"]["generator"] for i in outcome.accepted}
    assert accepted == {"seed_v1", "drop_column_v1"}
    for item in outcome.accepted:
        assert item["review"]["auto_accepted"] is True
        validate("item", item)


def test_relabel_moves_the_item_and_keeps_where_it_came_from():
    decided = votes("relabel:vague-question", "relabel:vague-question", "accept")
    outcome = apply_policy([VAGUE], decided, Policy("majority", 3))
    [final] = outcome.accepted
    assert (final["label"], final["category"]) == ("ambiguous", "vague-question")
    assert final["review"]["relabeled_from"] == {"label": "ambiguous", "category": "vague-word"}
    assert final["id"] == VAGUE["id"]
    assert [d["annotator"] for d in final["review"]["decisions"]] == ["a1", "a2", "a3"]
    validate("item", final)


def test_relabel_across_labels_moves_label_too():
    missing = ITEMS["missing-column"]
    decided = votes("relabel:column-ambiguous", item=missing)
    [final] = apply_policy([missing], decided, Policy("single")).accepted
    assert (final["label"], final["category"], final["subtype"]) == (
        "ambiguous",
        "column-ambiguous",
        None,
    )


def test_corrected_question_and_spans_are_applied_and_the_id_follows():
    corrected = "Which patients were admitted in the last 30 days?"
    spans = [{"start": 32, "end": 48, "tag": "VAL"}]  # "the last 30 days"
    made = check_decision(
        decision(VAGUE["id"], "ana", "accept", question=corrected, spans=spans), VAGUE, "t"
    )
    [final] = apply_policy([VAGUE], [made], Policy("single")).accepted
    assert final["question"] == corrected and final["spans"] == spans
    assert final["id"] == item_id("clinic", corrected, None, None, None)
    assert final["review"]["reviewed_id"] == VAGUE["id"]
    assert final["review"]["original_question"] == VAGUE["question"]
    validate("item", final)


def test_adjudicator_settles_a_conflict():
    decided = votes("accept", "reject")
    assert resolve(VAGUE, decided, Policy("majority", 2)).status == CONFLICT
    judge = check_decision(decision(VAGUE["id"], "lea", "reject", minute=9), VAGUE, "t")
    resolution = resolve(VAGUE, [*decided, judge], Policy("majority", 2, adjudicator="lea"))
    assert resolution.status == REJECTED
    assert resolution.reason == "adjudicated by lea"


def test_outcome_lists_ids_per_status():
    decided = votes("accept", "reject") + votes("reject", item=ITEMS["out-of-scope"])
    outcome = apply_policy(review_items(), decided, Policy("majority", 1))
    assert outcome.ids(CONFLICT) == [VAGUE["id"]]
    assert outcome.ids(REJECTED) == [ITEMS["out-of-scope"]["id"]]
    assert outcome.awaiting == 5  # one conflict, four never decided
