"""text2sql-data templates (GeoQuery, Restaurants ...) imported as template_v1 templates.

An entry of ``geography.json`` is a template already: SQL strings with variables
(``"state_name0"``, which SQLite would read as a string), and sentences that use the same
variable names. Importing one entry, on the sqlglot tree:

1. every variable node (a quoted or bare unqualified column, or a string, named like a
   variable) becomes the placeholder ``:name``;
2. each placeholder is bound to the column it is compared with, resolved through the
   query's aliases (``STATEalias0.STATE_NAME`` is ``state.state_name``); placeholders
   compared with ``=`` in the same WHERE get one binding query over that SELECT's
   tables and join conditions, so their values are drawn as combinations that exist;
3. the sentences, with each variable written ``{name}``, become the question texts
   (only those that name every placeholder of the SQL).

``repair=True`` adds honest fixes, each named in the template's ``tags``: take the first
of the entry's equivalent SQL strings that binds to the database (``fix:alternative-sql``);
rename columns the data renamed (``renames={"RESTAURANT.ID": "RESTAURANT_ID"}``,
``fix:rename``); rewrite ``x > ALL (subquery)``, which SQLite lacks, as the equivalent
``NOT EXISTS`` (``fix:all-subquery``). Without it, the first SQL is taken as written.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from answerable.builders import sqlkit
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef, expect, read_json, sqlite_schema
from answerable.builders.sources.text2sql import name_pattern
from answerable.builders.sqlkit.parsing import compared_with
from answerable.builders.sqlkit.refs import resolve_all
from answerable.builders.templates.expand import Settings, expand_templates
from answerable.builders.templates.model import TemplateSet, accept, template_reject
from answerable.builders.templates.writing import keep_commas, text_placeholders
from answerable.kernel.errors import SQLError

ORDERINGS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ)
KNOWN_RENAMES = {"restaurants": {"RESTAURANT.ID": "RESTAURANT_ID"}}
"""Columns the published SQLite files renamed: Restaurants' SQL reads ``RESTAURANT.ID``,
but ``restaurants.sqlite`` calls that column ``RESTAURANT_ID``."""
COVERAGE_SETTINGS = Settings(seed=13, quota=1, attempts=50)
"""Coverage asks for one verified pair per template, trying up to 50 value sets."""


def load_text2sql_templates(
    path: Path,
    database: Path,
    db_id: str | None = None,
    repair: bool = False,
    renames: dict[str, str] | None = None,
) -> tuple[TemplateSet, DatabaseRef]:
    """The templates of a text2sql-data file over its SQLite database, and that database.

    Template ids are ``<db_id>.<entry index>``; an entry that cannot become a template
    is rejected with its reason.
    """
    database = Path(database)
    db_id = db_id or database.stem
    ref = DatabaseRef(db_id, database, sqlite_schema(database, db_id))
    source = Path(path).name
    records, out = [], TemplateSet()
    entries = expect(read_json(Path(path)), list, Path(path), None, "a list of entries")
    for index, entry in enumerate(entries):
        template_id = f"{db_id}.{index:03d}"
        try:
            records.append(
                (entry_template(entry, template_id, ref.schema, repair, renames), source)
            )
        except SQLError as error:
            record = {"id": template_id, "db_id": db_id}
            out.rejects.append(template_reject(record, error.reason, str(error), source))
        except (KeyError, TypeError, AttributeError) as error:
            record = {"id": template_id, "db_id": db_id}
            detail = f"not a text2sql-data entry ({type(error).__name__}: {error})"
            out.rejects.append(template_reject(record, "invalid-entry", detail, source))
    out.extend(accept(records))
    return out, ref


def entry_template(
    entry: dict, template_id: str, schema: DatabaseSchema, repair: bool, renames: dict | None
) -> dict:
    """The template record of one text2sql-data entry (``SQLError`` if its SQL is unusable)."""
    names = {v["name"] for v in entry.get("variables", [])}
    names |= {name for s in entry.get("sentences", []) for name in s.get("variables", {})}
    tree, qualified, tags = choose_sql(entry["sql"], names, schema, repair, renames or {})
    record = {
        "id": template_id,
        "db_id": schema.db_id,
        "questions": question_texts(entry.get("sentences", []), names, tree),
        "sql": keep_commas(tree).sql("sqlite"),
        "tags": ["text2sql", f"query-split:{entry.get('query-split')}", *tags],
    }
    record.update(bind_placeholders(qualified))
    return record


def choose_sql(
    queries: list[str], names: set[str], schema: DatabaseSchema, repair: bool, renames: dict
) -> tuple[exp.Expr, exp.Expr, list[str]]:
    """The entry's SQL tree with placeholders, the same qualified, and the fixes it needed.

    Strict: the first SQL string, as written. With ``repair``: the first one that binds
    to the schema once fixed. ``SQLError`` when none binds.
    """
    first_error = None
    for number, sql in enumerate(queries if repair else queries[:1]):
        try:
            tree = to_placeholders(sqlkit.parse(sql), names)
            fixes = []
            if repair:
                fixes = ["fix:alternative-sql"] * (number > 0)
                fixes += rename_columns(tree, renames) + rewrite_all_subqueries(tree)
            return tree, sqlkit.qualify(tree, schema), fixes
        except SQLError as error:
            first_error = first_error or error
    raise first_error or SQLError("parse-error", "the entry has no SQL")


def to_placeholders(tree: exp.Expr, names: set[str]) -> exp.Expr:
    """``tree`` with every variable node (``"state_name0"``, ``'state_name0'`` or a bare
    ``state_name0``) replaced by the placeholder ``:state_name0``.

    >>> to_placeholders(sqlkit.parse('SELECT a FROM t WHERE b = "v0"'), {"v0"}).sql()
    'SELECT a FROM t WHERE b = :v0'
    """

    def replace(node: exp.Expr) -> exp.Expr:
        unqualified = isinstance(node, exp.Column) and not node.table
        text = isinstance(node, exp.Literal) and node.is_string
        if (unqualified or text) and node.name in names:
            return exp.Placeholder(this=node.name)
        return node

    return tree.transform(replace, copy=False)


def rename_columns(tree: exp.Expr, renames: dict[str, str]) -> list[str]:
    """Rename ``TABLE.COLUMN`` references (through aliases) as ``renames`` says."""
    if not renames:
        return []
    wanted = {key.upper(): new for key, new in renames.items()}
    tables = {t.alias_or_name.upper(): t.name.upper() for t in tree.find_all(exp.Table)}
    done = []
    for column in tree.find_all(exp.Column):
        key = f"{tables.get(column.table.upper(), column.table.upper())}.{column.name.upper()}"
        if key in wanted:
            column.set("this", exp.to_identifier(wanted[key]))
            done.append(f"fix:rename {key} -> {wanted[key]}")
    return sorted(set(done))


def rewrite_all_subqueries(tree: exp.Expr) -> list[str]:
    """``x op ALL (SELECT y FROM f WHERE w)`` in a WHERE becomes
    ``NOT EXISTS (SELECT 1 FROM f WHERE w AND NOT COALESCE(x op y, 0))``.

    In a WHERE (where NULL counts as false) the two keep the same rows: a row is kept
    exactly when ``x op y`` is true for every row of the subquery, and when the
    subquery is empty.
    """
    done = []
    for node in list(tree.find_all(exp.All)):
        comparison, query = node.parent, node.this.unnest()
        if not (
            isinstance(comparison, ORDERINGS)
            and node is comparison.expression
            and _simple_select(query)
            and _in_where(comparison)
        ):
            continue
        test = type(comparison)(this=comparison.this.copy(), expression=query.selects[0].copy())
        broken = exp.Not(
            this=exp.Coalesce(this=exp.Paren(this=test), expressions=[exp.Literal.number(0)])
        )
        inner = query.copy().select(exp.Literal.number(1), append=False).where(broken)
        comparison.replace(exp.Not(this=exp.Exists(this=inner)))
        done.append("fix:all-subquery")
    return sorted(set(done))


def _simple_select(query: exp.Expr) -> bool:
    keys = ("group", "having", "limit", "offset", "distinct", "order", "with")
    return (
        isinstance(query, exp.Select)
        and len(query.selects) == 1
        and not any(query.args.get(key) for key in keys)
    )


def _in_where(node: exp.Expr) -> bool:
    while isinstance(node.parent, (exp.And, exp.Paren)):
        node = node.parent
    return isinstance(node.parent, exp.Where)


def question_texts(sentences: list[dict], names: set[str], tree: exp.Expr) -> list[str]:
    """Distinct sentence texts with ``{name}`` for each variable, in first-seen order;
    only those naming exactly the SQL's placeholders (all of them, when none does)."""
    wanted = {node.name for node in tree.find_all(exp.Placeholder)}
    pattern = name_pattern(names) if names else None
    texts = []
    for sentence in sentences:
        text = sentence["text"].replace("{", "(").replace("}", ")")
        if pattern is not None:
            text = pattern.sub(lambda match: "{" + match.group(0) + "}", text)
        texts.append(text)
    texts = list(dict.fromkeys(texts))
    fitting = [t for t in texts if set(text_placeholders(t)) == wanted]
    return fitting or texts


