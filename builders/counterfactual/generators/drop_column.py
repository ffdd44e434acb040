"""drop_column_v1 (unanswerable, missing-column): drop a column the question mentions.

NoisySP/DTE made unanswerable questions by editing the table rather than the question:
the question is kept over a copy without the column it names, and the label holds when
the gold SQL no longer binds and nothing left in the database answers for the column.
"""

from __future__ import annotations

from answerable.builders.counterfactual import explain, verify
from answerable.builders.counterfactual.generators.base import EditEnv, Parent, Proposal, Skip
from answerable.builders.counterfactual.generators.helpers import (
    choose_target,
    dropped_column_proposal,
    split,
)
from answerable.builders.counterfactual.lexicon import shares_meaning
from answerable.builders.counterfactual.verify import Failure
from answerable.builders.schema import DatabaseSchema


class DropColumn:
    """Column-unanswerable: drop a column the question mentions (NoisySP/DTE)."""

    name = "drop_column_v1"
    label = "unanswerable"
    category = "missing-column"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Drop one grounded column, chosen by the parent's seeded generator."""
        chosen = choose_target(parent, env.rng(self.name, parent.id))
        if isinstance(chosen, str):
            return chosen
        target, mention = chosen
        return dropped_column_proposal(self.name, parent, target, mention, "missing-column")

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """The gold SQL no longer binds, nothing left answers it; sets the subtype."""
        parent, target = proposal.parent, proposal.params["target"]
        table, column = split(target)
        failure = env.gold_does_not_bind(parent, proposal.ops) or verify.nothing_answers(
            env.leaks(parent, table, column)
        )
        if failure is None:
            after = env.edited_schema(parent, proposal.ops)
            proposal.subtype = missing_column_subtype(after, table, column)
            proposal.explanation = explain.missing_column(proposal.mention.text, table, column)
        return failure


def missing_column_subtype(after: DatabaseSchema, table: str, column: str) -> str:
    """TrustSQL's subtype of a missing column, judged on the edited schema.

    ``surface`` when a column of that name is in another table; ``related`` when a
    remaining column of the same table shares a content word with it (``away_score``
    for ``home_score``); else ``unrelated``.
    """
    low = column.lower()
    if any(t.name != table and t.column(low) is not None for t in after.tables):
        return "surface"
    owner = after.table(table)
    if any(shares_meaning(c.name, column, owner.name) for c in owner.columns):
        return "related"
    return "unrelated"
