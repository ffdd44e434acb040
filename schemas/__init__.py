"""The record contracts: one JSON Schema (draft 2020-12) per record kind.

``validate(kind, record)`` checks a record and raises :class:`RecordError` naming the
record id and the JSON pointer of the fault. Kinds: ``source_example``, ``template``,
``item``, ``review_decision``, ``manifest``, ``recipe``.

Two validators serve each kind: a compiled one (jsonschema-rs, about a hundred times
faster) says yes or no, and jsonschema's says why a record fails: the record id, the
JSON pointer and a sentence, as before. A record is valid when either says so, so the
verdict stays jsonschema's even where the compiled one would be stricter (formats: the
compiled one does not check them, and jsonschema checks none that our schemas use).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from answerable.kernel.errors import RecordError

if TYPE_CHECKING:  # jsonschema is imported only to explain a record that fails
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

SCHEMA_DIR = Path(__file__).parent
KINDS = ("source_example", "template", "item", "review_decision", "manifest", "recipe")
KINDS += ("prediction",)  # a system's answer to one released item (answerable evaluate)


@cache
def _schema(kind: str) -> dict:
    if kind not in KINDS:
        raise ValueError(f"unknown record kind {kind!r}; known kinds: {', '.join(KINDS)}")
    return json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text())


@cache
def _registry() -> Registry:
    from referencing import Registry, Resource

    resources = []
    for kind in KINDS:
        resource = Resource.from_contents(_schema(kind))
        resources += [(_schema(kind)["$id"], resource), (f"{kind}.schema.json", resource)]
    return Registry().with_resources(resources)


@cache
def validator(kind: str) -> Draft202012Validator:
    """The jsonschema validator for one record kind (the one that explains errors).

    ``format`` is an annotation here, as in the compiled validator (draft 2020-12's
    default): jsonschema would check a format only when an optional package for it is
    installed, so the verdict would depend on the machine. A field's form is a pattern."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_schema(kind), registry=_registry())


@cache
def fast_validator(kind: str) -> jsonschema_rs.Validator:
    """The compiled (jsonschema-rs) validator for one record kind: a fast yes or no."""
    registry = jsonschema_rs.Registry([(_schema(k)["$id"], _schema(k)) for k in KINDS])
    return jsonschema_rs.validator_for(_schema(kind), registry=registry, validate_formats=False)


def pointer(error: ValidationError) -> str:
    """The JSON pointer (``/spans/0/tag``) of the value an error is about."""
    return "".join(
        f"/{str(part).replace('~', '~0').replace('/', '~1')}" for part in error.absolute_path
    )


def describe(error: ValidationError) -> str:
    """A short sentence for one validation error, naming unknown keys plainly."""
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        return f"{error.message}; known keys: {', '.join(known)}"
    return error.message


def first_error(kind: str, record: Any) -> ValidationError | None:
    """The most relevant validation error of ``record``, or None when it is valid."""
    if fast_validator(kind).is_valid(record):
        return None  # valid when either validator says so (see the module's docstring)
    from jsonschema.exceptions import best_match

    return best_match(validator(kind).iter_errors(record))


def validate(kind: str, record: Any) -> None:
    """Raise :class:`RecordError` when ``record`` does not satisfy the ``kind`` schema.

    >>> validate("review_decision", {"item_id": "0" * 16, "annotator": "ana",
    ...                              "verdict": "accept", "time": "2026-01-01T00:00:00Z"})
    """
    error = first_error(kind, record)
    if error is not None:
        record_id = record.get("id") or record.get("item_id") if isinstance(record, dict) else None
        raise RecordError(record_id, pointer(error), describe(error))


def is_valid(kind: str, record: Any) -> bool:
    """True when ``record`` satisfies the ``kind`` schema."""
    return fast_validator(kind).is_valid(record) or validator(kind).is_valid(record)
