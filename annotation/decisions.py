"""Review decisions: one annotator's verdict on one item, checked before it is kept.

A decision is a record under ``schemas/review_decision.schema.json``::

    {"item_id": "0123456789abcdef", "annotator": "ana", "verdict": "relabel",
     "label": "ambiguous", "category": "vague-word", "question": None, "sql": None,
     "spans": None, "comment": "'recent' has no cut-off", "time": "2026-01-01T12:00:00Z"}

``accept`` keeps the item as it is (with the corrected question or spans when given),
``reject`` drops it, ``relabel`` moves it to another label and category. A corrected
question or SQL makes the decision a correction (:mod:`.corrections`): SQL belongs to an
item that is (or becomes) answerable, and a draft without SQL becomes answerable only
with the SQL that answers it. Every problem is a
:class:`DecisionError` that says where the decision came from (a row of an import file,
a request of the review page) and what to change.
"""

from __future__ import annotations

from datetime import UTC, datetime

from answerable.annotation.queue import RETRACT
from answerable.kernel.errors import AnswerableError, RecordError
from answerable.schemas import validate

VERDICTS = ("accept", "reject", "relabel")
TAXONOMY: dict[str, tuple[str | None, ...]] = {
    "answerable": (None,),
    "ambiguous": (
        "column-ambiguous",
        "value-ambiguous",
        "operator-ambiguous",
        "vague-question",
        "vague-word",
        "ambiguous-reference",
    ),
    "unanswerable": (
        "missing-column",
        "missing-value",
        "calculation",
        "external-knowledge",
        "out-of-scope",
        "out-of-domain",
        "small-talk",
    ),
}
CATEGORY_LABEL = {c: label for label, cats in TAXONOMY.items() for c in cats if c is not None}
SPAN_TAGS = ("AMB", "UNK", "COL", "VAL")
FIELDS = ("item_id", "annotator", "verdict", "label", "category", "question", "sql", "spans")
FIELDS += ("comment", "time")


class DecisionError(AnswerableError):
    """A decision that cannot be kept: names where it came from, the problem and the fix.

    >>> str(DecisionError("row 3", "unknown item id 'abc'", "copy the id from the export"))
    "row 3: unknown item id 'abc' (fix: copy the id from the export)"
    """

    def __init__(self, where: str, problem: str, fix: str | None = None):
        self.where, self.problem, self.fix = where, problem, fix
        super().__init__(f"{where}: {problem}" + (f" (fix: {fix})" if fix else ""))


