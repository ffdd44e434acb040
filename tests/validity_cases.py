"""The hand-labelled validity cases (tests/fixtures/validity/cases.jsonl) and the scores
of the checks against them, shared by tests/test_validity.py and
tests/benchmarks/validity.py: the plausibility gate (``column-pair``, ``value-column``,
and ``value-reading``: a value the source holds in two columns), the draft checks
(``draft``: vague-word settled, reference determined) and the leak checks of a dropped
column (``dropped-column``)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from answerable.builders.counterfactual.gate import (
    Verdict,
    judge_columns,
    judge_named_column,
    judge_second_reading,
    judge_value,
)
from answerable.builders.counterfactual.grounding import Mention
from answerable.builders.counterfactual.leaks import name_leaks, value_leaks
from answerable.builders.drafting import settled_by_question
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema

CASES = Path(__file__).resolve().parent / "fixtures" / "validity" / "cases.jsonl"
KNOWN = 200  # values of a column the gate sees, as the edits read them (edits.KNOWN_VALUES)
GATE_KINDS = ("column-pair", "value-column", "value-reading")
NEW_ORIGINS = ("issue-reading", "annotator-reading")
"""The cases added from outside the gate's own making (a blinded reading's wrong labels,
and cases read from Spider and the demo), scored apart from the older ones."""
BLIND_ORIGIN = "blind-reading"
"""The cases read blind from survey builds over Spider, GeoQuery and Chinook: proposals
(a column dropped under a parent's question, a column pair, a value read two ways) each
labelled from the question, schema and SQL without the toolkit's verdict."""
CHECKS = {"gate": GATE_KINDS, "draft checks": ("draft",), "leak checks": ("dropped-column",)}


def load_cases() -> list[dict]:
    """Every labelled case, in file order (sorted by id)."""
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


def known_values(database: Path, qualified: str) -> list[str]:
    """Distinct values of ``table.column`` (as text) in a SQLite file, read-only."""
    table, column = qualified.rsplit(".", 1)
    uri = f"file:{database}?mode=ro"
    with sqlite3.connect(uri, uri=True) as con:
        query = f'SELECT DISTINCT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL'
        return sorted(str(row[0]) for row in con.execute(query))


def judge(case: dict, databases: dict[str, Path], schemas: dict | None = None) -> Verdict | None:
    """The verdict of the case's check; None when a database or schema it needs is
    absent (``schemas``: db_id -> DatabaseSchema for sources without a file)."""
    if case["kind"] == "draft":
        return judge_draft(case, _schema(case["db_id"], databases, schemas))
    if case["kind"] == "dropped-column":
        return judge_dropped(
            case, databases.get(case["db_id"]), _schema(case["db_id"], databases, schemas)
        )
    database = databases.get(case["db_id"])
    if case["kind"] == "column-pair":
        qualified = f"{case['table']}.{case['column']}"
        known = known_values(database, qualified)[:KNOWN] if database else []
        return judge_columns(
            case["question"],
            case["mention"],
            case["table"],
            case["column"],
            case["candidates"],
            case.get("compared", ()),
            known,
        )
    if database is None:
        return None
    if case["kind"] == "value-reading":
        return judge_reading(case, DatabaseSchema.from_sqlite(database, case["db_id"]))
    first, second = case["columns"]
    verdict = judge_value(case["value"], second, known_values(database, second))
    if verdict.ok:  # as value_ambiguous_v1 verifies: the words must leave the column open
        verdict = judge_named_column(case["question"], case["value"], first, second)
    return verdict


def judge_reading(case: dict, schema: DatabaseSchema) -> Verdict:
    """A value the source holds in two columns: whether the question reads two ways."""
    question, value = case["question"], case["value"]
    start = question.lower().index(value.lower())
    mention = Mention(start, start + len(value), question[start : start + len(value)], "")
    first, second = case["columns"]
    tables = frozenset(t.name for t in schema.tables)
    return judge_second_reading(question, mention, first, second, set(case["tables_read"]), tables)


def _schema(db_id: str, databases: dict[str, Path], schemas: dict | None):
    if db_id in databases:
        return DatabaseSchema.from_sqlite(databases[db_id], db_id)
    return (schemas or {}).get(db_id)


def judge_draft(case: dict, schema) -> Verdict | None:
    """A draft passes when its problem is left open: the vague word not settled by the
    question, the reference not determined by the parent."""
    if case["category"] == "vague-word":
        found = settled_by_question.vague_word_settled(case["question"], case["trigger"])
    elif schema is None:
        return None
    else:
        parent = {"sql": case["parent_sql"], "question": case["parent_question"]}
        found = settled_by_question.reference_determined(
            case["question"], case["trigger"], parent, schema, case.get("concept")
        )
    return Verdict(True) if found is None else Verdict(False, "settled", found)


def judge_dropped(case: dict, database: Path | None, schema) -> Verdict | None:
    """A dropped column passes (the question becomes unanswerable) when nothing left
    answers for it: no synonym by name, and on a database file no column with the same
    values, none via a key, none derivable (:mod:`.leaks`)."""
    if schema is None:
        return None
    leaks = name_leaks(schema, case["table"], case["column"])
    if database is not None:
        db = ReadOnlyDatabase(database)
        try:
            leaks += value_leaks(db, schema, case["table"], case["column"])
        finally:
            db.close()
    return Verdict(True) if not leaks else Verdict(False, leaks[0].how, str(leaks[0].columns))


@dataclass
class Score:
    """The gate against the labels: accept is the positive class."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    skipped: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0


def score(
    cases: list[dict], databases: dict[str, Path], schemas: dict | None = None, kinds=GATE_KINDS
) -> Score:
    """Precision and recall of a check's accepts against the hand labels, over the cases
    of ``kinds`` (by default the gate's)."""
    found = Score()
    for case in cases:
        if case["kind"] not in kinds:
            continue
        verdict = judge(case, databases, schemas)
        if verdict is None:
            found.skipped += 1
            continue
        gold = case["verdict"] == "accept"
        if verdict.ok and gold:
            found.tp += 1
        elif verdict.ok:
            found.fp += 1
        elif gold:
            found.fn += 1
        else:
            found.tn += 1
        if verdict.ok != gold:
            found.misses.append(f"{case['id']} {case['verdict']}: {case['reason']} / {verdict}")
    return found


def by_round(cases: list[dict]) -> dict[str, list[dict]]:
    """The cases by the round they came from: the older ones, those added from outside
    (:data:`NEW_ORIGINS`), and those read blind (:data:`BLIND_ORIGIN`)."""
    rounds = {"older cases": [], "cases from outside": [], "blind cases": []}
    for case in cases:
        if case["origin"] == BLIND_ORIGIN:
            rounds["blind cases"].append(case)
        elif case["origin"] in NEW_ORIGINS:
            rounds["cases from outside"].append(case)
        else:
            rounds["older cases"].append(case)
    return rounds


def round_lines(cases: list[dict], databases: dict[str, Path], schemas: dict | None) -> list[str]:
    """Per round (:func:`by_round`) and per check (:data:`CHECKS`): precision and recall
    against the hand labels, one line each (a check with no case in a round is left out)."""
    lines = []
    for name, part in by_round(cases).items():
        for check, kinds in CHECKS.items():
            found = score(part, databases, schemas, kinds=kinds)
            if found.tp + found.fp + found.fn + found.tn == 0:
                continue
            lines.append(
                f"{check} on {name}: precision={found.precision:.3f} recall={found.recall:.3f} "
                f"(tp={found.tp} fp={found.fp} fn={found.fn} tn={found.tn}"
                + (f", skipped {found.skipped})" if found.skipped else ")")
            )
    return lines
