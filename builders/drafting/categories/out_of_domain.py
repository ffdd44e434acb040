"""The ``out-of-domain`` category: what it means, its examples, and how it is drafted offline,
checked, twinned and shown in a prompt."""

from __future__ import annotations

import random
from bisect import bisect_left

from answerable.builders.drafting import lexicon
from answerable.builders.drafting.category import Category
from answerable.builders.drafting.checks import check_out_of_domain
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft, Job
from answerable.builders.drafting.offline import offline_draft, template_draft, unlinked_questions


def ask_out_of_domain(job: Job, context: DatabaseContext, rng: random.Random) -> Draft | None:
    """out-of-domain: a verified answerable question of another database of the build,
    asked of this one, when none of its words links to this database (see
    :func:`~.checks.schema_links`: no table, column or value of it): the same words are
    answerable there and out of domain here, so they cannot tell the label. The question
    is picked by the parent's id and the sample. A build with one database, or none of
    whose other questions is unlinked, gets a general-knowledge question from a template
    instead (the kind TrustSQL sampled from open-domain QA sets), its blanks filled by a
    seeded Faker."""
    borrowed = unlinked_questions(context)
    if not borrowed:
        return template_draft(job, rng, lexicon.OUT_OF_DOMAIN, "general_question")
    chosen = borrowed[_dealt(job, context) % len(borrowed)]
    return offline_draft(
        job,
        chosen.question,
        chosen.topic,
        "foreign_question",
        derived=False,
        source_item=chosen.item_id,
        source_db=chosen.db_id,
    )


def _dealt(job: Job, context: DatabaseContext) -> int:
    """The job's place in a deal of the foreign questions: its parent's rank among the
    database's drafted parents, then its sample, so that no two jobs share a question
    while there are enough (the parent's id itself when the parents are not known)."""
    parents = context.drafted_parents
    rank = bisect_left(parents, job.parent["id"])
    if rank == len(parents) or parents[rank] != job.parent["id"]:
        return int(job.parent["id"][:8], 16) + job.sample
    return rank + job.sample * len(parents)


CATEGORY = Category(
    name="out-of-domain",
    label="unanswerable",
    definition=(
        "A question on a topic the database has nothing to do with; it shares no table or "
        "column term with the schema."
    ),
    trigger="the topic of the question in one or two words",
    explanation="The question is not about this database; answer that it cannot help with it.",
    uses_parent=False,
    examples=(
        {
            "question": "Who won the chess world championship in 1972?",
            "trigger": "chess",
            "rationale": "Nothing in a bookshop database is about chess results.",
        },
        {
            "question": "How many moons does Jupiter have?",
            "trigger": "astronomy",
            "rationale": "A factual question on a subject the database does not cover.",
        },
    ),
    # facts no database of the build holds
    topics=(
        "astronomy",
        "world geography",
        "history",
        "chess",
        "chemistry",
        "literature",
        "music history",
        "animals",
        "inventions",
        "languages",
    ),
    topic_focus="a general-knowledge question about {topic}",
    offline_rule=ask_out_of_domain,
    check=check_out_of_domain,
)
