"""Built-in reference systems, so a consumer sees the floor and the ceiling.

- ``gold``: the gold SQL for answerable items, an abstention with the gold label,
  category and BIO tags otherwise (EX = 1 and RS(c) = 100 for every c);
- ``abstain``: abstains on every item (RS = 100 x the share not answerable);
- ``random``: for each item, a coin seeded by (seed, item id) picks between abstaining
  with a random label and answering with the gold SQL of a random answerable item on
  the same database (sometimes right by chance, mostly wrong).
"""

from __future__ import annotations

from collections import defaultdict

from answerable.builders.counterfactual.bio import bio_tags
from answerable.kernel.ids import rng_for
from answerable.release.evaluate.predictions import Prediction

REFERENCES = ("gold", "abstain", "random")


def reference_predictions(kind: str, items: list[dict], seed: int = 0) -> dict[str, Prediction]:
    """The predictions of reference system ``kind`` for ``items``."""
    make = {"gold": _gold, "abstain": _abstain, "random": _random}[kind]
    return make(items, seed)


def _gold(items: list[dict], _seed: int) -> dict[str, Prediction]:
    return {
        i["id"]: Prediction(
            id=i["id"],
            sql=i["sql"] if i["label"] == "answerable" else None,
            label=i["label"],
            category=i.get("category"),
            tags=tuple(bio_tags(i)["tags"]),
        )
        for i in items
    }


def _abstain(items: list[dict], _seed: int) -> dict[str, Prediction]:
    return {i["id"]: Prediction(id=i["id"]) for i in items}


def _random(items: list[dict], seed: int) -> dict[str, Prediction]:
    queries = defaultdict(list)
    for item in items:
        if item["label"] == "answerable":
            queries[item["db_id"]].append(item["sql"])
    found = {}
    for item in items:
        rng = rng_for(seed, "evaluate-random", item["id"])
        pool = queries.get(item["db_id"])
        if pool and rng.random() < 0.5:
            found[item["id"]] = Prediction(id=item["id"], sql=rng.choice(pool))
        else:
            label = rng.choice(("ambiguous", "unanswerable"))
            found[item["id"]] = Prediction(id=item["id"], label=label)
    return found
