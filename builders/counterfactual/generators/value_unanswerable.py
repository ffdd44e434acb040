"""value_unanswerable_v1 (unanswerable, missing-value): ask about a value no row holds.

A grounded compared value is replaced, in the question and the SQL, by a fresh stand-in
of the same kind (:mod:`..values`) that the column and its namesakes do not hold. The
label holds when no row holds the value and the probe SQL finds nothing; only values
every returned row must match (ANDed filters, never under OR or NOT) are replaced.
"""

from __future__ import annotations

import functools

from sqlglot import exp

from answerable.builders.counterfactual import explain, trees, verify
from answerable.builders.counterfactual.generators.base import (
    KNOWN_VALUES,
    EditEnv,
    Parent,
    Proposal,
    Skip,
)
from answerable.builders.counterfactual.generators.helpers import (
    bare_value,
    namesakes,
    split,
    value_mentions,
)
from answerable.builders.counterfactual.grounding import Mention
from answerable.builders.counterfactual.query_shapes import Query
from answerable.builders.counterfactual.values import fresh_candidates
from answerable.builders.counterfactual.verify import Failure
from answerable.kernel.errors import SQLError

FRESH_TRIES = 8


_NARROWING = (exp.And, exp.Paren, exp.Where, exp.Having, exp.Join, exp.From, exp.Select)
_NARROWING += (exp.Intersect, exp.In, exp.With, exp.CTE, exp.Group, exp.Order, exp.Limit)


def _filters_every_row(literals: list[tuple[exp.Literal, str]], value) -> bool:
    """Whether some comparison with the string ``value`` must hold for the query to
    return any row: it sits in ANDed filters, up through IN subqueries, INTERSECT and
    the left side of EXCEPT, never under OR, NOT, UNION or a scalar subquery (a value
    nobody has there need not leave the result empty). ``literals`` are the query's
    literal nodes with their texts (:meth:`Query.literal_texts`)."""
    return any(node.is_string and text == value and _narrows(node) for node, text in literals)


def _narrows(node: exp.Expr) -> bool:
    comparison = node.parent
    while isinstance(comparison, exp.Paren):
        comparison = comparison.parent
    if isinstance(comparison, exp.In) and len(comparison.expressions) > 1:
        return False  # another value of the list may still match
    child, parent = comparison, comparison.parent
    while parent is not None:
        if isinstance(parent, exp.Except) and child is not parent.this:
            return False
        if isinstance(parent, exp.Subquery) and not isinstance(parent.parent, exp.In):
            if parent.parent is not None and not isinstance(parent.parent, exp.From | exp.Join):
                return False
        elif not isinstance(parent, (*_NARROWING, exp.Except, exp.Subquery)):
            return False
        child, parent = parent, parent.parent
    return True


def _matches_any(literal, value: str, known: list[str]) -> bool:
    """Whether ``value`` (in place of the literal) would match one of ``known``, as the
    probe compares: case-insensitively, as a substring for a ``LIKE`` pattern."""
    low = value.lower()
    if literal.operator == "like":
        return any(low in k.lower() for k in known)
    return any(low == k.lower() for k in known)


def _replace_literal(query: Query, old: str, new: str) -> str:
    """The query's qualified SQL with the string ``old`` replaced by ``new``."""
    tree = query.private_tree()
    for node in list(tree.find_all(exp.Literal)):
        if node.is_string and node.this == old:
            node.replace(exp.Literal.string(new))
    return tree.sql("sqlite", copy=False)


def _shift_spans(spans: list[dict], at: Mention, new_text: str, tag: str) -> list[dict]:
    """The spans after replacing the text of ``at`` by ``new_text`` (which gets ``tag``)."""
    delta = len(new_text) - (at.end - at.start)
    shifted = []
    for span in spans:
        span = dict(span)
        if span["start"] == at.start:
            span.update(end=at.start + len(new_text), text=new_text, tag=tag)
        elif span["start"] >= at.end:
            span.update(start=span["start"] + delta, end=span["end"] + delta)
        shifted.append(span)
    return shifted


@functools.lru_cache(maxsize=4096)
def _occurs_sql(table: str, column: str, like: bool) -> str:
    """Whether a row holds the parameter in ``table.column`` (case-insensitively, or as a
    LIKE pattern): one row or none, the SQL built once per column."""
    if like:
        test = exp.Like(this=trees.column(column), expression=exp.Placeholder())
    else:
        lower = exp.func("lower", exp.Placeholder())
        test = exp.EQ(this=exp.func("lower", trees.column(column)), expression=lower)
    query = exp.select(exp.Literal.number(1)).from_(trees.table(table)).where(test).limit(1)
    return query.sql("sqlite")


