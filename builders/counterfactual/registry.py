"""Every edit generator by its registered, versioned name (one line each).

The names go into each item's provenance and into the recipe's ``counterfactual.edits``;
each generator is a module of :mod:`.generators`.
"""

from __future__ import annotations

from answerable.builders.counterfactual.generators.add_near_synonyms import AddNearSynonyms
from answerable.builders.counterfactual.generators.calculation import Calculation
from answerable.builders.counterfactual.generators.drop_column import DropColumn
from answerable.builders.counterfactual.generators.drop_unused import DropUnused
from answerable.builders.counterfactual.generators.value_ambiguous import ValueAmbiguous
from answerable.builders.counterfactual.generators.value_unanswerable import ValueUnanswerable

GENERATORS = {
    g.name: g
    for g in (
        DropColumn(),
        AddNearSynonyms(),
        ValueUnanswerable(),
        ValueAmbiguous(),
        DropUnused(),
        Calculation(),
    )
}
"""Every edit generator by its registered, versioned name."""
PROBLEM_EDITS = (
    "drop_column_v1",
    "add_near_synonyms_v1",
    "value_unanswerable_v1",
    "value_ambiguous_v1",
)
"""The problematic edits a recipe gets when it names none (calculation_v1 is asked for)."""
CONTROL_EDIT = "drop_unused_v1"
