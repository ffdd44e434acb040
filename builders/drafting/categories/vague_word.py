"""The ``vague-word`` category: what it means, its examples, and how it is drafted offline,
checked, twinned and shown in a prompt."""

from __future__ import annotations

import random
import re

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.drafting import lexicon, offline, settled_by_question
from answerable.builders.drafting.category import Category
from answerable.builders.drafting.checks import Failure, check_trigger_in_question
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft, Job
from answerable.builders.drafting.offline import (
    asks_bare,
    described_phrases,
    names_its_rows,
    noun_group_start,
    offline_draft,
    parent_table,
    ranks_nothing,
    vague_kind,
)
from answerable.builders.drafting.text import find_phrase, humanize
from answerable.builders.drafting.twins import (
    VAGUE_BOUNDS,
    Twin,
    as_sql,
    column_bounds,
    column_of,
    literal,
    shared_parent_select,
    spoken,
)
from answerable.builders.lexical.inflection import singular
from answerable.kernel.errors import SQLError


def insert_vague_word(job: Job, context: DatabaseContext, rng: random.Random) -> Draft | None:
    """vague-word: a vague adjective put before the noun it describes, or no draft.

    The noun comes from what the word leaves open (:func:`vague_kind`), not from where
    a word could go: a person word (``young``) qualifies the noun of a table of people,
    an event word (``recent``) the noun of a table whose rows happen at the time its
    column records (not a stadium's opening year), an amount word (``high``) the noun of
    the measured column (``attendance``), never a label followed by a number (``minute
    12``). The word goes before that noun's group in the question (:func:`noun_group_start`,
    after articles and numbers); when the question does not say the noun, there is no
    draft (an appended ", only the recent ones?" names nothing a reader can point to).
    """
    table = parent_table(job, context)
    if table is None:
        return None
    kind, concept = vague_kind(table)
    if kind == "amount" and concept and asks_bare(job, concept.split(".", 1)[1]):
        return None  # "the high population of austin": the one figure asked is no set
    question = job.parent["question"]
    names = [humanize(c.name) for c in table.columns if " " in humanize(c.name)]
    at = noun_group_start(question, described_phrases(kind, table, concept), inside=names)
    words = lexicon.VAGUE_BY_KIND[kind]
    if at is None and kind == "amount" and ranks_nothing(job):
        # "what large cities are in texas": how large is not said, and no ranking settles it
        at = noun_group_start(question, described_phrases("other", table, None), inside=names)
        if at is not None and names_its_rows(job, context, at):
            at = None  # "the large mississippi river": a named row is as large as it is
        words = lexicon.SIZE_WORDS
    if at is None or describes_one_row(job, question, at, described_phrases(kind, table, concept)):
        return None
    word = rng.choice(words)
    question = question[:at] + word + " " + question[at:]
    return offline_draft(job, question, word, "insert_vague_word", concept=concept)


def describes_one_row(job: Job, question: str, at: int, phrases: list[str]) -> bool:
    """Whether a vague word at ``at`` would stand in "the <word> <singular noun>" of the
    one row the parent's conditions alone pick: "Who was the elderly coach of Lisatown
    Olympic on 2022-07-08?" asks for the one coach then, whom the word describes without
    restricting anything, so there is no threshold to ask about. A row picked among
    others by a ranking, a superlative or an aggregate is picked from a set the word
    does restrict ("the early match with the highest attendance")."""
    end = _noun_end(question, phrases, at)
    before = re.findall(r"[a-z']+", question[:at].lower())[-1:]
    if end is None or before != ["the"]:
        return False
    head = question[at:end].split()[-1].lower()
    if head != singular(head):
        return False  # "the young players": rows
    tree = offline.shared_parent_tree(job)  # read only
    if not isinstance(tree, exp.Select) or sqlkit.folds_rows(tree):
        return False
    picked = tree.args.get("order") or tree.args.get("limit")
    return not picked and not any(s is not tree for s in tree.find_all(exp.Select))


def check_vague_word(draft: Draft, context: DatabaseContext) -> Failure | None:
    """The trigger is in the question, and the question does not already fix what the
    vague word leaves open (:func:`settled_by_question.vague_word_settled`)."""
    missing = check_trigger_in_question(draft, context)
    if missing is not None:
        return missing
    fixed = settled_by_question.vague_word_settled(draft.question, draft.trigger)
    if fixed is not None:
        return "vague-word-settled", f"'{draft.trigger}' is settled by '{fixed}'"
    return None


