"""offline_twin_v1: answerable twins of the offline drafter's devices.

A drafted ambiguous or unanswerable question differs from its parent by a device: a
vague word, "that <noun>", an attribute beside what the parent asks, a request after
the question. If only problematic items used these devices, the device's words alone
would tell the label. A twin is an answerable question that uses the same device and
that the question itself makes answerable, by the taxonomy's own definitions, with gold
SQL built from the parent's verified SQL as a sqlglot tree:

- ``settled_vague_word`` (vague-word): the vague word with the threshold that settles
  it, after its noun ("recent admissions (admit time since 2021-05-03)", "elderly
  patients (born before 1961-02-11)", "high attendance (above 5000)"); the gold SQL
  adds that bound (the column's median, or its range's half for ``early``/``late``)
  to the parent's WHERE. Kept only when :func:`~.settled_by_question.vague_word_settled` agrees;
- ``resolved_reference`` (ambiguous-reference): "that <noun>" for the value the
  question names, with the value beside it ("which rivers run through that state,
  texas"); the gold SQL is the parent's; or ``appended_reference``, the reference the
  drafter appends ("... for that team?") with a name of that table beside it ("... for
  that team, West Ritaberg Rangers?"), the gold SQL the parent's with that condition;
- ``present_column`` (missing-column): the column the parent's question says swapped
  for another column of the same table, in the question and in the SQL; or, when the
  question says none, ", with their <column>?" with that column added to the SELECT;
- ``sql_task`` (out-of-scope): the parent's question followed by a request SQL does
  serve: a sort ("Order the result by age.") or a count per group ("Count them by
  position."), the ORDER BY or GROUP BY added to the parent's tree; or one about the
  whole result in the out-of-scope requests' frames ("Show the result as a table.",
  "Then count them."), the parent's SQL or a COUNT(*) over it;
- ``attribute_question`` (vague-question): the keyword a vague question is cut to
  with the value the parent names, in the vague questions' frames ("Texas population?",
  "What about the Robinsonberg Arena capacity?"), when the value picks one
  row; the gold SQL reads that column of that row; else ``short_question``, as short and
  in the same frames, that leaves nothing open ("How many prescriptions with route
  PO?"), a COUNT(*) of the rows of the table that hold a value the parent names; else
  ``aggregate_question``, the highest, lowest or average of a number the parent reads
  ("Highest capacity?").

- ``courtesy_question`` (small-talk): the parent's question with a greeting before it or
  thanks after it, in the small-talk templates' words ("Good morning! Which rivers run
  through texas?"); the gold SQL is the parent's. SCARE's small talk is conversation
  unrelated to the data; a greeting around a request for data is still the request.

Out-of-domain questions have no twin made here: one borrowed from another database is
its own twin there (answerable on its own database).

Each function is ``(job, context, rng, database) -> Twin | None``, its category's
``twin`` (in the category's module under :mod:`.categories`, with what only it uses);
the stage executes the twin's SQL with the checks of every answerable item
(:func:`answerable.builders.seeds.verified_sql`), and a twin whose SQL fails them is a
reject.
"""

from __future__ import annotations

import random
import re
import weakref
from dataclasses import dataclass

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.drafting import offline
from answerable.builders.drafting.context import is_key, is_numeric, is_temporal
from answerable.builders.drafting.drafts import Job
from answerable.builders.drafting.text import capitalize, humanize, name_words
from answerable.builders.items import plain_item
from answerable.builders.lexical.inflection import plural, singular
from answerable.builders.lexical.lexicon import GENERIC_WORDS
from answerable.builders.schema import Column, Table
from answerable.kernel.errors import SQLError

GENERATOR = "offline_twin_v1"


@dataclass(frozen=True)
class Twin:
    """An answerable question made with a device, and its gold SQL."""

    job: Job
    question: str
    sql: str
    device: str  # the function that made it (``settled_vague_word`` ...)
    trigger: str  # the device's words in the question


# ---- the parent's SQL as a tree ---------------------------------------------------------


def parent_select(job: Job) -> exp.Select | None:
    """The parent's SQL parsed (a tree of the caller's own), when it is one SELECT (no
    UNION, no WITH at the top)."""
    select = shared_parent_select(job)
    return None if select is None else select.copy()


