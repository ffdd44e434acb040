"""text2sql-data sources (``geography.json``, ``restaurants.json``) over one SQLite file.

Each entry holds equivalent SQL strings, its variables, and sentences whose
``variables`` give one value per variable. Every sentence becomes one example: the text
with each variable name replaced by its value, and the entry's first SQL with each
variable node replaced by a literal in the sqlglot tree. Variables appear in the SQL as
``"state_name0"`` (a quoted column to sqlite), ``'state_name0'`` (a string) or bare
(a column), where the value becomes a number when it looks like one.
"""

from __future__ import annotations

import re
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from answerable.builders.sources.common import (
    DatabaseRef,
    ExampleCollector,
    SourceData,
    expect,
    field_of,
    new_example,
    read_json,
    sqlite_schema,
)
from answerable.kernel.errors import ConfigError

NUMBER = re.compile(r"-?\d+(\.\d+)?")
VALUE_TYPES = (str, int, float)


def load_text2sql(
    path: Path, source: str, database: Path, db_id: str | None = None, limit: int | None = None
) -> SourceData:
    """Read a text2sql-data file; ``external_id`` is ``<entry index>.<sentence index>``.

    ``db_id`` defaults to the database file's stem; ``split`` is the question-split.
    """
    path, database = Path(path), Path(database)
    db_id = db_id or database.stem
    ref = DatabaseRef(db_id, database, sqlite_schema(database, db_id))
    entries = expect(read_json(path), list, path, None, "a list of entries")
    out = ExampleCollector(source, limit)
    for index, entry in enumerate(entries):
        if out.full:
            break
        add_entry(out, entry, path, index, db_id)
    return out.finish(lambda _: ref)


def add_entry(out: ExampleCollector, entry: object, path: Path, index: int, db_id: str) -> None:
    """Add one example per sentence of ``entry``, or reject them all if its SQL is bad."""
    where = f"[{index}]"
    entry = expect(entry, dict, path, where, "an entry (object)")
    sentences = field_of(entry, "sentences", list, path, where)
    names = variable_names(entry, path, where)
    sql = first_sql(entry, path, where)
    tree, error = parse_statement(sql)
    if tree is None:
        for number in range(len(sentences)):
            out.reject(f"{index}.{number}", "parse-error", error)
        return
    for number, sentence in enumerate(sentences):
        if out.full:
            return
        sentence_where = f"{where}.sentences[{number}]"
        parts = read_sentence(sentence, path, sentence_where)
        fill_sentence(out, tree, names, parts, db_id, f"{index}.{number}")


def fill_sentence(
    out: ExampleCollector,
    tree: exp.Expression,
    names: set[str],
    parts: tuple[str, dict, str | None],
    db_id: str,
    external_id: str,
) -> None:
    """Fill one sentence's text and the entry's SQL; add the example or reject it."""
    text, values, split = parts
    names = names | set(values)
    question = fill_text(text, values)
    filled = fill_sql(tree, values)
    left = sorted(left_in_sql(filled, names) | left_in_text(question, names))
    if left:
        out.reject(external_id, "unfilled-variable", f"no value for {', '.join(left)}")
        return
    sql = filled.sql(dialect="sqlite")
    out.add(
        new_example(
            out.source, db_id, question, sql, external_id=external_id, split=split, variables=values
        )
    )


def parse_statement(sql: str) -> tuple[exp.Expression | None, str]:
    """The tree of a single SQL statement, or None and the reason it is not one."""
    try:
        trees = [tree for tree in sqlglot.parse(sql, read="sqlite") if tree is not None]
    except SqlglotError as error:
        return None, str(error).splitlines()[0]
    if len(trees) != 1:
        return None, f"expected one SQL statement, found {len(trees)}"
    return trees[0], ""


def first_sql(entry: dict, path: Path, where: str) -> str:
    """The first of the entry's equivalent SQL strings."""
    queries = field_of(entry, "sql", list, path, where)
    if not queries:
        raise ConfigError(path, f"{where}.sql", "the list of SQL strings is empty")
    return expect(queries[0], str, path, f"{where}.sql[0]")


def variable_names(entry: dict, path: Path, where: str) -> set[str]:
    """The names of the entry's variables."""
    variables = expect(entry.get("variables", []), list, path, f"{where}.variables")
    names = set()
    for number, variable in enumerate(variables):
        variable = expect(variable, dict, path, f"{where}.variables[{number}]")
        names.add(field_of(variable, "name", str, path, f"{where}.variables[{number}]"))
    return names


def read_sentence(sentence: object, path: Path, where: str) -> tuple[str, dict, str | None]:
    """The text, variable values (as strings) and question-split of one sentence."""
    sentence = expect(sentence, dict, path, where, "a sentence (object)")
    text = field_of(sentence, "text", str, path, where)
    values = expect(sentence.get("variables", {}), dict, path, f"{where}.variables")
    for name, value in values.items():
        expect(value, VALUE_TYPES, path, f"{where}.variables.{name}")
    split = sentence.get("question-split")
    split = None if split is None else str(split)
    return text, {name: str(value) for name, value in values.items()}, split


def name_pattern(names) -> re.Pattern:
    """Matches any of ``names`` as a whole token (not inside a longer word)."""
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{alternatives})(?![A-Za-z0-9_])")


def fill_text(text: str, values: dict[str, str]) -> str:
    """Replace each variable name in ``text`` by its value, in one pass.

    >>> fill_text("rivers in state_name0 ?", {"state_name0": "ohio"})
    'rivers in ohio ?'
    """
    if not values:
        return text
    return name_pattern(values).sub(lambda match: values[match.group(0)], text)


def left_in_text(text: str, names: set[str]) -> set[str]:
    """The variable names still written in ``text``."""
    return set(name_pattern(names).findall(text)) if names else set()


def variable_name(node: exp.Expression) -> str | None:
    """The name a node would carry as a variable: an unqualified column or a string."""
    if isinstance(node, exp.Column) and not node.table:
        return node.name
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    return None


def value_literal(node: exp.Expression, value: str) -> exp.Literal:
    """The literal that replaces a variable node: a number only where it was bare."""
    bare = isinstance(node, exp.Column) and not node.this.args.get("quoted")
    if bare and NUMBER.fullmatch(value):
        return exp.Literal.number(value)
    return exp.Literal.string(value)


def fill_sql(tree: exp.Expression, values: dict[str, str]) -> exp.Expression:
    """A copy of ``tree`` with every variable node replaced by its value as a literal.

    >>> tree = sqlglot.parse_one('SELECT a FROM t WHERE b = "v0" AND c > n0', read="sqlite")
    >>> fill_sql(tree, {"v0": "it's", "n0": "3"}).sql(dialect="sqlite")
    "SELECT a FROM t WHERE b = 'it''s' AND c > 3"
    """

    def replace(node: exp.Expression) -> exp.Expression:
        name = variable_name(node)
        return value_literal(node, values[name]) if name in values else node

    return tree.transform(replace)


def left_in_sql(tree: exp.Expression, names: set[str]) -> set[str]:
    """The variable names still present as nodes of ``tree``."""
    return {name for node in tree.walk() if (name := variable_name(node)) in names}