def settled_vague_word(job, context, rng, database) -> Twin | None:
    """vague-word: the vague word, after it the bound that settles it (see the module)."""
    table = offline.parent_table(job, context)
    select = shared_parent_select(job)
    if table is None or select is None or database is None:
        return None
    kind, concept = offline.vague_kind(table)
    if kind == "amount" and offline.asks_bare(job, concept.split(".", 1)[1]):
        return None  # as the drafter: no vague word before the one figure asked
    phrases = offline.described_phrases(kind, table, concept)
    question = job.parent["question"]
    names = [humanize(c.name) for c in table.columns if " " in humanize(c.name)]
    at = offline.noun_group_start(question, phrases, inside=names)
    if at is None or kind == "other" or describes_one_row(job, question, at, phrases):
        return None  # as the drafter
    column = table.column(concept.split(".", 1)[1])
    target = column_of(select, table, column)
    bounds = column_bounds(database, table, column)
    noun_end = _noun_end(question, phrases, at)
    if target is None or bounds is None or noun_end is None:
        return None
    words = lexicon.VAGUE_BY_KIND[kind]
    first = rng.choice(words)
    for word in [first, *(w for w in words if w != first)]:  # the kind's others next
        twin = _settled_with(word, job, (at, noun_end), select, target, bounds, database)
        if twin is not None:
            return twin
    return None


def _settled_with(word, job, noun, select, target, bounds, database) -> Twin | None:
    """The twin with ``word`` before the noun at ``noun`` (its start and end) and the
    bound that settles it, or None when the question does not settle it or the bound
    and the parent's own conditions meet no row ("early matches" of a later season)."""
    question, (at, noun_end) = job.parent["question"], noun
    column = target.name
    low, middle, high = bounds
    phrase, test = VAGUE_BOUNDS[word]
    if test is exp.Between:
        lo, hi = (low, middle) if word == "early" else (middle, high)
        condition = exp.Between(this=target.copy(), low=literal(lo), high=literal(hi))
    else:
        lo = hi = None
        condition = test(this=target.copy(), expression=literal(middle))
    said = phrase.format(column=humanize(column), v=spoken(middle), lo=spoken(lo), hi=spoken(hi))
    text = f"{question[:at]}{word} {question[at:noun_end]} ({said}){question[noun_end:]}"
    if settled_by_question.vague_word_settled(text, word) is None:
        return None
    bounded = select.where(condition)  # where() copies the tree
    sql = as_sql(bounded, job, copy=False)
    if _nothing_counted(database, sql, sqlkit.has_order_by(bounded)):
        return None  # the bound and the parent's own conditions meet no row
    return Twin(job, text, sql, "settled_vague_word", word)


def _nothing_counted(database, sql: str, ordered: bool) -> bool:
    """Whether ``sql`` (which orders its rows when ``ordered``) returns one row of zeros
    and NULLs only (a count or an average of no rows: "early matches (... 2021-08-13 and
    2022-01-30) ... in the 2022-23 season" asks about none), or fails."""
    try:
        rows = database.execute(sql, ordered=ordered, row_cap=2).rows
    except SQLError:
        return True
    return len(rows) == 1 and all(value in (0, None) for value in rows[0])


def _noun_end(question: str, phrases: list[str], start: int) -> int | None:
    """Where the noun a vague word qualifies ends (the first of ``phrases`` after
    ``start``)."""
    ends = [found[1] for p in phrases if (found := find_phrase(question[start:], p))]
    return start + min(ends) if ends else None


def _vague_word(table, _text, number, _invented):
    column, value = number
    return (
        {
            "parent": f"Which {table} have a {column} above {value}?",
            "question": f"Which {table} have a high {column}?",
            "trigger": "high",
            "rationale": f"'high' replaces the threshold {value}.",
        },
        {
            "parent": f"Which {table} have a {column} of at least {value}?",
            "question": f"Which {table} have a large {column}?",
            "trigger": "large",
            "rationale": "'large' has no threshold.",
        },
    )


CATEGORY = Category(
    name="vague-word",
    label="ambiguous",
    definition=(
        "The answerable question with one vague word added or substituted (recent, large, "
        "popular, high, young ...) that has no agreed threshold in the database, so several "
        "SQL queries fit."
    ),
    trigger="the vague word, exactly as it appears in the question",
    explanation=(
        "'{trigger}' has no fixed meaning in this database; ask which values should count "
        "as {trigger}."
    ),
    uses_parent=True,
    examples=(
        {
            "parent": "Which books were published after 2020?",
            "question": "Which recent books were published?",
            "trigger": "recent",
            "rationale": "'recent' replaces the explicit year.",
        },
        {
            "parent": "List the customers who placed more than 10 orders.",
            "question": "List the customers who placed many orders.",
            "trigger": "many",
            "rationale": "'many' has no threshold.",
        },
    ),
    span_tag="AMB",
    offline_rule=insert_vague_word,
    check=check_vague_word,
    twin=settled_vague_word,
    example_writer=_vague_word,
)
