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
- ``generators``: the edit generators, one module each (``drop_column_v1`` ...), with
  what they share (``base``: parent, proposal, environment; ``helpers``);
  ``registry``: all by name;
- ``explain``: DTE-style explanations; ``bio``: BIO token tags;
- ``shapes``: qualification reused across queries that differ only in values;
- ``stage``: the build step that mixes and emits them; ``on_engines``: the same step
  for DuckDB and server sources, run on a SQLite twin and proved on the engine;
  ``survey``: the same over one source outside a build, for counts.
"""

import importlib

# Each public name and the module that holds it, imported on first use: a reader of a
# release that opens a variant (``materialize``) does not pay for the edit generators,
# Faker and WordNet that the rest of the package pulls.
_HOME = {
    "bio_tags": "bio",
    "write_bio": "bio",
    "EditEnv": "generators.base",
    "prepare": "generators.base",
    "VariantStore": "materialize",
    "as_on_twins": "on_engines",
    "counterfactual_on_engines": "on_engines",
    "twin_databases": "on_engines",
    "materialize": "materialize",
    "CONTROL_EDIT": "registry",
    "GENERATORS": "registry",
    "PROBLEM_EDITS": "registry",
    "PARENT_FIELDS": "stage",
    "STEP": "stage",
    "Config": "stage",
    "Stats": "stage",
    "drop_repeated": "stage",
    "edit_env": "stage",
    "is_parent": "stage",
    "run_counterfactual": "stage",
}
__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value  # after the import, which bound the submodule ``materialize``
    return value
