"""Putting values into a template: SQL literals in the tree, words in the question.

Values enter the SQL only as sqlglot nodes (``exp.Literal``, ``exp.Null``, ``exp.Neg``)
that replace the template's ``:name`` placeholders in the parsed tree, and the tree is
then printed: never by formatting strings, so quotes, unicode, numbers, dates and NULL
come out as SQLite reads them.

:class:`SQLWriter` parses a template once and writes it for many value sets. It swaps
the literals in and out of one tree it owns, to which the dialect's rewrites were
applied once. Better still, per *shape* of the value set (each value a string, an
integer, another number, a negative one or NULL), it remembers the printed text around
each literal, as the generator wrote it around a literal of the same shape whose text
is a marker; a pair of a known shape is then the generator's text of its literals
between those pieces.
The pieces are kept only where the generator cannot look at a value beyond its shape
(each placeholder an operand of a plain operator, see :data:`PLAIN_PARENTS`) and only
once they give back, for the shape's first value set, exactly the text the whole tree
prints; otherwise that shape is written from the tree every time.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from answerable.builders.sqlkit.parsing import COMPARISONS
from answerable.builders.templates.problems import TemplateError

PLACEHOLDER_IN_TEXT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
INT64 = (-(2**63), 2**63 - 1)


def value_node(value: Any) -> exp.Expr:
    """The SQL node of one value: a string or number literal, or NULL.

    Negative numbers are ``Neg(literal)`` so that ``5 - :x`` prints as ``5 - -3``.
    Dates and datetimes become ISO strings, as SQLite stores them. Raises
    ``TemplateError("unrepresentable-value")`` for what a SQLite literal cannot hold
    exactly: NaN, infinities, integers beyond 64 bits, NUL characters, bytes.

    >>> value_node("it's").sql(), value_node(-2.5).sql(), value_node(None).sql()
    ("'it''s'", '-2.5', 'NULL')
    """
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Literal.number(int(value))
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise TemplateError("unrepresentable-value", f"{value} does not fit in 64 bits")
        return _signed(str(abs(value)), value < 0)
    if isinstance(value, float | Decimal):
        if not math.isfinite(value):
            raise TemplateError("unrepresentable-value", f"{value} is not a finite number")
        text = repr(abs(float(value))) if isinstance(value, float) else str(abs(value))
        return _signed(text, value < 0)
    if isinstance(value, dt.date | dt.datetime | dt.time):
        value = value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, str):
        if "\x00" in value:
            raise TemplateError("unrepresentable-value", "a NUL character cannot be in a literal")
        return exp.Literal.string(value)
    raise TemplateError("unrepresentable-value", f"no SQL literal for {type(value).__name__}")


def _signed(digits: str, negative: bool) -> exp.Expr:
    literal = exp.Literal.number(digits)
    return exp.Neg(this=literal) if negative else literal


def bound_value(value: Any) -> Any:
    """The value as a bound parameter: the same SQLite value as :func:`value_node`."""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return value


def words(value: Any) -> str:
    """How a value reads in a question: strings as they are, numbers plainly.

    >>> words(12.0), words(3.25), words("Aspirin"), words(None)
    ('12', '3.25', 'Aspirin', 'NULL')
    """
    if value is None:
        return "NULL"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def text_placeholders(text: str) -> list[str]:
    """The ``{name}`` placeholders of a question text, in order of appearance."""
    return PLACEHOLDER_IN_TEXT.findall(text)


def fill_question(text: str, values: dict[str, Any]) -> str:
    """The question with every ``{name}`` replaced by its value's words.

    >>> fill_question("Which drugs did patient {subject_id} get?", {"subject_id": 10004})
    'Which drugs did patient 10004 get?'
    """
    return PLACEHOLDER_IN_TEXT.sub(lambda match: words(values[match.group(1)]), text)


RESULT_WORDS = ("result", "row_count")  # what an answer text may say beside the values
ANSWER_ROWS = 5


def fill_answer(text: str, values: dict[str, Any], result: dict) -> str:
    """An answer text with its ``{name}`` placeholders, ``{result}`` (the first rows'
    values) and ``{row_count}`` filled in.

    >>> fill_answer("{drug} was given {row_count} times: {result}.", {"drug": "Heparin"},
    ...             {"row_count": 2, "rows": [["2104-01-02", 5.0], ["2104-01-09", 2.5]]})
    'Heparin was given 2 times: 2104-01-02 (5), 2104-01-09 (2.5).'
    """
    known = {**values, "row_count": result["row_count"]}
    known["result"] = result_words(result)
    return PLACEHOLDER_IN_TEXT.sub(
        lambda m: known[m.group(1)] if m.group(1) == "result" else words(known[m.group(1)]), text
    )


def result_words(result: dict) -> str:
    """A result's first distinct rows as words: one value per row, the rest in brackets;
    a row repeated (a join that meets it twice) is said once.

    >>> result_words({"row_count": 7, "rows": [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]})
    'a, b, c, d, e and 2 more rows'
    >>> result_words({"row_count": 3, "rows": [["rio grande"], ["rio grande"], ["gila"]]})
    'rio grande, gila'
    """
    shown, used = [], 0
    for row in result.get("rows") or []:
        if len(shown) == ANSWER_ROWS:
            break
        used += 1
        text = words(row[0]) + (
            f" ({', '.join(words(v) for v in row[1:])})" if len(row) > 1 else ""
        )
        if text not in shown:
            shown.append(text)
    more = result["row_count"] - used
    return ", ".join(shown) + (f" and {more} more rows" if more > 0 else "")


def keep_commas(tree: exp.Expr) -> exp.Expr:
    """Comma joins printed as commas again (in place), and ``tree`` returned.

    sqlglot reads SQLite's ``FROM a, b`` as a ``CROSS JOIN``, which is the same rows but
    not the same query plan: SQLite never reorders the tables of a ``CROSS JOIN``.

    >>> from answerable.builders.sqlkit import parse
    >>> keep_commas(parse("SELECT * FROM a, b WHERE a.x = b.x")).sql("sqlite")
    'SELECT * FROM a, b WHERE a.x = b.x'
    """
    for join in tree.find_all(exp.Join):
        plain = not any(join.args.get(key) for key in ("on", "using", "side", "method"))
        if join.kind == "CROSS" and plain:
            join.set("kind", None)
    return tree


# Parents whose text is their operands' texts around an operator or inside a call, never
# depending on what an operand's value is: a placeholder under one of them may be written
# from remembered pieces (see the module docstring).
PLAIN_PARENTS = (
    *COMPARISONS,  # =, <, LIKE, GLOB ... and IS
    exp.NullSafeNEQ,
    exp.Between,
    exp.In,
    exp.Tuple,
    exp.DPipe,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Paren,
    exp.Anonymous,
    exp.Limit,  # a dialect that takes literals only simplifies anything else: checked
)
_MARK = "\x00"  # around a slot's number in the marked text; no literal holds a NUL
_UNKNOWN = object()  # a shape not met yet


def value_shape(node: exp.Expr) -> str:
    """What about a value's node the printed text around it may depend on: its kind."""
    if isinstance(node, exp.Neg):
        return "-" + value_shape(node.this)
    if isinstance(node, exp.Literal):
        return "string" if node.is_string else "int" if node.is_int else "number"
    return type(node).__name__


