"""The ``out-of-scope`` category: what it means, its trigger and its examples."""

from answerable.builders.drafting.category import Category

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
)
