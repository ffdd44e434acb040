"""calculation_v1: DTE's calculation-unanswerable category, made by a schema edit.

DTE's users asked for quantities a table does not hold but a formula over its columns
gives ("balance of trade" is exports minus imports): without the formula, nothing maps
the question's words to the table. The leak check (:mod:`..leaks`) already finds stored
columns that are such a formula of two others (``length_of_stay`` is
``out_time - in_time`` in days); this generator drops one the question mentions and
keeps the question. The label holds when execution proves both halves on the edited
copy: the gold SQL no longer runs, and the gold SQL with the column written as the
formula does (answering needs the formula, and the formula is enough). A column that a
textbook identity restores (area = population / density) is no calculation a user must
be asked for: such a parent is skipped (``textbook-identity``).
"""

from __future__ import annotations

from answerable.builders.counterfactual import explain, verify
from answerable.builders.counterfactual.generators.base import EditEnv, Parent, Proposal, Skip
from answerable.builders.counterfactual.generators.helpers import (
    choose_target,
    dropped_column_proposal,
    split,
    table_columns,
)
from answerable.builders.counterfactual.leaks import Leak, formula
from answerable.builders.counterfactual.verify import Failure

TEXTBOOK_IDENTITIES = (
    frozenset({"population", "area", "density"}),  # density = population / area
    frozenset({"distance", "speed", "time"}),  # speed = distance / time
    frozenset({"mass", "volume", "density"}),  # density = mass / volume
    frozenset({"price", "quantity", "total"}),  # total = price x quantity
)
"""Three quantities any one of which a standard identity gives from the other two."""


def textbook_identity(target: str, operands: tuple[str, ...]) -> str | None:
    """The identity that restores ``target`` (``table.column``) from ``operands``, when
    their names' head words are a :data:`TEXTBOOK_IDENTITIES` triple: then a reader
    knows the formula and the question is answerable (a city's area is its population
    over its density), not a calculation nothing maps to.

    >>> textbook_identity("state.area", ("state.population", "state.density"))
    'area, density, population'
    >>> textbook_identity("stays.length_of_stay", ("stays.out_time", "stays.in_time")) is None
    True
    """
    heads = {_head(name) for name in (target, *operands)}
    for triple in TEXTBOOK_IDENTITIES:
        if heads == triple:
            return ", ".join(sorted(triple))
    return None


def _head(qualified: str) -> str:
    """The last word of a ``table.column``'s column name, lower-case."""
    words = [w for w in split(qualified)[1].lower().replace("-", "_").split("_") if w]
    return words[-1] if words else ""


class Calculation:
    """Calculation-unanswerable: drop a column that a formula of two others gives."""

    name = "calculation_v1"
    label = "unanswerable"
    category = "calculation"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Drop one grounded column that is derivable, chosen by the parent's generator."""
        if env.database(parent.db_id) is None:
            return "no-database"  # derivable columns are found in the data
        chosen = choose_target(
            parent, env.rng(self.name, parent.id), lambda c: bool(self.formulas(parent, env, c))
        )
        if isinstance(chosen, str):
            return "no-derivable-column" if chosen == "no-candidates" else chosen
        target, mention = chosen
        leak = self.formulas(parent, env, target)[0]
        if textbook_identity(target, leak.columns):
            return "textbook-identity"
        reading = self.reading(parent, target, leak)
        if reading is None:
            return "no-derivable-column"
        table = split(target)[0]
        return dropped_column_proposal(
            self.name,
            parent,
            target,
            mention,
            "calculation",
            {
                "operation": leak.operation,
                "operands": list(leak.columns),
                "formula": formula(parent.schema.table(table), leak).sql("sqlite"),
                "reading": reading,
            },
            {"operands": list(leak.columns), "operation": leak.operation},
            readings=[reading],
        )

    def formulas(self, parent: Parent, env: EditEnv, target: str) -> list[Leak]:
        """The derivable leaks of ``target``, when they are the only leaks it has."""
        leaks = env.leaks(parent, *split(target))
        derivable = [leak for leak in leaks if leak.how == "derivable"]
        return derivable if len(derivable) == len(leaks) else []

    def reading(self, parent: Parent, target: str, leak: Leak) -> str | None:
        """The gold SQL with every read of ``target`` replaced by the formula, over the
        same table alias; None when the target is read through a subquery only."""
        tree = parent.query.private_tree()
        owner = parent.schema.table(split(target)[0])
        nodes = table_columns(tree, target)
        for node in nodes:
            node.replace(formula(owner, leak, node.table or None))
        return tree.sql("sqlite", copy=False) if nodes else None

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """The gold SQL no longer runs on the copy, nothing but the formula answers, and
        the formula reading runs there with the parent's number of rows."""
        parent, target = proposal.parent, proposal.params["target"]
        database = env.edited_database(parent, proposal.ops)
        failure = env.gold_does_not_bind(parent, proposal.ops) or verify.nothing_answers(
            [leak for leak in env.leaks(parent, *split(target)) if leak.how != "derivable"]
        )
        if failure is None:
            rows = (parent.item.get("result") or {}).get("row_count")
            failure, _ = verify.formula_answers(
                proposal.readings[0], database, parent.ordered, rows
            )
        if failure is None:
            operands = proposal.params["operands"]
            proposal.explanation = explain.calculation(
                proposal.mention.text, target, operands, proposal.params["operation"]
            )
        return failure
