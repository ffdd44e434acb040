"""Small helpers more than one generator uses: names, targets, mentions, shared proposals."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from answerable.builders.counterfactual.generators.base import EditEnv, Parent, Proposal, Skip
from answerable.builders.counterfactual.grounding import Mention
from answerable.builders.counterfactual.lexicon import is_exact_synonym
from answerable.builders.counterfactual.script import drop_column
from answerable.builders.schema import DatabaseSchema, Table


def split(qualified: str) -> tuple[str, str]:
    """``'table.column'`` -> ``('table', 'column')``."""
    table, _, column = qualified.rpartition(".")
    return table, column


def real_table(parent: Parent, name: str) -> Table | None:
    """The table called ``name``, unless it is a view (a view is not edited)."""
    table = parent.schema.table(name)
    return table if table is not None and name.lower() not in parent.views else None


def tag_at(mention: Mention, tag: str) -> dict[int, str]:
    """The span tag for a mention, keyed by its start (for ``Grounding.spans``)."""
    return {mention.start: tag}


def choose_target(
    parent: Parent, rng, keep: Callable[[str], bool] = lambda _c: True
) -> tuple[str, Mention] | Skip:
    """A grounded column of a real table, chosen with ``rng``; or why there is none."""
    if not parent.refs.columns:
        return "no-column"
    grounded = {
        c: m
        for c, m in parent.grounding.columns.items()
        if real_table(parent, split(c)[0]) is not None
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
        parent.grounding.spans(tag_at(mention, "UNK")),
        {"kind": kind, "column": target, "span": mention.text, **(trigger or {})},
        {"target": target, **(params or {})},
        mention=mention,
        **extra,
    )


def verified_by(env: EditEnv, parent: Parent) -> str:
    """``execution`` when the edit was checked on a database copy, else ``binding``."""
    return "execution" if env.source(parent.db_id) is not None else "binding"


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


def value_mentions(
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
        and m.text.lower() == bare_value(m.literal).lower()
        and real_table(parent, split(m.concept)[0]) is not None
    ]
    return mentions or "no-value-mention"


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


def bare_value(literal) -> str:
    """The literal's value as the question writes it (a LIKE pattern without ``%``)."""
    text = str(literal.value)
    return text.strip("%_ ") if literal.operator == "like" else text
