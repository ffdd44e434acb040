"""The taxonomy categories drafting produces: label, definition, examples, explanation.

SCARE's six categories (``vague-question``, ``vague-word``, ``ambiguous-reference``;
``missing-column``, ``out-of-scope``, ``small-talk``) and TrustSQL's ``out-of-domain``.
The other categories of the taxonomy (column-, value- and operator-ambiguous,
missing-value, calculation, external-knowledge) come from schema edits, sources or
review, not drafting.

The examples are written for a made-up bookshop database: people read them (the review
page's guidelines), and a prompt shows them only for out-of-domain and small talk, or
when its database offers nothing to write examples on; otherwise a prompt's examples are
written on the target database itself (its ``example_writer``, see
:func:`.per_category.database_examples`).

Each category is one module here holding its :class:`~.category.Category`: its text
(label, definition, trigger, explanation, examples, span tag, focus topics) and its
functions: the offline drafter's rule (``offline_rule``), what its drafts must meet
(``check``), its answerable twin (``twin``) and its prompt's examples written on the
target database (``example_writer``). The module defines them, or imports a helper that
several categories share from :mod:`.offline`, :mod:`.checks`, :mod:`.twins` or
:mod:`.prompts` (those modules never import a category). One line in
:data:`CATEGORIES` registers it; the build reads every piece from here
(:mod:`.per_category`).
"""

from __future__ import annotations

from dataclasses import dataclass

from answerable.builders.drafting.categories import (
    ambiguous_reference,
    missing_column,
    out_of_domain,
    out_of_scope,
    small_talk,
    vague_question,
    vague_word,
)
from answerable.builders.drafting.category import Category

CATEGORIES: dict[str, Category] = {
    module.CATEGORY.name: module.CATEGORY
    for module in (
        vague_question,
        vague_word,
        ambiguous_reference,
        missing_column,
        out_of_scope,
        out_of_domain,
        small_talk,
    )
}
"""Every drafted category by name, in the taxonomy's order."""


@dataclass(frozen=True)
class Definition:
    """What a category means, with one example: for people (the review page's guidelines,
    Argilla's label descriptions) as much as for prompts."""

    name: str
    label: str
    definition: str
    example: str


OTHER_DEFINITIONS = (
    Definition(
        "answerable",
        "answerable",
        "The question has exactly one reasonable reading and the database holds what it asks "
        "for; the SQL shown answers it.",
        "How many books did Ursula Le Guin write?",
    ),
    Definition(
        "column-ambiguous",
        "ambiguous",
        "The question's attribute matches two or more columns equally well (near-synonyms), "
        "so each column gives a different, reasonable answer.",
        "'How long was the stay?' when the table has both length_days and length_hours.",
    ),
    Definition(
        "value-ambiguous",
        "ambiguous",
        "A value in the question occurs in two or more columns, so it can filter on either "
        "one and the answers differ.",
        "'Books by Austen' when 'Austen' is both an author name and a series title.",
    ),
    Definition(
        "operator-ambiguous",
        "ambiguous",
        "The question implies a comparison or a condition but not which operator or "
        "threshold applies, so several filters fit (OncoMX-NAQ's operator ambiguous).",
        "'Which books sell slightly better than average?': how much better is slightly?",
    ),
    Definition(
        "missing-value",
        "unanswerable",
        "The question filters on a value that no row holds in the column it refers to, so "
        "the database cannot say anything about it.",
        "'How many books did Tolkien sell in 1850?' when sales start in 1990.",
    ),
    Definition(
        "calculation",
        "unanswerable",
        "The question asks for a quantity no column stores but a formula over other "
        "columns would give; the formula is domain knowledge the question and the schema "
        "leave out (DTE's calculation unanswerable).",
        "'What is each book's profit?' with price and cost columns but no profit column.",
    ),
    Definition(
        "external-knowledge",
        "unanswerable",
        "The answer needs knowledge from outside the database (facts, rankings, current "
        "events) that no column holds.",
        "'Which of these authors won a Nobel prize?' with no prize data.",
    ),
)


def definitions() -> list[Definition]:
    """Every category of the taxonomy with its definition and one example, answerable
    first, then the ambiguous and the unanswerable ones (drafted ones from their
    :class:`Category`, the same text their prompts use)."""
    drafted = [
        Definition(c.name, c.label, c.definition, _example_text(c.examples[0]))
        for c in CATEGORIES.values()
    ]
    every = [*OTHER_DEFINITIONS[:1], *drafted, *OTHER_DEFINITIONS[1:]]
    order = {"answerable": 0, "ambiguous": 1, "unanswerable": 2}
    return sorted(every, key=lambda d: order[d.label])


def _example_text(example: dict) -> str:
    question = f"'{example['question']}'"
    if example.get("parent"):
        question += f" (from '{example['parent']}')"
    return f"{question}: {example['rationale']}"
