"""The word lists the toolkit's language rules read, in one place.

Three readers use them: the counterfactual edits (column names: their tokens, roles and
synonyms, :mod:`answerable.builders.counterfactual.lexicon`), the qualifier contrasts
(:mod:`.contrasts`) and drafting (questions and their schema words,
:mod:`answerable.builders.drafting.checks`, ``context``, ``offline``, ``twins``). Where two
readers need a different list for the same idea (function words of a column name and of a
question; synonyms of column-name tokens and of attributes a question may ask for), each
list says whose it is, side by side, so that they are read and mended together.
"""

from __future__ import annotations

# ---- words that name the same thing ------------------------------------------------------

COLUMN_SYNONYMS = (
    ("date", "dt"),
    ("time", "datetime", "timestamp", "ts"),
    ("count", "number", "num", "no", "qty", "quantity"),
    ("city", "town"),
    ("country", "nation"),
    ("gender", "sex"),
    ("birth", "born", "dob"),
    ("death", "died", "dod"),
    ("salary", "wage"),
    ("description", "desc", "details"),
    ("address", "addr"),
    ("phone", "telephone", "tel"),
    ("email", "mail"),
)
"""Words that name the same thing in a column name (``sex`` and ``gender``)."""
MENTION_SYNONYMS = (
    *COLUMN_SYNONYMS,
    ("score", "goal", "point"),
    ("price", "cost", "fee", "charge"),
    ("age", "years"),
    ("capacity", "seats"),
)
"""Looser groups for finding a column's mention in a question (``goals at home`` for
``home_score``), never for deciding that two columns are the same."""
SYNONYM_GROUPS = (
    {"sex", "gender"},
    {"dob", "birth", "birthday", "born", "birthdate", "age"},
    {"death", "died", "dod", "deceased", "mortality"},
    {"salary", "wage", "pay", "income", "earnings"},
    {"phone", "telephone", "mobile", "cell"},
    {"email", "mail"},
    {"weight", "mass"},
    {"height", "stature", "tall"},
    {"price", "cost", "fee", "charge"},
    {"colour", "color"},
    {"nationality", "citizenship"},
    {"capacity", "seats", "seating"},
    {"attendance", "spectators", "crowd", "audience"},
    {"duration", "length", "los"},
    {"drug", "medication", "medicine"},
    {"diagnosis", "diagnose", "disease", "condition", "icd"},
    {"insurance", "insurer", "coverage", "payer"},
    {"language", "tongue"},
    {"ethnicity", "race"},
    {"team", "club", "side"},
    {"goal", "score", "scored"},
)
"""Words that name the same attribute a question may ask for (drafting: a trigger column
that merely renames a real one); one canonical word stands for each group."""
PHONE_WORDS = "phone telephone tel cell mobile"
"""Names of a telephone column (the contrasts' ``home``/``work`` phone)."""

# ---- words that carry no meaning of their own ---------------------------------------------

NAME_STOPWORDS = frozenset(
    {"of", "the", "a", "an", "in", "on", "at", "for", "to", "by", "and", "per"}
)
"""Function words of column names."""
UNITS = frozenset(
    {"cm", "mm", "km", "kg", "g", "lb", "lbs", "m", "ml", "usd", "eur", "pct", "ms", "sec", "min"}
)
"""Units a column name may end with (``height_cm``)."""
ID_TOKENS = frozenset({"id", "ids", "key", "pk", "fk", "uid", "uuid"})
"""Tokens that make a column name a key."""
GENERIC_TOKENS = frozenset(
    {"date", "time", "name", "type", "value", "number", "count", "code", "flag", "status"}
    | {"year", "kind", "info", "data", "text", "desc", "num", "no", "is", "has"}
)
"""Tokens too general to ground a column on their own, unless they are its head."""
NEUTRAL = frozenset(
    {
        "actual",
        "real",
        "true",
        "total",
        "overall",
        "full",
        "official",
        "current",
        "main",
        "recorded",
    }
)
"""Qualifiers that do not change what a column holds: ``actual_price`` is the price."""
GENERIC_WORDS = frozenset(
    [
        "id",
        "ids",
        "code",
        "num",
        "no",
        "number",
        "type",
        "kind",
        "name",
        "title",
        "label",
        "date",
        "time",
        "day",
        "year",
        "value",
        "flag",
        "is",
        "has",
        "start",
        "end",
        "first",
        "last",
        "in",
        "out",
        "of",
        "the",
        "a",
        "an",
        "and",
        "to",
        "at",
        "by",
        "on",
        "for",
        "count",
        "total",
        "min",
        "max",
        "avg",
        "sum",
        "text",
        "info",
        "data",
        "item",
        "record",
        "entry",
    ]
)
"""Schema words too common to make a question about the database (or a column a synonym)."""
QUESTION_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "about",
        "as",
        "and",
        "or",
        "but",
        "not",
        "no",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "i",
        "you",
        "he",
        "she",
        "it",
        "we",
        "they",
        "me",
        "my",
        "your",
        "our",
        "their",
        "its",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "there",
        "here",
        "any",
        "some",
        "all",
        "each",
        "every",
        "more",
        "most",
        "much",
        "many",
        "few",
        "s",
        "t",
        "ll",
        "re",
        "ve",
        "d",
        "m",
        "so",
        "very",
        "just",
        "really",
        "please",
        "tell",
        "know",
        "like",
        "get",
        "give",
        "let",
    ]
)
"""Function words ignored when comparing a question with the schema."""

# ---- words that tell what kind of entity a table holds ------------------------------------

PERSON_TABLES = frozenset(
    {"player", "coach", "patient", "customer", "employee", "artist", "person", "people"}
    | {"user", "student", "singer", "driver", "teacher", "author", "actor", "member", "staff"}
    | {"doctor", "nurse", "physician", "manager", "owner", "pilot", "director", "writer"}
    | {"highschooler", "pupil"}
)
"""Tables whose rows are people (by their singular name)."""
PERSON_HINTS = frozenset(
    [
        "patient",
        "player",
        "person",
        "people",
        "employee",
        "customer",
        "coach",
        "student",
        "user",
        "staff",
        "member",
        "author",
        "artist",
        "driver",
        "passenger",
        "client",
    ]
)
PERSON_COLUMN_HINTS = frozenset(
    ["gender", "sex", "birth", "dob", "nationality", "surname", "firstname"]
)
PLACE_HINTS = frozenset(
    ["stadium", "city", "venue", "site", "location", "building", "store", "shop", "airport"]
)
PLACE_COLUMN_HINTS = frozenset(["city", "capacity", "address", "country"])
"""Words of a table's name, or of its columns, that tell what kind of entity it holds."""
