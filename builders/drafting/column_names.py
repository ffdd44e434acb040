"""Column names a model proposes for a question's word (AmbiQT built its two-column
synonyms this way), for the counterfactual edit ``add_near_synonyms_v1``.

One prompt per grounded column (``table.column`` and the word a question uses for it)
asks for new column names a person could mean by that word. Replies go through the
drafting client (:mod:`.llm`, :mod:`.client`): cached one by one in the same reply cache
as drafts, counted in the same usage report, and a reply that is not the JSON asked for
goes back to the model with the error. The model only proposes: the plausibility gate
(:mod:`answerable.builders.counterfactual.gate`) decides, exactly as for the curated
contrasts, so a proposed pair becomes an item only when each name is a reading of the
word and the two are a contrast neither of which is the default.

Optionally (``answerable[embeddings]``) the names are ranked by how close a sentence
embedding of each is to the question (:func:`rank_by_embedding`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from answerable.builders.drafting import embeddings
from answerable.builders.drafting.replies import NAMES_REPLY
from answerable.builders.drafting.settings import LLMSettings, Usage

MAX_NAMES = 6
_IDENTIFIER = re.compile(NAMES_REPLY["properties"]["names"]["items"]["pattern"])
SYSTEM = (
    "You help build a text-to-SQL benchmark of ambiguous questions. Given a database "
    "column and the word a question uses for it, propose new column names for the same "
    "table, each a different thing a person could mean by that word (two readings such "
    'as admission_location and discharge_location for "location" of a hospital stay). '
    "Spell them as the table's other columns are spelled. Do not propose the column "
    'itself, a plain synonym of it, or a name the table has. Reply with JSON: {"names": '
    '["...", "..."]}.'
)


@dataclass(frozen=True, order=True)
class NameJob:
    """One column to propose names for: where it is, and the word and question that
    mention it (the first parent, by id, that does)."""

    db_id: str
    table: str
    column: str
    mention: str
    question: str
    columns: tuple[str, ...] = ()  # the table's columns, for the model to see the style


def name_messages(job: NameJob) -> list[dict]:
    """The chat messages of one job."""
    user = (
        f"Table: {job.table}\n"
        f"Its columns: {', '.join(job.columns)}\n"
        f"Column to replace: {job.column}\n"
        f"Word in the question: {job.mention}\n"
        f"Asked: {job.question}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def propose_names(
    jobs: list[NameJob], settings: LLMSettings, cache, usage: Usage, seed: int = 0
) -> dict[NameJob, tuple[str, ...]]:
    """The names the model proposes per job (a job without a usable reply gets none)."""
    from answerable.builders.drafting.llm import Prompt, ask_all  # imports openai

    prompts = [Prompt(name_messages(job), 0, NAMES_REPLY, seed) for job in jobs]
    found = {}
    for job, answer in zip(jobs, ask_all(prompts, settings, cache, usage), strict=True):
        if answer.reply is not None:
            found[job] = clean_names(answer.reply["names"], job)
    return found


def clean_names(names: list[str], job: NameJob) -> tuple[str, ...]:
    """Identifiers only, each once (case-blind), none the column itself or one the table
    has, in the model's order, at most :data:`MAX_NAMES`."""
    taken = {c.lower() for c in job.columns} | {job.column.lower()}
    kept: list[str] = []
    for name in names:
        if _IDENTIFIER.match(name) and name.lower() not in taken:
            taken.add(name.lower())
            kept.append(name)
    return tuple(kept[:MAX_NAMES])


# ---- optional: ranking by sentence embeddings ------------------------------------------

EMBEDDINGS_MISSING = embeddings.MISSING


def embeddings_available() -> bool:
    """Whether the optional embedding model can be loaded (without loading it)."""
    return embeddings.available()


def rank_by_embedding(question: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` ordered by the cosine similarity of each (as words) to the question,
    closest first; ties keep the given order. Needs ``answerable[embeddings]``."""
    from answerable.builders.drafting.text import humanize

    vectors = embeddings.model().encode([question, *(humanize(n) for n in names)])
    scores = [float(vectors[0] @ v) for v in vectors[1:]]
    order = sorted(range(len(names)), key=lambda k: (-round(scores[k], 6), k))
    return tuple(names[k] for k in order)
