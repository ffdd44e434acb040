"""What every edit generator works with: the prepared parent, the proposal, the environment.

A generator takes a prepared answerable parent (:class:`Parent`) and either proposes one
edit (:class:`Proposal`) or names why it cannot (a :data:`Skip` reason such as
``no-mention``); its ``verify`` then runs the checks that prove the proposal's label, on
the edited copy of the database when there is one, on the edited schema otherwise.
:class:`EditEnv` is what the generators may read (the databases, the variant store, the
seed), with the checks that do not depend on the item remembered per key.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.counterfactual import trees, verify
from answerable.builders.counterfactual.grounding import Grounding, Mention, ground
from answerable.builders.counterfactual.leaks import Leak, name_leaks, shared_value_leaks
from answerable.builders.counterfactual.materialize import VariantStore
from answerable.builders.counterfactual.query_shapes import Query, Shapes
from answerable.builders.counterfactual.script import apply_to_schema, variant_id
from answerable.builders.counterfactual.verify import Failure
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import rng_for

KNOWN_VALUES = 200


@dataclass
class Parent:
    """A verified answerable item, with its SQL qualified and its question grounded."""

    item: dict
    schema: DatabaseSchema
    query: Query  # the gold SQL qualified against ``schema`` (see :mod:`.shapes`)
    views: frozenset = frozenset()

    @functools.cached_property
    def grounding(self) -> Grounding:
        """The question's mentions of the gold SQL's columns and values, found on first
        use: most parents are drawn for no edit. Grounding reads only the question and
        the references, and raises none of the errors a parent is rejected for."""
        return ground(self.item["question"], self.query.refs)

    @property
    def tree(self) -> exp.Expr:
        """The gold SQL's qualified tree (shared: change ``query.private_tree()`` instead)."""
        return self.query.tree

    @property
    def refs(self) -> sqlkit.Refs:
        """The tables, columns and values of the gold SQL."""
        return self.query.refs

    @property
    def shape(self) -> tuple:
        """What binding depends on: the gold SQL with its values masked."""
        return self.query.shape

    @property
    def id(self) -> str:
        """The parent item's id."""
        return self.item["id"]

    @property
    def db_id(self) -> str:
        """The parent's database id."""
        return self.item["db_id"]

    @property
    def ordered(self) -> bool:
        """Whether the gold SQL orders its rows (then so do its readings)."""
        return self.query.ordered

    @property
    def parsed(self) -> exp.Expr:
        """The gold SQL as written, parsed (a tree of the caller's own, which it may change)."""
        return self.query.parsed()


def prepare(
    item: dict, schema: DatabaseSchema, views: frozenset = frozenset(), shapes: Shapes | None = None
) -> Parent:
    """Qualify the parent's SQL against its schema (through ``shapes``, which reuses the
    work for queries that differ only in values); its question is grounded when a
    generator first asks. ``views`` are the lower-case names of the schema's views
    (never edited).

    Raises :class:`SQLError` when the SQL no longer binds (it did when it was verified).
    """
    query = (shapes or Shapes()).query(item["sql"], schema, item.get("dialect", "sqlite"))
    return Parent(item, schema, query, views)


