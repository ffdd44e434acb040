"""The ``missing-column`` category: what it means, its examples, and how it is drafted offline,
checked, twinned and shown in a prompt."""

from __future__ import annotations

import random
import re

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.drafting import lexicon, offline
from answerable.builders.drafting.category import Category
from answerable.builders.drafting.checks import Failure, near_synonym
from answerable.builders.drafting.context import DatabaseContext, is_numeric
from answerable.builders.drafting.drafts import Draft, Job
from answerable.builders.drafting.offline import (
    AGGREGATE_WORDS,
    COLUMN_SUBTYPES,
    absent_columns,
    agreeing,
    appended_question,
    asked_table,
    beside_a_value,
    listed_entity,
    named_values,
    names_another_entity,
    offline_draft,
    parent_table,
    returned_table,
    swapped_phrase,
    yes_or_no,
)
from answerable.builders.drafting.text import capitalize, find_phrase, humanize, words
from answerable.builders.drafting.twins import (
    Twin,
    as_sql,
    column_of,
    own_table,
    shared_parent_select,
)
from answerable.builders.lexical.inflection import with_article
from answerable.builders.schema import Column, DatabaseSchema, Table


def ask_missing_column(job: Job, context: DatabaseContext, rng: random.Random) -> Draft | None:
    """missing-column: the parent's question with the column it asks about swapped for
    one the parent's main table lacks, every other word the parent's (a minimal pair).

    The kind rotates with the job's sample, from a start the parent's id picks, so a
    parent drafted three times gets one of each; a kind with nothing to offer (no
    unlinked table, no other database) falls back to ``related``. The swapped phrase is
    the longest name of a column the parent reads that its question says, else the
    phrase its question uses, as an attribute, for a column its SQL returns ("the dose
    of glucagon": :func:`asked_column_phrase`; an aggregated one takes a numeric
    attribute); the surface and unrelated names are spoken words
    (:func:`readable_names`). A question that names none of its columns asks for
    the attribute beside what it asks (", with their eye colour?"). A template ("What is
    the ... of each ...?") would be a second register whose words alone tell the label.
    """
    table = parent_table(job, context)
    if table is None:
        return None
    question = job.parent["question"]
    said, aggregated = None, False
    if (found := swapped_phrase(job, context, table)) is not None:
        said, table, _column, aggregated = found  # "the dose of X" -> "the pharmacy of X"
    if said is not None and beside_a_value(said, named_values(job, context), question):
        return None  # "via the neb route", "that drug's average dose": a value's noun
    if said is None:  # the attribute asked beside what the parent asks, of what it asks
        listed = listed_entity(job, context)  # "what are the states that ...": a state's
        if (
            yes_or_no(question)
            or find_phrase(question, "with their")  # "..., with their type, with their ..."
            or (listed is None and names_another_entity(job, context, table))
        ):
            return None  # a yes/no has no "their"; nor another entity's rows
        table = listed or returned_table(job, context) or asked_table(job, context) or table
        asking = appended_question(job, context, table)
        if asking is None:
            return None
        question = question.rstrip().rstrip("?.!") + asking
        said = (len(question), len(question))
    else:
        asking = ""
    start, end = said
    aggregated = aggregated or figures_slot(question, (start, end))
    subtype = COLUMN_SUBTYPES[(int(job.parent["id"][:8], 16) + job.sample) % 3]
    pool = _fitting(absent_columns(subtype, table, context), aggregated)
    if not pool:
        subtype, pool = "related", _fitting(absent_columns("related", table, context), aggregated)
    if not pool:
        return None
    attribute = rng.choice(pool)
    if asking:  # "..., and what were its red cards?"
        question = question[:start].removesuffix(asking) + agreeing(asking, attribute)
        start = end = len(question)
    text = with_article(question[:start], attribute) + attribute + (question[end:] or "?")
    column = "_".join(words(attribute))
    return offline_draft(
        job,
        capitalize(text) if start == 0 else text,
        column,
        "absent_attribute",
        derived=False,
        subtype=subtype,
        table=table.name,
        concept=f"{table.name}.{column}",
    )


COMPARED_BEFORE = (
    r"\b(smallest|largest|biggest|greatest|highest|lowest|longest|shortest|most|least|fewest"
    r"|more|less|fewer|larger|smaller|bigger|higher|lower|longer|shorter|greater)\W+(\w+\W+)?$"
)
"""Words just before a column's name that rank or compare it by size ("the smallest
population")."""
COMPARED_AFTER = (
    r"^\W*(above|below|over|under|exceeding|between|than|greater|less|more|fewer|higher"
    r"|lower|at least|at most)\b"
)
"""Words just after a column's name that compare it with a figure ("capacity above 40817")."""


def figures_slot(question: str, span: tuple[int, int]) -> bool:
    """Whether the phrase at ``span`` stands where only a figure makes sense: after an
    aggregate's word ("the average age"), ranked by size ("the smallest population") or
    compared with a figure ("a capacity above 40817"); a text attribute there ("the
    smallest official language", "a pitch surface above 40817") means nothing."""
    start, end = span
    before = question[:start]
    return bool(
        re.search(AGGREGATE_WORDS, before, flags=re.IGNORECASE)
        or re.search(COMPARED_BEFORE, before, flags=re.IGNORECASE)
        or re.search(COMPARED_AFTER, question[end:], flags=re.IGNORECASE)
    )


def _fitting(pool: list[str], aggregated: bool) -> list[str]:
    """The attributes of ``pool`` that fit where the column was: a figure when it was
    aggregated (an average blood type means nothing)."""
    return [a for a in pool if a in lexicon.NUMERIC_ATTRIBUTES] if aggregated else pool


