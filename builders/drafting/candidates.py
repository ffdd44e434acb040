"""Candidate SQL for SCARE's strata, and answerable items labelled correct or incorrect.

SCARE pairs every question with the SQL a text-to-SQL model wrote for it, and sorts the
pairs into four strata: answerable-correct, answerable-incorrect, ambiguous and
unanswerable. Here a candidate comes from the model (``llm_sql_v1``, a text-to-SQL
prompt) or, offline, from the gold SQL (``perturb_sql_v1``): the gold qualified
against the schema (an equivalent rewrite) and perturbations done on the sqlglot tree,
each imitating one of SCARE's error types (see :mod:`error_types`):

- ``T/C`` table/column reference: a column swapped for a sibling, a table for one with
  the same columns;
- ``J/G`` JOIN/GROUP BY: a join condition or a GROUP BY column swapped;
- ``PV`` predicate value: a compared value replaced by another from the column;
- ``OL`` other local: a comparison, AND/OR or sort direction flipped, DISTINCT dropped,
  LIMIT changed;
- ``OG`` other global: the WHERE clause dropped (the query too simple for the question).

A candidate's ``error_type`` is not the perturbation's intent but what the tree diff
against the gold says (:func:`error_types.classify`), so a model's incorrect candidates
get one too.

An answerable item's candidate runs on the database and is ``answerable-correct`` when
its result hash equals the gold's, else ``answerable-incorrect`` (an error counts as
incorrect). A problematic item's candidate (offline: its parent's gold SQL, what a
model ignoring the problem would write) takes the item's label as its stratum.
Candidates are stored in the item's optional ``candidates`` field.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.counterfactual import query_shapes
from answerable.builders.drafting.context import DatabaseContext, is_key, is_numeric
from answerable.builders.drafting.error_types import classify, error_type
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.sqlkit.parsing import compared_with
from answerable.builders.sqlkit.refs import resolve_all
from answerable.kernel.errors import SQLError

PERTURB_GENERATOR = "perturb_sql_v1"
LLM_GENERATOR = "llm_sql_v1"


FLIPS = {
    exp.GT: exp.GTE,
    exp.GTE: exp.GT,
    exp.LT: exp.LTE,
    exp.LTE: exp.LT,
    exp.EQ: exp.NEQ,
    exp.NEQ: exp.EQ,
    exp.And: exp.Or,
    exp.Or: exp.And,
}

Perturbation = Callable[[exp.Expr, DatabaseContext, random.Random], exp.Expr | None]


# ---- perturbations: each returns a changed copy, or None when it does not apply -------


def _columns_of(tree: exp.Expr) -> list[tuple[exp.Column, str, str]]:
    """``(node, table, column)`` for every column resolved to a real table."""
    _tables, resolved = resolve_all(tree)
    found = []
    for node in tree.find_all(exp.Column):
        name = resolved.get(id(node))
        if name and "." in name:
            table, column = name.split(".", 1)
            found.append((node, table, column))
    return found


def _sibling(context: DatabaseContext, table: str, column: str, rng, keys) -> str | None:
    """Another column of ``table`` of the same kind (number or text), or None; ``keys``
    True or False asks for identifier columns or other ones, None for either."""
    schema_table = context.schema.table(table)
    mine = schema_table.column(column) if schema_table else None
    if mine is None:
        return None
    choices = [
        c.name
        for c in schema_table.columns
        if c.name.lower() != column.lower()
        and is_numeric(c.type) == is_numeric(mine.type)
        and (keys is None or is_key(c.name) == keys)
    ]
    return rng.choice(choices) if choices else None


def _rename(tree: exp.Expr, context, rng, clause, keys) -> exp.Expr | None:
    """A copy with one column for which ``clause(column)`` holds renamed to a sibling."""
    tree = tree.copy()
    spots = [spot for spot in _columns_of(tree) if clause(spot[0])]
    rng.shuffle(spots)
    for node, table, column in spots:
        other = _sibling(context, table, column, rng, keys)
        if other is not None:
            node.set("this", exp.to_identifier(other))
            return tree
    return None


def _in(*kinds):
    return lambda node: node.find_ancestor(*kinds) is not None


def wrong_column(tree, context, rng):
    """T/C: a selected, filtered or sorted column becomes a sibling column of its table."""
    outside = _in(exp.Join, exp.Group)
    return _rename(tree, context, rng, lambda node: not outside(node), keys=False)


def wrong_table(tree, context, rng):
    """T/C: a table becomes another one that has every column the query reads from it."""
    tree = tree.copy()
    used: dict[str, set[str]] = {}
    for _node, table, column in _columns_of(tree):
        used.setdefault(table.lower(), set()).add(column.lower())
    for node in tree.find_all(exp.Table):
        needed = used.get(node.name.lower(), set())
        others = [
            t.name
            for t in context.schema.tables
            if t.name.lower() != node.name.lower() and needed <= {c.name.lower() for c in t.columns}
        ]
        if needed and others:
            node.set("this", exp.to_identifier(rng.choice(others)))
            return tree
    return None


def wrong_join(tree, context, rng):
    """J/G: one side of a join condition becomes another column of its table."""
    return _rename(tree, context, rng, _in(exp.Join), keys=None)


def wrong_group_by(tree, context, rng):
    """J/G: a GROUP BY column becomes a sibling column of its table."""
    return _rename(tree, context, rng, _in(exp.Group), keys=False)


def wrong_value(tree, context, rng):
    """PV: a compared value becomes another value of the column (or another number)."""
    tree = tree.copy()
    _tables, resolved = resolve_all(tree)
    literals = [n for n in tree.find_all(exp.Literal) if compared_with(n)[0]]
    rng.shuffle(literals)
    for literal in literals:
        replacement = _other_value(literal, resolved, context, rng)
        if replacement is not None:
            literal.replace(replacement)
            return tree
    return None


def _other_value(literal: exp.Literal, resolved: dict, context, rng) -> exp.Expr | None:
    if not literal.is_string:
        changed = float(literal.this) * 2 or 1.0
        return exp.Literal.number(int(changed) if changed.is_integer() else changed)
    other = compared_with(literal)[1]
    name = resolved.get(id(other)) if isinstance(other, exp.Column) else None
    if not name or "." not in name:
        return None
    table, column = name.split(".", 1)
    text = literal.this
    core = text.strip("%")
    values = [v for v in context.column_values(table, column) if isinstance(v, str) and v != core]
    if not values:
        return None
    chosen = rng.choice(values)
    return exp.Literal.string(text.replace(core, chosen) if core else chosen)


def wrong_operator(tree, _context, rng):
    """OL: a comparison, AND/OR or a sort direction flipped."""
    tree = tree.copy()
    nodes = [n for n in tree.find_all(*FLIPS) if n.find_ancestor(exp.Join) is None]
    nodes += list(tree.find_all(exp.Ordered))
    if not nodes:
        return None
    node = rng.choice(nodes)
    if isinstance(node, exp.Ordered):
        node.set("desc", not node.args.get("desc"))
    else:
        node.replace(FLIPS[type(node)](this=node.this.copy(), expression=node.expression.copy()))
    return tree


def drop_distinct(tree, _context, _rng):
    """OL: the outer SELECT's DISTINCT dropped."""
    if not isinstance(tree, exp.Select) or not tree.args.get("distinct"):
        return None
    tree = tree.copy()
    tree.set("distinct", None)
    return tree


