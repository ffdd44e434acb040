"""``release.debias: aflite``: drop the families whose labels the question's surface gives
away, until the shortcut audit is at its target or the filter at its cap.

After Le Bras et al. (2020), "Adversarial Filters of Dataset Biases" (AFLite), by family:
an item and the items made from it (its drafts, its twins, its edited variants: see
:func:`answerable.release.cut.audit.family`) are kept or dropped together, so a minimal pair
never loses one side. In each round, :data:`MODELS` linear models (linear SVMs, fast on
sparse words), each weighting the labels equally (balanced, so a label's share alone
predicts nothing), are trained on a random half of the families and predict the labels
of the other half. A family's *predictability* is the share of its items' held-out
predictions that were right. The most predictable families, at least :data:`THRESHOLD`,
are dropped, :data:`ROUND_SHARE` of the pool a round, each label giving up no more than
its share of the pool (the labels keep their proportions). After each round the shortcut
audit (:func:`answerable.release.cut.audit.audit`, cross-validated by family) is run on what
is left, and the filter stops as soon as its ``shortcut_gain`` is at or below the target
(``release.max_shortcut_gain``, else :data:`TARGET`). Of the rounds run it keeps the
pool with the smallest gain, so it never leaves the label easier to guess than it found
it. It never drops more than ``release.debias_max_share`` of the pool (default
:data:`MAX_SHARE`, so a release's size stays within 10%); when the target is out of
reach within that, the report says so in one line naming what carries the label
(``unreached``).

The features are the shortcut audit's: the words of the question (unigrams and bigrams)
and its surface figures (length, numbers, quotes, schema overlap, the shape of the schema
asked over), fixed before the first round as the paper fixes its embeddings. The
randomness comes from (seed, round, model) only, so the same pool and seed drop the same
families. The report says what was kept, what was dropped per label, category and
generator, and the audit before and after.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from answerable.kernel.ids import rng_for
from answerable.release.cut.audit import Shapes, audit, family, surface_features

MODELS = 16
TRAIN_SHARE = 0.5
THRESHOLD = 0.75
ROUND_SHARE = 0.02  # of the starting pool, dropped per round
MAX_SHARE = 0.1  # of the starting pool, dropped at most
TARGET = 0.3  # the shortcut gain the filter aims at without release.max_shortcut_gain
STEP = "debias/aflite"


def aflite(
    items: list[dict],
    seed: int,
    schemas: dict | None = None,
    target: float | None = None,
    max_share: float = MAX_SHARE,
) -> tuple[list[dict], dict]:
    """The items kept (in the given order) and the report of the filter (``target``: the
    shortcut gain to stop at, :data:`TARGET` when None; ``max_share``: the share of the
    pool it may drop at most)."""
    pool = sorted((i for i in items if i.get("label") and i.get("question")), key=lambda i: i["id"])
    target = TARGET if target is None else target
    first = audit(pool, schemas, seed=seed)
    if len({i["label"] for i in pool}) < 2 or "skipped" in first:
        reason = first.get("skipped", "fewer than 2 labels")
        return list(items), {"method": "aflite", "skipped": reason, "before": _summary(first)}
    filtered = _Filter(pool, seed, schemas)
    cap = int(max_share * len(pool))
    last = best = first
    while last["shortcut_gain"] > target and filtered.dropped < cap:
        if not filtered.drop_round(
            min(max(1, round(ROUND_SHARE * len(pool))), cap - filtered.dropped)
        ):
            break
        last = audit([pool[i] for i in filtered.alive], schemas, seed=seed)
        if "skipped" in last:
            break
        if last["shortcut_gain"] < best["shortcut_gain"]:
            best = last
            filtered.keep_this()
    if last is not best:  # a later round made the shortcut no smaller: back to the best
        filtered.back_to_kept()
    kept_ids = {pool[i]["id"] for i in filtered.alive}
    kept = [i for i in items if i["id"] in kept_ids or not (i.get("label") and i.get("question"))]
    return kept, filtered.report(first, best, target, max_share)


class _Filter:
    """The pool, its fixed features and what is left of it after each round."""

    def __init__(self, pool: list[dict], seed: int, schemas: dict | None):
        self.pool, self.seed = pool, seed
        self.features = _features(pool, schemas or {})
        self.labels = [i["label"] for i in pool]
        self.families = [family(i) for i in pool]
        self.alive = list(range(len(pool)))
        self.gone: list[str] = []  # families dropped, in order
        self.rounds = 0
        self.kept_state = (list(self.alive), [])  # the pool with the smallest gain so far

    @property
    def dropped(self) -> int:
        return len(self.pool) - len(self.alive)

    def drop_round(self, budget: int) -> bool:
        """Drop up to ``budget`` items of the most predictable families; False when none
        is predictable enough (or none fits the budget)."""
        scores = _predictability(
            self.features, self.labels, self.families, self.alive, self.seed, self.rounds
        )
        members = defaultdict(list)
        for i in self.alive:
            members[self.families[i]].append(i)
        chosen = _choose(members, scores, self.labels, budget)
        self.rounds += 1
        if not chosen:
            return False
        self.gone += chosen
        dropped = {i for name in chosen for i in members[name]}
        self.alive = [i for i in self.alive if i not in dropped]
        return True

    def keep_this(self) -> None:
        """Remember the pool as it is (its shortcut gain is the smallest so far)."""
        self.kept_state = (list(self.alive), list(self.gone))

    def back_to_kept(self) -> None:
        """Return to the pool :meth:`keep_this` remembered."""
        alive, gone = self.kept_state
        self.alive, self.gone = list(alive), list(gone)

    def report(self, first: dict, last: dict, target: float, max_share: float) -> dict:
        """What the filter did, and one line when the target was out of reach."""
        alive = set(self.alive)
        gone = [item for i, item in enumerate(self.pool) if i not in alive]
        found = {
            "method": "aflite",
            "by": "family",
            "target": target,
            "max_share": max_share,
            "rounds": self.rounds,
            "models": MODELS,
            "threshold": THRESHOLD,
            "items": len(self.pool),
            "families": len(set(self.families)),
            "kept": len(self.alive),
            "kept_share": round(len(self.alive) / len(self.pool), 4),
            "dropped_families": len(self.gone),
            "dropped_by_label": _tally(gone, lambda i: i["label"]),
            "dropped_by_category": _tally(gone, lambda i: i.get("category") or "none"),
            "dropped_by_generator": _tally(gone, _generator),
            "before": _summary(first),
            "after": _summary(last),
            "reached": "skipped" not in last and last["shortcut_gain"] <= target,
        }
        if not found["reached"]:
            found["unreached"] = unreached_line(found, last)
        return found


def unreached_line(found: dict, last: dict) -> str:
    """The one line that says the target was out of reach, and what carries the label."""
    carriers = ", ".join(last.get("carriers", [])[:4]) or "unknown"
    gain = last.get("shortcut_gain", "unknown")
    return (
        f"AFLite dropped {found['items'] - found['kept']} of {found['items']} items "
        f"(at most {found['max_share']} of the pool) and the shortcut gain is still "
        f"{gain}, above {found['target']}: the label is carried by {carriers}"
    )


def _choose(members: dict, scores: dict, labels: list, budget: int) -> list[str]:
    """The families to drop this round: the most predictable first (at least
    :data:`THRESHOLD`; ties by name), while the items stay within ``budget`` and no
    label gives up more than its share of it (rounded up)."""
    alive = [i for found in members.values() for i in found]
    share = Counter(labels[i] for i in alive)
    room = {label: math.ceil(budget * n / len(alive)) for label, n in share.items()}
    ranked = sorted(
        (name for name in members if _mean(scores, members[name]) >= THRESHOLD),
        key=lambda name: (-_mean(scores, members[name]), name),
    )
    chosen, taken = [], 0
    for name in ranked:
        charge = Counter(labels[i] for i in members[name])
        if taken + len(members[name]) > budget or any(room[k] < n for k, n in charge.items()):
            continue
        chosen.append(name)
        taken += len(members[name])
        for label, n in charge.items():
            room[label] -= n
        if taken >= budget:
            break
    return chosen


def _mean(scores: dict, found: list[int]) -> float:
    """A family's predictability: the mean over its items that were held out."""
    seen = [scores[i] for i in found if i in scores]
    return sum(seen) / len(seen) if seen else 0.0


