"""The ``missing-column`` category: what it means, its trigger and its examples."""

from answerable.builders.drafting.category import Category

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
)
