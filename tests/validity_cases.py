"""The hand-labelled validity cases (tests/fixtures/validity/cases.jsonl) and the gate's
score against them, shared by tests/test_validity.py and tests/benchmarks/validity.py."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from answerable.builders.counterfactual.gate import Verdict, judge_columns, judge_value

CASES = Path(__file__).resolve().parent / "fixtures" / "validity" / "cases.jsonl"


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


def judge(case: dict, databases: dict[str, Path]) -> Verdict | None:
    """The gate's verdict on one case; None for a value case whose database is absent."""
    if case["kind"] == "column-pair":
        return judge_columns(
            case["question"], case["mention"], case["table"], case["column"], case["candidates"]
        )
    database = databases.get(case["db_id"])
    if database is None:
        return None
    second = case["columns"][1]
    return judge_value(case["value"], second, known_values(database, second))


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


def score(cases: list[dict], databases: dict[str, Path]) -> Score:
    """Precision and recall of the gate's accepts against the hand labels."""
    found = Score()
    for case in cases:
        verdict = judge(case, databases)
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