def check_missing_column(draft: Draft, context: DatabaseContext) -> Failure | None:
    column = "_".join(words(draft.trigger))
    schema = context.schema
    if draft.subtype == "surface":  # the name is another table's: only the asked one counts
        asked = schema.table(draft.details.get("table") or "")
        schema = DatabaseSchema(schema.db_id, [asked] if asked is not None else [])
    for table in schema.tables:
        if table.column(column) is not None:
            return "column-in-schema", f"'{draft.trigger}' is the column {table.name}.{column}"
    near = near_synonym(draft.trigger, schema)
    if near is not None:
        return "column-near-synonym", f"'{draft.trigger}' is a near-synonym of {near}"
    return None


def present_column(job, context, rng, database) -> Twin | None:
    """missing-column: the column the question says swapped for another of its table
    (in the question and the SQL), or, asked as the drafts ask it
    (:func:`offline.appended_question`), ", with their <column>?" beside listed rows or
    ", and what was its <column>?" after one row, with the column selected, after a
    question that ends in "?" or in nothing (GeoQuery's "what rivers are in texas")."""
    table = offline.parent_table(job, context)
    select = shared_parent_select(job)  # copied before it is changed
    if table is None or select is None:
        return None
    question = job.parent["question"]
    said, old = None, None
    if (found := offline.swapped_phrase(job, context, table)) is not None:
        said, table, old, _aggregated = found  # "the dose of X" -> "the route of X"
    read = offline.read_columns(job, table)
    if said is not None:
        if offline.beside_a_value(said, offline.named_values(job, context), question):
            return None  # as the drafter: "that drug's average dose" names a kind
        if old is None or not _selected(select, old):
            return None  # a column the question compares ("play at home") is no attribute
        numeric = is_numeric(old.type)
        pool = [c for c in _other_columns(table, read) if is_numeric(c.type) == numeric]
        if not pool:
            return None
        new = rng.choice(pool)
        select = select.copy()
        if not _swap(select, table, old, new):
            return None
        named = humanize(new.name)
        text = with_article(question[: said[0]], named) + named + question[said[1] :]
        sql = as_sql(select, job, copy=False)
        return Twin(job, text, sql, "present_column", named)
    if sqlkit.folds_rows(select) or select.args.get("distinct"):
        return None  # a column beside a count or a set of distinct rows changes the rows
    if offline.listed_entity(job, context) is not None:
        return None  # "what are the states that ...": the rows are another table's
    asking = offline.appended_question(job, context, table)  # as the drafts ask it
    pool = _other_columns(table, read)
    if asking is None or not pool or question.rstrip()[-1:] in (".", "!"):
        return None  # a request ("List ...") takes no ", with their ...?"; a bare question does
    new = rng.choice(pool)
    target = column_of(select, table, new)
    if target is None:
        return None
    asked = offline.agreeing(asking, humanize(new.name))
    text = f"{question.rstrip().rstrip('?.! ')}{asked}{humanize(new.name)}?"
    device = " ".join(asking.strip(", ").split()[:2])  # "with their", "and what"
    sql = as_sql(select.select(target), job, copy=False)  # select() copies the tree
    return Twin(job, text, sql, "present_column", device)


def _other_columns(table: Table, read: list[str]) -> list[Column]:
    """Columns of ``table`` a question may name that the parent does not read, by a
    name of spoken words as the drafts' are (:func:`offline.readable_names`: no
    "valueuom", "totalamountuom") and no key, glued or not (:func:`offline.key_like`:
    no "itemid")."""
    said = set(read)
    return [
        c
        for c in table.columns
        if not offline.key_like(c.name)
        and humanize(c.name) not in said
        and offline.readable_names(offline.describable_names([c.name]))
    ]


def _selected(select: exp.Select, column: Column) -> bool:
    """Whether the outer SELECT returns ``column`` (bare or inside an aggregate)."""
    return any(
        found.name.lower() == column.name.lower()
        for e in select.expressions
        for found in e.find_all(exp.Column)
    )


def _swap(select: exp.Select, table: Table, old: Column, new: Column) -> bool:
    """Rename every reference of the outer SELECT to ``old`` of ``table`` to ``new``;
    whether there was one."""
    found = own_table(select, table)
    if found is None:
        return False
    owner = found.alias_or_name.lower()
    swapped = False
    for column in list(select.find_all(exp.Column)):
        mine = column.table.lower() in ("", owner)
        if mine and column.name.lower() == old.name.lower():
            column.set("this", exp.to_identifier(new.name, quoted=True))
            swapped = True
    return swapped


def _missing_column(table, _text, _number, invented):
    return (
        {
            "question": f"What is the {invented} of each of the {table}?",
            "trigger": invented,
            "rationale": f"No column of the schema holds a {invented}.",
        },
        {
            "question": f"Which {table} have a {invented} on record?",
            "trigger": invented,
            "rationale": f"The {table} table stores no {invented}.",
        },
    )


CATEGORY = Category(
    name="missing-column",
    label="unanswerable",
    definition=(
        "A question about an attribute that sounds plausible for the database but is stored "
        "in no column (nor derivable from one), so no SQL query can answer it."
    ),
    trigger="the missing attribute as a snake_case column name (e.g. 'page_count')",
    explanation=(
        "The database has no column for '{trigger}', so the question cannot be answered from it."
    ),
    uses_parent=False,
    examples=(
        {
            "question": "What is the average page count of the books?",
            "trigger": "page_count",
            "rationale": "The books table stores no page count.",
        },
        {
            "question": "Which customers have a loyalty card?",
            "trigger": "loyalty_card",
            "rationale": "Nothing records loyalty cards.",
        },
    ),
    span_tag="UNK",
    offline_rule=ask_missing_column,
    check=check_missing_column,
    twin=present_column,
    example_writer=_missing_column,
)
