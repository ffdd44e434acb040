"""The edit generators, registered under versioned names.

Each generator takes a prepared answerable parent (:class:`Parent`) and either proposes
one edit (:class:`Proposal`) or names why it cannot (a skip reason such as
``no-mention``); :meth:`verify` then runs the checks that prove the proposal's label,
on the edited copy of the database when there is one, on the edited schema otherwise.

- ``drop_column_v1`` (unanswerable, missing-column): drop a column the question mentions;
- ``add_near_synonyms_v1`` (ambiguous, column-ambiguous): drop it, add 2-3 near-synonyms;
- ``value_unanswerable_v1`` (unanswerable, missing-value): ask about a value no row holds;
- ``value_ambiguous_v1`` (ambiguous, value-ambiguous): write the value into a second column;
- ``drop_unused_v1`` (answerable, control): drop 1-3 columns the SQL does not use.

(``calculation_v1`` is in :mod:`.calculation`; :mod:`.registry` lists them all.)

Choices that shape a shared variant (the candidate names, their fills, the rows that
receive a value, the columns a control drops) are seeded by the variant's own key, not
by the item, so every item that makes the same edit shares one materialized copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from answerable.builders import sqlkit
from answerable.builders.counterfactual import explain, gate, trees, verify
from answerable.builders.counterfactual.candidates import near_synonym_groups, proposed_groups
from answerable.builders.counterfactual.fills import choose_fill
from answerable.builders.counterfactual.gate import looks_like
from answerable.builders.counterfactual.grounding import Grounding, Mention, ground
from answerable.builders.counterfactual.leaks import Leak, name_leaks, value_leaks
from answerable.builders.counterfactual.lexicon import (
    column_role,
    is_exact_synonym,
    shares_meaning,
)
from answerable.builders.counterfactual.materialize import VariantStore
from answerable.builders.counterfactual.overlaps import is_text, second_readings
from answerable.builders.counterfactual.script import (
    add_column,
    apply_to_schema,
    drop_column,
    set_value,
    variant_id,
)
from answerable.builders.counterfactual.shapes import Query, Shapes
from answerable.builders.counterfactual.values import fresh_candidates
from answerable.builders.counterfactual.verify import Failure
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema, Table
from answerable.builders.sqlkit.parsing import compared_with
from answerable.errors import SQLError
from answerable.ids import content_hash, rng_for

FRESH_TRIES = 8
KNOWN_VALUES = 200


# ---- what every generator works with --------------------------------------------------


@dataclass
class Parent:
    """A verified answerable item, with its SQL qualified and its question grounded."""

    item: dict
    schema: DatabaseSchema
    query: Query  # the gold SQL qualified against ``schema`` (see :mod:`.shapes`)
    grounding: Grounding
    views: frozenset = frozenset()

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
        """The gold SQL as written, parsed anew (the caller may change it)."""
        return sqlkit.parse(self.item["sql"], self.item.get("dialect", "sqlite"))


def prepare(
    item: dict, schema: DatabaseSchema, views: frozenset = frozenset(), shapes: Shapes | None = None
) -> Parent:
    """Qualify the parent's SQL against its schema (through ``shapes``, which reuses the
    work for queries that differ only in values) and ground its question; ``views`` are
    the lower-case names of the schema's views (never edited).

    Raises :class:`SQLError` when the SQL no longer binds (it did when it was verified).
    """
    query = (shapes or Shapes()).query(item["sql"], schema, item.get("dialect", "sqlite"))
    return Parent(item, schema, query, ground(item["question"], query.refs), views)


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
    _once: dict = field(default_factory=dict)
    shapes: Shapes = field(default_factory=Shapes)
    proposed: dict = field(default_factory=dict)  # (db_id, table.column) -> model's names

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

    def once(self, key: tuple, check: Callable[[], Any]) -> Any:
        """A check that does not depend on the item (of a whole variant, or of one value
        in one column of the read-only source), run once per key."""
        if key not in self._once:
            self._once[key] = check()
        return self._once[key]

    def leaks(self, parent: Parent, table: str, column: str, keep=()) -> list[Leak]:
        """Remaining columns that still answer for ``table.column`` (cached per column)."""
        key = (parent.db_id, table, column)
        if key not in self._leaks:
            database = self.database(parent.db_id)
            found = value_leaks(database, parent.schema, table, column) if database else []
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


# ---- small helpers --------------------------------------------------------------------


def split(qualified: str) -> tuple[str, str]:
    """``'table.column'`` -> ``('table', 'column')``."""
    table, _, column = qualified.rpartition(".")
    return table, column


def _real_table(parent: Parent, name: str) -> Table | None:
    """The table called ``name``, unless it is a view (a view is not edited)."""
    table = parent.schema.table(name)
    return table if table is not None and name.lower() not in parent.views else None


def _tags(mention: Mention, tag: str) -> dict[int, str]:
    return {mention.start: tag}


def _choose_target(
    parent: Parent, rng, keep: Callable[[str], bool] = lambda _c: True
) -> tuple[str, Mention] | Skip:
    """A grounded column of a real table, chosen with ``rng``; or why there is none."""
    if not parent.refs.columns:
        return "no-column"
    grounded = {
        c: m
        for c, m in parent.grounding.columns.items()
        if _real_table(parent, split(c)[0]) is not None
    }
    if not grounded:
        return "no-mention"
    eligible = sorted(c for c in grounded if keep(c))
    if not eligible:
        return "no-candidates"
    target = rng.choice(eligible)
    return target, grounded[target]


def dropped_column_proposal(
    name: str,
    parent: Parent,
    target: str,
    mention: Mention,
    kind: str,
    trigger: dict | None = None,
    params: dict | None = None,
    **extra,
) -> Proposal:
    """The question kept as it is over a copy without ``target``, its mention tagged UNK
    (drop_column_v1, calculation_v1); ``trigger`` and ``params`` add to the common ones."""
    table, column = split(target)
    return Proposal(
        name,
        parent,
        [drop_column(table, column)],
        parent.item["question"],
        parent.grounding.spans(_tags(mention, "UNK")),
        {"kind": kind, "column": target, "span": mention.text, **(trigger or {})},
        {"target": target, **(params or {})},
        mention=mention,
        **extra,
    )


def verified_by(env: EditEnv, parent: Parent) -> str:
    """``execution`` when the edit was checked on a database copy, else ``binding``."""
    return "execution" if env.source(parent.db_id) is not None else "binding"


# ---- drop_column_v1 -------------------------------------------------------------------


class DropColumn:
    """Column-unanswerable: drop a column the question mentions (NoisySP/DTE)."""

    name = "drop_column_v1"
    label = "unanswerable"
    category = "missing-column"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Drop one grounded column, chosen by the parent's seeded generator."""
        chosen = _choose_target(parent, env.rng(self.name, parent.id))
        if isinstance(chosen, str):
            return chosen
        target, mention = chosen
        return dropped_column_proposal(self.name, parent, target, mention, "missing-column")

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """The gold SQL no longer binds, nothing left answers it; sets the subtype."""
        parent, target = proposal.parent, proposal.params["target"]
        table, column = split(target)
        failure = verify.gold_does_not_bind(
            parent.item["sql"],
            env.binding_error(parent, proposal.ops),
            env.edited_database(parent, proposal.ops),
        ) or verify.nothing_answers(env.leaks(parent, table, column))
        if failure is None:
            after = env.edited_schema(parent, proposal.ops)
            proposal.subtype = missing_column_subtype(after, table, column)
            proposal.explanation = explain.missing_column(proposal.mention.text, table, column)
        return failure


