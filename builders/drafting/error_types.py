"""SCARE's SQL error types, read off the difference between a candidate's tree and the gold's.

SCARE sorts its answerable-incorrect candidates by what is wrong with them (its Table 4
and Table 8):

- ``T/C`` table/column reference: a wrong table or column;
- ``J/G`` JOIN/GROUP BY: a wrong join (table or condition) or grouping;
- ``PV`` predicate value: a wrong value in a condition;
- ``OL`` other local: any other error confined to one spot (an operator, a function, a
  DISTINCT, a LIMIT, a sort direction);
- ``OG`` other global: the query's logic is wrong as a whole (a clause or subquery added
  or missing, several clauses changed): fixing it means restructuring the query.

The type comes from sqlglot's tree diff (``sqlglot.diff``, run by :mod:`tree_diff`, which
writes each distinct subtree's SQL once), so candidates a model wrote get one as well as
the perturbations that imitate each type.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from sqlglot import exp
from sqlglot.diff import Insert, Remove, Update

from answerable.builders import sqlkit
from answerable.builders.drafting.tree_diff import TreeDiff
from answerable.kernel.errors import SQLError

ERROR_TYPES = {
    "T/C": "table or column reference error",
    "J/G": "JOIN or GROUP BY error",
    "PV": "predicate value error",
    "OL": "other local error",
    "OG": "other global error",
}
"""SCARE's error types and their meanings."""

STRUCTURE = (exp.Select, exp.Subquery, exp.SetOperation, exp.Where, exp.Having, exp.With)
"""Nodes whose arrival or loss changes the query's logic as a whole."""

CLAUSES = (exp.Join, exp.Group, exp.Where, exp.Having, exp.Order, exp.Limit, exp.From)
REFERENCES = (exp.Column, exp.Table, exp.Identifier, exp.TableAlias)
GLOBAL_CLAUSES = 3
"""Edits touching this many clauses (the select list counts as one) make an OG error."""


def error_type(gold: str, candidate: str, dialect: str = "sqlite") -> str | None:
    """The SCARE error type of ``candidate`` against ``gold``; None when the trees are the
    same or either does not parse."""
    try:
        return classify(sqlkit.parse(gold, dialect), sqlkit.parse(candidate, dialect))
    except SQLError:
        return None


def classify(gold: exp.Expr, candidate: exp.Expr) -> str | None:
    """The SCARE error type of the ``candidate`` tree against the ``gold`` tree."""
    found = TreeDiff(gold, candidate)
    edits = found.edits
    if not edits:
        return None
    removed, inserted = _cancel(
        [e.expression for e in edits if isinstance(e, Remove)],
        [e.expression for e in edits if isinstance(e, Insert)],
        found.sql,
    )
    if _structure(removed) != _structure(inserted):  # a clause or subquery came or went
        return "OG"
    updated = [n for e in edits if isinstance(e, Update) for n in (e.source, e.target)]
    # the diff replaces the parents of a changed node too: the deepest nodes are the change
    changed = _deepest(removed) + _deepest(inserted) + updated
    if not changed:  # only moves: the same parts in another order
        return "OL"
    clauses = {_clause(node) for node in changed}
    if len(clauses) >= GLOBAL_CLAUSES:
        return "OG"
    if clauses <= {exp.Join, exp.Group}:
        return "J/G"
    if all(isinstance(node, REFERENCES) for node in changed):
        return "T/C"
    if clauses <= {exp.Where, exp.Having} and all(_is_value(n) for n in changed):
        return "PV"
    return "OL"


def _cancel(removed: list, inserted: list, sql: Callable[[exp.Expr], str]) -> tuple[list, list]:
    """Both lists without the nodes removed and inserted again unchanged (by their
    ``sql``): the diff does not match some equal nodes (function calls) and re-creates
    them."""
    left = Counter(sql(n) for n in inserted)
    right = Counter(sql(n) for n in removed)
    kept_removed = [n for n in removed if not _take(left, sql(n))]
    kept_inserted = [n for n in inserted if not _take(right, sql(n))]
    return kept_removed, kept_inserted


def _take(counts: Counter, key: str) -> bool:
    if counts[key] > 0:
        counts[key] -= 1
        return True
    return False


def _structure(nodes: list[exp.Expr]) -> Counter:
    return Counter(type(n).__name__ for n in nodes if isinstance(n, STRUCTURE))


def _deepest(nodes: list[exp.Expr]) -> list[exp.Expr]:
    """The nodes none of whose descendants is in ``nodes``."""
    ids = {id(n) for n in nodes}
    return [n for n in nodes if not any(id(d) in ids for d in n.walk() if d is not n)]


def _clause(node: exp.Expr) -> type:
    """The clause a node sits in (itself when it is one); the select list otherwise."""
    while node is not None:
        if isinstance(node, CLAUSES):
            return type(node)
        if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
            return exp.Select
        node = node.parent
    return exp.Select


def _is_value(node: exp.Expr) -> bool:
    return isinstance(node, (exp.Literal, exp.Neg, exp.Boolean, exp.Null))
