"""Corrections: an annotator's fixed version of an item, verified like every other item.

A decision that carries a corrected question or SQL (with or without a relabel and new
spans) is a correction. It makes a new item: the corrected content under a new id, made
by the generator ``review_correction_v1``, whose provenance says which item it was
corrected from and by whom; the old item is superseded (its decisions stay in the
trail, and the review report lists it). A correction counts only once it verifies:

- an answerable item's SQL binds to the schema and runs, read-only and within the
  recipe's execution limits, on the item's database to a non-empty result (stored as
  the item's gold result, as for every verified item);
- a missing-column claim holds only when no column elsewhere in the schema may hold what
  the question asks for (:func:`columns_elsewhere`, the drafting check's test by name
  and near-synonym; a ``surface`` item looks at the table it asks about);
- an ambiguous item with readings keeps them apart: run on its database, at least two of
  them give different results.

:class:`Verifier` does this for the review page (before a correction is saved, with the
result shown), for imports, and for the build, which verifies every accepted correction
again before it enters the release.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from answerable import __version__
from answerable.annotation.decisions import DecisionError
from answerable.annotation.readings import pending_readings
from answerable.builders.drafting.text import words
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import AnswerableError, RecordError, SQLError
from answerable.kernel.ids import item_id as make_item_id
from answerable.schemas import validate

GENERATOR = "review_correction_v1"
PREVIEW_ROWS = 10
ANSWERABLE = "answerable"
CLEARED_WHEN_ANSWERABLE = ("trigger", "explanation", "readings", "subtype")


class CorrectionError(AnswerableError):
    """A correction that does not verify: one line that says why."""


def is_correction(decision: dict) -> bool:
    """Whether a decision changes the item's content (question or SQL), not only its
    label, category or spans.

    >>> is_correction({"verdict": "relabel", "sql": "SELECT 1"}), is_correction({"sql": None})
    (True, False)
    """
    return decision.get("verdict") in ("accept", "relabel") and bool(
        decision.get("sql") or decision.get("question")
    )


def corrected_item(
    item: dict,
    *,
    label: str,
    category: str | None,
    question: str | None = None,
    sql: str | None = None,
    spans: list | None = None,
    by: list[str] = (),
) -> dict:
    """The item ``item`` becomes under a correction: its new content and new id, made by
    :data:`GENERATOR`, with the old id and the annotators in its provenance; not yet
    verified (no result). An item that becomes answerable loses what made it a problem
    (trigger, explanation, readings); a correction that gives no SQL keeps the item's.
    Candidate SQL, whose strata were judged against the old item, is dropped.

    >>> old = {"id": "a" * 16, "db_id": "x", "question": "q?", "sql": None,
    ...        "label": "unanswerable", "category": "missing-column",
    ...        "trigger": {"kind": "missing-column"}, "provenance": {"generator": "g"}}
    >>> new = corrected_item(old, label="answerable", category=None, sql="SELECT 1", by=["ana"])
    >>> new["id"] != old["id"], new["trigger"], new["provenance"]["params"]["corrected_from"]
    (True, None, 'aaaaaaaaaaaaaaaa')
    """
    question = question or item["question"]
    sql = sql or item.get("sql")
    made = dict(item, label=label, category=category, question=question, sql=sql)
    if spans is not None:
        made["spans"] = spans
    if label == ANSWERABLE:
        made.update(dict.fromkeys(CLEARED_WHEN_ANSWERABLE), category=None)
    else:
        made["sql"] = sql = None  # gold SQL belongs to answerable items only
    made.update(result=None, sql_meta=None, candidates=None)
    made["id"] = make_item_id(
        item["db_id"], question, sql, item.get("db_variant"), item.get("edit")
    )
    old = item.get("provenance") or {}
    made["provenance"] = {
        "generator": GENERATOR,
        "parent": old.get("parent") or item["id"],
        "seed": old.get("seed"),
        "source": old.get("source"),
        "params": {
            "corrected_from": item["id"],
            "corrected_by": sorted(set(by)),
            "original_generator": old.get("generator"),
        },
        "tool_version": __version__,
    }
    return made


def correction_for(item: dict, decision: dict) -> dict:
    """The corrected item one checked decision makes of ``item`` (not yet verified)."""
    relabel = decision["verdict"] == "relabel"
    return corrected_item(
        item,
        label=decision["label"] if relabel else item["label"],
        category=decision["category"] if relabel else item.get("category"),
        question=decision.get("question"),
        sql=decision.get("sql"),
        spans=decision.get("spans"),
        by=[decision["annotator"]],
    )


def verified_correction(verifier: Verifier | None, item: dict, decision: dict, where: str) -> dict:
    """The verified item a checked correction makes; :class:`DecisionError` naming
    ``where`` (one line) when it does not verify or no databases are at hand."""
    if verifier is None:
        raise DecisionError(where, "a correction needs the databases to verify it")
    try:
        return verifier.verify(correction_for(item, decision))
    except CorrectionError as error:
        raise DecisionError(where, f"the correction does not verify: {error}") from None


def columns_elsewhere(item: dict, schema: DatabaseSchema | None) -> list[str]:
    """The ``table.column`` names that may hold what a missing-column item asks for: a
    column of that name, or one the name merely renames (the drafting check's
    near-synonym test), in every table of the schema.

    >>> from answerable.builders.schema import Column, Table
    >>> schema = DatabaseSchema("x", [Table("invoices", [Column("total")]),
    ...                               Table("lines", [Column("quantity")])])
    >>> columns_elsewhere({"trigger": {"text": "quantity", "table": "invoices"}}, schema)
    ['lines.quantity']
    """
    trigger = item.get("trigger") or {}
    term = trigger.get("text") or str(trigger.get("concept") or "").rpartition(".")[2]
    if schema is None or not term:
        return []
    from answerable.builders.drafting.checks import near_synonym  # numpy, sqlglot

    column = "_".join(words(term))
    found = []
    for table in schema.tables:
        if table.column(column) is not None:
            found.append(f"{table.name}.{table.column(column).name}")
            continue
        near = near_synonym(term, DatabaseSchema(schema.db_id, [table]))
        if near is not None:
            found.append(near)
    return found


def claimed_missing(item: dict, schema: DatabaseSchema | None) -> list[str]:
    """The columns that contradict a missing-column claim: for a ``surface`` item (a
    name another table has, asked of this one) those of the table asked about, else
    every column elsewhere."""
    found = columns_elsewhere(item, schema)
    if item.get("subtype") == "surface":
        asked = ((item.get("trigger") or {}).get("table") or "").lower()
        found = [c for c in found if c.split(".", 1)[0].lower() == asked]
    return found


class Verifier:
    """Runs corrections on the items' databases (read-only, within ``limits``).

    ``databases`` maps db_id to a source's :class:`DatabaseRef` (its schema, and a file
    or server to run on); ``variants`` holds the edited databases of counterfactual
    items. Opened databases are kept until :meth:`close`; one query runs at a time (the
    review page's threads share them).
    """

    def __init__(
        self,
        databases: Mapping,
        variants: Path | None = None,
        limits: Limits | None = None,
    ):
        self.databases, self.limits = databases, limits or Limits()
        self.variants = None if variants is None else Path(variants)
        self._open: dict[str, object] = {}
        self._lock = threading.RLock()

    def close(self) -> None:
        """Close every database opened."""
        for database in self._open.values():
            if database is not None:
                database.close()
        self._open.clear()

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def schema(self, item: dict) -> DatabaseSchema | None:
        """The schema the item's SQL runs against (its edited database's, for an edit)."""
        if item.get("db_variant"):
            database = self.database(item)
            return None if database is None else database.schema(item["db_id"])
        ref = self.databases.get(item["db_id"])
        return None if ref is None else ref.schema

    def database(self, item: dict):
        """The item's database, opened read-only (its edited copy for an edit), or None."""
        key = item.get("db_variant") or item["db_id"]
        with self._lock:
            if key not in self._open:
                self._open[key] = self._opened(item)
            return self._open[key]

    def _opened(self, item: dict):
        from answerable.builders.counterfactual.materialize import variant_base  # sqlglot

        if item.get("db_variant"):
            path = (self.variants or Path(".")) / f"{item['db_variant']}.sqlite"
            if not path.is_file():
                return None
            return ReadOnlyDatabase(path, self.limits, base=variant_base(path))
        ref = self.databases.get(item["db_id"])
        return None if ref is None else ref.open(self.limits)

    def run(self, item: dict, sql: str):
        """The :class:`Result` of ``sql`` on the item's database; :class:`CorrectionError`
        (one line) when it does not bind or run."""
        from answerable.builders import sqlkit  # sqlglot: only once a correction is verified

        database = self.database(item)
        if database is None:
            raise CorrectionError(f"database {item['db_id']} cannot run queries here")
        try:
            sqlkit.analyze(sql, self.schema(item), item.get("dialect") or "sqlite")
            with self._lock:
                return database.execute(sql)
        except SQLError as error:
            raise CorrectionError(one_line(f"the SQL does not run: {error}")) from None

    def preview(self, item: dict, sql: str) -> dict:
        """What the page shows before a correction is saved: the first rows of ``sql``
        on the item's database, or ``{"error": one line}``."""
        try:
            result = self.run(item, sql)
        except CorrectionError as error:
            return {"error": str(error)}
        rows = result.rows[:PREVIEW_ROWS]
        return {"columns": result.columns, "rows": rows, "row_count": result.row_count}

    def verify(self, item: dict) -> dict:
        """The corrected item with its gold result and SQL metadata filled in, or a
        :class:`CorrectionError` that says why it does not verify (module docstring)."""
        if item["label"] == ANSWERABLE:
            item = self._answerable(item)
        elif item.get("category") == "missing-column":
            found = claimed_missing(item, self.schema(item))
            if found:
                raise CorrectionError(
                    "not missing: columns elsewhere may hold it: " + ", ".join(found)
                )
        elif item["label"] == "ambiguous":
            self._readings_differ(item)
        try:
            validate("item", item)
        except RecordError as error:
            raise CorrectionError(f"{error.pointer or '/'}: {error.problem}") from None
        return item

    def _answerable(self, item: dict) -> dict:
        if not item.get("sql"):
            raise CorrectionError("an answerable item needs SQL: write the query that answers it")
        from answerable.builders import sqlkit

        result = self.run(item, item["sql"])
        if result.row_count == 0:
            raise CorrectionError("the SQL returns no rows: a gold query must return an answer")
        meta = sqlkit.analyze(item["sql"], self.schema(item), item.get("dialect") or "sqlite")
        return dict(item, result=result.to_record(), sql_meta=meta)

    def _readings_differ(self, item: dict) -> None:
        readings = pending_readings(item) or [
            (r["name"], r["sql"]) for r in item.get("readings") or [] if r.get("sql")
        ]
        if not readings:
            return
        hashes = {self.run(item, sql).hash for _, sql in readings}
        if len(hashes) < 2:
            raise CorrectionError("its readings give the same result: it is not ambiguous")


def one_line(text: str) -> str:
    """``text`` on one line (an SQL error may span several)."""
    return " ".join(str(text).split())