class ValueUnanswerable:
    """Value-unanswerable: the question asks about a value its column does not hold."""

    name = "value_unanswerable_v1"
    label = "unanswerable"
    category = "missing-value"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Replace a grounded compared value (question and SQL) by a fresh one."""
        mentions = value_mentions(parent, env, ("eq", "in", "like"))
        if isinstance(mentions, str):
            return mentions
        literals = parent.query.literal_texts()
        mentions = [m for m in mentions if _filters_every_row(literals, m.literal.value)]
        if not mentions:
            return "value-not-required"
        rng = env.rng(self.name, parent.id)
        first = rng.choice(mentions)  # then the others: a column may have no stand-in
        for mention in [first, *(m for m in mentions if m is not first)]:
            fresh = self.fresh_value(parent, env, mention, rng)
            if fresh is not None:
                return self.proposal(parent, mention, fresh)
        return "no-fresh-value"

    def fresh_value(self, parent: Parent, env: EditEnv, mention: Mention, rng) -> str | None:
        """The first drawn stand-in that its column does not hold and the question lacks."""
        table, column = split(mention.concept)
        known = env.known_values(parent.db_id, table, column)
        complete = len(known) < KNOWN_VALUES  # then ``known`` is every value of the column
        for value in fresh_candidates(table, column, mention.text, rng, FRESH_TRIES, known):
            if not value or value.lower() in parent.item["question"].lower():
                continue
            if complete and _matches_any(mention.literal, value, known):
                continue
            if not self.occurs(env, parent, mention, value):
                return value
        return None

    def occurs(self, env: EditEnv, parent: Parent, mention: Mention, value: str) -> bool:
        """Whether a row holds ``value`` (case-insensitive; as a LIKE pattern) in the
        mentioned column or in one of its namesakes: a value that is in the database
        under another table ('new mexico' among the states, though not among the
        lakes' states) is not missing from it."""
        operator = mention.literal.operator
        if operator == "like":
            argument = str(mention.literal.value).replace(bare_value(mention.literal), value)
        else:
            argument = value
        key = ("occurs", parent.db_id, mention.concept, operator == "like", argument.lower())
        return env.once(key, lambda: self._occurs(env, parent, mention, argument))

    def _occurs(self, env: EditEnv, parent: Parent, mention: Mention, argument: str) -> bool:
        """Whether a namesake holds ``argument``: every namesake's probe in one exchange
        with the SQL worker, read in order (the first that fails before a hit raises)."""
        database = env.database(parent.db_id)
        key = ("namesakes", parent.db_id, mention.concept)
        like = mention.literal.operator == "like"
        columns = env.once(key, lambda: namesakes(parent.schema, *split(mention.concept)))
        probes = [(_occurs_sql(t, c, like), False, (argument,)) for t, c in columns]
        for found in database.execute_many(probes):
            if isinstance(found, SQLError):
                raise found
            if found.row_count:
                return True
        return False

    def proposal(self, parent: Parent, mention: Mention, fresh: str) -> Proposal:
        """The proposal that asks about ``fresh`` instead of the mentioned value."""
        old = str(mention.literal.value)
        new_literal = old.replace(bare_value(mention.literal), fresh)
        question = parent.item["question"]
        new_question = question[: mention.start] + fresh + question[mention.end :]
        probe = _replace_literal(parent.query, old, new_literal)
        return Proposal(
            self.name,
            parent,
            [],
            new_question,
            _shift_spans(parent.grounding.spans(), mention, fresh, "UNK"),
            {
                "kind": "missing-value",
                "column": mention.concept,
                "value": fresh,
                "replaced": mention.text,
                "probe": probe,
            },
            {"column": mention.concept, "value": fresh, "replaced": old},
            readings=[probe],
            question_edit={
                "start": mention.start,
                "end": mention.end,
                "text": fresh,
                "replaced": mention.text,
            },
            mention=mention,
        )

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """The value is in no row of its column and the probe SQL finds nothing."""
        parent, mention = proposal.parent, proposal.mention
        fresh = proposal.params["value"]
        found = self.occurs(env, parent, mention, fresh)
        failure = verify.value_is_absent(found, mention.concept, fresh) or verify.finds_nothing(
            proposal.readings[0], env.database(parent.db_id), parent.ordered
        )
        if failure is None:
            proposal.explanation = explain.missing_value(fresh, mention.concept)
        return failure
