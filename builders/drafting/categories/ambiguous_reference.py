"""The ``ambiguous-reference`` category: what it means, its trigger and its examples."""

from answerable.builders.drafting.category import Category

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
)