@dataclass
class EditEnv:
    """What the generators may read: the databases, the variant store, the seed."""

    databases: dict  # db_id -> DatabaseRef
    variants: VariantStore
    seed: int
    limits: Limits = field(default_factory=Limits)
    synonyms: int = 2
    control_max: int = 3
    _sources: dict = field(default_factory=dict)
    _leaks: dict = field(default_factory=dict)
    _known: dict = field(default_factory=dict)
    _views: dict = field(default_factory=dict)
    _bindings: dict = field(default_factory=dict)
    _refused: set = field(default_factory=set)  # (shape, variant): SQLite refused the gold
    _once: dict = field(default_factory=dict)
    draws: dict = field(default_factory=dict)  # parent id -> (drawn for an edit, a control)
    shapes: Shapes = field(default_factory=Shapes)
    proposed: dict = field(default_factory=dict)  # (db_id, table.column) -> model's names
    shared: Path | None = None  # where the processes of one step share column checks

    def rng(self, step: str, key: str):
        """The generator private to (seed, step, key)."""
        return rng_for(self.seed, step, key)

    def source(self, db_id: str) -> Path | None:
        """The source database file, or None for a schema-only source."""
        ref = self.databases.get(db_id)
        return None if ref is None else ref.path

    def database(self, db_id: str) -> ReadOnlyDatabase | None:
        """A read-only connection to the source database, or None."""
        path = self.source(db_id)
        if path is None:
            return None
        if db_id not in self._sources:
            self._sources[db_id] = self.databases[db_id].open(self.limits)
        return self._sources[db_id]

    def edited_schema(self, parent: Parent, ops: list[dict]) -> DatabaseSchema:
        """The schema after ``ops``: read from the materialized copy when there is a file."""
        path = self.source(parent.db_id)
        if path is None:
            return apply_to_schema(parent.schema, ops)
        return self.variants.schema(parent.db_id, path, ops)

    def edited_database(self, parent: Parent, ops: list[dict]) -> ReadOnlyDatabase | None:
        """A read-only connection to the materialized copy, or None (schema-only)."""
        path = self.source(parent.db_id)
        return None if path is None else self.variants.database(parent.db_id, path, ops)

    def binding_error(
        self, parent: Parent, ops: list[dict], tree: exp.Expr | None = None, reading: str = ""
    ) -> SQLError | None:
        """Whether the gold SQL (or a ``reading`` of it, given as ``tree``) qualifies
        against the edited schema. Binding depends on the query's shape, not its values,
        so the answer is remembered by (shape, reading, variant): items that differ only
        in their literals share it."""
        key = (parent.shape, reading, variant_id(parent.db_id, ops))
        if key not in self._bindings:
            schema = self.edited_schema(parent, ops)
            self._bindings[key] = verify.binding_error(
                parent.parsed if tree is None else tree, schema
            )
        return self._bindings[key]

    def gold_does_not_bind(self, parent: Parent, ops: list[dict]) -> Failure | None:
        """:func:`verify.gold_does_not_bind` of the parent's gold SQL after ``ops``. SQLite
        refuses a query for an unknown column or table while resolving its names, before
        it reads a row, so such a refusal holds for every query of a templated shape (they
        differ in their literals alone): it is remembered by (shape, variant)."""
        error = self.binding_error(parent, ops)
        database = self.edited_database(parent, ops)
        if error is None or database is None:
            return verify.gold_does_not_bind(parent.item["sql"], error, database)
        key = (parent.shape, variant_id(parent.db_id, ops))
        if key not in self._refused:
            refused = verify.refusal(parent.item["sql"], database)
            if refused is None or refused.reason not in verify.NAME_ERRORS:
                return verify.runs_anyway(refused)
            if parent.query.templated:
                self._refused.add(key)
        return None

    def once(self, key: tuple, check: Callable[[], Any]) -> Any:
        """A check that does not depend on the item (of a whole variant, or of one value
        in one column of the read-only source), run once per key."""
        if key not in self._once:
            self._once[key] = check()
        return self._once[key]

    def once_each(self, keys: list[tuple], check_all: Callable[[list[tuple]], list]) -> None:
        """Run the checks of the ``keys`` not checked yet together (``check_all`` gives
        one answer per key, as :meth:`once` would keep it): a batch sent to the SQL
        worker in one exchange. An answer that is an exception is not kept, so
        :meth:`once` of its key runs its own check and raises it."""
        missing = [key for key in dict.fromkeys(keys) if key not in self._once]
        if missing:
            for key, answer in zip(missing, check_all(missing), strict=True):
                if not isinstance(answer, Exception):
                    self._once[key] = answer

    def leaks(self, parent: Parent, table: str, column: str, keep=()) -> list[Leak]:
        """Remaining columns that still answer for ``table.column`` (cached per column)."""
        key = (parent.db_id, table, column)
        if key not in self._leaks:
            database = self.database(parent.db_id)
            found = (
                shared_value_leaks(self.shared, database, parent.schema, table, column)
                if database
                else []
            )
            self._leaks[key] = found
        return name_leaks(parent.schema, table, column, keep) + self._leaks[key]

    def views(self, db_id: str) -> frozenset:
        """Lower-case names of the source database's views (none for schema-only)."""
        if db_id not in self._views:
            database = self.database(db_id)
            query = exp.select("name").from_("sqlite_master").where("type = 'view'")
            sql = query.sql("sqlite")
            rows = database.execute(sql, ordered=False, row_cap=10_000).rows if database else []
            self._views[db_id] = frozenset(name.lower() for (name,) in rows)
        return self._views[db_id]

    def known_values(self, db_id: str, table: str, column: str) -> list[str]:
        """Up to 200 distinct text values of a column (cached)."""
        key = (db_id, table, column)
        if key not in self._known:
            query = (
                exp.select(trees.column(column))
                .distinct()
                .from_(trees.table(table))
                .where(trees.not_null(trees.column(column)))
                .order_by(trees.column(column))
                .limit(KNOWN_VALUES)
            )
            database = self.database(db_id)
            rows = database.execute(query.sql("sqlite"), ordered=True, row_cap=KNOWN_VALUES).rows
            self._known[key] = [str(v) for (v,) in rows]
        return self._known[key]

    def close(self) -> None:
        """Close the source connections and the variant store."""
        for database in self._sources.values():
            database.close()
        self._sources.clear()
        self.variants.close()


@dataclass
class Proposal:
    """One edit of one parent, ready to verify and, once verified, to become an item.

    ``verify`` fills ``subtype``, ``explanation`` and (for controls) ``result``.
    """

    generator: str
    parent: Parent
    ops: list[dict]
    question: str
    spans: list[dict]
    trigger: dict | None
    params: dict
    readings: list[str] = field(default_factory=list)
    reading_trees: list[exp.Expr] = field(default_factory=list)
    reading_results: list = field(default_factory=list)  # executor Results, when run
    question_edit: dict | None = None
    mention: Mention | None = None
    subtype: str | None = None
    explanation: str | None = None
    result: dict | None = None


Skip = str
"""A generator's reason for proposing nothing (``no-mention``, ``no-literal`` ...)."""
