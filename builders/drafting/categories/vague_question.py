"""The ``vague-question`` category: what it means, its examples, and how it is drafted offline,
checked, twinned and shown in a prompt."""

from __future__ import annotations

import random

from answerable.builders.drafting.category import Category
from answerable.builders.drafting.checks import (
    Failure,
    canonical,
    check_trigger_in_question,
    parent_specifics,
)
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import Draft, Job
from answerable.builders.drafting.offline import (
    named_values,
    offline_draft,
    parent_table,
    read_columns,
    table_noun,
)
from answerable.builders.drafting.text import capitalize, find_phrase, words
from answerable.builders.drafting.twins import (
    Twin,
    aggregate_question,
    attribute_question,
    short_question,
)


def cut_to_keyword(job: Job, context: DatabaseContext, rng: random.Random) -> Draft | None:
    """vague-question: the question reduced to one keyword: the attribute it asks (a
    column its SQL reads, "Population?": of what?), else a value it names ("Texas?"),
    else its table's noun. The attribute comes first because the answerable twins say
    it too, with the row it is asked of ("Texas population?")."""
    table = parent_table(job, context)
    values = named_values(job, context)
    columns = read_columns(job, table) if table is not None else []
    article = "the "  # "What about the population?", as the twins say "What about the ..."
    if columns:  # the one the question says, if it says one ("Category, please.")
        said = [c for c in columns if find_phrase(job.parent["question"], c)]
        keyword = (said or columns)[0]
    elif values:
        keyword, article = values[0][0], ""  # a name takes no article ("What about Texas?")
    elif table is not None:
        keyword = table_noun(table)
    else:
        return None
    pattern = rng.choice(("{K}?", "{K}, please.", "What about {a}{k}?"))
    question = pattern.format(K=capitalize(keyword), k=keyword, a=article)
    return offline_draft(job, question, keyword, "cut_to_keyword")


def check_vague_question(draft: Draft, context: DatabaseContext) -> Failure | None:
    """The trigger is in the question, and the question lacks what makes its parent
    answerable: of the parent's bound values, columns, tables and aggregates
    (:func:`parent_specifics`) it names one thing at most (a topic, not a request).
    Names said by the same words are one thing: ``Away score?`` names the column
    ``away_score`` once, not also ``home_score``'s ``score``."""
    missing = check_trigger_in_question(draft, context)
    if missing is not None:
        return missing
    said = [canonical(w) for w in words(draft.question)]
    groups: list[tuple[set[int], list[str]]] = []
    for name, cues in parent_specifics(draft.job.parent).items():
        places = _said_at(said, cues)
        if not places:
            continue
        joined = [g for g in groups if g[0] & places]
        groups = [g for g in groups if not g[0] & places]
        groups.append(
            (places.union(*(g[0] for g in joined)), [n for g in joined for n in g[1]] + [name])
        )
    if len(groups) >= 2:
        named = ", ".join(" / ".join(names) for _, names in groups)
        return "still-answerable", f"names {named} of its parent: says what to find"
    return None


def _said_at(said: list[str], cues: tuple[str, ...]) -> set[int]:
    """The places of the question's words that say one of ``cues`` (every word of it,
    canonical), or an empty set."""
    for cue in cues:
        wanted = {canonical(w) for w in words(cue)}
        places = {k for k, w in enumerate(said) if w in wanted}
        if wanted and wanted <= {said[k] for k in places}:
            return places
    return set()


def vague_question_twin(job, context, rng, database) -> Twin | None:
    """vague-question: a question as short as a vague one and in its frames that leaves
    nothing open: what the parent asks of the one row its named value picks
    (:func:`attribute_question`, "Texas population?"); without one, a count of the rows
    holding that value (:func:`short_question`); else an aggregate of a number it reads
    (:func:`aggregate_question`). The vague question says the attribute alone
    ("Population?"), so the two differ by the row the twin names."""
    for rule in (attribute_question, short_question, aggregate_question):
        made = rule(job, context, rng, database)
        if made is not None:
            return made
    return None


def _vague_question(table, text, _number, _invented):
    column, value = text
    return (
        {"question": f"{value}?", "trigger": str(value), "rationale": "A value alone."},
        {
            "question": f"What about the {column}?",
            "trigger": column,
            "rationale": f"Names the {column} but not what to find out about it.",
        },
    )


CATEGORY = Category(
    name="vague-question",
    label="ambiguous",
    definition=(
        "A question so short or underspecified that it does not say what to retrieve, "
        "often a bare keyword or topic (for example a value or a column name alone)."
    ),
    trigger="the keyword or topic the question is reduced to",
    explanation=(
        "The question only names '{trigger}' and does not say what to find out about it; "
        "ask what the user wants to know."
    ),
    uses_parent=False,
    examples=(
        {"question": "Hardcovers?", "trigger": "Hardcovers", "rationale": "A format alone."},
        {
            "question": "What about Tolkien?",
            "trigger": "Tolkien",
            "rationale": "Names an author but not whether books, sales or ratings are wanted.",
        },
    ),
    span_tag="AMB",
    offline_rule=cut_to_keyword,
    check=check_vague_question,
    twin=vague_question_twin,
    example_writer=_vague_question,
)
