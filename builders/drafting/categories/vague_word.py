"""The ``vague-word`` category: what it means, its trigger and its examples."""

from answerable.builders.drafting.category import Category

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
)
