"""The ``small-talk`` category: what it means, its examples, and how it is drafted offline,
checked, twinned and shown in a prompt."""

from __future__ import annotations

import random

from answerable.builders.counterfactual.values import english_faker
from answerable.builders.drafting import lexicon
from answerable.builders.drafting.category import Category
from answerable.builders.drafting.checks import check_out_of_domain
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft, Job
from answerable.builders.drafting.offline import template_draft
from answerable.builders.drafting.text import capitalize
from answerable.builders.drafting.twins import Twin


def small_talk(job: Job, context: DatabaseContext, rng: random.Random) -> Draft | None:
    """small-talk: conversation with the assistant from a template, its blanks filled by
    a seeded Faker."""
    return template_draft(job, rng, lexicon.SMALL_TALK, "small_talk")


def courtesy_question(job, context, rng, database) -> Twin | None:
    """small-talk: the parent's question with a greeting before it or thanks after it, in
    the small-talk templates' own words (:data:`lexicon.COURTESIES`: "Good morning! Which
    rivers run through texas?"); the gold SQL is the parent's. Small talk names nothing
    in the schema and asks for no data; this asks for the parent's data, so it is
    answerable, and a greeting alone no longer tells the label."""
    question = job.parent.get("question", "").strip()
    if not question or not job.parent.get("sql"):
        return None
    if question[-1] not in "?.!":
        question += "?"
    fake = english_faker()
    fake.seed_instance(rng.getrandbits(64))
    pattern = rng.choice(lexicon.COURTESIES)
    text = pattern.format(first_name=fake.first_name(), question=capitalize(question))
    courtesy = pattern.replace("{question}", "").strip()
    return Twin(job, text, job.parent["sql"], "courtesy_question", courtesy)


CATEGORY = Category(
    name="small-talk",
    label="unanswerable",
    definition=(
        "Casual conversation addressed to the assistant (a greeting, a question about its "
        "day or the weather), not a request for data; it names nothing in the schema."
    ),
    trigger="the topic of the small talk in one or two words",
    explanation="This is small talk, not a question about the data; say so and offer help "
    "with the database.",
    uses_parent=False,
    examples=(
        {
            "question": "Good morning! How was your weekend?",
            "trigger": "greeting",
            "rationale": "Chat with the assistant; no data is asked for.",
        },
        {
            "question": "Did you have a coffee before work today?",
            "trigger": "coffee",
            "rationale": "A personal question to the assistant.",
        },
    ),
    topics=(
        "the weather",
        "a greeting",
        "cooking",
        "travel plans",
        "a film",
        "music",
        "a joke",
        "history trivia",
        "the user's weekend",
        "a sports result from the news",
    ),
    topic_focus="small talk about {topic}",
    offline_rule=small_talk,
    check=check_out_of_domain,
    twin=courtesy_question,
)