class SQLWriter:
    """One template's SQL, parsed once and written for many value sets.

    ``param_sql`` is the SQL with its ``:name`` placeholders, for execution with bound
    parameters; :meth:`sql` writes it with values as literals; :meth:`tree` gives a
    filled copy of the tree.

    >>> from answerable.builders.sqlkit import parse
    >>> writer = SQLWriter(parse("SELECT a FROM t WHERE b = :b AND c > :c"))
    >>> writer.sql({"b": "O'Brien", "c": -1})
    "SELECT a FROM t WHERE b = 'O''Brien' AND c > -1"
    >>> writer.sql({"b": "Smith", "c": -7})  # the same shape: from the pieces
    "SELECT a FROM t WHERE b = 'Smith' AND c > -7"
    >>> writer.param_sql
    'SELECT a FROM t WHERE b = :b AND c > :c'
    """

    def __init__(self, tree: exp.Expr, dialect: str = "sqlite"):
        self._original = keep_commas(tree.copy())
        dialect_ = Dialect.get_or_raise(dialect)
        self._fresh = dialect_.generator()  # writes copies: no rewrites kept
        expected = self._fresh.generate(self._original)
        self._tree = self._original.copy()
        self._generator = dialect_.generator()
        self._generator.generate(self._tree, copy=False)  # applies the dialect's rewrites once
        self._slots = list(self._tree.find_all(exp.Placeholder))
        self.names = sorted({slot.name for slot in self._slots})
        self.param_sql = self._write()
        # A rewrite that puts a new node above the root (QUALIFY emulated by a subquery,
        # LIMIT written as TOP) is lost to the tree kept here: then every value set is
        # written from a fresh copy, as sqlglot itself writes it (slower, never wrong).
        self._in_place = self.param_sql == expected
        if not self._in_place:
            self.param_sql = expected
        plain = all(isinstance(slot.parent, PLAIN_PARENTS) for slot in self._slots)
        # shape -> (texts, slots): texts[0], literal of slots[0], texts[1] ...; None: the
        # shape is always written from the tree
        self._pieces: dict[tuple, tuple | None] = {} if plain and self._in_place else None

    def sql(self, values: dict[str, Any]) -> str:
        """The SQL with each placeholder replaced by its value's literal."""
        if not self._in_place:
            return self._fresh.generate(self.tree(values), copy=False)
        nodes = [value_node(values[slot.name]) for slot in self._slots]
        if self._pieces is None:
            return self._filled(nodes)
        shape = tuple(value_shape(node) for node in nodes)
        pieces = self._pieces.get(shape, _UNKNOWN)
        if pieces is _UNKNOWN:
            text = self._filled(nodes)
            self._pieces[shape] = self._learn(nodes, text)
            return text
        if pieces is None:
            return self._filled(nodes)
        return self._joined(pieces, nodes)

    def _joined(self, pieces: tuple, nodes: list[exp.Expr]) -> str:
        """The pieces with the generator's text of each slot's literal between them."""
        texts, slots = pieces
        literals = [self._generator.sql(node) for node in nodes]
        parts = [texts[0]]
        for slot, text in zip(slots, texts[1:], strict=True):
            parts += (literals[slot], text)
        return "".join(parts)

    def _filled(self, nodes: list[exp.Expr]) -> str:
        """The tree written with ``nodes`` in the slots."""
        for slot, node in zip(self._slots, nodes, strict=True):
            slot.replace(node)
        try:
            return self._write()
        finally:
            for slot, node in zip(self._slots, nodes, strict=True):
                node.replace(slot)

    def _learn(self, nodes: list[exp.Expr], text: str) -> tuple | None:
        """The pieces of ``nodes``' shape, or None when they do not give ``text`` back.

        The tree is written with each literal's text replaced by its slot's mark; the
        text around each mark, less the node's own text around it (a string's quotes, a
        minus sign), is a piece. NULL has no literal: its text stays in the pieces.
        """
        marked = [_marked(node, f"{_MARK}{i}{_MARK}") for i, node in enumerate(nodes)]
        split = self._filled(marked).split(_MARK)
        texts, slots = split[0::2], split[1::2]
        if not all(slot.isdigit() and int(slot) < len(nodes) for slot in slots):
            return None
        slots = [int(slot) for slot in slots]
        for i, slot in enumerate(slots):
            around = self._generator.sql(marked[slot]).split(_MARK)
            if len(around) != 3:  # the mark written otherwise (escaped, say)
                return None
            before, _, after = around
            if not (texts[i].endswith(before) and texts[i + 1].startswith(after)):
                return None
            texts[i] = texts[i][: len(texts[i]) - len(before)]
            texts[i + 1] = texts[i + 1][len(after) :]
        pieces = (texts, slots)
        return pieces if self._joined(pieces, nodes) == text else None

    def _write(self) -> str:
        """``generate(tree, copy=False)`` without its preprocessing, which the first
        call in ``__init__`` has already applied to the tree."""
        self._generator.unsupported_messages = []
        return self._generator.sql(self._tree).strip()

    def tree(self, values: dict[str, Any]) -> exp.Expr:
        """A copy of the tree with each placeholder replaced by its value's literal."""

        def fill(node: exp.Expr) -> exp.Expr:
            return value_node(values[node.name]) if isinstance(node, exp.Placeholder) else node

        return self._original.transform(fill)


def _marked(node: exp.Expr, mark: str) -> exp.Expr:
    """A copy of a value's node of the same shape, its literal's text ``mark`` (NULL,
    which has no literal, as it is)."""
    marked = node.copy()
    literal = marked.find(exp.Literal)
    if literal is not None:
        literal.set("this", mark)
    return marked
