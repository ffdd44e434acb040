"""Leakage checks between the splits of a release, for the report's ``leakage`` section.

Each check finds values shared by items in two or more splits: the same normalized
question, a near-duplicate question (the drafting check's 3-gram similarity, within a
database), the same SQL, the same skeleton, the same database, the same family. The
recipe gives each check a severity (``error``, ``warn``, ``off``); the split kind sets
the defaults (see :mod:`answerable.release.cut.config`). An error stops the release.
"""

from __future__ import annotations

import polars as pl

from answerable.builders.drafting.checks import ngrams, similarity
from answerable.kernel.errors import AnswerableError
from answerable.release.cut.config import CHECKS, ReleaseConfig
from answerable.release.cut.expressions import (
    collides,
    key_hashes,
    normalized_question,
    runs_to_space,
    with_family,
)

EXAMPLES = 3  # leaks shown per check in the report
NEAR_PAIR_LIMIT = 2_000_000  # question pairs the near-duplicate check compares at most


class LeakageError(AnswerableError):
    """A check the recipe makes an error found items in two splits."""


def check_leakage(frame: pl.DataFrame, config: ReleaseConfig) -> dict:
    """The ``leakage`` section for a frame whose ``split`` column is set; raises
    :class:`LeakageError` naming the first check set to error that found a leak."""
    wanted = {check for check in CHECKS if config.severity.get(check, "off") != "off"}
    kept = [name for name in ("family", "question_key") if name in frame.columns]
    work = frame.select("id", "db_id", "question", "sql", "split", "sql_meta", "provenance", *kept)
    if wanted & {"family", "near_question"} and "family" not in work.columns:
        work = with_family(work)
    section = {}
    for check in CHECKS:
        severity = config.severity.get(check, "off")
        if severity == "off":
            section[check] = {"severity": "off"}
        elif check == "near_question":
            section[check] = {"severity": severity, **_near(work, config.near_threshold)}
        else:
            shared = check == "same_question" and "question_key" in work.columns
            codes = work["question_key"] if shared else None
            section[check] = {"severity": severity, **_shared(work, VALUES[check], codes)}
    for check, found in section.items():
        if found["severity"] == "error" and found.get("leaks"):
            example = found["examples"][0]
            raise LeakageError(
                f"release leakage: {check}: {found['leaks']} values in two splits, e.g. "
                f"{example['ids']} in {example['splits']} (fix: change the split kind, or "
                f"set release.leakage.{check}: warn to accept it)"
            )
    return section


# What each check compares, per item (null compares with nothing).
VALUES = {
    "same_question": normalized_question(),
    "same_sql": runs_to_space(pl.col("sql"), r"\s", r"[^\S ]").str.strip_chars().str.to_lowercase(),
    "same_skeleton": pl.col("sql_meta").struct.field("skeleton"),
    "same_database": pl.col("db_id"),
    "family": pl.col("family"),
}


def _shared(work: pl.DataFrame, value: pl.Expr, codes: pl.Series | None = None) -> dict:
    """Values of ``value`` that items of two or more splits share.

    The values are compared as 64-bit hashes, so no text is held for every item; the
    values are computed only for the items whose hash is in two splits. When two of
    those values share a hash (a collision), the check is made again on the values, so
    a collision never changes a count or an example. ``codes``, when given, are codes of
    the values made already (the split's ``question_key``,
    :func:`~answerable.release.cut.expressions.hashed`), compared instead of hashing
    them again."""
    hashes = key_hashes(work, value) if codes is None else codes
    rows = _in_two_splits(work, hashes)
    found = (
        work[rows].select("id", "split", value.alias("value")).with_columns(key=hashes.gather(rows))
    )
    if collides(found):
        exact = work.select(value).to_series()
        found = work[_in_two_splits(work, exact)].select("id", "split", value.alias("value"))
    leaking = found.select("value").unique().sort("value")
    shown = (
        found.join(leaking.head(EXAMPLES), on="value")
        .group_by("value")
        .agg(pl.col("split").unique().sort().alias("splits"), pl.col("id").sort().alias("ids"))
        .sort("value")
    )
    examples = [
        {"value": row["value"], "splits": row["splits"], "ids": row["ids"][:4]}
        for row in shown.iter_rows(named=True)
    ]
    return {"leaks": leaking.height, "examples": examples}


def _in_two_splits(work: pl.DataFrame, key: pl.Series) -> pl.Series:
    """The rows of the items whose ``key`` (not null) items of two or more splits
    share."""
    code = pl.col("split").cast(pl.Categorical).to_physical()  # min != max: two splits
    keyed = (
        work.select(code.alias("code"))
        .with_columns(key=key)
        .with_row_index("row")
        .filter(pl.col("key").is_not_null())
    )
    spread = keyed.group_by("key").agg(low=pl.col("code").min(), high=pl.col("code").max())
    leaking = spread.filter(pl.col("low") != pl.col("high")).select("key")
    return keyed.join(leaking, on="key", how="semi")["row"].sort()


def _near(work: pl.DataFrame, threshold: float) -> dict:
    """Pairs of questions in two splits of one database at least ``threshold`` similar
    (3-gram Jaccard), leaving out equal questions and pairs of one family."""
    sizes = work.group_by("db_id").len()["len"]
    pairs = int((sizes * (sizes - 1) // 2).sum())
    if pairs > NEAR_PAIR_LIMIT:
        return {"skipped": f"{pairs} question pairs exceed the limit of {NEAR_PAIR_LIMIT}"}
    by_db: dict[str, list] = {}
    question = normalized_question().alias("same_question")
    for row in work.select("id", "db_id", "split", "family", "question", question).rows():
        by_db.setdefault(row[1], []).append(row)
    leaks = []
    for db_rows in by_db.values():
        grams = [ngrams(row[4]) for row in db_rows]
        for i, a in enumerate(db_rows):
            for j in range(i + 1, len(db_rows)):
                b = db_rows[j]
                if a[2] == b[2] or a[3] == b[3] or a[5] == b[5]:
                    continue
                score = similarity(grams[i], grams[j])
                if score >= threshold:
                    leaks.append((round(score, 2), sorted([(a[0], a[2]), (b[0], b[2])])))
    leaks.sort(key=lambda leak: (-leak[0], leak[1]))
    examples = [
        {"similarity": score, "ids": [p[0] for p in pair], "splits": [p[1] for p in pair]}
        for score, pair in leaks[:EXAMPLES]
    ]
    return {"leaks": len(leaks), "examples": examples}
