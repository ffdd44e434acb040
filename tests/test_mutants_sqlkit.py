"""sqlkit's descriptions at their edges: hardness when a join meets a subquery, and the
skeleton of IN lists of exactly one and two values, and every unsafe function by name.

Each test names the single-line mutant of ``builders/sqlkit/describe.py`` it kills
(issue 18).
"""

from __future__ import annotations

import pytest

from answerable.builders.sqlkit import hardness, is_read_only, parse, skeleton
from answerable.builders.sqlkit.describe import unsafe_function


@pytest.mark.parametrize(
    ("sql", "level"),
    [
        ("SELECT a FROM t", "easy"),
        ("SELECT a FROM t WHERE b IN (1, 2)", "easy"),
        ("SELECT a FROM t JOIN u ON t.id = u.id", "medium"),
        ("SELECT a FROM t JOIN u ON t.id = u.id WHERE t.b IN (SELECT b FROM v)", "hard"),
        ("SELECT a FROM t JOIN u ON t.id = u.id WHERE EXISTS (SELECT 1 FROM v)", "hard"),
        ("SELECT a, (SELECT MAX(b) FROM v) FROM t JOIN u ON t.id = u.id", "hard"),
        ("SELECT a FROM t WHERE b IN (SELECT b FROM v)", "hard"),
        ("SELECT a FROM (SELECT a FROM t) AS s", "hard"),
        ("WITH s AS (SELECT a FROM t) SELECT a FROM s JOIN u ON s.a = u.a", "hard"),
        ("SELECT a FROM t UNION SELECT a FROM u", "hard"),
        ("SELECT a FROM t JOIN u ON t.id = u.id EXCEPT SELECT a FROM v", "hard"),
    ],
)
def test_hardness_nesting_wins_over_a_join(sql, level):
    """Kills: the join test made before the nesting tests (a JOIN with an IN-subquery is
    hard, not medium) and the count of SELECTs dropped. (Dropping ``exp.Subquery`` from
    the first test is equivalent: every subquery holds a second SELECT.)"""
    assert hardness(parse(sql)) == level


@pytest.mark.parametrize("values", ["1, 2", "5, 6, 7", "-1, 2", "3", "'x', 'y'"])
def test_an_in_list_of_values_masks_to_one_placeholder(values):
    """Kills: ``len(values) > 1`` -> ``> 2`` (a two-value IN list kept two placeholders, so
    queries differing only in how many values they list got different skeletons)."""
    masked = skeleton(parse(f"SELECT a FROM t WHERE b IN ({values})"))
    placeholder = "'_'" if "'" in values else "_"
    assert masked == f"SELECT a FROM t WHERE b IN ({placeholder})"


def test_an_in_list_with_a_column_is_not_collapsed():
    """Kills: collapsing IN lists that hold anything but values."""
    assert skeleton(parse("SELECT a FROM t WHERE b IN (1, c)")) == (
        "SELECT a FROM t WHERE b IN (_, c)"
    )


@pytest.mark.parametrize(
    "call",
    ["load_extension('x.so')", "writefile('x', 'y')", "readfile('x')", "edit('x')",
     "fts3_tokenizer('simple')"],
)  # fmt: skip
def test_each_unsafe_function_is_named_and_not_read_only(call):
    """Kills: a name dropped from the unsafe functions (``fts3_tokenizer`` with one
    argument hands out a pointer; with two it plants one, a known SQLite exploit)."""
    tree = parse(f"SELECT {call.upper()} AS v")
    assert unsafe_function(tree) == call.split("(")[0]
    assert not is_read_only(tree)
