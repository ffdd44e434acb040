"""Items to Argilla records and Argilla responses to decisions: pure functions.

Nothing here talks to a server or imports the SDK; :mod:`argilla_queue` turns these
plain dictionaries into SDK objects. The dataset has:

- text fields ``question``, ``schema`` (the excerpt, Markdown), and the optional Markdown
  fields ``sql``, ``result`` (a preview of the gold result), ``readings`` (each reading of
  an ambiguous item with its SQL and first rows) and ``explanation``;
- a required label question ``verdict`` (accept, reject, relabel), a label question
  ``category`` (the taxonomy, ``answerable`` for no category; its description defines
  every category), text questions ``corrected_question``, ``corrected_sql`` (the query
  that answers the question: a draft with it becomes answerable) and ``comment`` (why,
  above all for a reject) and a span question ``spans`` on the question (AMB, UNK, COL,
  VAL);
- terms metadata ``database``, ``generator``, ``item_label`` and ``item_category`` (Argilla
  wants one name space for fields, questions and metadata, and ``category`` is the
  question), integer metadata ``hardness`` (1 easy .. 4 extra), ``row_count`` and
  ``tables`` (tables the gold SQL reads);
- guidelines: how to decide, then every category's definition and example, from the
  same taxonomy text the drafting prompts use (:func:`definitions`);
- the generator's category and spans as suggestions;
- an overlap task distribution asking for the recipe's minimum number of submissions.

A record's id is the item id, so pushing twice updates instead of duplicating. Responses
come back from the plain records listing as JSON; :func:`decisions_from_record` reads the
submitted ones and reports the rest (drafts, discarded, empty or unreadable values). An
accept whose category differs from the item's is a relabel to that category: Argilla
shows the category question beside the verdict, and a changed category is never lost.
A corrected question or SQL makes the decision a correction; an accept with SQL of an
item that is not answerable is a relabel to answerable (:func:`check_decision`, on
pull). The build verifies every accepted correction (:mod:`.corrections`).
"""

from __future__ import annotations

from answerable.annotation.decisions import (
    CATEGORY_LABEL,
    SPAN_TAGS,
    VERDICTS,
    label_and_category,
    make_decision,
)
from answerable.annotation.excerpt import excerpt_markdown
from answerable.annotation.readings import SHOWN_ROWS, pending_readings
from answerable.builders.drafting.categories import definitions

ANSWERABLE = "answerable"
CATEGORY_OPTIONS = (ANSWERABLE, *CATEGORY_LABEL)
AGENT = "answerable"
TERMS = ["database", "generator", "item_label", "item_category"]
INTEGERS = ["hardness", "row_count", "tables"]
HARDNESS = {"easy": 1, "medium": 2, "hard": 3, "extra": 4}


def settings_spec(min_submitted: int) -> dict:
    """The dataset settings as plain data (see the module docstring)."""
    return {
        "guidelines": guidelines_markdown(),
        "fields": [
            _field("question", "Question", required=True, markdown=False),
            _field("schema", "Schema it touches"),
            _field("sql", "Gold SQL"),
            _field("result", "Gold result (first rows)"),
            _field("readings", "Readings, each with its SQL and first rows"),
            _field("explanation", "Trigger and explanation"),
        ],
        "questions": [
            _ask("label", "verdict", "Verdict", required=True, labels=list(VERDICTS)),
            _ask(
                "label",
                "category",
                "Category (a different one relabels the item)",
                labels=list(CATEGORY_OPTIONS),
                description=CATEGORY_HELP,
                label_descriptions=label_descriptions(),
            ),
            _ask("text", "corrected_question", "Corrected question"),
            _ask(
                "text",
                "corrected_sql",
                "Corrected SQL (the query that answers the question; a draft with it "
                "becomes answerable)",
            ),
            _ask("text", "comment", "Comment (why; say it for a reject)"),
            _ask("span", "spans", "Problem spans", field="question", labels=list(SPAN_TAGS)),
        ],
        "metadata": {"terms": TERMS, "integers": INTEGERS},
        "min_submitted": min_submitted,
    }


def _field(name: str, title: str, required: bool = False, markdown: bool = True) -> dict:
    return {"name": name, "title": title, "required": required, "markdown": markdown}


def _ask(kind: str, name: str, title: str, required: bool = False, **extra) -> dict:
    return {"kind": kind, "name": name, "title": title, "required": required, **extra}


