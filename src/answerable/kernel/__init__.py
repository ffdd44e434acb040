"""The kernel every stage imports: ids, errors, records, the recipe, the item model
and the safe handling of untrusted text. It imports no stage."""
