"""``release.debias: aflite``: drop the items whose label the question's surface gives away.

After Le Bras et al. (2020), "Adversarial Filters of Dataset Biases" (AFLite): in each
round, :data:`MODELS` linear models (linear SVMs, fast on sparse words) are trained on
random halves of the pool (by family:
a parent and the items made from it fall on one side together) and predict the label of
the held-out half; an item's *predictability* is the share of those held-out predictions
that were right. Up to :data:`CUT` of the starting pool with the highest predictability,
at least :data:`THRESHOLD`, are dropped; rounds go on until fewer than that many pass the
threshold, or the pool would fall below :data:`FLOOR` of its size.

The features are the shortcut audit's (:mod:`answerable.release.audit`): the words of the
question (unigrams and bigrams) and its surface figures (length, numbers, quotes, schema
overlap and size), fixed before the first round as the paper fixes its embeddings. The
randomness comes from (seed, round, model) only, so the same pool and seed drop the same
items. The report says what share was kept, what was dropped per label and generator, and
the audit's accuracies (majority, surface, words) before and after.
"""

from __future__ import annotations

from collections import Counter

from answerable.ids import rng_for
from answerable.release.audit import Shapes, audit, family, surface_features

MODELS = 16
TRAIN_SHARE = 0.5
THRESHOLD = 0.75
CUT = 0.05
FLOOR = 0.5
MAX_ROUNDS = 20
STEP = "debias/aflite"


def aflite(items: list[dict], seed: int, schemas: dict | None = None) -> tuple[list[dict], dict]:
    """The items kept (in the given order) and the report of the filter."""
    pool = sorted((i for i in items if i.get("label") and i.get("question")), key=lambda i: i["id"])
    before = _accuracies(audit(pool, schemas))
    if len({i["label"] for i in pool}) < 2:
        return list(items), {"method": "aflite", "skipped": "fewer than 2 labels", "before": before}
    features = _features(pool, schemas or {})
    labels = [i["label"] for i in pool]
    families = [family(i) for i in pool]
    alive = list(range(len(pool)))
    cut, floor = max(1, round(CUT * len(pool))), round(FLOOR * len(pool))
    rounds = 0
    while rounds < MAX_ROUNDS and len(alive) - cut >= floor:
        scores = _predictability(features, labels, families, alive, seed, rounds)
        ranked = sorted(
            (i for i in alive if scores.get(i, 0.0) >= THRESHOLD),
            key=lambda i: (-scores[i], pool[i]["id"]),
        )
        rounds += 1
        dropped = set(ranked[:cut])
        alive = [i for i in alive if i not in dropped]
        if len(ranked) < cut:
            break
    kept_ids = {pool[i]["id"] for i in alive}
    gone = [i for i in pool if i["id"] not in kept_ids]
    kept = [i for i in items if i["id"] in kept_ids or not (i.get("label") and i.get("question"))]
    after = _accuracies(audit([pool[i] for i in alive], schemas))
    return kept, {
        "method": "aflite",
        "rounds": rounds,
        "models": MODELS,
        "threshold": THRESHOLD,
        "items": len(pool),
        "kept": len(alive),
        "kept_share": round(len(alive) / len(pool), 4) if pool else 1.0,
        "dropped_by_label": dict(sorted(Counter(i["label"] for i in gone).items())),
        "dropped_by_generator": dict(sorted(Counter(_generator(i) for i in gone).items())),
        "before": before,
        "after": after,
    }


def _generator(item: dict) -> str:
    return (item.get("provenance") or {}).get("generator") or "unknown"


def _accuracies(report: dict) -> dict:
    """The audit's accuracies: majority class, surface model, words model."""
    if "skipped" in report:
        return {"skipped": report["skipped"]}
    return {
        "majority": report["majority"]["accuracy"],
        "surface": report["surface"]["accuracy"],
        "words": report["words"]["accuracy"],
    }


def _features(pool: list[dict], schemas: dict):
    """Bag of words and scaled surface figures, one row per item (fixed for all rounds)."""
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.preprocessing import MaxAbsScaler

    words = CountVectorizer(ngram_range=(1, 2), min_df=2, token_pattern=r"[a-z0-9]+", binary=True)
    bag = words.fit_transform([i["question"] for i in pool])
    shapes = Shapes(schemas)
    surface = [
        surface_features(i["question"], shapes.of(i.get("db_id"), i.get("edit"))) for i in pool
    ]
    return hstack([bag, MaxAbsScaler().fit_transform(csr_matrix(surface))]).tocsr()


def _predictability(features, labels, families, alive, seed: int, round_: int) -> dict[int, float]:
    """Per item of ``alive``: the share of held-out predictions that were right."""
    from sklearn.svm import LinearSVC

    right, seen = Counter(), Counter()
    for model in range(MODELS):
        rng = rng_for(seed, STEP, f"{round_}/{model}")
        train_families = {
            f for f in sorted(set(families[i] for i in alive)) if rng.random() < TRAIN_SHARE
        }
        train = [i for i in alive if families[i] in train_families]
        held = [i for i in alive if families[i] not in train_families]
        if not held or len({labels[i] for i in train}) < 2:
            continue
        fitted = LinearSVC(random_state=0, max_iter=5000).fit(
            features[train], [labels[i] for i in train]
        )
        for i, guess in zip(held, fitted.predict(features[held]), strict=True):
            seen[i] += 1
            right[i] += guess == labels[i]
    return {i: right[i] / seen[i] for i in seen}
