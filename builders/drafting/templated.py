"""The model's part in templated pairs: paraphrases of a template's question, and a
natural-language answer per triple (BiomedSQL's question/SQL/answer).

Both are two pure functions around a model call (a prompt and the check of its reply)
and one call through :func:`llm.ask_all`, so replies are cached like every other.

- ``paraphrases``: one prompt per template asks for rewrites of its first question that
  keep every ``{placeholder}``; a rewrite that changes them is dropped.
- ``answers``: one prompt per item shows the question, the SQL and the first rows of its
  result, and asks for a concise answer from those alone (BiomedSQL's answer prompt,
  in the project's words); an item without a usable reply keeps its template's text.

>>> paraphrase_messages("Which drugs treat {disease}?", 2)[1]["content"].splitlines()[0]
'Question: Which drugs treat {disease}?'
>>> keep_rewrites("Doses of {drug}?", ["What doses of {drug}?", "Doses?", "Doses of {drug}?"])
['What doses of {drug}?']
"""

from __future__ import annotations

import json
import re

from answerable.builders.drafting.replies import ANSWER_REPLY, PARAPHRASE_REPLY
from answerable.builders.drafting.settings import LLMSettings, Usage

PARAPHRASE_SYSTEM = (
    "You reword questions for a text-to-SQL benchmark. Keep the meaning, and keep every "
    "placeholder written in braces (such as {drug}) exactly as it is, each once. "
    'Reply with one JSON object {"questions": [...]} and nothing else.'
)
ANSWER_SYSTEM = (
    "You state the answer to a question about a database in one or two plain sentences, "
    "using only the SQL query and its result shown, nothing else you know. "
    'Reply with one JSON object {"answer": ...} and nothing else.'
)
ANSWER_ROWS = 20
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def paraphrase_messages(question: str, count: int) -> list[dict]:
    """The prompt asking for ``count`` rewrites of a templated question."""
    user = f"Question: {question}\n\nWrite {count} different rewordings. Reply in JSON."
    return [{"role": "system", "content": PARAPHRASE_SYSTEM}, {"role": "user", "content": user}]


def keep_rewrites(question: str, rewrites: list[str]) -> list[str]:
    """The rewrites with exactly the question's placeholders, new, each once, in order."""
    wanted = sorted(_PLACEHOLDER.findall(question))
    kept: list[str] = []
    for text in rewrites:
        if sorted(_PLACEHOLDER.findall(text)) == wanted and text not in (question, *kept):
            kept.append(text)
    return kept


def answer_messages(question: str, sql: str, columns: list[str], rows: list) -> list[dict]:
    """The prompt asking for a concise answer from a query's result."""
    shown = json.dumps({"columns": columns, "rows": rows[:ANSWER_ROWS]}, default=str)
    user = f"Question: {question}\nSQL: {sql}\nResult: {shown}\n\nReply in JSON."
    return [{"role": "system", "content": ANSWER_SYSTEM}, {"role": "user", "content": user}]


def paraphrases(
    questions: dict[str, str], count: int, settings: LLMSettings, cache, usage: Usage
) -> dict[str, tuple[str, ...]]:
    """``{template id: rewrites}`` from the model, one prompt per template."""
    from answerable.builders.drafting.llm import Prompt, ask_all  # imports openai

    ids = sorted(questions)
    prompts = [Prompt(paraphrase_messages(questions[i], count), 0, PARAPHRASE_REPLY) for i in ids]
    answers = ask_all(prompts, settings, cache, usage)
    return {
        template: tuple(keep_rewrites(questions[template], answer.reply["questions"]))
        for template, answer in zip(ids, answers, strict=True)
        if answer.reply
    }


def answers(items: list[dict], settings: LLMSettings, cache, usage: Usage) -> list[str | None]:
    """The model's answer to each item from its stored result (None without a reply)."""
    from answerable.builders.drafting.llm import Prompt, ask_all  # imports openai

    prompts = [
        Prompt(
            answer_messages(
                item["question"],
                item["sql"],
                (item.get("result") or {}).get("columns") or [],
                (item.get("result") or {}).get("rows") or [],
            ),
            0,
            ANSWER_REPLY,
        )
        for item in items
    ]
    replies = ask_all(prompts, settings, cache, usage)
    return [answer.reply["answer"] if answer.reply else None for answer in replies]
