"""The ``out-of-domain`` category: what it means, its trigger and its examples."""

from answerable.builders.drafting.category import Category

CATEGORY = Category(
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
    # facts no database of the build holds
    topics=(
        "astronomy",
        "world geography",
        "history",
        "chess",
        "chemistry",
        "literature",
        "music history",
        "animals",
        "inventions",
        "languages",
    ),
    topic_focus="a general-knowledge question about {topic}",
)