def wrong_limit(tree, _context, _rng):
    """OL: the LIMIT doubled."""
    limit = tree.args.get("limit")
    count = limit.expression if limit is not None else None
    if not isinstance(count, exp.Literal) or count.is_string:
        return None
    tree = tree.copy()
    tree.args["limit"].set("expression", exp.Literal.number(int(count.this) * 2))
    return tree


def drop_where(tree, _context, _rng):
    """OG: the outer WHERE dropped, so the query answers a broader question."""
    if not isinstance(tree, exp.Select) or tree.args.get("where") is None:
        return None
    tree = tree.copy()
    tree.set("where", None)
    return tree


PERTURBATIONS: dict[str, tuple[str, Perturbation]] = {
    "wrong_column": ("T/C", wrong_column),
    "wrong_table": ("T/C", wrong_table),
    "wrong_join": ("J/G", wrong_join),
    "wrong_group_by": ("J/G", wrong_group_by),
    "wrong_value": ("PV", wrong_value),
    "wrong_operator": ("OL", wrong_operator),
    "drop_distinct": ("OL", drop_distinct),
    "wrong_limit": ("OL", wrong_limit),
    "drop_where": ("OG", drop_where),
}
"""Every perturbation by name, with the SCARE error type it imitates."""


def perturbed_candidates(
    sql: str, context: DatabaseContext, rng: random.Random, count: int, dialect: str = "sqlite"
) -> list[dict]:
    """Up to ``count`` candidates from a gold SQL: its qualified rewrite and perturbations,
    in a seeded order: the first is the one SCARE pairs with the question (the release's
    ``scare_stratum``), and a rewrite always first would put every item in
    answerable-correct."""
    query = _qualified(sql, context, dialect)
    try:
        tree = query.parsed() if query is not None else sqlkit.parse(sql, dialect)
    except SQLError:
        return []
    found, seen = [], {sql}
    rewrite = query.sql(dialect) if query is not None else None
    if rewrite is not None and rewrite not in seen:
        found.append(candidate(rewrite, PERTURB_GENERATOR, edit="qualified_rewrite"))
        seen.add(rewrite)
    names = list(PERTURBATIONS)
    rng.shuffle(names)
    for name in names:
        if len(found) >= count:
            break
        _intent, perturb = PERTURBATIONS[name]
        changed = perturb(tree, context, rng)
        if changed is None:
            continue
        # typed first, so its SQL is written from the tree itself, not from one more copy
        # (the writer may change the tree; a repeated SQL, rare, is typed for nothing)
        kind = classify(tree, changed)
        text = changed.sql(dialect, copy=False)
        if text and text not in seen:
            seen.add(text)
            found.append(candidate(text, PERTURB_GENERATOR, edit=name, error_type=kind))
    found = found[:count]
    rng.shuffle(found)
    return found


