"""The ``out-of-scope`` category: what it means, its examples, and how it is drafted offline,
checked, twinned and shown in a prompt."""

from __future__ import annotations

import random

from sqlglot import exp

from answerable.builders.drafting import lexicon, offline
from answerable.builders.drafting.category import Category
from answerable.builders.drafting.checks import Failure, grouped_by, out_of_scope_tasks
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft, Job
from answerable.builders.drafting.offline import (
    distinct_figures,
    has_a_cause,
    holds_a_figure,
    numeric_result,
    offline_draft,
    one_result,
    parent_table,
    shared_parent_tree,
    yes_or_no,
)
from answerable.builders.drafting.twins import (
    Twin,
    added_task,
    shared_parent_select,
    whole_result,
)

NEEDS = {
    "prediction": numeric_result,  # a name, a list of names or a yes/no has no trend
    "chart": holds_a_figure,  # a list of names has nothing to draw
    "explanation": has_a_cause,  # one name, date or place has no reasons to give
}
"""What a task asks of the parent's answer, for the tasks that ask something: a test of
the job and its database's context."""


def rewrite_out_of_scope(job: Job, context: DatabaseContext, rng: random.Random) -> Draft | None:
    """out-of-scope: the parent's question, every word kept, with a request SQL cannot
    serve after it (a forecast, a chart, a clustering, an explanation): a minimal pair
    whose only new words are the task's."""
    if parent_table(job, context) is None:
        return None
    tasks = sorted(lexicon.OUT_OF_SCOPE_TASKS)
    tree = shared_parent_tree(job)
    one = isinstance(tree, exp.Select) and distinct_figures(tree, context)
    if one or one_result(job) or yes_or_no(job.parent["question"]):
        tasks = [t for t in tasks if t not in lexicon.MANY_ROW_TASKS]  # nothing to plot
    tasks = [t for t in tasks if t not in NEEDS or NEEDS[t](job, context)]
    if not tasks:
        return None
    task = rng.choice(tasks)
    request = rng.choice(lexicon.OUT_OF_SCOPE_TASKS[task])
    question = f"{job.parent['question'].rstrip()} {request}"
    return offline_draft(job, question, request, f"out_of_scope_{task}", task=task)


def check_out_of_scope(draft: Draft, context: DatabaseContext) -> Failure | None:
    tasks = out_of_scope_tasks(draft.question)
    if not tasks:
        return "not-out-of-scope", "asks for no prediction, chart, clustering or explanation"
    column = grouped_by(draft.question, context.schema) if tasks == ["clustering"] else None
    if column is not None:
        return "groupable", f"grouping by {column} is a GROUP BY, not a clustering"
    return None


def sql_task(job, context, rng, database) -> Twin | None:
    """out-of-scope: the parent's question and a request SQL does serve, added to its
    tree (:func:`added_task`); or, a seeded half of the time, a request in the
    out-of-scope requests' own frames that any query serves (:func:`whole_result`)."""
    table = offline.parent_table(job, context)
    select = shared_parent_select(job)  # each device copies it before it changes it
    if table is None or select is None:
        return None
    if rng.random() < 0.5:
        return whole_result(job, select, rng)
    return added_task(job, table, select, rng)


def _out_of_scope(table, text, number, _invented):
    column, _value = text
    amount, _ = number
    return (
        {
            "parent": f"How many {table} are there per {column}?",
            "question": f"Plot the number of {table} per {column}.",
            "trigger": "Plot",
            "rationale": "A chart, not a query result.",
        },
        {
            "parent": f"What is the average {amount} of the {table}?",
            "question": f"Predict the average {amount} of the {table} next year.",
            "trigger": "Predict",
            "rationale": "A forecast: no rows hold the future.",
        },
    )


CATEGORY = Category(
    name="out-of-scope",
    label="unanswerable",
    definition=(
        "The answerable question turned into a request about the same data that SQL cannot "
        "serve: a prediction, a chart, a clustering or an explanation of causes."
    ),
    trigger="the word that asks for the task (predict, plot, cluster, explain ...)",
    explanation="The request ('{trigger}') is not something a SQL query can do.",
    uses_parent=True,
    examples=(
        {
            "parent": "How many books were sold each month in 2023?",
            "question": "Plot the number of books sold each month in 2023.",
            "trigger": "Plot",
            "rationale": "A chart, not a query result.",
        },
        {
            "parent": "Which authors have the most sales?",
            "question": "Predict which authors will have the most sales next year.",
            "trigger": "Predict",
            "rationale": "A forecast of data that does not exist yet.",
        },
    ),
    span_tag="UNK",  # DTE tags the request no query serves ("Bar chart")
    offline_rule=rewrite_out_of_scope,
    check=check_out_of_scope,
    twin=sql_task,
    example_writer=_out_of_scope,
)