def bind_placeholders(qualified: exp.Expr) -> dict:
    """``placeholders`` and ``bindings`` of the template (from its qualified tree): each
    placeholder bound to the column it is compared with; those compared with ``=`` in
    one WHERE bound jointly."""
    _, resolved = resolve_all(qualified)
    columns, groups = {}, []
    for scope in traverse_scope(qualified):
        group = {}
        for node in scope.expression.find_all(exp.Placeholder):
            operator, other = compared_with(node)
            if isinstance(other, exp.Column) and id(other) in resolved:
                columns.setdefault(node.name, resolved[id(other)])
                if operator == "eq" and _conjunct_of(node, scope.expression):
                    group.setdefault(node.name, other)
        if len(group) > 1:
            groups.append((scope.expression, group))
    bindings, joint = [], set()
    for select, group in sorted(groups, key=lambda g: -len(g[1])):
        group = {name: column for name, column in group.items() if name not in joint}
        if len(group) > 1:
            bindings.append({"query": binding_query(select, group)})
            joint.update(group)
    placeholders = {n: {"column": c} for n, c in sorted(columns.items()) if n not in joint}
    return {"placeholders": placeholders, "bindings": bindings}


def _conjunct_of(node: exp.Expr, select: exp.Expr) -> bool:
    """Whether ``node``'s comparison is one of the AND-ed conditions of ``select``'s WHERE."""
    comparison = node.parent
    return _in_where(comparison) and comparison.find_ancestor(exp.Select) is select


