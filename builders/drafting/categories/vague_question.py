"""The ``vague-question`` category: what it means, its trigger and its examples."""

from answerable.builders.drafting.category import Category

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
)