def _qualified(sql: str, context: DatabaseContext, dialect: str) -> query_shapes.Query | None:
    """The gold qualified against the schema, by its shape (:func:`query_shapes.shared`: the
    items made from one template are qualified once), or None when it does not bind."""
    try:
        return query_shapes.shared().query(sql, context.schema, dialect)
    except SQLError:
        return None


DEFAULT_BATCH = 8
"""How many questions of one database a text-to-SQL request asks for at most."""


def batches(db_ids: list[str], size: int) -> list[list[int]]:
    """The items' positions in text-to-SQL requests: grouped by database, in the order
    each database first appears, items in their own order, at most ``size`` a request.

    >>> batches(["a", "b", "a", "a", "b"], 2)
    [[0, 2], [3], [1, 4]]
    """
    by_db: dict[str, list[int]] = {}
    for position, db_id in enumerate(db_ids):
        by_db.setdefault(db_id, []).append(position)
    return [
        positions[start : start + size]
        for positions in by_db.values()
        for start in range(0, len(positions), size)
    ]


def batch_ids(count: int) -> list[str]:
    """The ids of a request's questions, as the prompt shows them: ``q1``, ``q2`` ..."""
    return [f"q{n}" for n in range(1, count + 1)]


def written(queries: dict[str, str] | None, key: str, model: str) -> dict:
    """The candidate a model wrote for the question ``key`` of a request: its query, or
    none with why (``invalid-reply``: no usable reply at all; ``missing-from-reply``:
    the reply left this question out)."""
    if queries is None:
        sql, error = None, "invalid-reply"
    else:
        sql = queries.get(key)
        error = None if sql else "missing-from-reply"
    return candidate(sql, LLM_GENERATOR, edit="llm_written", model=model, error=error)


def candidate(sql: str | None, generator: str, **fields) -> dict:
    """One candidate record (stratum and result are filled by :func:`label`)."""
    record = {
        "sql": sql,
        "generator": generator,
        "edit": None,
        "error_type": None,
        "model": None,
        "stratum": None,
        "result_hash": None,
        "error": None,
    }
    record.update(fields)
    return record


def label(item: dict, found: dict, database: ReadOnlyDatabase | None) -> dict:
    """The candidate with its stratum: by execution for answerable items, else the label."""
    if item["label"] != "answerable":
        return {**found, "stratum": item["label"]}
    if not found["sql"]:
        return {**found, "stratum": "answerable-incorrect", "error": found["error"] or "no-sql"}
    gold = item.get("result") or {}
    if database is None or not gold.get("hash"):
        return found  # nothing to compare with: stays unlabelled
    result_hash, error = outcome(database, found["sql"], gold.get("ordered"))
    if error is not None:
        return {**_typed(item, found), "stratum": "answerable-incorrect", "error": error}
    if result_hash == gold["hash"]:
        correct = {"stratum": "answerable-correct", "error_type": None}  # no error to type
        return {**found, **correct, "result_hash": result_hash}
    return {**_typed(item, found), "stratum": "answerable-incorrect", "result_hash": result_hash}


RUNS_KEPT = 4096
"""How many statements' outcomes :func:`outcome` keeps (per process)."""


def outcome(database, sql: str, ordered: bool | None) -> tuple[str | None, str | None]:
    """``(result hash, None)`` of ``sql`` on ``database``, or ``(None, error reason)``.

    A statement run on the same database before (in this process, among the last
    :data:`RUNS_KEPT` used) is not run again: dropping the WHERE of a template's items
    gives one query for all of them, and a model's samples often repeat one another. The
    database is read-only, so the outcome is the same (the key holds the database
    object itself: an id is never reused while its entry lives)."""
    return _run(database, sql, ordered)


@functools.lru_cache(maxsize=RUNS_KEPT)
def _run(database, sql: str, ordered: bool | None) -> tuple[str | None, str | None]:
    try:
        return database.execute(sql, ordered=ordered).hash, None
    except SQLError as error:
        return None, error.reason


def _typed(item: dict, found: dict) -> dict:
    """An incorrect candidate with its SCARE error type: a model's gets one from the diff."""
    if found["error_type"] is not None or not item.get("sql"):
        return found
    return {
        **found,
        "error_type": error_type(item["sql"], found["sql"], item.get("dialect", "sqlite")),
    }
