"""value_ambiguous_v1 (ambiguous, value-ambiguous): the value also occurs in a second
column the query could mean.

The second column already holds the value on the source (:mod:`..overlaps`), or the
value is written into 5 % of a fitting text column's rows (seeded by the variant). The
label holds when the gate finds both readings plausible and they run to different
non-empty results.
"""

from __future__ import annotations

from sqlglot import exp

from answerable.builders.counterfactual import explain, gate, trees, verify
from answerable.builders.counterfactual.gate import looks_like
from answerable.builders.counterfactual.generators.base import EditEnv, Parent, Proposal, Skip
from answerable.builders.counterfactual.generators.helpers import (
    namesakes,
    real_table,
    split,
    table_columns,
    tag_at,
    value_mentions,
)
from answerable.builders.counterfactual.grounding import Mention
from answerable.builders.counterfactual.lexicon import column_role
from answerable.builders.counterfactual.overlaps import is_text, second_readings
from answerable.builders.counterfactual.script import set_value
from answerable.builders.counterfactual.verify import Failure
from answerable.builders.sqlkit.parsing import compared_with


class ValueAmbiguous:
    """Value-ambiguous: the value also occurs in a second column the query could mean."""

    name = "value_ambiguous_v1"
    label = "ambiguous"
    category = "value-ambiguous"

    def propose(self, parent: Parent, env: EditEnv) -> Proposal | Skip:
        """A second column for a grounded compared value: one that already holds it on
        the source (:mod:`.overlaps`), else a text column of a queried table to write it
        into."""
        mentions = value_mentions(parent, env, ("eq", "in"))
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
            parent.grounding.spans(tag_at(mention, "AMB")),
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
            table = real_table(parent, name)
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
