"""The drafting data behind the offline drafter and the checks.

Kept as data in one place so that a reviewer can read, and extend, what the rules know:
vague words, reference words, the cues of requests SQL cannot serve, plausible absent
attributes per kind of entity, and small-talk templates. The word lists drafting shares
with the counterfactual edits (near-synonym groups, generic schema words, function words,
words for people and places) are in :mod:`answerable.builders.lexical.lexicon`.
"""

from __future__ import annotations

# ---- vague words (SCARE vague-word, OncoMX-NAQ operator ambiguous) ---------------------

VAGUE_BY_KIND = {
    "person": ("young", "elderly"),
    "event": ("recent", "early", "late"),
    "amount": ("large", "small", "high"),
    "other": ("typical", "notable", "important"),
}
"""Vague adjectives the offline drafter inserts, by what the noun they qualify is."""
SIZE_WORDS = ("large", "small")
"""The amount words that also fit the noun of the thing measured ("large cities"),
when the question does not name the measure itself."""

# ---- reference words (SCARE ambiguous reference, NAQ contextual ambiguous) --------------

REFERENCE_WORDS = (
    "that",
    "those",
    "this",
    "these",
    "it",
    "its",
    "they",
    "them",
    "their",
    "he",
    "she",
    "him",
    "his",
    "her",
    "previous",
    "former",
    "latter",
    "aforementioned",
    "same",
    "above",
)
"""Words that point at something the question itself does not name."""

# ---- what SQL cannot do (SCARE out-of-scope, TrustSQL non-sql, NAQ non-SQL) -------------

OUT_OF_SCOPE_CUES = {
    "prediction": (
        "predict",
        "predicted",
        "predicts",
        "prediction",
        "forecast",
        "forecasts",
        "prognosis",
        "will be next",
        "next year",
        "next month",
        "next season",
        "in the future",
        "extrapolate",
    ),
    "chart": (
        "plot",
        "chart",
        "graph",
        "histogram",
        "visualize",
        "visualise",
        "visualization",
        "draw",
        "diagram",
        "dashboard",
        "heatmap",
    ),
    "clustering": (
        "cluster",
        "clusters",
        "clustering",
        "segment",
        "machine learning",
        "train a model",
        "classifier",
    ),
    "explanation": (
        "explain",
        "explains",
        "explanation",
        "why",
        "how does",
        "how do",
        "mechanism",
        "summary",
        "summarize",
        "summarise",
        "interpret",
    ),
    "advice": ("recommend", "recommendation", "advise", "advice", "should i"),
}
"""Cue phrases of each kind of request that a SQL query cannot serve."""

OUT_OF_SCOPE_TEMPLATES = {
    "prediction": (
        "Predict how many {table} there will be next year.",
        "Forecast the {column} of the {table} for next month.",
    ),
    "chart": (
        "Plot the number of {table} per {column} as a bar chart.",
        "Draw a histogram of the {column} of the {table}.",
    ),
    "clustering": (  # a learned similarity: grouping by one column is a GROUP BY
        "Cluster the {table} with k-means on their {column} and their other attributes.",
        "Train a model that segments the {table} into groups of similar profiles.",
    ),
    "explanation": (
        "Explain why some {table} have a different {column} than others.",
        "Why do the {table} differ in {column}? Explain it to me.",
    ),
}
"""Offline rewrites of a question into a request SQL cannot serve, by task."""

OUT_OF_SCOPE_TASKS = {
    "prediction": (
        "And forecast it for next year.",
        "Predict how it will change next year.",
        "Then extrapolate it to next year.",
        "And tell me what it will be next year.",
    ),
    "chart": (
        "Draw it as a bar chart.",
        "Plot the result as a histogram.",
        "Show the result as a pie chart.",
        "Give it as a line graph.",
    ),
    "clustering": (
        "Then cluster them with k-means.",
        "Segment them with a trained model.",
        "Sort them into clusters of similar ones.",
        "Then group them into clusters with machine learning.",
    ),
    "explanation": (
        "Explain why it is so.",
        "And tell me why.",
        "Then explain the result.",
        "And explain the reasons.",
    ),
}
"""Requests SQL cannot serve that the offline drafter puts after a parent's question,
by task (the question's own words kept: a minimal pair). Their frames are the frames of
the requests SQL does serve that answerable twins put there ("Show the result as a
table.", "Then count them.", "Sort them by age.", "And tell me how many there are."), so
that only the task's own word differs."""

MANY_ROW_TASKS = frozenset(["clustering", "chart"])
"""Tasks only a result of many rows can be asked for: one figure, one row or a yes or no
has nothing to cluster or to chart ("When was the first time ...? Then cluster them with
k-means.", "what is the population of california Show the result as a pie chart.")."""

# ---- absent attributes (SCARE missing column, TrustSQL column-related/-unrelated) --------

