"""OncoMX-NAQ's layout: ``<split>.tsv`` with the columns ``question``, ``category`` and
``sql`` (the gold SQL, or ``none``), plus ``db_id``: NAQ asks over one database, a release
over several and over edited variants, where the same question can be answerable on the
source and unanswerable on a variant.

NAQ names eight no-answer categories; ours map onto them as below (an operator-ambiguous
question and vague words such as "high" or "more reliable" are NAQ's operator ambiguity,
a reference to something unnamed its contextual ambiguity); :data:`FROM_NAQ` maps NAQ's
names back. Answerable items are written with the category
``Answerable`` and their SQL. Items whose category has no NAQ counterpart (a
vague question, calculation, external knowledge, or none given) are left out.
"""

from __future__ import annotations

from collections.abc import Mapping

from answerable.builders.schema import DatabaseSchema
from answerable.release.export.common import Export, by_split, csv_text
from answerable.release.reader import database_key

NO_SQL = "none"
ANSWERABLE = "Answerable"
CATEGORIES = {
    "out-of-scope": "Non-SQL Questions",
    "missing-column": "Columns Missing",
    "missing-value": "Value Missing",
    "out-of-domain": "Out of Domain",
    "column-ambiguous": "Column Ambiguous",
    "value-ambiguous": "Value Ambiguous",
    "ambiguous-reference": "Contextual Ambiguous",
    "operator-ambiguous": "Operator Ambiguous",
    "vague-word": "Operator Ambiguous",  # a vague comparison word: NAQ's operator ambiguity
}
# NAQ's names back to the taxonomy: the first of ours that maps to each
FROM_NAQ = {naq: ours for ours, naq in reversed(list(CATEGORIES.items()))}


def export(items: list[dict], _schemas: Mapping[str, DatabaseSchema]) -> Export:
    """One TSV per split."""
    out = Export()
    for split, members in by_split(items).items():
        rows = []
        for item in members:
            category = naq_category(item)
            if category is None:
                out.leave_out(item, f"OncoMX-NAQ has no category for {item.get('category')!r}")
                continue
            sql = one_line(item.get("sql") or NO_SQL)
            rows.append([one_line(item["question"]), category, sql, database_key(item)])
        if rows:
            out.files[f"{split}.tsv"] = csv_text(
                ["question", "category", "sql", "db_id"], rows, "\t"
            )
    return out


def naq_category(item: dict) -> str | None:
    """The NAQ category of an item, or None when NAQ has none for it."""
    if item["label"] == "answerable":
        return ANSWERABLE
    return CATEGORIES.get(item.get("category") or "")


def one_line(text: str) -> str:
    """Text on one line: a TSV row cannot hold tabs or line breaks."""
    return " ".join(text.split())