def now() -> str:
    """The current UTC time in the decisions' format (microseconds keep order)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def make_decision(item_id: str, annotator: str, verdict: str, **fields) -> dict:
    """A decision record with every field present (missing ones null, time now).

    >>> make_decision("0" * 16, "ana", "accept", time="2026-01-01T00:00:00Z")["label"] is None
    True
    """
    decision = {name: fields.get(name) for name in FIELDS}
    decision.update(item_id=item_id, annotator=annotator, verdict=verdict)
    decision["time"] = fields.get("time") or now()
    return decision


def label_and_category(label: str | None, category: str | None) -> tuple[str | None, str | None]:
    """The (label, category) pair a relabel means; the label follows from the category.

    >>> label_and_category(None, "vague-word")
    ('ambiguous', 'vague-word')
    >>> label_and_category("answerable", None)
    ('answerable', None)
    """
    if label is None and category is not None:
        label = CATEGORY_LABEL.get(category)
    return label, category


def check_decision(decision: dict, item: dict | None, where: str) -> dict:
    """The decision made ready to keep, or :class:`DecisionError` naming ``where``.

    Checks the review schema, that the item exists, that a relabel names a known label
    and category that belong together, and that spans lie inside the question. An
    accept with SQL of an item that is not answerable is a relabel to answerable.
    """
    decision = {name: _blank_to_none(decision.get(name)) for name in FIELDS}
    decision["annotator"] = annotator_name(decision["annotator"])
    if (
        decision["verdict"] == "accept"
        and decision["sql"]
        and item
        and item.get("label") != ("answerable")
    ):
        decision.update(verdict="relabel", label="answerable", category=None)  # SQL answers it
    if decision["verdict"] == "relabel":
        decision["label"], decision["category"] = label_and_category(
            decision["label"], decision["category"]
        )
    else:
        decision["label"] = decision["category"] = None
    _check_schema(decision, where)
    if item is None:
        raise DecisionError(
            where,
            f"unknown item id '{decision['item_id']}'",
            "use the id of an item in the review queue (answerable review export lists them)",
        )
    if decision["verdict"] == "relabel":
        _check_relabel(decision, item, where)
    _check_sql(decision, item, where)
    _check_spans(decision, item, where)
    return decision


def annotator_name(name):
    """One spelling per annotator: spaces trimmed and folded, case folded, so ``Dave``
    and ``dave `` count as one person (not a string: left for the schema to refuse).

    >>> annotator_name("  Dave  Smith ")
    'dave smith'
    """
    return " ".join(name.split()).casefold() if isinstance(name, str) else name


def _blank_to_none(value):
    return None if isinstance(value, str) and not value.strip() else value


def _check_schema(decision: dict, where: str) -> None:
    if decision["verdict"] not in (*VERDICTS, RETRACT):
        raise DecisionError(
            where, f"unknown verdict {decision['verdict']!r}", f"use one of: {', '.join(VERDICTS)}"
        )
    if decision["verdict"] == "relabel" and decision["label"] is None:
        category = decision["category"]
        raise DecisionError(
            where,
            f"relabel to unknown category {category!r}" if category else "relabel without label",
            f"give a category of the taxonomy: {', '.join(CATEGORY_LABEL)}, or label answerable",
        )
    try:
        validate("review_decision", decision)
    except RecordError as error:
        raise DecisionError(where, f"{error.pointer or '/'}: {error.problem}") from None


def _check_relabel(decision: dict, item: dict, where: str) -> None:
    label, category = decision["label"], decision["category"]
    if category not in TAXONOMY[label]:
        known = ", ".join(str(c) for c in TAXONOMY[label] if c) or "none (leave it empty)"
        raise DecisionError(
            where, f"relabel to unknown category {category!r} for label {label}", f"use: {known}"
        )
    if label == "answerable" and not (item.get("sql") or decision.get("sql")):
        raise DecisionError(
            where,
            f"item {item['id']} has no SQL, so it cannot become answerable without it",
            "write the SQL that answers it (the sql field), or relabel it to an ambiguous "
            "or unanswerable category, or reject it",
        )


def _check_sql(decision: dict, item: dict, where: str) -> None:
    label = decision["label"] if decision["verdict"] == "relabel" else item.get("label")
    if decision["sql"] and label != "answerable":
        raise DecisionError(
            where,
            f"SQL given for an item labelled {label}: gold SQL belongs to answerable items",
            "relabel it to answerable with the SQL, or leave the SQL empty",
        )


def _check_spans(decision: dict, item: dict, where: str) -> None:
    question = decision["question"] or item.get("question") or ""
    for span in decision["spans"] or []:
        if not 0 <= span["start"] < span["end"] <= len(question):
            raise DecisionError(
                where,
                f"span {span['start']}-{span['end']} lies outside the question "
                f"({len(question)} characters)",
                "give character offsets into the (corrected) question",
            )


def outcome(decision: dict) -> str:
    """What a decision asks for, as one comparable value: ``accept``, ``reject`` or
    ``relabel:<label>/<category>``, followed by the corrected SQL when there is one (two
    annotators agree on a correction only when they wrote the same query, spacing aside).

    >>> outcome({"verdict": "relabel", "label": "ambiguous", "category": "vague-word"})
    'relabel:ambiguous/vague-word'
    >>> outcome({"verdict": "relabel", "label": "answerable", "category": None,
    ...          "sql": "SELECT  1"})
    'relabel:answerable/ sql:SELECT 1'
    """
    sql = decision.get("sql")
    written = f" sql:{' '.join(sql.split())}" if sql and decision["verdict"] != "reject" else ""
    if decision["verdict"] != "relabel":
        return decision["verdict"] + written
    return f"relabel:{decision['label']}/{decision['category'] or ''}{written}"
