"""The ``ambiguous-reference`` category: what it means, its examples, and how it is drafted offline,
checked, twinned and shown in a prompt."""

from __future__ import annotations

import random

from answerable.builders.drafting import settled_by_question
from answerable.builders.drafting.category import Category
from answerable.builders.drafting.checks import Failure, check_ambiguous_reference
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft, Job
from answerable.builders.drafting.offline import (
    appendable,
    named_values,
    offline_draft,
    parent_table,
    pattern_parts,
    reference_noun,
    related_table,
    replaceable,
    table_noun,
    widen,
)
from answerable.builders.drafting.twins import Twin, appended_reference, resolved_reference


def replace_with_reference(job: Job, context: DatabaseContext, rng: random.Random) -> Draft | None:
    """ambiguous-reference: a named value becomes "that <thing>"; else "... for that <x>?"."""
    question = job.parent["question"]
    values = named_values(job, context)
    rng.shuffle(values)
    patterns = pattern_parts(job.parent["sql"], context)
    for value, column, (start, end) in values:
        noun = reference_noun(column, context)
        if noun is None or (value, column) in patterns:
            continue  # "a name ending in United" -> "ending in that team" means nothing
        if replaceable(question, start, end, noun):
            start, end = widen(question, start, end, noun)
            phrase = f"that {noun}"
            text = question[:start] + phrase + question[end:]
            return offline_draft(job, text, phrase, "replace_value", concept=column, word="that")
    table = parent_table(job, context)
    if table is None or not question.rstrip().endswith("?"):
        return None  # "... with its dose for that admission?" asks nothing
    other = related_table(table, context) or table
    noun = table_noun(other, plural=False)
    if not appendable(job, context, other, noun):
        return None
    phrase = f"that {noun}"
    text = f"{question.rstrip('?.! ')} for {phrase}?"
    return offline_draft(job, text, phrase, "append_reference", concept=other.name, word="that")


def check_reference_not_determined(draft: Draft, context: DatabaseContext) -> Failure | None:
    """The ambiguous-reference checks, then: the parent does not determine the referent
    in a way the draft still shows (:func:`settled_by_question.reference_determined`)."""
    failure = check_ambiguous_reference(draft, context)
    if failure is not None:
        return failure
    value = settled_by_question.reference_determined(
        draft.question,
        draft.trigger,
        draft.job.parent,
        context.schema,
        draft.details.get("concept"),
    )
    if value is not None:
        return (
            "reference-determined",
            f"'{draft.trigger}' is determined: the question names {value!r}",
        )
    return None


def reference_twin(job, context, rng, database) -> Twin | None:
    """ambiguous-reference: as the drafter does, a named value first
    (:func:`resolved_reference`), else the reference it appends, resolved
    (:func:`appended_reference`)."""
    made = resolved_reference(job, context, rng, database)
    return made if made is not None else appended_reference(job, context, rng, database)


def _ambiguous_reference(table, text, _number, _invented):
    column, value = text
    return (
        {
            "parent": f"How many {table} have the {column} {value!r}?",
            "question": f"How many {table} have that {column}?",
            "trigger": f"that {column}",
            "rationale": f"'that {column}' points back to a value the question does not give.",
        },
        {
            "parent": f"List the {table} whose {column} is {value!r}.",
            "question": f"List the {table} with the same {column} as before.",
            "trigger": "as before",
            "rationale": "Refers to an earlier question that is not there.",
        },
    )


CATEGORY = Category(
    name="ambiguous-reference",
    label="ambiguous",
    definition=(
        "The answerable question with an entity replaced by a reference (that, those, it, "
        "the previous one ...) to something the question never names, as if continuing an "
        "earlier conversation."
    ),
    trigger="the referring phrase, exactly as it appears in the question (e.g. 'that author')",
    explanation=(
        "'{trigger}' refers to something the question does not name; ask which one is meant."
    ),
    uses_parent=True,
    examples=(
        {
            "parent": "How many books did Ursula Le Guin write?",
            "question": "How many books did that author write?",
            "trigger": "that author",
            "rationale": "The author is no longer named.",
        },
        {
            "parent": "What is the price of the book 'Dune'?",
            "question": "What is its price?",
            "trigger": "its",
            "rationale": "'its' points at a book the question does not give.",
        },
    ),
    span_tag="AMB",
    offline_rule=replace_with_reference,
    check=check_reference_not_determined,
    twin=reference_twin,
    example_writer=_ambiguous_reference,
)
