"""Prediction files: what a system answered, one line per released item.

Two layouts are read. JSON Lines under ``schemas/prediction.schema.json``, one
``{"id", "sql", "label", "category", "tags", "answer"}`` object per line; and the
single JSON object EHRSQL and TrustSQL submit, ``{"<id>": "<sql>" | "null" | null}``.
A null SQL, or the string ``"null"`` as EHRSQL writes it, is an abstention.

A file that is neither layout, a line without an id, or an id given twice stops the
read with one line naming the file and the line(s).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from answerable.kernel.errors import ConfigError
from answerable.schemas import describe, first_error, pointer

ABSTAIN = "null"  # how EHRSQL and TrustSQL spell "no SQL" in their submissions
BARE_ABSTENTION = "unanswerable"  # the label of an abstention that names none
_FIX_LAYOUT = 'write one {"id": ..., "sql": ...} object per line, or one {"<id>": "<sql>"} object'


@dataclass(frozen=True, slots=True)
class Prediction:
    """One system answer. ``sql`` None is an abstention; ``line`` is where it was read."""

    id: str
    sql: str | None = None
    label: str | None = None
    category: str | None = None
    tags: tuple[str, ...] | None = None
    answer: str | None = None
    line: int = 0
    # (first token, last token, concept) per span the system grounded (DTE)
    bindings: tuple[tuple[int, int, str | None], ...] | None = None

    @property
    def abstains(self) -> bool:
        """True when the system gave no SQL."""
        return self.sql is None

    @property
    def predicted_label(self) -> str:
        """The label the answer amounts to: SQL counts as ``answerable``; an abstention
        is the label it names, and ``unanswerable`` when it names none (``sql: null``
        alone says "not answerable", as EHRSQL's and TrustSQL's ``"null"`` does)."""
        if self.sql is not None:
            return "answerable"
        return self.label or BARE_ABSTENTION


def read_predictions(path: str | Path) -> dict[str, Prediction]:
    """The predictions of a file, by id; raises :class:`ConfigError` on a bad file."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, None, "no such prediction file", fix=_FIX_LAYOUT)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(path, None, "not UTF-8 text", fix=_FIX_LAYOUT) from None
    whole = _whole_object(text, path)
    if whole is not None and "id" not in whole:
        return _from_object(whole, path)
    return _from_lines(text, path)


def _whole_object(text: str, path: Path) -> dict | None:
    """The file as one JSON object (EHRSQL layout), or None when it is not one."""
    try:
        value = json.loads(text, object_pairs_hook=lambda pairs: _no_twice(pairs, path))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _no_twice(pairs: list[tuple[str, object]], path: Path) -> dict:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ConfigError(
                path, key, "id given twice in the object", fix="keep one prediction per id"
            )
        seen.add(key)
    return dict(pairs)


def _from_object(whole: dict, path: Path) -> dict[str, Prediction]:
    predictions = {}
    for key, sql in whole.items():
        if sql is not None and not isinstance(sql, str):
            raise ConfigError(
                path, key, f"value must be SQL text or null, not {type(sql).__name__}", _FIX_LAYOUT
            )
        predictions[key] = Prediction(id=key, sql=_sql(sql))
    return predictions


def _from_lines(text: str, path: Path) -> dict[str, Prediction]:
    predictions: dict[str, Prediction] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        record = _record(line, number, path)
        known = predictions.get(record["id"])
        if known is not None:
            raise ConfigError(
                path,
                f"line {number}",
                f"id {record['id']} given twice, on lines {known.line} and {number}",
                fix="keep one prediction per id",
            )
        predictions[record["id"]] = _prediction(record, number)
    if not predictions:
        raise ConfigError(path, None, "no predictions in the file", fix=_FIX_LAYOUT)
    return predictions


def _record(line: str, number: int, path: Path) -> dict:
    where = f"line {number}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise ConfigError(path, where, f"not JSON ({error.msg})", fix=_FIX_LAYOUT) from None
    if not isinstance(record, dict):
        raise ConfigError(path, where, "not a JSON object", fix=_FIX_LAYOUT)
    if not record.get("id"):
        raise ConfigError(path, where, "no id", fix="give every line the id of its item")
    if not _valid_shape(record):
        error = first_error("prediction", record)
        problem = f"{pointer(error) or '/'}: {describe(error)}"
        raise ConfigError(path, where, problem, fix="see schemas/prediction.schema.json")
    return record


_VALID_SHAPES: set[tuple] = set()


def _valid_shape(record: dict) -> bool:
    """Whether ``record`` satisfies the prediction schema.

    The schema is checked once per shape (keys, value kinds, label, tag kinds) and the
    answer remembered: a file of 100,000 predictions has a handful of shapes.
    """
    shape = tuple(sorted((key, _kind(key, value)) for key, value in record.items()))
    if shape in _VALID_SHAPES:
        return True
    if first_error("prediction", record) is not None:
        return False
    _VALID_SHAPES.add(shape)
    return True


def _kind(key: str, value: object) -> tuple:
    if key == "label":
        return ("label", value)  # the one enum
    if isinstance(value, str):
        return ("str", bool(value))
    if key == "bindings" and isinstance(value, list):  # objects: their keys and kinds
        return ("bindings", *sorted({_binding_kind(v) for v in value}))
    if isinstance(value, list):
        return ("list", *sorted({type(v).__name__ for v in value}))
    return (type(value).__name__,)


def _binding_kind(value: object) -> tuple:
    if not isinstance(value, dict):
        return (type(value).__name__,)
    return tuple(
        sorted((k, type(v).__name__, isinstance(v, int) and v >= 0) for k, v in value.items())
    )


def _prediction(record: dict, line: int) -> Prediction:
    tags, bindings = record.get("tags"), record.get("bindings")
    return Prediction(
        id=record["id"],
        sql=_sql(record.get("sql")),
        label=record.get("label"),
        category=record.get("category"),
        tags=None if tags is None else tuple(tags),
        answer=record.get("answer"),
        line=line,
        bindings=None
        if bindings is None
        else tuple((b["start"], b["end"], b["concept"]) for b in bindings),
    )


def _sql(value: str | None) -> str | None:
    if value is None or value.strip() in ("", ABSTAIN):
        return None
    return value