ABSENT_ATTRIBUTES = {
    "person": (
        "blood type",
        "email address",
        "phone number",
        "home address",
        "shoe size",
        "annual salary",
        "religion",
        "education level",
        "occupation",
        "eye colour",
    ),
    "place": (
        "parking spaces",
        "ticket price",
        "roof type",
        "elevation",
        "annual budget",
        "owner",
        "wifi availability",
    ),
    "event": (
        "weather",
        "cost",
        "satisfaction score",
        "booking channel",
        "cancellation reason",
        "organiser",
    ),
    "other": (),
}
"""Plausible attributes a database of that kind of entity often lacks (subtype related).
A table of no known kind whose noun :data:`ENTITY_ATTRIBUTES` lacks has none: a
product's supplier or review date is no attribute of a state's borders."""

ENTITY_ATTRIBUTES = {
    "patient": ("blood type", "body weight", "occupation", "smoking status", "home address"),
    "admission": ("room number", "attending physician", "total charges", "referring doctor"),
    "icu stay": ("bed number", "attending nurse", "ventilator hours"),
    "lab event": ("lab technician", "specimen type", "turnaround time"),
    "lab item": ("test price", "turnaround time", "specimen type"),
    "prescription": ("prescribing doctor", "pharmacy", "refill count", "cost"),
    "diagnosis": ("diagnosing doctor", "severity", "diagnosis date"),
    "diagnosis icd": ("diagnosing doctor", "severity"),
    "procedure": ("surgeon", "anaesthesia type", "procedure duration"),
    "procedure icd": ("surgeon", "anaesthesia type", "procedure duration"),
    "item": ("measurement device", "normal range"),
    "chart event": ("recording nurse", "measurement device", "measurement site"),
    "input event": ("infusion pump", "administering nurse", "infusion site"),
    "output event": ("collection device", "recording nurse"),
    "microbiology event": ("lab technician", "culture duration", "incubation temperature"),
    "cost": ("payment method", "insurance payer", "billing clerk"),
    "transfer": ("transfer reason", "escorting nurse", "bed number"),
    "product": ("colour", "manufacturer", "customer rating", "supplier", "last review date"),
    "player": ("shoe size", "annual salary", "market value", "agent", "body weight"),
    "coach": ("annual salary", "contract length", "coaching licence", "previous club"),
    "team": ("annual budget", "owner", "kit colour", "mascot", "shirt sponsor"),
    "stadium": ("roof type", "pitch surface", "construction cost", "parking spaces"),
    "match": ("referee", "weather", "ticket price", "kick-off time", "tv audience"),
    "goal": ("assisting player", "shot distance", "body part"),
    "appearance": ("distance covered", "pass accuracy", "match rating"),
    "season": ("title sponsor", "broadcaster", "prize money"),
    "employee": ("annual salary", "department", "performance rating", "parking space"),
    "customer": ("loyalty points", "credit limit", "date of birth"),
    "album": ("record label", "producer", "release date"),
    "artist": ("record label", "country of origin", "debut year"),
    "track": ("tempo", "lyrics language", "release year"),
    "invoice": ("payment method", "discount", "sales tax"),
    "state": ("governor", "official language", "state bird", "gdp"),
    "city": ("mayor", "founding year", "average rent"),
    "river": ("discharge", "mouth", "average depth"),
    "mountain": ("first ascent year", "prominence"),
    "lake": ("maximum depth", "water volume"),
}
"""Attributes that belong to the entity a table holds (by its name's last noun, singular)
and that databases of that kind often lack (subtype related): "What is the roof type of
each stadium?", never "What is the ethnicity of each goal?". A table whose noun is not
here takes its kind's list (:data:`ABSENT_ATTRIBUTES`)."""

ANY_ENTITY_WORDS = frozenset(["age", "rating"])
"""Words of a column name that any kind of entity may have (a dog's age is a question
about a professional too): a column-surface attribute taken from a table of another
kind must be made of these (see :func:`~.offline.surface_columns`)."""

UNRELATED_ATTRIBUTES = (
    "zodiac sign",
    "favourite song",
    "favourite colour",
    "lucky number",
    "favourite film",
)
"""Attributes unrelated to any database's domain (subtype unrelated)."""

NUMERIC_ATTRIBUTES = frozenset(
    {
        "shoe size",
        "annual salary",
        "parking spaces",
        "ticket price",
        "elevation",
        "annual budget",
        "cost",
        "satisfaction score",
        "customer rating",
        "lucky number",
        "body weight",
        "total charges",
        "ventilator hours",
        "turnaround time",
        "test price",
        "refill count",
        "market value",
        "contract length",
        "construction cost",
        "tv audience",
        "shot distance",
        "distance covered",
        "pass accuracy",
        "match rating",
        "prize money",
        "performance rating",
        "loyalty points",
        "credit limit",
        "tempo",
        "discount",
        "sales tax",
        "gdp",
        "average rent",
        "discharge",
        "average depth",
        "prominence",
        "maximum depth",
        "water volume",
    }
)
"""Absent attributes that hold numbers (they may be averaged or ranked)."""