GUIDELINES = (
    "Accept the item when its label and category are right and the question reads well; "
    "reject it when it is wrong beyond repair (say why under Comment); relabel it when it "
    "belongs to another category (choose it under Category; 'answerable' moves it to "
    "answerable; an accept with another category counts as that relabel). Correct the "
    "question or the spans when needed; the corrections are kept with an accept. When the "
    "database does answer a drafted question, write the SQL under Corrected SQL: the item "
    "becomes answerable once the build has run the query."
)


CATEGORY_HELP = (
    "Keep the suggested category to accept the item as it is; choose another to relabel it. "
    "Each category's definition is its label's description; the guidelines give examples."
)


def label_descriptions() -> dict[str, str]:
    """Each category's definition, as the description of its label."""
    return {d.name: f"{d.label}: {d.definition}" for d in definitions()}


def guidelines_markdown() -> str:
    """The dataset guidelines: how to decide, then every category with an example."""
    lines = [GUIDELINES, "", "## Categories", ""]
    for d in definitions():
        lines.append(f"- **{d.name}** ({d.label}): {d.definition} *Example:* {d.example}")
    return "\n".join(lines)


def record_for(item: dict, excerpt: list[dict] | None, context: dict | None = None) -> dict:
    """The Argilla record of one item, as plain data with the item id as record id."""
    fields = {"question": item["question"]}
    if excerpt:
        fields["schema"] = excerpt_markdown(excerpt)
    if item.get("sql"):
        fields["sql"] = f"```sql\n{item['sql']}\n```"
    result = item.get("result") or {}
    if result.get("columns"):
        fields["result"] = markdown_table(result["columns"], result.get("rows") or [])
        fields["result"] += f"\n\n*{result.get('row_count')} row(s)*"
    readings = readings_markdown(item)
    if readings:
        fields["readings"] = readings
    explanation = _explanation(item, context or {})
    if explanation:
        fields["explanation"] = explanation
    provenance = item.get("provenance") or {}
    metadata = {
        "database": item["db_id"],
        "generator": provenance.get("generator") or "unknown",
        "item_label": item["label"],
        "item_category": item.get("category") or ANSWERABLE,
        **numbers(item),
    }
    suggestions = [{"question_name": "category", "value": item.get("category") or ANSWERABLE}]
    spans = [
        {"label": s["tag"], "start": s["start"], "end": s["end"]} for s in item.get("spans") or []
    ]
    if spans:
        suggestions.append({"question_name": "spans", "value": spans})
    for suggestion in suggestions:
        suggestion["agent"] = metadata["generator"]
    return {"id": item["id"], "fields": fields, "metadata": metadata, "suggestions": suggestions}


def numbers(item: dict) -> dict[str, int]:
    """The integer metadata an item has: hardness rank, result rows, tables read.

    >>> numbers({"sql_meta": {"hardness": "hard", "tables": ["a", "b"]},
    ...          "result": {"row_count": 7}})
    {'hardness': 3, 'row_count': 7, 'tables': 2}
    >>> numbers({"sql": None})
    {}
    """
    meta, result = item.get("sql_meta") or {}, item.get("result") or {}
    found = {
        "hardness": HARDNESS.get(meta.get("hardness")),
        "row_count": result.get("row_count"),
        "tables": len(meta["tables"]) if meta.get("tables") else None,
    }
    return {k: int(v) for k, v in found.items() if isinstance(v, int)}


def markdown_table(columns: list, rows: list) -> str:
    """A Markdown table of the first rows (pipes escaped, NULL for None).

    >>> print(markdown_table(["a", "b"], [[1, None], ["x|y", 2]]))
    | a | b |
    | --- | --- |
    | 1 | NULL |
    | x\\|y | 2 |
    """
    cell = lambda v: "NULL" if v is None else str(v).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = ["| " + " | ".join(cell(c) for c in columns) + " |"]
    lines.append("| " + " | ".join("---" for _ in columns) + " |")
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows[:SHOWN_ROWS]]
    return "\n".join(lines)


def readings_markdown(item: dict) -> str:
    """Each reading with its SQL and first rows: the item's stored ``readings``, else
    the readings' SQL from its trigger (their results are run on the review page)."""
    parts = []
    for reading in item.get("readings") or []:
        parts.append(f"**{reading['name']}**\n\n```sql\n{reading['sql']}\n```")
        if reading.get("columns"):
            table = markdown_table(reading["columns"], reading.get("rows") or [])
            parts.append(f"{table}\n\n*{reading.get('row_count')} row(s)*")
    if not parts:
        for name, sql in pending_readings(item):
            parts.append(f"**{name}**\n\n```sql\n{sql}\n```")
    return "\n\n".join(parts)


