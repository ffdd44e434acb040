"""What a drafted category holds: the text a prompt and an item need, and the functions
that draft it offline, check its drafts, make its answerable twin and write its prompt's
examples (each category's module under :mod:`.categories` defines them, or imports a
helper several categories share, and names them on its ``CATEGORY``).

The class lives outside :mod:`.categories` so that the shared drafting modules can name
it without importing every category (each category's module imports them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Category:
    """One drafted category and what a prompt and an item need to know about it."""

    name: str
    label: str
    definition: str
    trigger: str  # what the reply's "trigger" holds
    explanation: str  # the message a reliable system should give; {trigger} is filled
    uses_parent: bool  # the draft rewrites an answerable question shown in the prompt
    examples: tuple[dict, ...]
    # (job, context, rng) -> Draft | None: the offline drafter's rule
    offline_rule: Callable
    # (draft, context) -> (reason, detail) | None: what a draft of this category must meet
    # beyond what every draft must (per_category.check_draft)
    check: Callable
    span_tag: str | None = None  # the DTE tag of the trigger's span (AMB, UNK), if tagged
    topics: tuple[str, ...] = ()  # topics that steer drafts for different parents apart
    topic_focus: str = "{topic}"  # a job's focus: one of the topics in this frame
    # (job, context, rng, database) -> Twin | None: the answerable twin of the device;
    # None for a category with no twin (out-of-domain, small talk)
    twin: Callable | None = None
    # (table words, (text column, value), (numeric column, value), invented attribute)
    # -> two examples written on the target database, for its prompt; None: the
    # category's own examples are shown
    example_writer: Callable | None = None
