"""add_near_synonyms_v1 (ambiguous, column-ambiguous): drop a mentioned column, add 2-3
near-synonyms.

Each added column could be the one the question means; the names come from the curated
groups (:mod:`..candidates`) and, when asked, the drafting model. The label holds when the
plausibility gate passes, the names are not synonyms and fit the question's span, the gold
SQL no longer binds, nothing left answers for the column and the readings differ. The
names and their fills are seeded by the variant, so items that make the same edit share
one materialized copy.
"""

from __future__ import annotations

from sqlglot import exp

from answerable.builders.counterfactual import explain, gate, trees, verify
from answerable.builders.counterfactual.candidates import near_synonym_groups, proposed_groups
from answerable.builders.counterfactual.fills import choose_fill
from answerable.builders.counterfactual.generators.base import EditEnv, Parent, Proposal, Skip
from answerable.builders.counterfactual.generators.helpers import (
    choose_target,
    split,
    table_columns,
    tag_at,
)
from answerable.builders.counterfactual.grounding import Mention
from answerable.builders.counterfactual.lexicon import column_role
from answerable.builders.counterfactual.query_shapes import Query
from answerable.builders.counterfactual.script import add_column, drop_column, variant_id
from answerable.builders.counterfactual.verify import Failure


class AddNearSynonyms:
    """Column-ambiguous: drop the target, add columns that each could be meant."""

    name = "add_near_synonyms_v1"
    label = "ambiguous"
    category = "column-ambiguous"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Replace one grounded column by the best group of near-synonyms."""

        def groups(qualified: str) -> list[tuple[str, ...]]:
            key = ("near-synonyms", parent.db_id, qualified, env.synonyms)
            table, column = split(qualified)
            names = env.proposed.get((parent.db_id, qualified), ())

            def both() -> list[tuple[str, ...]]:
                curated = near_synonym_groups(parent.schema, table, column, env.synonyms)
                model = proposed_groups(parent.schema, table, column, names, env.synonyms)
                return list(dict.fromkeys(curated + model))

            return env.once(key, both)

        def passing(qualified: str) -> bool:
            mention = parent.grounding.columns[qualified]
            table, column = split(qualified)
            group = self.passing_group(parent, env, mention, table, column, groups(qualified))
            return group is not None

        rng = env.rng(self.name, parent.id)
        chosen = choose_target(parent, rng, passing)  # a target with a real second reading
        if chosen == "no-candidates":  # none: propose one anyway, its verify says why not
            chosen = choose_target(parent, rng, lambda c: bool(groups(c)))
        if isinstance(chosen, str):
            return chosen
        target, mention = chosen
        table, column = split(target)
        names = list(self.best_group(parent, env, mention, table, column, groups(target)))
        ops = self.ops(parent, env, table, column, names)
        reading_trees = [_renamed(parent.query, target, name) for name in names]
        readings = [tree.sql("sqlite") for tree in reading_trees]
        return Proposal(
            self.name,
            parent,
            ops,
            parent.item["question"],
            parent.grounding.spans(tag_at(mention, "AMB")),
            {
                "kind": "column-ambiguous",
                "column": target,
                "span": mention.text,
                "candidates": [f"{table}.{n}" for n in names],
                "readings": readings,
            },
            {"target": target, "candidates": names},
            readings=readings,
            reading_trees=reading_trees,
            mention=mention,
        )

    def passing_group(
        self, parent: Parent, env: EditEnv, mention: Mention, table: str, column: str, groups
    ) -> tuple[str, ...] | None:
        """The first group the plausibility gate passes for this question, or None."""
        for group in groups:
            if self.judged(parent, env, mention, table, column, list(group)).ok:
                return group
        return None

    def judged(
        self, parent: Parent, env: EditEnv, mention: Mention, table: str, column: str, names
    ) -> gate.Verdict:
        """The gate's verdict on ``names`` for ``table.column``, seeing the values the
        gold SQL compares it with and, when the source has rows, some of its values."""
        target = f"{table}.{column}".lower()
        literals = parent.refs.literals
        compared = [str(lit.value) for lit in literals if (lit.column or "").lower() == target]
        known = env.known_values(parent.db_id, table, column) if env.source(parent.db_id) else []
        question = parent.item["question"]
        return gate.judge_columns(question, mention.text, table, column, names, compared, known)

    def best_group(
        self, parent: Parent, env: EditEnv, mention: Mention, table: str, column: str, groups
    ) -> tuple[str, ...]:
        """The first group the gate passes; else the first group (its verification then
        rejects it with the gate's reason)."""
        return self.passing_group(parent, env, mention, table, column, groups) or groups[0]

    def ops(self, parent: Parent, env: EditEnv, table: str, column: str, names: list[str]):
        """Add each name filled from the target (seeded by the variant), then drop it."""
        declared = parent.schema.table(table).column(column).type
        fill = choose_fill(column_role(column, declared), declared)
        rng = env.rng(self.name, f"{parent.db_id}/{table}/{column}/{'/'.join(names)}")
        added = [
            add_column(table, name, declared, column, fill, rng.getrandbits(31)) for name in names
        ]
        return [*added, drop_column(table, column)]

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """The plausibility gate passes; names are not synonyms and fit the span; the gold
        SQL does not bind; nothing left answers the target; the readings differ (or bind,
        schema-only)."""
        parent, names = proposal.parent, proposal.params["candidates"]
        table, column = split(proposal.params["target"])
        failure = (
            verify.plausible(self.judged(parent, env, proposal.mention, table, column, names))
            or verify.candidates_are_not_synonyms(table, column, names)
            or verify.candidates_cover_mention(proposal.question, proposal.mention, table, names)
        )
        if failure:
            return failure
        database = env.edited_database(parent, proposal.ops)
        failure = env.gold_does_not_bind(parent, proposal.ops) or verify.nothing_answers(
            env.leaks(parent, table, column, keep=names)
        )
        if failure:
            return failure
        if database is None:
            errors = [
                env.binding_error(parent, proposal.ops, tree, f"{column}->{name}")
                for tree, name in zip(proposal.reading_trees, names, strict=True)
            ]
            failure = verify.readings_bind(proposal.readings, errors)
        else:
            failure = env.once(
                ("candidates-differ", variant_id(parent.db_id, proposal.ops)),
                lambda: verify.candidates_differ_from_target(
                    env.database(parent.db_id), database, table, column, names
                ),
            ) or verify.readings_differ(
                proposal.readings, database, parent.ordered, proposal.reading_results
            )
        if failure is None:
            proposal.explanation = explain.column_ambiguous(proposal.mention.text, table, names)
        return failure


def _renamed(query: Query, target: str, name: str) -> exp.Expr:
    """A copy of the query's qualified tree with every reference to column ``target``
    renamed to ``name`` (references through a derived table's output keep the output's
    name)."""
    tree = query.private_tree()
    for column in table_columns(tree, target):
        column.set("this", trees.ident(name))
    return tree
