"""The taxonomy categories drafting produces: label, definition, examples, explanation.

SCARE's six categories (``vague-question``, ``vague-word``, ``ambiguous-reference``;
``missing-column``, ``out-of-scope``, ``small-talk``) and TrustSQL's ``out-of-domain``.
The other categories of the taxonomy (column-, value- and operator-ambiguous,
missing-value, calculation, external-knowledge) come from schema edits, sources or
review, not drafting.

The examples are written for a made-up bookshop database: people read them (the review
page's guidelines), and a prompt shows them only for out-of-domain and small talk, or
when its database offers nothing to write examples on; otherwise a prompt's examples are
written on the target database itself (:func:`.prompts.database_examples`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Category:
    """One drafted category and what a prompt and an item need to know about it."""

    name: str
    label: str
    definition: str
    trigger: str  # what the reply's "trigger" holds
    explanation: str  # the message a reliable system should give; {trigger} is filled
    uses_parent: bool  # the draft rewrites an answerable question shown in the prompt
    examples: tuple[dict, ...]


VAGUE_QUESTION = Category(
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
)

VAGUE_WORD = Category(
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
)

AMBIGUOUS_REFERENCE = Category(
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
)

MISSING_COLUMN = Category(
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
)

OUT_OF_SCOPE = Category(
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
)

OUT_OF_DOMAIN = Category(
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
)

SMALL_TALK = Category(
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
)

CATEGORIES = {
    c.name: c
    for c in (
        VAGUE_QUESTION,
        VAGUE_WORD,
        AMBIGUOUS_REFERENCE,
        MISSING_COLUMN,
        OUT_OF_SCOPE,
        OUT_OF_DOMAIN,
        SMALL_TALK,
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