def _explanation(item: dict, context: dict) -> str:
    parts = []
    parent = context.get("parent")
    if parent:
        parts.append(f"**Drafted from:** {parent['question']}")
        if parent.get("sql"):
            parts.append(f"```sql\n{parent['sql']}\n```")
    if context.get("spot_check"):
        parts.append("**Spot check** of a machine-verified item.")
    trigger = item.get("trigger") or {}
    if trigger:
        shown = sorted((k, v) for k, v in trigger.items() if k not in ("kind", "readings"))
        details = ", ".join(f"{k}: {v}" for k, v in shown)
        parts.append(f"**Trigger:** {trigger.get('kind')}" + (f" ({details})" if details else ""))
    if item.get("explanation"):
        parts.append(f"**Explanation:** {item['explanation']}")
    return "\n\n".join(parts)


def record_problem(record: dict) -> str | None:
    """Why a record would be refused by the server, caught before sending, or None."""
    for name, value in record["fields"].items():
        if not isinstance(value, str) or not value.strip():
            return f"field {name} is empty"
    category = record["metadata"]["item_category"]
    if category not in CATEGORY_OPTIONS:
        return f"category {category!r} is not in the taxonomy"
    question = record["fields"]["question"]
    for suggestion in record["suggestions"]:
        if suggestion["question_name"] != "spans":
            continue
        for span in suggestion["value"]:
            if not 0 <= span["start"] < span["end"] <= len(question):
                return f"span {span['start']}-{span['end']} lies outside the question"
    return None


def item_from_record(record: dict) -> dict:
    """The review view of an item rebuilt from its record (for the review commands)."""
    meta = record.get("metadata") or {}
    category = meta.get("item_category")
    return {
        "id": record.get("external_id"),
        "db_id": meta.get("database"),
        "question": record["fields"].get("question"),
        "sql": record["fields"].get("sql"),
        "label": meta.get("item_label"),
        "category": None if category == ANSWERABLE else category,
        "provenance": {"generator": meta.get("generator")},
    }


def decisions_from_record(record: dict, usernames: dict[str, str]) -> tuple[list[dict], list[str]]:
    """Decisions from one record of the records listing (JSON with ``responses``).

    Only submitted responses count. Drafts are work in progress; a discarded response
    means the annotator skipped the item. A submitted response without a verdict, or
    with a value that cannot be read, is reported, never guessed. Argilla's span question
    marks the record's question field, so spans given with a corrected question are
    reported and dropped (their offsets belong to the old text). ``usernames`` maps
    user ids to names (the id is used when the name is unknown).
    """
    decisions, problems = [], []
    item_id = record.get("external_id")
    for response in record.get("responses") or []:
        annotator = usernames.get(str(response.get("user_id")), str(response.get("user_id")))
        where = f"record {item_id}, response of {annotator}"
        if response.get("status") != "submitted":
            continue
        values = response.get("values") or {}
        verdict = _value(values, "verdict")
        if verdict not in VERDICTS:
            problems.append(f"{where}: no readable verdict ({verdict!r}); not counted")
            continue
        label, category = None, None
        chosen = _value(values, "category")
        suggested = (record.get("metadata") or {}).get("item_category")
        if verdict == "accept" and chosen and suggested and chosen != suggested:
            verdict = "relabel"  # an accept under another category: that category is meant
        sql = _text(_value(values, "corrected_sql"))
        if verdict == "relabel":
            label, category = _relabel_target(chosen)
        question, spans = (
            _text(_value(values, "corrected_question")),
            _spans(_value(values, "spans")),
        )
        if question and spans:
            problems.append(
                f"{where}: spans mark the original question, not the corrected one; spans not kept"
            )
            spans = None
        decisions.append(
            make_decision(
                item_id,
                annotator,
                verdict,
                label=label,
                category=category,
                question=question,
                sql=sql,
                spans=spans,
                comment=_text(_value(values, "comment")),
                time=_utc(response.get("updated_at") or response.get("inserted_at")),
            )
        )
    return decisions, problems


def _value(values: dict, name: str):
    entry = values.get(name)
    return entry.get("value") if isinstance(entry, dict) else None


def _relabel_target(category: str | None) -> tuple[str | None, str | None]:
    if category == ANSWERABLE:
        return ANSWERABLE, None
    if category is None:
        return None, None
    return label_and_category(None, category)


def _text(value) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _spans(value) -> list[dict] | None:
    if not isinstance(value, list) or not value:
        return None
    return [{"start": s["start"], "end": s["end"], "tag": s["label"]} for s in value]


def _utc(text: str | None) -> str | None:
    """Argilla's naive UTC timestamps with the ``Z`` the decision schema wants."""
    if not text:
        return None
    return text if text.endswith("Z") or "+" in text[10:] else text + "Z"
