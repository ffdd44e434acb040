"""drop_unused_v1 (answerable, control): drop 1-3 columns the SQL does not use.

TriageSQL's controls: a smaller schema should not signal an unanswerable question. The
label holds when the gold SQL still binds and gives the parent's result on the copy.
"""

from __future__ import annotations

from answerable.builders.counterfactual import verify
from answerable.builders.counterfactual.generators.base import EditEnv, Parent, Proposal, Skip
from answerable.builders.counterfactual.generators.helpers import real_table, split
from answerable.builders.counterfactual.lexicon import column_role
from answerable.builders.counterfactual.script import drop_column
from answerable.builders.counterfactual.verify import Failure
from answerable.kernel.ids import content_hash


class DropUnused:
    """Answerable control: drop columns the SQL does not use (TriageSQL), so that a
    smaller schema does not signal an unanswerable question."""

    name = "drop_unused_v1"
    label = "answerable"
    category = None

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Drop one to ``control_max`` unused, non-key columns of the queried tables."""
        queried = ("unused", parent.db_id, parent.refs.tables, parent.refs.columns)
        unused = env.once(queried, lambda: self.unused(parent))  # the same for every value
        if not unused:
            return "no-unused-column"
        key = content_hash([parent.db_id, parent.refs.tables, parent.refs.columns])
        rng = env.rng(self.name, key)
        count = rng.randint(1, min(env.control_max, len(unused)))
        chosen = sorted(rng.sample(unused, count))
        return Proposal(
            self.name,
            parent,
            [drop_column(*split(c)) for c in chosen],
            parent.item["question"],
            parent.grounding.spans(),
            None,
            {"dropped": chosen},
        )

    def unused(self, parent: Parent) -> list[str]:
        """Columns of the queried tables that the SQL does not read and no key uses."""
        keys = {
            (t.name.lower(), c.lower())
            for t in parent.schema.tables
            for c in [*t.primary_key, *(fk[0] for fk in t.foreign_keys)]
        }
        keys |= {
            (fk[1].lower(), fk[2].lower()) for t in parent.schema.tables for fk in t.foreign_keys
        }
        found = []
        for name in parent.refs.tables:
            table = real_table(parent, name)
            for column in table.columns if table else ():
                qualified = f"{table.name}.{column.name}"
                if qualified in parent.refs.columns:
                    continue
                if (table.name.lower(), column.name.lower()) in keys:
                    continue
                if column_role(column.name, column.type) != "identifier":
                    found.append(qualified)
        return sorted(found)

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """The gold SQL still binds and (with a database) gives the parent's result."""
        parent = proposal.parent
        parent_hash = (parent.item.get("result") or {}).get("hash")
        failure, result = verify.gold_still_binds(
            parent.item["sql"],
            env.binding_error(parent, proposal.ops),
            env.edited_database(parent, proposal.ops),
            parent_hash,
            parent.ordered,
        )
        if result is not None:
            proposal.result = result.to_record()
        return failure
