"""The cross-check step: every gold query run again on the other engines the recipe's
``execution.cross_check`` names (the check: :mod:`answerable.builders.engines.crosscheck`).
"""
