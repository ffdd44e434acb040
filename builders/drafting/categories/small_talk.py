"""The ``small-talk`` category: what it means, its trigger and its examples."""

from answerable.builders.drafting.category import Category

CATEGORY = Category(
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
    topics=(
        "the weather",
        "a greeting",
        "cooking",
        "travel plans",
        "a film",
        "music",
        "a joke",
        "history trivia",
        "the user's weekend",
        "a sports result from the news",
    ),
    topic_focus="small talk about {topic}",
)
