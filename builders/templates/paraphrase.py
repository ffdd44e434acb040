"""The paraphrase hook: how the question text of one expansion is chosen.

A :class:`Paraphraser` gets the template's first question text (with its ``{name}``
placeholders), the template and a random generator private to the expansion, and
returns a question text with the same placeholders; values are filled in afterwards,
so a paraphraser never touches them. The offline one picks one of the template's own
texts; :class:`ListParaphraser` picks among them and rewrites a model wrote
(``builders/drafting/templated.py``, with ``templates.paraphrases`` and an endpoint).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from answerable.builders.templates.model import Template


class Paraphraser(Protocol):
    """Rewrites a templated question; ``name`` goes into each item's provenance."""

    name: str

    def paraphrase(self, question: str, template: Template, rng: random.Random) -> str:
        """A question text with the same ``{name}`` placeholders as ``question``."""
        ...


@dataclass(frozen=True)
class OfflineParaphraser:
    """Chooses one of the template's own question texts, seeded per expansion.

    >>> t = Template({"id": "t", "db_id": "d", "questions": ["a {x}", "b {x}"], "sql": "SELECT :x"})
    >>> OfflineParaphraser().paraphrase("a {x}", t, random.Random(3)) in t.questions
    True
    """

    name: str = "offline_v1"

    def paraphrase(self, question: str, template: Template, rng: random.Random) -> str:
        return rng.choice(template.questions)


OFFLINE = OfflineParaphraser()


@dataclass(frozen=True)
class ListParaphraser:
    """Chooses among the template's texts and extra ``rewrites`` per template id (a
    model's), seeded per expansion."""

    rewrites: tuple[tuple[str, tuple[str, ...]], ...]  # (template id, texts), sorted
    name: str = "llm_paraphraser_v1"

    def paraphrase(self, question: str, template: Template, rng: random.Random) -> str:
        extra = dict(self.rewrites).get(template.id, ())
        return rng.choice([*template.questions, *extra])
