"""The edit generators, one module each, registered by name in :mod:`..registry`.

A generator module holds its data, its rule (``propose``: one edit of a prepared
answerable parent, or the reason it cannot make one) and its check (``verify``: the
execution or binding checks that prove the edit's label). A generator is an object with
``name`` (versioned), ``label``, ``category``, ``propose(parent, env)`` and
``verify(proposal, env)``; a new one is a module here and one line in the registry.

- :mod:`.drop_column` (``drop_column_v1``, unanswerable, missing-column);
- :mod:`.add_near_synonyms` (``add_near_synonyms_v1``, ambiguous, column-ambiguous);
- :mod:`.value_unanswerable` (``value_unanswerable_v1``, unanswerable, missing-value);
- :mod:`.value_ambiguous` (``value_ambiguous_v1``, ambiguous, value-ambiguous);
- :mod:`.calculation` (``calculation_v1``, unanswerable, calculation-unanswerable);
- :mod:`.drop_unused` (``drop_unused_v1``, answerable control).

What they share: :mod:`.base` (the parent, the proposal, the environment they read) and
:mod:`.helpers` (small functions more than one generator uses). Choices that shape a
shared variant (the candidate names, their fills, the rows that receive a value, the
columns a control drops) are seeded by the variant's own key, not by the item, so every
item that makes the same edit shares one materialized copy.
"""
