"""Verification: the checks that prove a counterfactual item's label.

Each check returns None when it passes and a :class:`Failure` (a short reason code and
a detail) when it does not; an edit is kept only when all of its checks pass.

- :func:`gold_does_not_bind`: sqlglot's qualify fails on the edited schema AND SQLite
  refuses the gold SQL on the edited copy (either alone is not enough);
- :func:`gold_still_binds`: the control's gold SQL binds and gives the parent's result;
- :func:`nothing_answers`: no remaining column is a synonym of, or holds the values of,
  the dropped one (see :mod:`.leaks`);
- :func:`candidates_are_not_synonyms`, :func:`candidates_cover_mention`,
  :func:`candidates_differ_from_target`: an added near-synonym is not the target under
  another name, fits the question's words, and does not copy the target's values;
- :func:`plausible`: the plausibility gate passes the ambiguous item;
- :func:`readings_differ`: the readings of an ambiguous item run and give different,
  non-empty answers;
- :func:`value_is_absent`, :func:`finds_nothing`: a replaced value is in no row of its
  column, and the gold SQL with it finds nothing;
- :func:`formula_answers`: the gold SQL with a dropped column written as a formula over
  the remaining ones runs on the edited copy and gives as many rows as the parent.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.counterfactual import trees
from answerable.builders.counterfactual.grounding import Mention, find_column, words
from answerable.builders.counterfactual.leaks import Leak
from answerable.builders.counterfactual.lexicon import is_exact_synonym
from answerable.builders.executor import ReadOnlyDatabase, Result
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import SQLError

READING_ROWS = 20  # rows kept per reading: enough to tell "only zeros" from an answer


@dataclass(frozen=True)
class Failure:
    """Why a check failed: a reason code for the rejects report and a detail."""

    reason: str
    detail: str


def plausible(verdict) -> Failure | None:
    """The plausibility gate's verdict (:mod:`.gate`) as a check: its reason code becomes
    ``implausible-<reason>`` in the rejects report."""
    return None if verdict.ok else Failure(f"implausible-{verdict.reason}", verdict.detail)


def binding_error(tree: exp.Expr, schema: DatabaseSchema) -> SQLError | None:
    """None when the query qualifies against ``schema`` (sqlglot), else the error."""
    try:
        sqlkit.qualify(tree, schema)
    except SQLError as error:
        return error
    return None


def gold_does_not_bind(
    sql: str, error: SQLError | None, database: ReadOnlyDatabase | None
) -> Failure | None:
    """The gold SQL fails to qualify on the edited schema (``error``, from
    :func:`binding_error`) and fails in SQLite on the copy."""
    if error is None:
        return Failure("still-binds", "the gold SQL still qualifies against the edited schema")
    return None if database is None else runs_anyway(refusal(sql, database))


NAME_ERRORS = ("unknown-column", "unknown-table")
"""Refusals of SQLite's name resolution, made before a statement reads any row."""


def refusal(sql: str, database: ReadOnlyDatabase) -> SQLError | None:
    """The error SQLite refuses ``sql`` with on ``database`` (reading no row), or None."""
    try:
        database.execute(sql, ordered=False, row_cap=0)
    except SQLError as error:
        return error
    return None


def runs_anyway(refused: SQLError | None) -> Failure | None:
    """The check of :func:`gold_does_not_bind` on SQLite's answer (:func:`refusal`)."""
    if refused is None:
        return Failure("still-binds", "SQLite still runs the gold SQL on the edited copy")
    return None


def gold_still_binds(
    sql: str,
    error: SQLError | None,
    database: ReadOnlyDatabase | None,
    parent_hash: str | None,
    ordered: bool,
) -> tuple[Failure | None, Result | None]:
    """A control's check: the gold SQL binds (``error`` is None) and, with a database,
    returns the same rows on the edited copy."""
    if error is not None:
        return Failure("control-does-not-bind", str(error)), None
    if database is None:
        return None, None
    try:
        result = database.execute(sql, ordered=ordered)
    except SQLError as error:
        return Failure("control-does-not-bind", str(error)), None
    if parent_hash is not None and result.hash != parent_hash:
        return Failure("control-result-changed", "the edited copy gives another result"), None
    return None, result


def nothing_answers(leaks: list[Leak]) -> Failure | None:
    """No remaining column still answers for the dropped one."""
    if not leaks:
        return None
    reason = "synonym-remains" if leaks[0].how == "synonym" else "answer-remains"
    return Failure(reason, "; ".join(leak.describe() for leak in leaks))


def candidates_are_not_synonyms(table: str, column: str, candidates: list[str]) -> Failure | None:
    """No added column means the target (or another added column) under another name."""
    for name in candidates:
        if is_exact_synonym(name, column, table):
            return Failure("candidate-is-synonym", f"{name} means {column}")
    for a, b in itertools.combinations(candidates, 2):
        if is_exact_synonym(a, b, table):
            return Failure("candidate-is-synonym", f"{a} and {b} mean the same")
    return None


