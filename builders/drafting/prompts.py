"""Prompts, as pure functions from a category, a schema and a question to chat messages.

A drafting prompt shows the schema as CREATE TABLE statements with three example values
per column (the format of TrustSQL's classifier prompt), the category's definition,
two examples, and, for the categories that rewrite an answerable question, that parent
question. The examples are written on the target database itself (each category's
``example_writer``, called by :func:`.per_category.database_examples`: its own tables,
columns and values, on another table than the parent's where there is one), so that a
model that copies an example writes a question about the right database that the checks
can recognize as a copy
(``copied-example``). The reply is one JSON object ``{question, trigger, rationale}``
whose trigger is the exact span of the question that makes it problematic
(see :mod:`.replies`).

>>> from answerable.builders.schema import Column, DatabaseSchema, Table
>>> schema = DatabaseSchema("shop", [Table("item", [Column("id", "INTEGER")], ["id"])])
>>> print(create_table(schema.tables[0], {"id": [1, 2, 3]}))
CREATE TABLE item (
  id INTEGER, -- e.g. 1, 2, 3
  PRIMARY KEY (id)
);
"""

from __future__ import annotations

import json

from sqlglot import exp

from answerable.builders.drafting.category import Category
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.schema import Table
from answerable.kernel.ids import content_hash

MAX_VALUE_CHARS = 40

DRAFT_SYSTEM = (
    "You write test questions for a text-to-SQL benchmark over one SQLite database. "
    "Each question must be problematic in exactly the way the category describes. "
    'Reply with one JSON object {"question": ..., "trigger": ..., "rationale": ...} '
    'and nothing else. "trigger" is the span of your question, copied exactly, that '
    "makes it problematic. Do not repeat an example: write a new question."
)

SQL_SYSTEM = (
    "You translate questions about a SQLite database into SQLite SELECT queries, one query "
    'per question. Reply with one JSON object {"queries": [{"id": ..., "sql": ...}, ...]} '
    "holding each question's id and its query, and nothing else. Write a query even when "
    "a question is unclear: give your best reading."
)


def _name(name: str) -> str:
    return exp.to_identifier(name).sql("sqlite")


def _value(value) -> str:
    if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
        value = value[: MAX_VALUE_CHARS - 3] + "..."
    return exp.convert(value).sql("sqlite")


def create_table(table: Table, values: dict[str, list]) -> str:
    """One CREATE TABLE statement, each column followed by its example values."""
    lines = []
    for column in table.columns:
        line = f"  {_name(column.name)} {column.type or 'TEXT'},"
        examples = values.get(column.name) or []
        if examples:
            line += " -- e.g. " + ", ".join(_value(v) for v in examples)
        lines.append(line)
    if table.primary_key:
        lines.append(f"  PRIMARY KEY ({', '.join(_name(c) for c in table.primary_key)}),")
    for column, other, other_column in table.foreign_keys:
        lines.append(
            f"  FOREIGN KEY ({_name(column)}) REFERENCES {_name(other)}({_name(other_column)}),"
        )
    if lines:
        head, sep, tail = lines[-1].partition(" -- ")
        lines[-1] = head.rstrip(",") + (f" -- {tail}" if sep else "")
    return f"CREATE TABLE {_name(table.name)} (\n" + "\n".join(lines) + "\n);"


def schema_text(context: DatabaseContext) -> str:
    """Every table of a database as CREATE TABLE statements with example values."""
    return "\n\n".join(
        create_table(table, context.values.get(table.name, {})) for table in context.schema.tables
    )


def draft_messages(
    category: Category,
    schema: str,
    parent_question: str | None = None,
    focus: str | None = None,
    examples: tuple[dict, ...] | None = None,
) -> list[dict]:
    """The chat messages asking for one draft of ``category``.

    ``parent_question`` is shown for the categories that rewrite an answerable question;
    ``focus`` (a table, or a topic for out-of-domain) steers the others, so that drafts
    for different parents differ. ``examples`` (by default the category's own, written
    for a made-up bookshop) are shown as replies to copy the form of, not the words.
    """
    shown = category.examples if examples is None else examples
    parts = [
        f"Database schema:\n{schema}",
        f"Category: {category.name} ({category.label})\nDefinition: {category.definition}\n"
        f'"trigger" holds: {category.trigger}',
        "Examples of the form (write a different question):\n"
        + "\n".join(_example(e) for e in shown),
    ]
    if category.uses_parent and parent_question:
        parts.append(f"Parent question: {parent_question}")
    if focus:
        parts.append(f"Focus: {focus}")
    ask = "Rewrite the parent question" if category.uses_parent else "Write one new question"
    parts.append(f"{ask} so that it belongs to the category {category.name}. Reply in JSON.")
    return [
        {"role": "system", "content": DRAFT_SYSTEM},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


MADE_UP_ATTRIBUTES = ("shoe size", "favourite colour", "nickname", "blood type", "hobby")
"""Attributes a missing-column example may ask for, the first one the schema lacks."""


def _example(example: dict) -> str:
    reply = {k: example[k] for k in ("question", "trigger", "rationale")}
    parent = f"Parent question: {example['parent']}\n" if "parent" in example else ""
    return parent + "Reply: " + json.dumps(reply, ensure_ascii=False)


def sql_messages(schema: str, questions: list[tuple[str, str]]) -> list[dict]:
    """The chat messages asking for a candidate SQL query for each ``(id, question)``
    of one database: one request for a batch of questions, each answered under its id.
    A question is shown on one line (its whitespace runs as single spaces)."""
    lines = "\n".join(f"{key}: {' '.join(question.split())}" for key, question in questions)
    user = (
        f"Database schema:\n{schema}\n\nQuestions:\n{lines}\n\n"
        "Reply in JSON, one query for each id."
    )
    return [{"role": "system", "content": SQL_SYSTEM}, {"role": "user", "content": user}]


def prompt_hash(messages: list[dict]) -> str:
    """The hash of a prompt's messages, recorded in a draft's provenance."""
    return content_hash(messages)