# ---- small talk (SCARE small-talk, TrustSQL out-of-domain) -------------------------------

SMALL_TALK = (
    ("greeting", "Hi, I'm {first_name}. How are you doing today?"),
    ("weather", "What's the weather going to be like in {city} this weekend?"),
    ("recommendation", "Can you recommend a good book about {subject}?"),
    ("joke", "Tell me a joke about {subject}."),
    ("restaurant", "Do you know a nice place for dinner near {street_name}?"),
    ("thanks", "Thanks a lot, {first_name}, you have been very helpful!"),
    ("clock", "What hour is it in {city} right now?"),
    ("poem", "Could you write me a poem about {subject}?"),
    ("translation", "How do you say '{word}' in French?"),
    ("travel", "Is {city} worth a visit in the spring?"),
    ("weekend", "Good morning! How was your weekend?"),
    ("coffee", "Hello there! Did you have a coffee before work today?"),
    ("hobby", "Hi! Quick question: do you like {subject}?"),
    ("film", "Good morning! Which film about {subject} should I watch tonight?"),
    ("farewell", "Thanks in advance, and have a nice evening!"),
    ("song", "Hello there! Can you sing me a song about {subject}?"),
    ("holiday", "Hi, I'm {first_name}. Any tips for a holiday in {city}?"),
    ("mood", "Hi! Quick question: are you having a good day?"),
    ("cooking", "Could you help me with something? I can't decide what to cook tonight."),
    ("plans", "Can you help me, please? I need ideas for a weekend in {city}."),
)
"""Small-talk templates (topic, text); fields are filled with Faker, ``{subject}`` from
:data:`SMALL_TALK_SUBJECTS` (Faker's lorem words include "at" and "between"). Their
greetings and thanks are the ones answerable twins put around a real question
(:data:`COURTESIES`), so that a greeting alone does not tell the label."""

COURTESIES = (
    "Hi, I'm {first_name}. {question}",
    "Good morning! {question}",
    "Hello there! {question}",
    "Hi! Quick question: {question}",
    "Could you help me with something? {question}",
    "Can you help me, please? {question}",
    "{question} Thanks a lot, you have been very helpful!",
    "{question} Thanks in advance, and have a nice evening!",
)
"""Greetings and thanks put around a real question: an answerable question still (it
asks for data the schema holds), the twins of small talk's courtesies."""

SMALL_TALK_SUBJECTS = (
    "autumn",
    "baking bread",
    "cats",
    "chess",
    "friendship",
    "gardening",
    "jazz",
    "mountains",
    "the ocean",
    "old trains",
    "rainy days",
    "space travel",
    "the moon",
    "coffee",
    "dogs",
    "summer holidays",
)
"""What a joke, a poem or a book recommendation is about: nouns a person would say."""

# ---- out of domain (TrustSQL out-of-domain, NAQ out of domain) ---------------------------

OUT_OF_DOMAIN = (
    ("astronomy", "How many moons does {choice} have?"),
    ("geography", "What is the capital of {country}?"),
    ("geography", "Which mountain range runs through {country}?"),
    ("history", "Who led {country} in {year}?"),
    ("sport", "Who won the {choice} world championship in {year}?"),
    ("science", "At what temperature does {choice} melt?"),
    ("language", "Which languages are spoken in {country}?"),
    ("finance", "How many euros is one {currency} worth?"),
    ("animals", "How long do {choice} usually live?"),
    ("inventions", "Who invented the {choice}?"),
    ("literature", "Who wrote {choice}?"),
    ("music", "In which year did {choice} release their first album?"),
)
"""General-knowledge question templates (topic, text); fields are filled with Faker and,
for ``{choice}``, from :data:`OUT_OF_DOMAIN_FILLERS`."""

OUT_OF_DOMAIN_FILLERS = {
    "astronomy": ("Jupiter", "Saturn", "Neptune", "Mars", "Uranus"),
    "sport": ("chess", "snooker", "darts", "table tennis", "cycling"),
    "science": ("copper", "tin", "lead", "gold", "aluminium"),
    "animals": ("elephants", "parrots", "tortoises", "goldfish", "horses"),
    "inventions": ("telephone", "printing press", "steam engine", "bicycle", "compass"),
    "literature": ("War and Peace", "Don Quixote", "Moby-Dick", "Pride and Prejudice"),
    "music": ("the Beatles", "ABBA", "Queen", "Radiohead", "Nirvana"),
}
"""The values ``{choice}`` takes in each out-of-domain topic."""