def candidates_cover_mention(
    question: str, mention: Mention, table: str, candidates: list[str]
) -> Failure | None:
    """The question's words for the target ground each added column too: the span is
    ambiguous between them, not a mention of one."""
    found = words(question)
    for name in candidates:
        hit = find_column(found, f"{table}.{name}")
        if hit is None or not hit.overlaps(mention):
            return Failure("span-not-ambiguous", f"{mention.text!r} does not name {name}")
    return None


def candidates_differ_from_target(
    source: ReadOnlyDatabase, variant: ReadOnlyDatabase, table: str, column: str, candidates
) -> Failure | None:
    """No added column holds the target's values row for row (it would be the target)."""
    target = _column_hash(source, table, column)
    for name in candidates:
        if _column_hash(variant, table, name) == target:
            return Failure("candidate-equals-target", f"{table}.{name} copies {column}")
    return None


def _column_hash(db: ReadOnlyDatabase, table: str, column: str) -> str:
    query = exp.select(exp.column("rowid"), trees.column(column))
    query = query.from_(trees.table(table)).order_by("rowid")
    return db.execute(query.sql("sqlite"), ordered=True, row_cap=0).hash


def readings_differ(
    readings: list[str], database: ReadOnlyDatabase, ordered: bool, keep: list | None = None
) -> Failure | None:
    """Each reading runs on the edited copy, finds something, and no two agree; each
    :class:`Result` is appended to ``keep`` when given (the item stores them)."""
    hashes = []
    for sql in readings:
        try:
            result = database.execute(sql, ordered=ordered, row_cap=READING_ROWS)
        except SQLError as error:
            return Failure("reading-failed", f"{error}: {sql}")
        if is_nothing(result):
            return Failure("reading-empty", f"a reading finds nothing: {sql}")
        hashes.append(result.hash)
        if keep is not None:
            keep.append(result)
    if len(set(hashes)) < len(hashes):
        return Failure("readings-equal", "two readings give the same result")
    return None


READING_ROWS_KEPT = 5


def reading_records(names: list[str], readings: list[str], results: list[Result]) -> list[dict]:
    """The item's ``readings``: per reading its name, SQL, columns, first rows, true row
    count and result hash (what reviewers and consumers compare)."""
    return [
        {
            "name": name,
            "sql": sql,
            "columns": list(result.columns),
            "rows": [list(row) for row in result.rows[:READING_ROWS_KEPT]],
            "row_count": result.row_count,
            "result_hash": result.hash,
        }
        for name, sql, result in zip(names, readings, results, strict=True)
    ]


def readings_bind(readings: list[str], errors: list[SQLError | None]) -> Failure | None:
    """Schema-only check of an ambiguous item: every reading binds to the edited schema."""
    for sql, error in zip(readings, errors, strict=True):
        if error is not None:
            return Failure("reading-does-not-bind", f"{error}: {sql}")
    return None


def is_nothing(result: Result) -> bool:
    """No rows, or only rows of NULLs and zeros (an aggregate over no rows)."""
    if result.row_count == 0:
        return True
    if result.row_count > len(result.rows):
        return False
    return all(cell in (None, 0) for row in result.rows for cell in row)


def value_is_absent(found: bool, column: str, value: str) -> Failure | None:
    """The new value is in no row of its column."""
    return Failure("value-present", f"{value!r} occurs in {column}") if found else None


def finds_nothing(sql: str, database: ReadOnlyDatabase, ordered: bool) -> Failure | None:
    """The gold SQL with the new value finds nothing."""
    try:
        result = database.execute(sql, ordered=ordered, row_cap=READING_ROWS)
    except SQLError as error:
        return Failure("probe-failed", str(error))
    if not is_nothing(result):
        return Failure("value-still-answers", f"{result.row_count} rows: {sql}")
    return None


def formula_answers(
    sql: str, database: ReadOnlyDatabase, ordered: bool, parent_rows: int | None
) -> tuple[Failure | None, Result | None]:
    """The formula reading (the gold SQL with the dropped column computed from others)
    runs on the edited copy, finds something and returns the parent's number of rows:
    the question is answerable once the formula is known, and only then."""
    try:
        result = database.execute(sql, ordered=ordered, row_cap=READING_ROWS)
    except SQLError as error:
        return Failure("formula-failed", f"{error}: {sql}"), None
    if is_nothing(result):
        return Failure("formula-empty", f"the formula finds nothing: {sql}"), None
    if parent_rows is not None and result.row_count != parent_rows:
        detail = f"{result.row_count} rows against the parent's {parent_rows}: {sql}"
        return Failure("formula-differs", detail), None
    return None, result