def missing_column_subtype(after: DatabaseSchema, table: str, column: str) -> str:
    """TrustSQL's subtype of a missing column, judged on the edited schema.

    ``surface`` when a column of that name is in another table; ``related`` when a
    remaining column of the same table shares a content word with it (``away_score``
    for ``home_score``); else ``unrelated``.
    """
    low = column.lower()
    if any(t.name != table and t.column(low) is not None for t in after.tables):
        return "surface"
    owner = after.table(table)
    if any(shares_meaning(c.name, column, owner.name) for c in owner.columns):
        return "related"
    return "unrelated"


# ---- add_near_synonyms_v1 ---------------------------------------------------------------


class AddNearSynonyms:
    """Column-ambiguous: drop the target, add columns that each could be meant."""

    name = "add_near_synonyms_v1"
    label = "ambiguous"
    category = "column-ambiguous"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Replace one grounded column by the best group of near-synonyms."""

        def groups(qualified: str) -> list[tuple[str, ...]]:
            key = ("near-synonyms", parent.db_id, qualified, env.synonyms)
            table, column = split(qualified)
            names = env.proposed.get((parent.db_id, qualified), ())

            def both() -> list[tuple[str, ...]]:
                curated = near_synonym_groups(parent.schema, table, column, env.synonyms)
                model = proposed_groups(parent.schema, table, column, names, env.synonyms)
                return list(dict.fromkeys(curated + model))

            return env.once(key, both)

        def passing(qualified: str) -> bool:
            mention = parent.grounding.columns[qualified]
            table, column = split(qualified)
            group = self.passing_group(parent, env, mention, table, column, groups(qualified))
            return group is not None

        rng = env.rng(self.name, parent.id)
        chosen = _choose_target(parent, rng, passing)  # a target with a real second reading
        if chosen == "no-candidates":  # none: propose one anyway, its verify says why not
            chosen = _choose_target(parent, rng, lambda c: bool(groups(c)))
        if isinstance(chosen, str):
            return chosen
        target, mention = chosen
        table, column = split(target)
        names = list(self.best_group(parent, env, mention, table, column, groups(target)))
        ops = self.ops(parent, env, table, column, names)
        reading_trees = [_renamed(parent.query, target, name) for name in names]
        readings = [tree.sql("sqlite") for tree in reading_trees]
        return Proposal(
            self.name,
            parent,
            ops,
            parent.item["question"],
            parent.grounding.spans(_tags(mention, "AMB")),
            {
                "kind": "column-ambiguous",
                "column": target,
                "span": mention.text,
                "candidates": [f"{table}.{n}" for n in names],
                "readings": readings,
            },
            {"target": target, "candidates": names},
            readings=readings,
            reading_trees=reading_trees,
            mention=mention,
        )

    def passing_group(
        self, parent: Parent, env: EditEnv, mention: Mention, table: str, column: str, groups
    ) -> tuple[str, ...] | None:
        """The first group the plausibility gate passes for this question, or None."""
        for group in groups:
            if self.judged(parent, env, mention, table, column, list(group)).ok:
                return group
        return None

    def judged(
        self, parent: Parent, env: EditEnv, mention: Mention, table: str, column: str, names
    ) -> gate.Verdict:
        """The gate's verdict on ``names`` for ``table.column``, seeing the values the
        gold SQL compares it with and, when the source has rows, some of its values."""
        target = f"{table}.{column}".lower()
        literals = parent.refs.literals
        compared = [str(lit.value) for lit in literals if (lit.column or "").lower() == target]
        known = env.known_values(parent.db_id, table, column) if env.source(parent.db_id) else []
        question = parent.item["question"]
        return gate.judge_columns(question, mention.text, table, column, names, compared, known)

    def best_group(
        self, parent: Parent, env: EditEnv, mention: Mention, table: str, column: str, groups
    ) -> tuple[str, ...]:
        """The first group the gate passes; else the first group (its verification then
        rejects it with the gate's reason)."""
        return self.passing_group(parent, env, mention, table, column, groups) or groups[0]

    def ops(self, parent: Parent, env: EditEnv, table: str, column: str, names: list[str]):
        """Add each name filled from the target (seeded by the variant), then drop it."""
        declared = parent.schema.table(table).column(column).type
        fill = choose_fill(column_role(column, declared), declared)
        rng = env.rng(self.name, f"{parent.db_id}/{table}/{column}/{'/'.join(names)}")
        added = [
            add_column(table, name, declared, column, fill, rng.getrandbits(31)) for name in names
        ]
        return [*added, drop_column(table, column)]

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """The plausibility gate passes; names are not synonyms and fit the span; the gold
        SQL does not bind; nothing left answers the target; the readings differ (or bind,
        schema-only)."""
        parent, names = proposal.parent, proposal.params["candidates"]
        table, column = split(proposal.params["target"])
        failure = (
            verify.plausible(self.judged(parent, env, proposal.mention, table, column, names))
            or verify.candidates_are_not_synonyms(table, column, names)
            or verify.candidates_cover_mention(proposal.question, proposal.mention, table, names)
        )
        if failure:
            return failure
        database = env.edited_database(parent, proposal.ops)
        failure = verify.gold_does_not_bind(
            parent.item["sql"], env.binding_error(parent, proposal.ops), database
        ) or verify.nothing_answers(env.leaks(parent, table, column, keep=names))
        if failure:
            return failure
        if database is None:
            errors = [
                env.binding_error(parent, proposal.ops, tree, f"{column}->{name}")
                for tree, name in zip(proposal.reading_trees, names, strict=True)
            ]
            failure = verify.readings_bind(proposal.readings, errors)
        else:
            failure = env.once(
                ("candidates-differ", variant_id(parent.db_id, proposal.ops)),
                lambda: verify.candidates_differ_from_target(
                    env.database(parent.db_id), database, table, column, names
                ),
            ) or verify.readings_differ(
                proposal.readings, database, parent.ordered, proposal.reading_results
            )
        if failure is None:
            proposal.explanation = explain.column_ambiguous(proposal.mention.text, table, names)
        return failure


def _renamed(query: Query, target: str, name: str) -> exp.Expr:
    """A copy of the query's qualified tree with every reference to column ``target``
    renamed to ``name`` (references through a derived table's output keep the output's
    name)."""
    tree = query.private_tree()
    for column in table_columns(tree, target):
        column.set("this", trees.ident(name))
    return tree


def table_columns(tree: exp.Expr, target: str) -> list[exp.Column]:
    """The column nodes that read ``table.column`` straight from the table."""
    table, column = split(target)
    found = []
    for scope in traverse_scope(tree):
        for node in scope.columns:
            source = scope.sources.get(node.table)
            if (
                isinstance(source, exp.Table)
                and source.name.lower() == table.lower()
                and node.name.lower() == column.lower()
            ):
                found.append(node)
    return found


# ---- value_unanswerable_v1 --------------------------------------------------------------


def _value_mentions(
    parent: Parent, env: EditEnv, operators: tuple[str, ...]
) -> list[Mention] | Skip:
    """Grounded string values compared with a column of a real table, written as in SQL;
    a value edit needs the database's rows, so a schema-only source has none."""
    if env.database(parent.db_id) is None:
        return "no-database"
    literals = [
        lit
        for lit in parent.refs.literals
        if lit.is_string and lit.column and lit.operator in operators
    ]
    if not literals:
        return "no-literal"
    mentions = [
        m
        for m in parent.grounding.values
        if m.literal in literals
        and m.text.lower() == _bare(m.literal).lower()
        and _real_table(parent, split(m.concept)[0]) is not None
    ]
    return mentions or "no-value-mention"


_NARROWING = (exp.And, exp.Paren, exp.Where, exp.Having, exp.Join, exp.From, exp.Select)
_NARROWING += (exp.Intersect, exp.In, exp.With, exp.CTE, exp.Group, exp.Order, exp.Limit)


def _filters_every_row(literals: list[tuple[exp.Literal, str]], value) -> bool:
    """Whether some comparison with the string ``value`` must hold for the query to
    return any row: it sits in ANDed filters, up through IN subqueries, INTERSECT and
    the left side of EXCEPT, never under OR, NOT, UNION or a scalar subquery (a value
    nobody has there need not leave the result empty). ``literals`` are the query's
    literal nodes with their texts (:meth:`Query.literal_texts`)."""
    return any(node.is_string and text == value and _narrows(node) for node, text in literals)


def _narrows(node: exp.Expr) -> bool:
    comparison = node.parent
    while isinstance(comparison, exp.Paren):
        comparison = comparison.parent
    if isinstance(comparison, exp.In) and len(comparison.expressions) > 1:
        return False  # another value of the list may still match
    child, parent = comparison, comparison.parent
    while parent is not None:
        if isinstance(parent, exp.Except) and child is not parent.this:
            return False
        if isinstance(parent, exp.Subquery) and not isinstance(parent.parent, exp.In):
            if parent.parent is not None and not isinstance(parent.parent, exp.From | exp.Join):
                return False
        elif not isinstance(parent, (*_NARROWING, exp.Except, exp.Subquery)):
            return False
        child, parent = parent, parent.parent
    return True


def namesakes(
    schema: DatabaseSchema, table: str, column: str, synonyms: bool = True
) -> list[tuple[str, str]]:
    """The column, the columns a foreign key ties to it, and (with ``synonyms``) the
    columns of other tables whose names mean the same (``lake.state_name`` and
    ``state.state_name``)."""
    found = [(table, column)]
    low = (table.lower(), column.lower())
    for other in schema.tables:
        for here, target, there in other.foreign_keys:
            pair = {(other.name.lower(), here.lower()), (target.lower(), there.lower())}
            linked = schema.table(target)
            if low in pair and linked is not None:
                found += [(other.name, here), (linked.name, there)]
        if synonyms and other.name.lower() != low[0]:
            found += [
                (other.name, c.name) for c in other.columns if is_exact_synonym(c.name, column)
            ]
    return list(dict.fromkeys(p for p in found if schema.table(p[0]) is not None))


def _matches_any(literal, value: str, known: list[str]) -> bool:
    """Whether ``value`` (in place of the literal) would match one of ``known``, as the
    probe compares: case-insensitively, as a substring for a ``LIKE`` pattern."""
    low = value.lower()
    if literal.operator == "like":
        return any(low in k.lower() for k in known)
    return any(low == k.lower() for k in known)


def _bare(literal) -> str:
    text = str(literal.value)
    return text.strip("%_ ") if literal.operator == "like" else text


def _replace_literal(query: Query, old: str, new: str) -> str:
    """The query's qualified SQL with the string ``old`` replaced by ``new``."""
    tree = query.private_tree()
    for node in list(tree.find_all(exp.Literal)):
        if node.is_string and node.this == old:
            node.replace(exp.Literal.string(new))
    return tree.sql("sqlite", copy=False)


def _shift_spans(spans: list[dict], at: Mention, new_text: str, tag: str) -> list[dict]:
    """The spans after replacing the text of ``at`` by ``new_text`` (which gets ``tag``)."""
    delta = len(new_text) - (at.end - at.start)
    shifted = []
    for span in spans:
        span = dict(span)
        if span["start"] == at.start:
            span.update(end=at.start + len(new_text), text=new_text, tag=tag)
        elif span["start"] >= at.end:
            span.update(start=span["start"] + delta, end=span["end"] + delta)
        shifted.append(span)
    return shifted


class ValueUnanswerable:
    """Value-unanswerable: the question asks about a value its column does not hold."""

    name = "value_unanswerable_v1"
    label = "unanswerable"
    category = "missing-value"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Replace a grounded compared value (question and SQL) by a fresh one."""
        mentions = _value_mentions(parent, env, ("eq", "in", "like"))
        if isinstance(mentions, str):
            return mentions
        literals = parent.query.literal_texts()
        mentions = [m for m in mentions if _filters_every_row(literals, m.literal.value)]
        if not mentions:
            return "value-not-required"
        rng = env.rng(self.name, parent.id)
        first = rng.choice(mentions)  # then the others: a column may have no stand-in
        for mention in [first, *(m for m in mentions if m is not first)]:
            fresh = self.fresh_value(parent, env, mention, rng)
            if fresh is not None:
                return self.proposal(parent, mention, fresh)
        return "no-fresh-value"

    def fresh_value(self, parent: Parent, env: EditEnv, mention: Mention, rng) -> str | None:
        """The first drawn stand-in that its column does not hold and the question lacks."""
        table, column = split(mention.concept)
        known = env.known_values(parent.db_id, table, column)
        complete = len(known) < KNOWN_VALUES  # then ``known`` is every value of the column
        for value in fresh_candidates(table, column, mention.text, rng, FRESH_TRIES, known):
            if not value or value.lower() in parent.item["question"].lower():
                continue
            if complete and _matches_any(mention.literal, value, known):
                continue
            if not self.occurs(env, parent, mention, value):
                return value
        return None

    def occurs(self, env: EditEnv, parent: Parent, mention: Mention, value: str) -> bool:
        """Whether a row holds ``value`` (case-insensitive; as a LIKE pattern) in the
        mentioned column or in one of its namesakes: a value that is in the database
        under another table ('new mexico' among the states, though not among the
        lakes' states) is not missing from it."""
        operator = mention.literal.operator
        if operator == "like":
            argument = str(mention.literal.value).replace(_bare(mention.literal), value)
        else:
            argument = value
        key = ("occurs", parent.db_id, mention.concept, operator == "like", argument.lower())
        return env.once(key, lambda: self._occurs(env, parent, mention, argument))

    def _occurs(self, env: EditEnv, parent: Parent, mention: Mention, argument: str) -> bool:
        database = env.database(parent.db_id)
        key = ("namesakes", parent.db_id, mention.concept)
        for table, column in env.once(
            key, lambda: namesakes(parent.schema, *split(mention.concept))
        ):
            if mention.literal.operator == "like":
                test = exp.Like(this=trees.column(column), expression=exp.Placeholder())
            else:
                lower = exp.func("lower", exp.Placeholder())
                test = exp.EQ(this=exp.func("lower", trees.column(column)), expression=lower)
            query = exp.select(exp.Literal.number(1)).from_(trees.table(table)).where(test).limit(1)
            sql = query.sql("sqlite")
            if database.execute(sql, (argument,), ordered=False, row_cap=1).row_count:
                return True
        return False

    def proposal(self, parent: Parent, mention: Mention, fresh: str) -> Proposal:
        """The proposal that asks about ``fresh`` instead of the mentioned value."""
        old = str(mention.literal.value)
        new_literal = old.replace(_bare(mention.literal), fresh)
        question = parent.item["question"]
        new_question = question[: mention.start] + fresh + question[mention.end :]
        probe = _replace_literal(parent.query, old, new_literal)
        return Proposal(
            self.name,
            parent,
            [],
            new_question,
            _shift_spans(parent.grounding.spans(), mention, fresh, "UNK"),
            {
                "kind": "missing-value",
                "column": mention.concept,
                "value": fresh,
                "replaced": mention.text,
                "probe": probe,
            },
            {"column": mention.concept, "value": fresh, "replaced": old},
            readings=[probe],
            question_edit={
                "start": mention.start,
                "end": mention.end,
                "text": fresh,
                "replaced": mention.text,
            },
            mention=mention,
        )

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """The value is in no row of its column and the probe SQL finds nothing."""
        parent, mention = proposal.parent, proposal.mention
        fresh = proposal.params["value"]
        found = self.occurs(env, parent, mention, fresh)
        failure = verify.value_is_absent(found, mention.concept, fresh) or verify.finds_nothing(
            proposal.readings[0], env.database(parent.db_id), parent.ordered
        )
        if failure is None:
            proposal.explanation = explain.missing_value(fresh, mention.concept)
        return failure


# ---- value_ambiguous_v1 -----------------------------------------------------------------


class ValueAmbiguous:
    """Value-ambiguous: the value also occurs in a second column the query could mean."""

    name = "value_ambiguous_v1"
    label = "ambiguous"
    category = "value-ambiguous"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """A second column for a grounded compared value: one that already holds it on
        the source (:mod:`.overlaps`), else a text column of a queried table to write it
        into."""
        mentions = _value_mentions(parent, env, ("eq", "in"))
        if isinstance(mentions, str):
            return mentions
        rng = env.rng(self.name, parent.id)
        mention = rng.choice(mentions)
        value = str(mention.literal.value)
        present = self.held_elsewhere(parent, env, mention, value)
        if present:
            passing = [r for r in present if self.reads_two_ways(parent, mention, r.column).ok]
            second = rng.choice(passing or present)  # a failing one is rejected by verify
            return self.proposal(parent, mention, value, second.column, second.sql, [])
        seconds = self.second_columns(parent, env, mention.concept, value)
        if not seconds:
            return "no-second-column"
        fitting = [s for s in seconds if self.fit(parent, env, s, value).ok]
        second = rng.choice(fitting or seconds)  # a misfit is rejected by verify
        reading = _swap_compared_column(parent.tree, mention.concept, value, second)
        if reading is None:
            return "no-second-column"
        ops = [self.op(parent, env, second, value)]
        return self.proposal(parent, mention, value, second, reading, ops)

    def proposal(
        self, parent: Parent, mention: Mention, value: str, second: str, reading: str, ops
    ) -> Proposal:
        """The item's proposal: the question as it is, the value tagged ``AMB``, the
        two readings; without ``ops`` the source already holds the value in both."""
        readings = [parent.tree.sql("sqlite"), reading]
        trigger = {
            "kind": "value-ambiguous",
            "value": value,
            "span": mention.text,
            "columns": [mention.concept, second],
            "readings": readings,
        }
        params = {"column": mention.concept, "second": second, "value": value}
        if not ops:
            trigger["in_source"] = params["in_source"] = True
        return Proposal(
            self.name,
            parent,
            ops,
            parent.item["question"],
            parent.grounding.spans(_tags(mention, "AMB")),
            trigger,
            params,
            readings=readings,
            mention=mention,
        )

    def held_elsewhere(self, parent: Parent, env: EditEnv, mention: Mention, value: str):
        """The columns that hold the value on the source besides the compared one and
        those a foreign key ties to it (a customer's and an employee's ``City`` are two
        readings; a city's ``state_name`` and the state's are one), each with its
        reading (:func:`.overlaps.second_readings`)."""
        same = namesakes(parent.schema, *split(mention.concept), synonyms=False)
        return second_readings(parent, env, mention.concept, value, _swap_compared_column, same)

    def reads_two_ways(self, parent: Parent, mention: Mention, second: str) -> gate.Verdict:
        """The gate's verdict on a value the source holds in two columns."""
        read = {t.lower() for t in parent.refs.tables}
        tables = frozenset(t.name for t in parent.schema.tables)
        question = parent.item["question"]
        return gate.judge_second_reading(question, mention, mention.concept, second, read, tables)

    def second_columns(self, parent: Parent, env: EditEnv, first: str, value: str) -> list[str]:
        """Text columns of the queried tables, of the first column's role, that the SQL
        does not use, whose values (three or more distinct) look like the value, and that
        do not hold it yet.
        When some of them already share values with the first column (a domain in
        common, as admission and discharge locations may have), only those."""
        role = column_role(split(first)[1])
        first_values = set(env.known_values(parent.db_id, *split(first)))
        found = []
        for name in parent.refs.tables:
            table = _real_table(parent, name)
            for column in table.columns if table else ():
                qualified = f"{table.name}.{column.name}"
                if qualified in parent.refs.columns or not is_text(column.type):
                    continue
                if column_role(column.name, column.type) != role:
                    continue
                known = env.known_values(parent.db_id, table.name, column.name)
                if len(set(known)) < 3 or value in known or not looks_like(value, known):
                    continue  # a near-constant column, or one that holds it already
                found.append((not first_values & set(known), qualified))
        best = min((rank for rank, _ in found), default=None)
        return sorted(q for rank, q in found if rank == best)

    def fit(self, parent: Parent, env: EditEnv, second: str, value: str) -> gate.Verdict:
        """Whether the value fits the second column (:func:`gate.judge_value`)."""
        known = env.known_values(parent.db_id, *split(second))
        return env.once(
            ("value-fit", parent.db_id, second, value),
            lambda: gate.judge_value(value, second, known),
        )

    def op(self, parent: Parent, env: EditEnv, second: str, value: str) -> dict:
        """Write the value into 5 % of the second column's rows (3 to 200), seeded."""
        table, column = split(second)
        query = exp.select(exp.func("COUNT", exp.Star())).from_(trees.table(table))
        rows = env.database(parent.db_id).execute(query.sql("sqlite"), ordered=False).rows[0][0]
        count = max(3, min(200, rows // 20))
        seed = env.rng(self.name, f"{parent.db_id}/{second}/{value}").getrandbits(31)
        return set_value(table, column, value, count, seed)

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """A written value fits its second column; a value the source already holds
        there (a value of that column by the data itself) needs the question's words to
        leave the column open. Both readings run (on the edited copy, or on the source)
        and give different non-empty results."""
        parent, params = proposal.parent, proposal.params
        if proposal.ops:  # a written value must fit its new column
            verdict = self.fit(parent, env, params["second"], params["value"])
        else:  # the source holds it there: the words must leave the column open
            verdict = self.reads_two_ways(parent, proposal.mention, params["second"])
        if verdict.ok:  # "with Private coverage" can only mean the insurance
            question = parent.item["question"]
            verdict = gate.judge_named_column(
                question, params["value"], params["column"], params["second"]
            )
        failure = verify.plausible(verdict)
        if failure:
            return failure
        if proposal.ops:
            database = env.edited_database(parent, proposal.ops)
        else:
            database = env.database(parent.db_id)
        failure = verify.readings_differ(
            proposal.readings, database, parent.ordered, proposal.reading_results
        )
        if failure is None:
            proposal.explanation = explain.value_ambiguous(
                params["value"], proposal.trigger["columns"]
            )
        return failure


def _swap_compared_column(tree: exp.Expr, first: str, value: str, second: str) -> str | None:
    """The SQL with the columns that ``first`` names and compares with ``value`` replaced
    by ``second`` (found under its alias in the same SELECT); None when not possible."""
    copy = tree.copy()
    direct = {id(c) for c in table_columns(copy, first)}
    table, column = split(second)
    swapped = 0
    for node in list(copy.find_all(exp.Literal)):
        if not node.is_string or node.this != value:
            continue
        _, other = compared_with(node)
        if not isinstance(other, exp.Column) or id(other) not in direct:
            continue
        alias = _alias_of(other, table)
        if alias is None:
            return None
        other.replace(exp.Column(this=trees.ident(column), table=exp.to_identifier(alias)))
        swapped += 1
    return copy.sql("sqlite", copy=False) if swapped else None  # the copy is ours


def _alias_of(column: exp.Column, table: str) -> str | None:
    select = column.find_ancestor(exp.Select)
    if select is None:
        return None
    sources = [select.args.get("from_")]
    sources += select.args.get("joins") or []
    for source in sources:
        found = source.this if source is not None else None
        if isinstance(found, exp.Table) and found.name.lower() == table.lower():
            return found.alias_or_name
    return None


# ---- drop_unused_v1 (control) -----------------------------------------------------------


class DropUnused:
    """Answerable control: drop columns the SQL does not use (TriageSQL), so that a
    smaller schema does not signal an unanswerable question."""

    name = "drop_unused_v1"
    label = "answerable"
    category = None

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """Drop one to ``control_max`` unused, non-key columns of the queried tables."""
        queried = ("unused", parent.db_id, parent.refs.tables, parent.refs.columns)
        unused = env.once(queried, lambda: self.unused(parent))  # the same for every value
        if not unused:
            return "no-unused-column"
        key = content_hash([parent.db_id, parent.refs.tables, parent.refs.columns])
        rng = env.rng(self.name, key)
        count = rng.randint(1, min(env.control_max, len(unused)))
        chosen = sorted(rng.sample(unused, count))
        return Proposal(
            self.name,
            parent,
            [drop_column(*split(c)) for c in chosen],
            parent.item["question"],
            parent.grounding.spans(),
            None,
            {"dropped": chosen},
        )

    def unused(self, parent: Parent) -> list[str]:
        """Columns of the queried tables that the SQL does not read and no key uses."""
        keys = {
            (t.name.lower(), c.lower())
            for t in parent.schema.tables
            for c in [*t.primary_key, *(fk[0] for fk in t.foreign_keys)]
        }
        keys |= {
            (fk[1].lower(), fk[2].lower()) for t in parent.schema.tables for fk in t.foreign_keys
        }
        found = []
        for name in parent.refs.tables:
            table = _real_table(parent, name)
            for column in table.columns if table else ():
                qualified = f"{table.name}.{column.name}"
                if qualified in parent.refs.columns:
                    continue
                if (table.name.lower(), column.name.lower()) in keys:
                    continue
                if column_role(column.name, column.type) != "identifier":
                    found.append(qualified)
        return sorted(found)

    def verify(self, proposal: Proposal, env: EditEnv) -> Failure | None:
        """The gold SQL still binds and (with a database) gives the parent's result."""
        parent = proposal.parent
        parent_hash = (parent.item.get("result") or {}).get("hash")
        failure, result = verify.gold_still_binds(
            parent.item["sql"],
            env.binding_error(parent, proposal.ops),
            env.edited_database(parent, proposal.ops),
            parent_hash,
            parent.ordered,
        )
        if result is not None:
            proposal.result = result.to_record()
        return failure