def _tally(items: list[dict], key) -> dict[str, int]:
    return dict(sorted(Counter(key(i) for i in items).items()))


def _generator(item: dict) -> str:
    return (item.get("provenance") or {}).get("generator") or "unknown"


def _summary(report: dict) -> dict:
    """The audit's accuracies (majority class, surface model, words model) and gain."""
    if "skipped" in report:
        return {"skipped": report["skipped"]}
    return {
        "majority": report["majority"]["accuracy"],
        "surface": report["surface"]["accuracy"],
        "words": report["words"]["accuracy"],
        "shortcut_gain": report["shortcut_gain"],
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
    """Per item of ``alive``: the share of held-out predictions that were right, by
    models trained on a seeded half of the families with the labels weighted equally."""
    from sklearn.svm import LinearSVC

    right, seen = Counter(), Counter()
    names = sorted(set(families[i] for i in alive))
    for model in range(MODELS):
        rng = rng_for(seed, STEP, f"{round_}/{model}")
        train_families = {name for name in names if rng.random() < TRAIN_SHARE}
        train = [i for i in alive if families[i] in train_families]
        held = [i for i in alive if families[i] not in train_families]
        if not held or len({labels[i] for i in train}) < 2:
            continue
        fitted = LinearSVC(random_state=0, max_iter=5000, class_weight="balanced").fit(
            features[train], [labels[i] for i in train]
        )
        for i, guess in zip(held, fitted.predict(features[held]), strict=True):
            seen[i] += 1
            right[i] += guess == labels[i]
    return {i: right[i] / seen[i] for i in seen}