def shared_parent_select(job: Job) -> exp.Select | None:
    """:func:`parent_select` without a copy: the tree every rule and twin of the parent
    reads (:func:`offline.shared_parent_tree`). Read it, never change it."""
    tree = offline.shared_parent_tree(job)
    return tree if isinstance(tree, exp.Select) and not tree.args.get("with") else None


def own_table(select: exp.Select, table: Table) -> exp.Table | None:
    """The ``table`` as the outer SELECT reads it (its FROM or a JOIN, not a subquery)."""
    for found in select.find_all(exp.Table):
        if found.name.lower() == table.name.lower() and found.parent_select is select:
            return found
    return None


def column_of(select: exp.Select, table: Table, column: Column) -> exp.Column | None:
    """``column`` of ``table`` qualified as the outer SELECT names the table, or None."""
    found = own_table(select, table)
    if found is None:
        return None
    return exp.column(column.name, table=found.alias_or_name, quoted=True)


def as_sql(tree: exp.Expr, job: Job, copy: bool = True) -> str:
    """The tree's SQL in the parent's dialect. ``copy=False`` writes the tree itself,
    without the copy sqlglot's writer otherwise makes (its transforms may change the
    tree): for a tree of the caller's own that is not read again."""
    return tree.sql(dialect=job.parent.get("dialect", "sqlite"), copy=copy)


def literal(value) -> exp.Expr:
    """A SQL literal of a value read from the database."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return exp.Literal.string(str(value))
    return exp.Literal.number(value)


def spoken(value) -> str:
    """A value as the question says it: whole numbers without ``.0``."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.2f}"
    return str(value)


# ---- the devices ------------------------------------------------------------------------

VAGUE_BOUNDS = {
    # word: (phrase, comparison) with {v}/{lo}/{hi} the bounds
    "elderly": ("born before {v}", exp.LT),
    "young": ("born after {v}", exp.GT),
    "recent": ("{column} since {v}", exp.GTE),
    "early": ("{column} between {lo} and {v}", exp.Between),
    "late": ("{column} between {v} and {hi}", exp.Between),
    "large": ("above {v}", exp.GT),
    "high": ("above {v}", exp.GT),
    "small": ("below {v}", exp.LT),
}
"""How each vague word is settled: the phrase put after its noun and the bound's test."""


_BOUNDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # database -> key -> bounds


def column_bounds(database, table: Table, column: Column) -> tuple | None:
    """``(lowest, median, highest)`` of a column's non-null values, or None when it has
    fewer than three distinct ones; read once per database, table and column (the
    parents of one template ask about the same columns)."""
    known = _BOUNDS.setdefault(database, {})
    key = (table.name, column.name, column.type)
    if key not in known:
        known[key] = _read_bounds(database, table, column)
    return known[key]


