"""Explanations: what a careful system should say back, in the manner of DTE's responses.

DTE answers a problematic question by naming the problem and the words that cause it
("which score do you mean, ...?"). These sentences are this project's own wording of
that idea, one per category, filled with the item's span and columns.

>>> column_ambiguous("score", "matches", ["our_score", "opponent_score"])[:60]
"'score' is ambiguous: the matches table has our score and op"
"""

from __future__ import annotations

from answerable.builders.counterfactual.lexicon import name_tokens


def words_of(column: str) -> str:
    """A column's name as plain words: ``home_score`` -> ``home score``."""
    return " ".join(name_tokens(column.rpartition(".")[2]))


def _listed(names: list[str]) -> str:
    plain = [words_of(n) for n in names]
    return plain[0] if len(plain) == 1 else ", ".join(plain[:-1]) + " and " + plain[-1]


def missing_column(span: str, table: str, column: str) -> str:
    """A column the question needs is not in the database."""
    return (
        f"The database does not record {words_of(column)}: no column of the {table} table "
        f"holds it, so '{span}' cannot be looked up and the question has no answer here."
    )


def column_ambiguous(span: str, table: str, candidates: list[str]) -> str:
    """The question's words fit several columns that give different answers."""
    return (
        f"'{span}' is ambiguous: the {table} table has {_listed(candidates)}, and they give "
        "different answers. Which one do you mean?"
    )


def missing_value(value: str, column: str) -> str:
    """A value the question asks about is in no row of its column."""
    return (
        f"No {words_of(column)} in the database is '{value}', so there is nothing to answer "
        "about it. Check the spelling, or ask about a value that is recorded."
    )


def value_ambiguous(value: str, columns: list[str]) -> str:
    """A value occurs in two columns and the answer depends on which one is meant."""
    return (
        f"'{value}' occurs both as {' and as '.join(words_of(c) for c in columns)}, and the "
        "answer depends on which one you mean. Which one is it?"
    )


_HOW = {
    "difference": "the difference between",
    "sum": "the sum of",
    "ratio": "the ratio of",
    "product": "the product of",
}


def calculation(span: str, column: str, operands: list[str], operation: str) -> str:
    """The question asks for a quantity the database does not store but that a formula
    over other columns would give: the formula is knowledge the question leaves out."""
    how = _HOW[operation]
    return (
        f"The database does not store {words_of(column)}, so '{span}' maps to no column. It "
        f"might be worked out, for instance as {how} {_listed(operands)}, but that formula is "
        "not in the data. Say how it should be calculated, or ask for those columns instead."
    )


RESPONSES = {
    "column-ambiguous": "Part of this question fits more than one column, and each gives a "
    "different answer. Which one do you mean?",
    "value-ambiguous": "A value in this question occurs in more than one column, and the "
    "answer depends on which one it is meant for. Which column do you mean?",
    "operator-ambiguous": "This question implies a comparison but not which one (how much "
    "more, above which level). Say the condition you have in mind.",
    "vague-question": "This question does not say what to find out. What would you like to know?",
    "vague-word": "A word in this question has no agreed threshold in the data, so several "
    "answers fit. Say exactly what you mean by it.",
    "ambiguous-reference": "This question refers to something it does not name, so it is not "
    "clear what it is about. Which one do you mean?",
    "missing-column": "Something this question asks about is not recorded in the database, "
    "so it has no answer here.",
    "missing-value": "A value this question asks about is in no row of the database, so there "
    "is nothing to answer about it. Check the spelling, or ask about a recorded value.",
    "calculation": "This question asks for a quantity the database does not store; it would "
    "need a formula that the data does not give. Say how it should be calculated.",
    "external-knowledge": "Answering this needs facts from outside the database, which it "
    "does not hold.",
    "out-of-scope": "This asks for something a database query cannot do (a prediction, a "
    "chart, an explanation). Ask for the data instead.",
    "small-talk": "This is conversation rather than a question about the data. Ask me about "
    "the database and I will look it up.",
    "out-of-domain": "This question is not about this database, so I cannot answer it from "
    "the data.",
}
"""A response per category for an item that brings none of its own (a source's
questions, a relabelled draft): what a careful system says back, in DTE's manner of
naming the problem and asking for what would resolve it, without the item's words."""


def response(item: dict) -> str | None:
    """The item's own explanation, else its category's response; None when answerable.

    >>> response({"label": "unanswerable", "category": "small-talk"})[:31]
    'This is conversation rather tha'
    """
    if item.get("label") == "answerable":
        return item.get("explanation")
    return item.get("explanation") or RESPONSES.get(item.get("category") or "")
