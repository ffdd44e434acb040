"""What a release's fields and labels mean, for its card: the ``Data fields`` table
(each field's meaning and type from the released record's schema, an example from the
release's own data) and the ``Labels and categories`` table (each category's definition
from the taxonomy text the review guidelines show, and the names the papers use).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from answerable.builders.drafting.categories import definitions
from answerable.release.documents.record_schema import JSON_TEXT, record_schema
from answerable.release.reader import data_files

# The names each paper gives a category (the taxonomy of the design, one vocabulary
# inside, mapped to each benchmark's own words).
PAPER_NAMES = {
    "answerable": "DTE, NAQ, SCARE, TrustSQL: answerable / feasible",
    "column-ambiguous": "DTE column ambiguity; NAQ Column Ambiguous",
    "value-ambiguous": "DTE value ambiguity; NAQ Value Ambiguous",
    "vague-question": "SCARE VQ (vague question)",
    "vague-word": "SCARE VW (vague word)",
    "operator-ambiguous": "NAQ Operator Ambiguous",
    "ambiguous-reference": "SCARE AR (ambiguous reference); NAQ Contextual Ambiguous",
    "missing-column": "DTE column unanswerable; SCARE MC; NAQ Columns Missing; "
    "TrustSQL column-surface / -related / -unrelated (subtype)",
    "missing-value": "DTE value unanswerable; NAQ Value Missing",
    "calculation": "DTE calculation unanswerable",
    "external-knowledge": "none of the five directly (NAQ Out of Domain borders on it)",
    "out-of-scope": "SCARE OS; TrustSQL non-SQL; NAQ Non-SQL Questions; DTE out of scope",
    "small-talk": "SCARE ST (small talk)",
    "out-of-domain": "TrustSQL out-of-domain; NAQ Out of Domain",
}
EXAMPLE_ROWS = 50  # rows read per split to find each field's example
EXAMPLE_WIDTH = 70  # characters of an example shown in the table


def field_examples(folder: Path, manifest: dict) -> dict[str, object]:
    """Each field's first non-null value in the release's data, splits in reading
    order, a few rows of each read (only the Parquet files' heads)."""
    found: dict[str, object] = {}
    for files in data_files(manifest).values():
        if "parquet" not in files:
            continue
        head = pl.scan_parquet(Path(folder) / files["parquet"]["path"]).head(EXAMPLE_ROWS)
        for row in head.collect().iter_rows(named=True):
            for name, value in row.items():
                if name not in found and value not in (None, [], ""):
                    found[name] = value
    return found


def field_lines(examples: dict[str, object]) -> list[str]:
    """The card's ``Data fields`` section: one row per released field."""
    schema = record_schema()
    lines = [
        "## Data fields",
        "",
        "Every record holds every field (null when the item has none); "
        "`schema/record.schema.json` is the JSON Schema of a record, and every record "
        "validates against it. The example is the first value in this release.",
        "",
        "| field | type | meaning | example |",
        "|---|---|---|---|",
    ]
    for name, node in schema["properties"].items():
        meaning = node.get("description", "").removeprefix(JSON_TEXT)
        example = _shown(examples.get(name))
        lines.append(f"| `{name}` | {type_name(node)} | {_cell(meaning)} | {example} |")
    return [*lines, ""]


def type_name(node: dict) -> str:
    """A field's type in words: string, integer, JSON text, list of objects (keys) ..."""
    if node.get("contentMediaType") == "application/json":
        return "JSON text"
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else [k for k in kinds or [] if k != "null"]
    if not kinds and "enum" in node:
        return "string (one of: " + ", ".join(str(v) for v in node["enum"] if v) + ")"
    if kinds == ["array"]:
        return "list of " + _plural(type_name(node.get("items") or {}))
    if kinds == ["object"] and node.get("properties"):
        return "object (" + ", ".join(node["properties"]) + ")"
    return " or ".join(kinds) or "any"


def _plural(name: str) -> str:
    head, _, rest = name.partition(" ")
    return f"{head}s {rest}".strip() if head in ("object", "string", "integer") else name


def _shown(value: object) -> str:
    if value is None:
        return "—"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text) > EXAMPLE_WIDTH:
        text = text[: EXAMPLE_WIDTH - 1] + "…"
    return "`" + _cell(text.replace("`", "'")) + "`"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def category_lines(frame: pl.DataFrame) -> list[str]:
    """The card's ``Labels and categories`` section: each category of the taxonomy with
    its definition (the text reviewers decide by), the papers' names for it, and how many
    items of this release have it."""
    counts = frame.group_by("label", "category").len()
    held = {(row[0], row[1] or row[0]): row[2] for row in counts.iter_rows()}
    lines = [
        "## Labels and categories",
        "",
        "`label` is answerable, ambiguous or unanswerable; `category` names the kind of "
        "problem (null for answerable items). The definitions are the ones the reviewers "
        "decided by; the names the five source papers (DTE, OncoMX-NAQ, SCARE, TrustSQL, "
        "BiomedSQL) use for each are beside them.",
        "",
        "| label | category | definition | in the papers | items |",
        "|---|---|---|---|---:|",
    ]
    for d in definitions():
        shown = "—" if d.name == "answerable" else f"`{d.name}`"
        count = held.get((d.label, d.name), 0)
        papers = PAPER_NAMES.get(d.name, "—")
        lines.append(f"| {d.label} | {shown} | {_cell(d.definition)} | {papers} | {count} |")
    return [*lines, ""]
