"""What a drafted category holds: the text a prompt and an item need."""

from __future__ import annotations

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
    span_tag: str | None = None  # the DTE tag of the trigger's span (AMB, UNK), if tagged
    topics: tuple[str, ...] = ()  # topics that steer drafts for different parents apart
    topic_focus: str = "{topic}"  # a job's focus: one of the topics in this frame
