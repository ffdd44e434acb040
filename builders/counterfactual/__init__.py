"""Counterfactual schema edits: unanswerable and ambiguous items proved on edited copies.

NoisySP (DTE) made ambiguous and unanswerable questions by editing the table rather
than the question; TriageSQL added answerable controls with unused columns removed.
This package does both on a copy of the real database, and keeps an item only when
execution proves its label (on the edited schema alone for schema-only sources).

Modules, one concern each:

- ``grounding``: question spans for the columns and values the gold SQL uses;
- ``lexicon``: name tokens, column roles, contrasting qualifiers, synonym normal form;
- ``candidates``: near-synonym column names, ranked;
- ``values``: fresh values a column does not hold (Faker, shapes, WordNet kinds);
- ``script``: edit scripts (the ops that name and rebuild a variant);
- ``fills``: values for added columns, perturbed from the target's;
- ``materialize``: an edit script applied to a copy of the database, once per edit;
- ``leaks``: whether a remaining column still answers for a dropped one;
- ``verify``: the checks that prove each label;
- ``edits``: the edit generators (``drop_column_v1`` ...); ``calculation``: the
  calculation-unanswerable one (``calculation_v1``); ``registry``: all by name;
- ``explain``: DTE-style explanations; ``bio``: BIO token tags;
- ``shapes``: qualification reused across queries that differ only in values;
- ``stage``: the build step that mixes and emits them; ``survey``: the same over one
  source outside a build, for counts.
"""

from answerable.builders.counterfactual.bio import bio_tags, write_bio
from answerable.builders.counterfactual.edits import EditEnv, prepare
from answerable.builders.counterfactual.materialize import VariantStore, materialize
from answerable.builders.counterfactual.registry import CONTROL_EDIT, GENERATORS, PROBLEM_EDITS
from answerable.builders.counterfactual.stage import (
    PARENT_FIELDS,
    STEP,
    Config,
    Stats,
    drop_repeated,
    edit_env,
    is_parent,
    run_counterfactual,
)

__all__ = [
    "CONTROL_EDIT",
    "GENERATORS",
    "PARENT_FIELDS",
    "PROBLEM_EDITS",
    "STEP",
    "Config",
    "EditEnv",
    "Stats",
    "VariantStore",
    "bio_tags",
    "drop_repeated",
    "edit_env",
    "is_parent",
    "materialize",
    "prepare",
    "run_counterfactual",
    "write_bio",
]
