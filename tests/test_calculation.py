"""calculation_v1 on small databases made for each case: what it makes, what it refuses.

The demo's items are in the golden file of ``test_counterfactual_edits.py``; here each
rule of the generator is tested on a table built to break it.
"""

from __future__ import annotations

import json
import sqlite3

from answerable.builders.counterfactual import GENERATORS, EditEnv, prepare
from answerable.builders.counterfactual.survey import survey_env, verified_parents
from answerable.builders.executor import Limits
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef

CALCULATION = GENERATORS["calculation_v1"]
TRADE = [("China", 3590.0, 2560.0), ("France", 650.0, 780.0), ("Chile", 95.0, 80.0)]
TRADE += [("Peru", 63.0, 52.0), ("Kenya", 7.0, 21.0), ("Japan", 717.0, 785.0)]


def trade_db(path, balance=lambda e, i: e - i, extra_copy=False):
    """Countries with exports, imports and a stored balance (exports - imports)."""
    with sqlite3.connect(path) as db:
        copy = ", balance_copy REAL" if extra_copy else ""
        db.execute(
            f"CREATE TABLE trade (country TEXT, exports REAL, imports REAL, balance REAL{copy})"
        )
        for country, exports, imports in TRADE:
            row = [country, exports, imports, balance(exports, imports)]
            db.execute(
                f"INSERT INTO trade VALUES ({', '.join('?' * (len(row) + extra_copy))})",
                row + ([row[-1]] if extra_copy else []),
            )
    db.close()
    return path


def run(tmp_path, question, sql, **db_options):
    """The proposal (or skip reason) and the verification failure for one question."""
    (tmp_path / "dbs").mkdir()
    trade_db(tmp_path / "dbs" / "trade.sqlite", **db_options)
    (tmp_path / "q.jsonl").write_text(
        json.dumps({"db_id": "trade", "question": question, "sql": sql}) + "\n"
    )
    spec = {"name": "q", "format": "jsonl", "path": "q.jsonl", "databases": "dbs"}
    made, databases = verified_parents(spec, tmp_path, tmp_path / "work")
    env = survey_env(databases, tmp_path / "work", 13, Limits(2.0, 100))
    try:
        parent = prepare(made.items[0], databases["trade"].schema, shapes=env.shapes)
        proposal = CALCULATION.propose(parent, env)
        if isinstance(proposal, str):
            return proposal, None
        return proposal, CALCULATION.verify(proposal, env)
    finally:
        env.close()


def test_a_stored_difference_becomes_a_calculation_question(tmp_path):
    proposal, failure = run(
        tmp_path,
        "What is the balance of China?",
        "SELECT balance FROM trade WHERE country = 'China'",
    )
    assert failure is None
    assert proposal.trigger["operands"] == ["trade.exports", "trade.imports"]
    assert proposal.trigger["reading"].count('"exports"') == 1
    assert [s["tag"] for s in proposal.spans if s["text"] == "balance"] == ["UNK"]
    assert "exports and imports" in proposal.explanation


def test_a_column_no_formula_gives_is_skipped(tmp_path):
    proposal, _ = run(
        tmp_path,
        "What is the balance of China?",
        "SELECT balance FROM trade WHERE country = 'China'",
        balance=lambda e, i: e * 3 + i,
    )
    assert proposal == "no-derivable-column"


def test_a_column_with_a_stored_copy_is_not_a_calculation(tmp_path):
    # balance_copy holds the same values: the question stays answerable without a formula
    proposal, _ = run(
        tmp_path,
        "What is the balance of China?",
        "SELECT balance FROM trade WHERE country = 'China'",
        extra_copy=True,
    )
    assert proposal == "no-derivable-column"


def test_the_formula_must_give_the_parents_rows(tmp_path):
    # China's stored balance is 1031 where the formula gives 1030 (within the leak check's
    # 1 %): a filter between the two keeps China for the parent and drops it for the formula
    proposal, failure = run(
        tmp_path,
        "Which countries have a balance above 1030.5 or below zero?",
        "SELECT country FROM trade WHERE balance > 1030.5 OR balance < 0",
        balance=lambda e, i: e - i + (1 if e - i == 1030 else 0),
    )
    assert not isinstance(proposal, str)
    assert failure.reason == "formula-differs"
    assert "3 rows against the parent's 4" in failure.detail


def test_a_schema_only_source_gives_nothing(tmp_path):
    trade_db(tmp_path / "trade.sqlite")
    schema = DatabaseSchema.from_sqlite(tmp_path / "trade.sqlite")
    env = EditEnv({"trade": DatabaseRef("trade", None, schema)}, None, 13)
    item = {
        "id": "x",
        "db_id": "trade",
        "question": "What is the balance of China?",
        "sql": "SELECT balance FROM trade WHERE country = 'China'",
    }
    assert CALCULATION.propose(prepare(item, schema), env) == "no-database"
