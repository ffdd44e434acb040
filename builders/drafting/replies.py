"""Reading a model's reply: pure functions from text to a checked dict, or a reason.

A reply must hold one JSON object matching :data:`DRAFT_REPLY` (drafts),
:func:`sql_reply` (candidate SQL) or :data:`NAMES_REPLY` (column names). Code fences and
text around the object are tolerated; anything else raises :class:`ReplyError`, whose
message goes back to the model in :func:`retry_message`.

>>> parse_reply('```json\\n{"question": "Sodium?", "trigger": "Sodium", "rationale": "x"}\\n```')
{'question': 'Sodium?', 'trigger': 'Sodium', 'rationale': 'x'}
>>> try:
...     parse_reply('{"question": "Sodium?"}')
... except ReplyError as error:
...     print(error)
the reply does not match the schema: 'trigger' is a required property
"""

from __future__ import annotations

import json
import re
from functools import cache

DRAFT_REPLY = {
    "type": "object",
    "required": ["question", "trigger", "rationale"],
    "properties": {
        "question": {"type": "string", "minLength": 2, "maxLength": 400},
        "trigger": {"type": "string", "minLength": 1, "maxLength": 100},
        "rationale": {"type": "string"},
    },
}
"""The reply to a drafting prompt."""


def sql_reply(ids: list[str]) -> dict:
    """The reply to a text-to-SQL prompt for the questions ``ids``: a query per id. Ids
    the prompt did not ask for make it invalid; an id left out does not (the reply is
    partial: :func:`queries_by_id` names what is missing)."""
    return {
        "type": "object",
        "required": ["queries"],
        "properties": {
            "queries": {
                "type": "array",
                "maxItems": len(ids),
                "items": {
                    "type": "object",
                    "required": ["id", "sql"],
                    "properties": {
                        "id": {"enum": list(ids)},
                        "sql": {"type": "string", "minLength": 1},
                    },
                },
            }
        },
    }


def queries_by_id(reply: dict) -> dict[str, str]:
    """The query of each id in a :func:`sql_reply` reply (an id given twice: the first)."""
    found: dict[str, str] = {}
    for query in reply["queries"]:
        found.setdefault(query["id"], query["sql"])
    return found


NAMES_REPLY = {
    "type": "object",
    "required": ["names"],
    "properties": {
        "names": {
            "type": "array",
            "minItems": 2,
            "items": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_]{0,62}$"},
        }
    },
}
"""The reply to a column-names prompt (:mod:`.column_names`): new column names."""

PARAPHRASE_REPLY = {
    "type": "object",
    "required": ["questions"],
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "minLength": 2, "maxLength": 400},
        }
    },
}
"""The reply to a paraphrasing prompt: rewrites of one templated question."""

ANSWER_REPLY = {
    "type": "object",
    "required": ["answer"],
    "properties": {"answer": {"type": "string", "minLength": 1, "maxLength": 2000}},
}
"""The reply to an answer prompt: the result said in a sentence or two."""

_KNOWN = {id(s): s for s in (DRAFT_REPLY, NAMES_REPLY, PARAPHRASE_REPLY, ANSWER_REPLY)}
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


@cache
def _known_validator(key: int):
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_KNOWN[key])


def _validator(schema: dict):
    """The validator of a reply schema: made once for the prompts' own schemas (jsonschema
    is imported on the first reply, not with the module)."""
    if id(schema) in _KNOWN:
        return _known_validator(id(schema))
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema)


class ReplyError(ValueError):
    """A reply that is not the JSON object the prompt asked for."""


def parse_reply(text: str | None, schema: dict = DRAFT_REPLY) -> dict:
    """The JSON object in ``text``, checked against ``schema``; only its known keys."""
    from jsonschema.exceptions import best_match  # with the first reply, not the module

    value = _json_object(text or "")
    error = best_match(_validator(schema).iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        raise ReplyError(
            f"the reply does not match the schema: {(where + ': ') if where else ''}{error.message}"
        )
    return {key: _stripped(value[key]) for key in schema["properties"] if key in value}


def _stripped(value):
    """A text without the spaces around it; each text of a list or object so too."""
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    if isinstance(value, dict):
        return {key: _stripped(v) for key, v in value.items()}
    return value.strip() if isinstance(value, str) else value


def _json_object(text: str):
    fenced = _FENCE.search(text)
    body = (fenced.group(1) if fenced else text).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise ReplyError("the reply holds no JSON object")
    try:
        return json.loads(body[start : end + 1])
    except json.JSONDecodeError as error:
        raise ReplyError(f"the reply is not valid JSON: {error}") from None


def retry_message(error: ReplyError, schema: dict = DRAFT_REPLY) -> dict:
    """The user message that sends a validation error back to the model."""
    keys = ", ".join(schema["required"])
    return {
        "role": "user",
        "content": f"That reply was not usable: {error}. "
        f"Reply again with only one JSON object with the keys {keys}.",
    }