def binding_query(select: exp.Select, group: dict[str, exp.Column]) -> str:
    """``SELECT DISTINCT`` the group's columns over ``select``'s tables, keeping its
    conditions that hold no placeholder and no subquery (the join conditions)."""
    where = select.args.get("where")
    conditions = (
        list(where.this.flatten())
        if where and isinstance(where.this, exp.And)
        else ([where.this] if where else [])
    )
    kept = [c.copy() for c in conditions if not c.find(exp.Placeholder, exp.Query)]
    query = exp.Select(expressions=[exp.alias_(col.copy(), name) for name, col in group.items()])
    query.set("distinct", exp.Distinct())
    query.set("from_", select.args["from_"].copy())
    if select.args.get("joins"):
        query.set("joins", [join.copy() for join in select.args["joins"]])
    if kept:
        query = query.where(exp.and_(*kept))
    return keep_commas(query).sql("sqlite")


@dataclass
class Coverage:
    """How many templates of an imported file made at least one verified pair, and why
    the others made none (the reason of the template's reject, or its commonest
    expansion reject)."""

    total: int
    verified: int
    failures: dict[str, tuple[str, str]]  # template id -> (reason, detail)

    @property
    def share(self) -> float:
        return self.verified / self.total if self.total else 0.0

    def reasons(self) -> Counter:
        """How many templates failed for each reason."""
        return Counter(reason for reason, _ in self.failures.values())


def coverage(
    path: Path,
    database: Path,
    settings: Settings = COVERAGE_SETTINGS,
    repair: bool = False,
    renames: dict[str, str] | None = None,
) -> Coverage:
    """Import a text2sql-data file, expand every template on its database, and count."""
    imported, ref = load_text2sql_templates(path, database, repair=repair, renames=renames)
    made = expand_templates(imported.templates, {ref.db_id: ref}, settings)
    kept = Counter(item["provenance"]["external_id"] for item in made.items)
    rejects: dict[str, list[dict]] = {}
    for line in imported.rejects + made.rejects:
        rejects.setdefault(line.get("template") or line["id"], []).append(line)
    failures = {}
    for template_id in sorted(set(rejects) - set(kept)):
        lines = rejects[template_id]
        reason = Counter(line["reason"] for line in lines).most_common(1)[0][0]
        detail = next(line["detail"] for line in lines if line["reason"] == reason)
        failures[template_id] = (reason, detail)
    total = len(imported.templates) + len({r["id"] for r in imported.rejects})
    return Coverage(total, len(kept), failures)
