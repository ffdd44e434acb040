"""Column expressions the release steps share: per-item hashes, families, normalized
questions, strata fields, and groups of items that must share a split.

Everything here is a polars expression or a frame-to-frame function, so the steps run
over a million items without a Python loop per item.
"""

from __future__ import annotations

import hashlib

import numpy as np
import polars as pl

MASK = (1 << 64) - 1
PIECE_ROWS = 4096  # rows whose compared values are made at once (key_hashes)
_GOLDEN, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def splitmix64(x: int) -> int:
    """The splitmix64 finalizer, as :func:`item_hash` computes it per row.

    >>> splitmix64(0x0123456789ABCDEF)
    1547611027431991965
    """
    z = (x + _GOLDEN) & MASK
    z = ((z ^ (z >> 30)) * _MIX1) & MASK
    z = ((z ^ (z >> 27)) * _MIX2) & MASK
    return z ^ (z >> 31)


def step_key(seed: int, step: str) -> int:
    """A 64-bit key for one (seed, step): different steps draw independent hashes."""
    return int.from_bytes(hashlib.blake2b(f"{seed}:{step}".encode(), digest_size=8).digest())


def item_hash(column: str, seed: int, step: str) -> pl.Expr:
    """A uniform 64-bit hash of a 16-hex-digit id column, keyed by (seed, step).

    It depends on the id alone, so an item's draw never changes as the pool grows.
    """
    col = pl.col(column)
    high = col.str.slice(0, 8).str.to_integer(base=16).cast(pl.UInt64)
    low = col.str.slice(8, 8).str.to_integer(base=16).cast(pl.UInt64)
    z = (high * (1 << 32) + low).xor(pl.lit(step_key(seed, step), pl.UInt64))
    z = z + pl.lit(_GOLDEN, pl.UInt64)
    z = z.xor(z // (1 << 30)) * pl.lit(_MIX1, pl.UInt64)
    z = z.xor(z // (1 << 27)) * pl.lit(_MIX2, pl.UInt64)
    return z.xor(z // (1 << 31))


def unit(hash_expr: pl.Expr) -> pl.Expr:
    """A 64-bit hash as a float in [0, 1)."""
    return (hash_expr // (1 << 11)).cast(pl.Float64) / float(1 << 53)


def normalized_question() -> pl.Expr:
    """The question lower-cased, words only, single spaces: the column form of
    :func:`answerable.builders.drafting.text.normalize`, which the seed step's
    contradiction check and the drafting checks use."""
    text = runs_to_space(pl.col("question").str.to_lowercase(), "[^a-z0-9]", "[^a-z0-9 ]")
    return text.str.strip_chars(" ")


def runs_to_space(text: pl.Expr, run: str, lone: str) -> pl.Expr:
    """``text`` with each longest run of characters of the class ``run`` replaced by one
    space, as ``{run}+`` would do; ``lone`` is the same class without the space. Runs of
    two or more and lone characters other than a space are replaced, and a lone space,
    the commonest run in a question or a SQL text, is left as it is instead of being
    rewritten to itself: the same text in a quarter to a half of the time."""
    return text.str.replace_all(f"{run}{{2,}}|{lone}", " ")


# ---- fields an item can be grouped by -------------------------------------------------

# Short names for nested fields; any other dotted path names a struct field.
FIELD_ALIASES = {
    "hardness": "sql_meta.hardness",
    "skeleton": "sql_meta.skeleton",
    "operation": "sql_meta.operations",
    "generator": "provenance.generator",
    "source": "provenance.source",
}
DERIVED = ("scare_stratum",)  # the SCARE stratum of the item's first candidate SQL
# (an ambiguous or unanswerable item's label, with or without a candidate)


def field_expr(name: str, schema: pl.Schema) -> pl.Expr | None:
    """The values of item field ``name`` as a string column, or None if there is no such
    field. Lists (operations) join with ``+``; null shows as ``none``."""
    if name == "scare_stratum":  # an ambiguous or unanswerable item's is its label
        first = pl.col("candidates").list.first().struct.field("stratum")
        expr = pl.when(pl.col("label") == "answerable").then(first).otherwise(pl.col("label"))
        return expr.fill_null("none").alias(name)
    head, *rest = FIELD_ALIASES.get(name, name).split(".")
    if head not in schema:
        return None
    expr, dtype = pl.col(head), schema[head]
    for part in rest:
        if not isinstance(dtype, pl.Struct) or part not in {f.name for f in dtype.fields}:
            return None
        dtype = {f.name: f.dtype for f in dtype.fields}[part]
        expr = expr.struct.field(part)
    if isinstance(dtype, pl.List):
        expr = expr.list.eval(pl.element().cast(pl.String)).list.join("+")
    elif isinstance(dtype, pl.Struct):
        return None
    return expr.cast(pl.String).fill_null("none").alias(name)


# ---- families and groups ---------------------------------------------------------------


def with_family(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with a ``family`` column: the top of each item's provenance parent chain.

    An item whose parent is in the frame joins its parent's family; one whose parent is
    elsewhere (a source example, a draft's parent left out) takes that parent's id, so
    every draft of one parent shares a family; one without a parent is its own family.
    The chain is walked on row numbers (numpy), a few vector steps for any frame size.
    """
    ids, parents = frame["id"], frame["provenance"].struct.field("parent")
    up = rows_of(ids, parents)
    top = np.arange(frame.height)
    for _ in range(64):  # parent chains are a few links deep; 64 stops a cycle
        above = up[top]
        moved = (above >= 0) & (above != top)
        if not moved.any():
            break
        top = np.where(moved, above, top)
    # the top item's own parent, when it is outside the frame, names the family
    family = parents.gather(top).fill_null(ids.gather(top))
    return frame.with_columns(family=family)


def rows_of(ids: pl.Series, wanted: pl.Series) -> np.ndarray:
    """The row of each value of ``wanted`` in ``ids`` (unique ids), -1 where it is not
    there (or null): a binary search of the ids in id order, which a frame of items
    already is, so no hash table of every id is built."""
    if ids.is_empty():
        return np.full(len(wanted), -1)
    order = None if ids.is_sorted() else ids.arg_sort()
    ordered = ids if order is None else ids.gather(order)
    at = ordered.search_sorted(wanted).clip(0, len(ids) - 1)
    found = (ordered.gather(at) == wanted).fill_null(False).to_numpy()
    rows = (at if order is None else order.gather(at)).to_numpy().astype(np.int64)
    return np.where(found, rows, -1)


def with_groups(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """``frame`` with a ``group`` column: items linked through equal values of any of
    ``keys`` (null values link nothing) share a group, numbered by its first row (the
    row of its smallest id, as frames are sorted by id). An integer key column is taken
    as codes of the values (see :func:`hashed`)."""
    group = np.arange(frame.height)
    codes = []
    for key in keys:
        column = frame[key]
        if not column.dtype.is_integer():
            column = column.cast(pl.String).cast(pl.Categorical).to_physical()
        valid = column.is_not_null().to_numpy()
        _, code = np.unique(column.drop_nulls().to_numpy(), return_inverse=True)  # 0, 1, ...
        codes.append((code.astype(np.int64), valid))
    while True:
        before = group.copy()
        for code, valid in codes:
            lowest = np.full(int(code.max(initial=0)) + 1, frame.height)
            np.minimum.at(lowest, code, group[valid])
            group[valid] = np.minimum(group[valid], lowest[code])
        while not np.array_equal(group, group[group]):  # jump to the root of each chain
            group = group[group]
        if np.array_equal(group, before):
            break
    return frame.with_columns(group=pl.Series(group, dtype=pl.UInt32))


def hashed(frame: pl.DataFrame, values: pl.Expr) -> pl.Series:
    """Codes that are equal exactly when the values are (null stays null), for a key that
    is only compared: 64-bit hashes of the values (:func:`key_hashes`), so no text is
    held for every item. The values of the items whose hash another item shares are
    compared, and if two of them differ (a collision) the codes are made from the values
    instead."""
    key = key_hashes(frame, values)
    shared = key.is_duplicated() & key.is_not_null()
    sharing = frame.filter(shared).select(values.alias("value"), key.filter(shared).alias("key"))
    if collides(sharing):
        key = frame.select(values.cast(pl.String).cast(pl.Categorical).to_physical()).to_series()
    return key.alias("key")


def collides(keyed: pl.DataFrame) -> bool:
    """Whether two different values of ``keyed`` (columns ``key`` and ``value``) share a
    key: a hash collision, after which the values themselves must be compared."""
    return keyed.group_by("key").agg(pl.col("value").n_unique() > 1)["value"].any()


def key_hashes(frame: pl.DataFrame, values: pl.Expr) -> pl.Series:
    """The :func:`key_hash` of each row's value (null for a null value), computed
    :data:`PIECE_ROWS` rows at a time, so a value made from the item's text (a normalized
    question or SQL) is held for one piece of the items, never for all."""
    key = pl.when(values.is_not_null()).then(key_hash(values)).alias("key")
    pieces = range(0, frame.height, PIECE_ROWS)
    hashes = [frame.slice(start, PIECE_ROWS).select(key).to_series() for start in pieces]
    return pl.concat(hashes) if hashes else pl.Series("key", [], pl.UInt64)


def key_hash(values: pl.Expr) -> pl.Expr:
    """The 64-bit hash that stands for a value that is only compared (see :func:`hashed`
    and the leakage check)."""
    return values.hash(seed=0)
