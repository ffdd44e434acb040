"""Why a template or one of its expansions is rejected."""

from __future__ import annotations

from answerable.kernel.errors import AnswerableError


class TemplateError(AnswerableError):
    """A template, or one expansion of it, cannot make a verified pair.

    ``reason`` is a short stable code for the rejects report (``unknown-placeholder``,
    ``unrepresentable-value``, ``binding-failed`` ...); the message is for people.
    """

    def __init__(self, reason: str, message: str):
        self.reason, self.detail = reason, message
        super().__init__(f"{reason}: {message}")