def _read_bounds(database, table: Table, column: Column) -> tuple | None:
    """:func:`column_bounds`, read from the database."""
    name = exp.column(column.name, quoted=True)
    query = (
        exp.select(name)
        .distinct()
        .from_(exp.table_(table.name, quoted=True))
        .where(exp.Not(this=exp.Is(this=name.copy(), expression=exp.Null())))
        .order_by(name.copy())
    )
    try:
        ordered, sql = sqlkit.has_order_by(query), query.sql(dialect="sqlite", copy=False)
        rows = [row[0] for row in database.execute(sql, ordered=ordered).rows]
    except SQLError:
        return None
    if len(rows) < 3 or not _comparable(rows, column):
        return None
    return rows[0], rows[len(rows) // 2], rows[-1]


def _comparable(values: list, column: Column) -> bool:
    """Values a bound can be put on: numbers, or dates written as ISO text."""
    if is_numeric(column.type) or all(isinstance(v, int | float) for v in values):
        return all(isinstance(v, int | float) for v in values)
    return is_temporal(column.name, column.type) and all(
        isinstance(v, str) and v[:4].isdigit() and v[4:5] in ("-", "") for v in values
    )


def resolved_reference(job, context, rng, database) -> Twin | None:
    """ambiguous-reference: the value the question names becomes "that <noun>, <value>",
    so the reference has its referent beside it (the draft's words and one more)."""
    select = shared_parent_select(job)
    if select is None:
        return None
    question = job.parent["question"]
    values = offline.named_values(job, context)
    rng.shuffle(values)
    patterns = offline.pattern_parts(job.parent["sql"], context)
    for value, column, (start, end) in values:
        noun = offline.reference_noun(column, context)
        if noun is None or (value, column) in patterns:
            continue
        if not offline.replaceable(question, start, end, noun):
            continue
        start, end = offline.widen(question, start, end, noun)
        named = _bare(question[start:end], noun)
        rest = question[end:]
        closing = "," if rest[:1].isspace() and rest.strip()[:1] not in ("?", ".", "!") else ""
        said = f"that {_kind_noun(column, noun)}, {named}{closing}"
        text = question[:start] + said + rest
        return Twin(job, capitalize(text), as_sql(select, job), "resolved_reference", "that")
    return None


NAMING_WORDS = frozenset(["name", "label", "title"])


def appended_reference(job, context, rng, database) -> Twin | None:
    """ambiguous-reference: the draft's appended "... for that <noun>?" with its
    referent beside it, a name of the related table ("Which players are taller than 195
    cm for that team, West Ritaberg Rangers?"); the gold SQL is the parent's, joined to
    that table when it is not already, with the name as a condition. The name is one of
    the parent's own rows (a seeded pick), so the answer is not empty. None when the
    draft would append nothing, or the table has no name column or no join to it."""
    table = offline.parent_table(job, context)
    select = shared_parent_select(job)
    question = job.parent["question"]
    if table is None or select is None or database is None or not question.rstrip().endswith("?"):
        return None
    other = offline.related_table(table, context) or table
    noun = offline.table_noun(other, plural=False)
    if not offline.appendable(job, context, other, noun):
        return None
    naming = _naming_column(other)
    joined = _joined(select, table, other)
    if naming is None or joined is None:
        return None
    target = column_of(joined, other, naming)
    value = _one_of_its_names(joined, target, database, rng)
    if value is None:
        return None
    text = f"{question.rstrip().rstrip('?.! ')} for that {noun}, {value}?"
    tree = joined.where(target.copy().eq(literal(value)))
    return Twin(job, text, as_sql(tree, job, copy=False), "appended_reference", "that")


def _naming_column(table: Table) -> Column | None:
    """The column that names a row of ``table`` (``name``, ``team_name``, ``label``)."""
    for column in table.columns:
        last = name_words(column.name)[-1:]
        named = last and last[0] in NAMING_WORDS and not is_key(column.name)
        if named and not is_numeric(column.type):
            return column
    return None


def _joined(select: exp.Select, table: Table, other: Table) -> exp.Select | None:
    """The parent's tree reading ``other`` too: as it is when it does, else with a JOIN
    on a foreign key between ``table`` and ``other`` (None when there is none)."""
    if own_table(select, other) is not None:
        return select.copy()
    mine = own_table(select, table)
    theirs = {c.name.lower() for c in other.columns}
    if mine is None or any(
        not c.table and c.name.lower() in theirs for c in select.find_all(exp.Column)
    ):
        return None  # a bare column both tables have would be ambiguous after the join
    owner = mine.alias_or_name
    pairs = [(c, o) for c, t, o in table.foreign_keys if t.lower() == other.name.lower()]
    pairs += [(o, c) for c, t, o in other.foreign_keys if t.lower() == table.name.lower()]
    if not pairs:
        return None
    column, other_column = pairs[0]
    on = exp.column(column, table=owner, quoted=True).eq(
        exp.column(other_column, table=other.name, quoted=True)
    )
    return select.copy().join(exp.to_table(other.name, quoted=True), on=on)


def _one_of_its_names(select: exp.Select, target: exp.Column, database, rng) -> str | None:
    """A seeded pick among the names the parent's rows have in ``target`` (its WHERE
    kept; its grouping, order and limit dropped), or None when there are none."""
    names = select.copy()
    for part in ("group", "having", "order", "limit", "offset"):
        names.set(part, None)
    names.set("expressions", [target.copy()])
    names.set("distinct", exp.Distinct())
    try:
        ordered, sql = sqlkit.has_order_by(names), names.sql(dialect="sqlite", copy=False)
        rows = database.execute(sql, ordered=ordered, row_cap=50).rows
    except SQLError:
        return None
    found = sorted(str(row[0]) for row in rows if row[0] not in (None, ""))
    return rng.choice(found) if found else None


def _kind_noun(column: str, noun: str) -> str:
    """What the value is called beside it: a value of a kind column (``admission_type``)
    is a kind, not the thing (not "that admission, emergency" but "that admission type,
    emergency"); a name's owner is the thing itself ("that state, texas"); a date is a
    date, as the draft calls it ("since that date, 2018-07-06")."""
    if noun == "date":
        return noun
    last = name_words(column.split(".", 1)[1])[-1]
    if last in GENERIC_WORDS and last not in NAMING_WORDS:
        return humanize(column.split(".", 1)[1])
    return noun


def _bare(named: str, noun: str) -> str:
    """The value without the article and repeated noun :func:`offline.widen` took in."""
    bare = re.sub(r"^(the|a|an)\s+", "", named.strip(), flags=re.IGNORECASE)
    return re.sub(rf"\s+{re.escape(noun)}s?$", "", bare, flags=re.IGNORECASE)


SQL_TASKS = {
    "sort": (
        "Order the result by {column}.",
        "Sort them by {column}.",
        "Then sort them by {column}.",
    ),
    "rank": ("Rank them by {column}, highest first.", "And list them by {column}, highest first."),
    "group": ("Count them by {column}.", "Then group them by {column} and count each group."),
}
"""Requests SQL does serve, put after the parent's question (the twins of
:data:`lexicon.OUT_OF_SCOPE_TASKS`)."""


def added_task(job: Job, table: Table, select: exp.Select, rng: random.Random) -> Twin | None:
    """The parent's question and a sort, rank or count per group of its rows by a column
    of its table (:data:`SQL_TASKS`), or, for an average, rounding it; None when none
    fits (one row, rows already ordered, distinct or cut)."""
    if sqlkit.folds_rows(select):
        return rounded_average(job, select)
    if select.args.get("distinct") or select.args.get("order") or select.args.get("limit"):
        return None
    if ((job.parent.get("result") or {}).get("row_count") or 0) < 2:
        return None  # one row: nothing to sort or to count by
    task = rng.choice(sorted(SQL_TASKS))
    pool = [c for c in table.columns if not is_key(c.name) and offline.describable_names([c.name])]
    if task == "group":
        pool = [c for c in pool if not is_numeric(c.type)]
    if not pool:
        return None
    column = rng.choice(pool)
    target = column_of(select, table, column)
    if target is None:
        return None
    request = rng.choice(SQL_TASKS[task]).format(column=humanize(column.name))
    if task == "group":
        select = select.copy()  # the parent's tree is shared: its copy is changed
        select.set("expressions", [target.copy(), exp.Count(this=exp.Star())])
        select = select.group_by(target)
    else:
        select = select.order_by(exp.Ordered(this=target, desc=task == "rank"))
    text = f"{job.parent['question'].rstrip()} {request}"
    return Twin(job, text, as_sql(select, job, copy=False), f"sql_task_{task}", request)


RESULT_REQUESTS = {
    "table": ("Show the result as a table.", "Give it as a table.", "Show the result as a list."),
    "count": (
        "Then count them.",
        "And tell me how many there are.",
        "Then tell me how many of them there are.",
    ),
}
"""Requests SQL does serve, in the frames of the out-of-scope requests ("Plot the result
as a histogram.", "Then cluster them with k-means.", "And tell me why."): a result is a
table (the parent's SQL), and its rows can be counted (COUNT(*) over it as a subquery)."""

LIST_REQUESTS = frozenset({"Show the result as a list."})
"""The requests that only fit a result of several rows ("Find the number of patients
... Show the result as a list." asks a list of one figure)."""


def whole_result(job: Job, select: exp.Select, rng: random.Random) -> Twin:
    """The parent's question and a request about its whole result: shown as a table (the
    parent's SQL), or its rows counted when it lists rows (no aggregate, no LIMIT, more
    than one row: "how many there are" of one row is no question; a parent verified
    without running, whose rows are not known, is not counted: "What's the date of
    birth for patient 10004457? Then count them."). Only a listing is asked "as a list"
    (:data:`LIST_REQUESTS`)."""
    rows = (job.parent.get("result") or {}).get("row_count", 0)  # unknown: not counted
    countable = rows >= 2 and not sqlkit.folds_rows(select) and not select.args.get("limit")
    task = rng.choice(sorted(RESULT_REQUESTS)) if countable else "table"
    requests = RESULT_REQUESTS[task]
    if not countable:  # one value, or rows not known: no list to show
        requests = tuple(r for r in requests if r not in LIST_REQUESTS)
    request = rng.choice(requests)
    own = task == "count"  # a new tree around a copy of the parent's, else the parent's
    if own:
        select = exp.select(exp.Count(this=exp.Star())).from_(select.subquery("listed"))
    text = f"{job.parent['question'].rstrip()} {request}"
    return Twin(job, text, as_sql(select, job, copy=not own), f"sql_task_{task}", request)


ROUNDING = "Round it to two decimals."


def rounded_average(job: Job, select: exp.Select) -> Twin | None:
    """The parent's averages rounded to two decimals (ROUND in the tree), when its one
    row holds an average and nothing but aggregates (no GROUP BY)."""
    if select.args.get("group"):
        return None
    if not any(isinstance(e.unalias(), exp.Avg) for e in select.expressions):
        return None
    select = select.copy()  # the parent's tree is shared: its copy is changed
    averages = [e for e in select.expressions if isinstance(e.unalias(), exp.Avg)]
    for found in averages:
        inner = found.unalias()
        inner.replace(exp.Round(this=inner.copy(), decimals=exp.Literal.number(2)))
    text = f"{job.parent['question'].rstrip()} {ROUNDING}"
    return Twin(job, text, as_sql(select, job, copy=False), "sql_task_round", ROUNDING)


def short_question(job, context, rng, database) -> Twin | None:
    """vague-question: a question as short as a vague one and in its frames ("?", ",
    please.", "What about ...?") that nothing leaves open: the number of rows of the
    parent's main table holding a value the parent names ("How many admissions with
    admission type Emergency?"); the gold SQL a COUNT(*) of that table with that value.
    Without such a value (a date is no such value: the parent compares it as a range),
    None: a bare "How many diagnoses?" may count records or codes, and its SQL has
    nothing a wrong candidate could change but the table."""
    table = offline.parent_table(job, context)
    if table is None:
        return None
    named = offline.table_noun(table).split()
    where, noun = None, " ".join([*named[:-1], plural(singular(named[-1]))])  # "cities"
    for value, column, _span in offline.named_values(job, context):
        owner, name = column.split(".", 1)
        found = table.column(name)
        if found is None or is_temporal(found.name, found.type):
            continue  # a date is compared as a range: no row may hold it
        if offline.reference_noun(column, context) is None:
            continue  # "rivers with traverse indiana": the column's name is no noun
        if owner.lower() == table.name.lower() and not is_key(name):
            target = exp.column(name, table=table.name, quoted=True)
            if database is not None and not _rows_holding(
                database, table, target.eq(literal(value))
            ):
                continue  # a pattern's part ("ending in United"): no row holds it whole
            where = target.eq(literal(value))
            noun = f"{noun} with {humanize(name)} {value}"
            break
    if where is None:
        return None
    select = exp.select(exp.Count(this=exp.Star())).from_(exp.to_table(table.name, quoted=True))
    select = select.where(where)
    pattern = rng.choice(SHORT_COUNTS)
    text = capitalize(pattern.format(noun=noun))
    return Twin(job, text, as_sql(select, job, copy=False), "short_question", noun)


SHORT_COUNTS = ("How many {noun}?", "Number of {noun}, please.", "What about the number of {noun}?")
"""The short answerable questions' frames (the vague questions': "Attendance?",
"Medicaid, please.", "What about Insulin Lispro?")."""


AGGREGATES = {"highest": exp.Max, "lowest": exp.Min, "average": exp.Avg}
DATE_AGGREGATES = {"earliest": exp.Min, "latest": exp.Max}
AGGREGATE_FRAMES = ("{A} {c}?", "{A} {c}, please.", "What about the {a} {c}?")
"""A short question about a whole column in the vague frames ("Capacity?" is vague,
"Highest capacity?" is not; "Birth date?" is vague, "Earliest birth date?" is not)."""


def aggregate_question(job, context, rng, database) -> Twin | None:
    """vague-question: the highest, lowest or average of a number the parent reads of
    its main table, in the vague frames ("Highest capacity?"), with the table's noun
    when another table has a column of that name ("Highest city population?"); the
    gold SQL that aggregate over the table. Without such a number, the earliest or
    latest of a date it reads ("Earliest player birth date?": the vague question
    "Birth date?" says the date alone). None when the parent reads neither, or the
    table has no other number (or date) a wrong candidate could read."""
    table = offline.parent_table(job, context)
    if table is None:
        return None
    by_name = {humanize(c.name): c for c in table.columns}
    read = [by_name[name] for name in offline.read_columns(job, table) if name in by_name]
    numbers = [c for c in read if is_numeric(c.type) and not is_temporal(c.name, c.type)]
    dates = [c for c in read if is_temporal(c.name, c.type)]
    if numbers and _numeric_sibling(table, numbers[0]):
        column, aggregates = numbers[0], AGGREGATES
    elif not numbers and dates and _comparable_sibling(table, dates[0]):
        column, aggregates = dates[0], DATE_AGGREGATES
    else:
        return None
    word = rng.choice(sorted(aggregates))
    target = exp.column(column.name, table=table.name, quoted=True)
    query = exp.select(aggregates[word](this=target)).from_(exp.to_table(table.name, quoted=True))
    said = humanize(column.name)
    noun = offline.table_noun(table, plural=False)
    elsewhere = [t for t in context.schema.tables if t is not table and t.column(column.name)]
    if elsewhere and not set(noun.split()) & set(said.split()):
        said = f"{noun} {said}"  # "city population": states have a population too
    text = rng.choice(AGGREGATE_FRAMES).format(A=capitalize(word), a=word, c=said)
    return Twin(job, text, as_sql(query, job, copy=False), "aggregate_question", word)


def _comparable_sibling(table: Table, column: Column) -> bool:
    """Whether ``table`` has another date or number that is no key (what a wrong
    candidate of a date's earliest or latest could read instead)."""
    return any(
        c.name.lower() != column.name.lower()
        and (is_numeric(c.type) or is_temporal(c.name, c.type))
        and not is_key(c.name)
        for c in table.columns
    )


def _numeric_sibling(table: Table, column: Column) -> bool:
    """Whether ``table`` has another number that is no key: a whole-table aggregate
    has no condition, join or grouping, so a wrong candidate SQL (SCARE pairs each
    item with one) can only read another number of the table."""
    return any(
        c.name.lower() != column.name.lower() and is_numeric(c.type) and not is_key(c.name)
        for c in table.columns
    )


ATTRIBUTE_FRAMES = ("{V} {c}?", "{V} {c}, please.", "What about the {v} {c}?")
"""The frames of a short answerable question about one row: a vague question's frames
("Texas?", "Texas, please.", "What about texas?") with the attribute asked."""


def attribute_question(job, context, rng, database) -> Twin | None:
    """vague-question: the keyword a vague question is cut to (the attribute the parent
    asks) with the value the parent names, which picks its row, in the vague frames
    ("Texas population?", "What about the Robinsonberg Arena capacity?"); the gold SQL reads
    that column of the one row of the parent's main table holding the value. None when
    the value picks no single row (a drug prescribed many times), when the parent asks
    no plain column of that table, or without a database to count the rows."""
    table = offline.parent_table(job, context)
    select = shared_parent_select(job)
    if table is None or select is None or database is None:
        return None
    asked = _asked_columns(select, table)
    for value, column, _span in offline.named_values(job, context):
        owner, name = column.split(".", 1)
        found = table.column(name)
        if owner.lower() != table.name.lower() or found is None or is_key(name):
            continue
        if is_temporal(found.name, found.type):
            continue  # a date is compared as a range: it names no row
        wanted = [c for c in asked if c.name.lower() != name.lower()]
        where = exp.column(name, table=table.name, quoted=True).eq(literal(value))
        if not wanted or _rows_holding(database, table, where) != 1:
            continue
        target = wanted[0]
        query = exp.select(exp.column(target.name, table=table.name, quoted=True))
        query = query.from_(exp.to_table(table.name, quoted=True)).where(where)
        said = humanize(target.name)
        pattern = rng.choice(ATTRIBUTE_FRAMES)
        text = pattern.format(V=capitalize(value), v=value, c=said)
        return Twin(job, text, as_sql(query, job, copy=False), "attribute_question", value)
    return None


def _asked_columns(select: exp.Select, table: Table) -> list[Column]:
    """The columns of ``table`` the outer SELECT returns bare (no keys, no flags)."""
    found = own_table(select, table)
    owner = found.alias_or_name.lower() if found is not None else None
    asked = []
    for expression in select.expressions:
        column = expression.unalias()
        if not isinstance(column, exp.Column) or column.table.lower() not in ("", owner):
            continue
        known = table.column(column.name)
        if known is not None and not is_key(known.name) and offline.describable_names([known.name]):
            asked.append(known)
    return asked if owner is not None else []


_COUNTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # database -> SQL -> count
COUNTS_KEPT = 4096  # counts a database keeps: a full memo starts again empty


def _rows_holding(database, table: Table, where: exp.Expr) -> int | None:
    """How many rows of ``table`` meet ``where`` (None when the count fails); counted
    once per database and text (the parents of one template name the same values)."""
    query = exp.select(exp.Count(this=exp.Star())).from_(exp.to_table(table.name, quoted=True))
    counted = query.where(where.copy(), copy=False)  # a tree of its own: no copies
    sql = counted.sql(dialect="sqlite", copy=False)
    known = _COUNTS.setdefault(database, {})
    if sql not in known:
        if len(known) >= COUNTS_KEPT:
            known.clear()
        known[sql] = _count(database, sql)
    return known[sql]


def _count(database, sql: str) -> int | None:
    """The first value of ``sql``'s first row (a count: it orders nothing), None when
    it fails or gives no row."""
    try:
        rows = database.execute(sql, ordered=False).rows
    except SQLError:
        return None
    return rows[0][0] if rows else None


def twin_example(twin: Twin) -> dict:
    """The twin as an answerable example, what :func:`answerable.builders.seeds.
    verified_sql` checks."""
    parent = twin.job.parent
    return {
        "id": twin.job.key,
        "db_id": twin.job.db_id,
        "question": twin.question,
        "sql": twin.sql,
        "dialect": parent.get("dialect", "sqlite"),
        "label": "answerable",
        "source": (parent.get("provenance") or {}).get("source"),
    }


def twin_item(twin: Twin, example: dict, result: dict | None, sql_meta: dict, seed: int) -> dict:
    """The verified twin's item; its provenance names the device and the parent."""
    parent = twin.job.parent
    params = {
        "category": twin.job.category,
        "sample": twin.job.sample,
        "anchor": parent["id"],
        "twin": twin.device,
        "device_words": twin.trigger,
        "verified_by": "execution" if result else "binding",
    }
    return plain_item(
        twin.job.db_id,
        twin.question,
        example["sql"],
        result=result,
        sql_meta=sql_meta,
        dialect=example.get("dialect", "sqlite"),
        provenance={
            "generator": GENERATOR,
            "source": example["source"],
            "params": params,
            "seed": seed,
            "parent": parent["id"],
        },
    )


class TwinQueries:
    """The gold SQL of the twins kept so far, per database: a twin that asks what an
    earlier twin asks (the same SQL: "How many lab events with flag abnormal?" and "What
    about the number of lab events with flag abnormal?") is a repeat, whatever its
    words. Twins of one parent are never compared as text (they are its kin), so the
    SQL is what tells them apart. Checking the same twin again finds no repeat."""

    def __init__(self):
        self.first: dict[tuple[str, str], str] = {}

    def check(self, item: dict) -> tuple[str, str] | None:
        """``("repeated-twin", detail)`` when an earlier twin has the item's SQL, else
        None (and the item's SQL is remembered)."""
        key = (item["db_id"], " ".join(item["sql"].split()))
        first = self.first.setdefault(key, item["id"])
        if first == item["id"]:
            return None
        return "repeated-twin", f"same SQL as twin {first}"
