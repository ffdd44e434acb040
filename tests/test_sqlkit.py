"""The SQL kit: golden fixtures per function, plus the errors and edge cases."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from answerable.builders import sqlkit
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.builders.sqlkit import Literal
from answerable.kernel.errors import SQLError
from tests.conftest import REPO

FIXTURES = Path(__file__).parent / "fixtures" / "sqlkit"
ITEM_SCHEMA = REPO / "schemas" / "item.schema.json"


def golden(name: str) -> list:
    """The cases of ``fixtures/sqlkit/<name>.sql`` as pytest params (given, expected, options).

    A case is a ``# title: <title>[; key: value ...]`` line, then the input line, then
    the expected output line; blank lines are skipped.
    """
    lines = [line for line in (FIXTURES / f"{name}.sql").read_text().splitlines() if line.strip()]
    cases = []
    for header, given, expected in zip(lines[0::3], lines[1::3], lines[2::3], strict=True):
        assert header.startswith("# title:"), f"{name}.sql: expected a title, got {header!r}"
        title, *options = header.removeprefix("# title:").split(";")
        pairs = dict(option.split(":", 1) for option in options)
        settings = {key.strip(): value.strip() for key, value in pairs.items()}
        cases.append(pytest.param(given, expected, settings, id=title.strip()))
    return cases


@pytest.fixture(scope="module")
def schema() -> DatabaseSchema:
    return DatabaseSchema.from_spider(json.loads((FIXTURES / "schema.json").read_text()))


# --- golden files -----------------------------------------------------------------------


@pytest.mark.parametrize(("given", "expected", "options"), golden("qualify"))
def test_qualify(given, expected, options, schema):
    assert sqlkit.qualify(sqlkit.parse(given), schema).sql("sqlite") == expected


@pytest.mark.parametrize(("given", "expected", "options"), golden("skeleton"))
def test_skeleton(given, expected, options):
    assert sqlkit.skeleton(sqlkit.parse(given)) == expected


@pytest.mark.parametrize(("given", "expected", "options"), golden("hardness"))
def test_hardness(given, expected, options):
    assert sqlkit.hardness(sqlkit.parse(given)) == expected


@pytest.mark.parametrize(("given", "expected", "options"), golden("operations"))
def test_operations(given, expected, options):
    assert sqlkit.operations(sqlkit.parse(given)) == expected.split(", ")


@pytest.mark.parametrize(("given", "expected", "options"), golden("transpile"))
def test_transpile(given, expected, options):
    assert sqlkit.transpile(given, options.get("read", "sqlite"), options["write"]) == expected


# --- parse ------------------------------------------------------------------------------


@pytest.mark.parametrize("sql", ["", "   ", ";", "-- only a comment"])
def test_parse_rejects_empty_text(sql):
    with pytest.raises(SQLError) as error:
        sqlkit.parse(sql)
    assert error.value.reason == "parse-error"


@pytest.mark.parametrize("sql", ["SELECT FROM WHERE", "SELECT (a FROM t", "SELECT 'open"])
def test_parse_rejects_bad_sql(sql):
    with pytest.raises(SQLError) as error:
        sqlkit.parse(sql)
    assert error.value.reason == "parse-error"


def test_parse_rejects_two_statements():
    with pytest.raises(SQLError) as error:
        sqlkit.parse("SELECT 1; DROP TABLE singer")
    assert error.value.reason == "multiple-statements"


def test_parse_accepts_a_trailing_semicolon():
    assert sqlkit.parse("SELECT a FROM t;").sql() == "SELECT a FROM t"


def test_parse_rejects_unknown_dialect():
    with pytest.raises(SQLError) as error:
        sqlkit.parse("SELECT 1", dialect="klingon")
    assert error.value.reason == "unsupported-dialect"


# --- qualify ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "reason", "name"),
    [
        ("SELECT name FROM singers", "unknown-table", "singers"),
        ("SELECT nam FROM singer", "unknown-column", "nam"),
        ("SELECT T1.nam FROM singer AS T1", "unknown-column", "nam"),
        ("SELECT T9.name FROM singer AS T1", "unknown-column", "t9"),
        ("SELECT name FROM singer ORDER BY weight", "unknown-column", "weight"),
        ("SELECT name FROM singer JOIN stadium ON 1 = 1", "ambiguous-column", "name"),
        ("SELECT x FROM (SELECT name FROM singer) AS s", "unknown-column", "x"),
    ],
)
def test_qualify_names_what_does_not_bind(sql, reason, name, schema):
    with pytest.raises(SQLError) as error:
        sqlkit.qualify(sqlkit.parse(sql), schema)
    assert error.value.reason == reason
    assert name in str(error.value).lower()


def test_qualify_leaves_its_input_alone(schema):
    tree = sqlkit.parse('SELECT * FROM singer WHERE country = "France"')
    before = repr(tree)
    sqlkit.qualify(tree, schema)
    assert repr(tree) == before


def test_qualify_reads_a_cte_name_as_no_table(schema):
    tree = sqlkit.parse("WITH x AS (SELECT name FROM singer) SELECT name FROM x")
    assert sqlkit.references(sqlkit.qualify(tree, schema)).tables == ("Singer",)


# --- references -------------------------------------------------------------------------


def refs_of(sql: str, schema: DatabaseSchema) -> sqlkit.Refs:
    return sqlkit.references(sqlkit.qualify(sqlkit.parse(sql), schema))


def test_references_resolve_aliases_to_real_names(schema):
    refs = refs_of(
        "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id",
        schema,
    )
    assert refs.tables == ("Singer", "concert")
    assert refs.columns == ("Singer.Name", "Singer.Singer_ID", "concert.Singer_ID")


def test_references_see_through_derived_tables_and_ctes(schema):
    sql = (
        "WITH s AS (SELECT name AS who, age FROM singer) "
        "SELECT d.who FROM (SELECT who FROM s WHERE age > 30) AS d WHERE d.who = 'Ann'"
    )
    refs = refs_of(sql, schema)
    assert refs.tables == ("Singer",)
    assert refs.columns == ("Singer.Age", "Singer.Name")
    assert Literal(30, False, "Singer.Age", "gt") in refs.literals
    assert Literal("Ann", True, "Singer.Name", "eq") in refs.literals


def test_references_expand_stars(schema):
    assert refs_of("SELECT * FROM stadium", schema).columns == (
        "Stadium.Capacity",
        "Stadium.Location",
        "Stadium.Name",
        "Stadium.Stadium_ID",
    )


def test_references_follow_correlated_columns_to_the_outer_table(schema):
    sql = (
        "SELECT name FROM singer AS s WHERE EXISTS "
        "(SELECT 1 FROM concert AS c WHERE c.singer_id = s.singer_id)"
    )
    assert refs_of(sql, schema).columns == (
        "Singer.Name",
        "Singer.Singer_ID",
        "concert.Singer_ID",
    )


@pytest.mark.parametrize(
    ("where", "literals"),
    [
        ("country = 'France'", [Literal("France", True, "Singer.Country", "eq")]),
        ('country = "France"', [Literal("France", True, "Singer.Country", "eq")]),
        ("'France' = country", [Literal("France", True, "Singer.Country", "eq")]),
        ("age > 30", [Literal(30, False, "Singer.Age", "gt")]),
        ("age < -2.5", [Literal(-2.5, False, "Singer.Age", "lt")]),
        ("name LIKE '%a%'", [Literal("%a%", True, "Singer.Name", "like")]),
        ("name NOT LIKE '%a%'", [Literal("%a%", True, "Singer.Name", "like")]),
        (
            "age IN (20, 30)",
            [Literal(20, False, "Singer.Age", "in"), Literal(30, False, "Singer.Age", "in")],
        ),
        (
            "age BETWEEN 20 AND 30",
            [
                Literal(20, False, "Singer.Age", "between"),
                Literal(30, False, "Singer.Age", "between"),
            ],
        ),
        ("(age) >= (18)", [Literal(18, False, "Singer.Age", "gte")]),
        ("length(name) = 4", [Literal(4, False, None, "eq")]),
        (
            "substr(name, 1, 1) = 'A'",
            [Literal(1, False), Literal(1, False), Literal("A", True, None, "eq")],
        ),
    ],
)
def test_references_tie_literals_to_the_column_they_are_compared_with(where, literals, schema):
    refs = refs_of(f"SELECT name FROM singer WHERE {where} LIMIT 5", schema)
    assert list(refs.literals) == literals


def test_references_through_a_set_operation(schema):
    sql = (
        "SELECT x.n FROM (SELECT name AS n FROM singer UNION SELECT location FROM stadium) AS x "
        "WHERE x.n = 'Ann' ORDER BY n"
    )
    refs = refs_of(sql, schema)
    assert refs.columns == ("Singer.Name", "Stadium.Location")
    assert refs.literals == (Literal("Ann", True, None, "eq"),)


def test_references_list_literals_in_the_order_written(schema):
    refs = refs_of("SELECT name FROM singer WHERE age > 3 AND country = 'b' OR name = 'c'", schema)
    assert [literal.value for literal in refs.literals] == [3, "b", "c"]


def test_references_of_a_union_ordered_by_its_output(schema):
    refs = refs_of("SELECT name FROM singer UNION SELECT name FROM stadium ORDER BY name", schema)
    assert refs.columns == ("Singer.Name", "Stadium.Name")


def test_references_skip_limit_and_positional_numbers():
    refs = sqlkit.references(sqlkit.parse("SELECT a FROM t GROUP BY 1 ORDER BY 1 LIMIT 3 OFFSET 2"))
    assert refs.literals == ()


def test_references_of_an_unqualified_tree():
    refs = sqlkit.references(sqlkit.parse("SELECT a, T2.b FROM t JOIN u AS T2 ON t.id = T2.id"))
    assert refs.tables == ("t", "u")
    assert refs.columns == ("a", "t.id", "u.b", "u.id")


# --- skeleton, hardness, operations -----------------------------------------------------


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("SELECT a FROM t WHERE b = 1 LIMIT 1", "SELECT a FROM t WHERE b = 250 LIMIT 10"),
        ("SELECT a FROM t WHERE b IN (1, 2, 3)", "SELECT a FROM t WHERE b IN (7)"),
        ("SELECT a FROM t WHERE b > -1", "SELECT a FROM t WHERE b > 2"),
        ("SELECT A FROM T WHERE c LIKE 'x%'", "select a from t where C like '%y'"),
    ],
)
def test_queries_that_differ_only_in_values_share_a_skeleton(one, other):
    assert sqlkit.skeleton(sqlkit.parse(one)) == sqlkit.skeleton(sqlkit.parse(other))


def test_skeleton_leaves_its_input_alone():
    tree = sqlkit.parse("SELECT a FROM t WHERE b = 1")
    sqlkit.skeleton(tree)
    assert tree.sql() == "SELECT a FROM t WHERE b = 1"


def test_operations_follow_the_fixed_order():
    found = sqlkit.operations(
        sqlkit.parse("SELECT DISTINCT a FROM t WHERE b LIKE 'x' AND c > 1 ORDER BY a")
    )
    assert found == [name for name in sqlkit.OPERATIONS if name in found]


# --- order and safety -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "ordered"),
    [
        ("SELECT a FROM t ORDER BY a", True),
        ("SELECT a FROM t", False),
        ("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)", False),
        ("SELECT a FROM t WHERE a IN (SELECT a FROM u ORDER BY a LIMIT 1)", False),
        ("SELECT a FROM t UNION SELECT a FROM u ORDER BY a", True),
        ("WITH x AS (SELECT a FROM t ORDER BY a) SELECT a FROM x", False),
        ("WITH x AS (SELECT a FROM t) SELECT a FROM x ORDER BY a DESC", True),
        ("SELECT rank() OVER (ORDER BY a) FROM t", False),
    ],
)
def test_has_order_by(sql, ordered):
    assert sqlkit.has_order_by(sqlkit.parse(sql)) is ordered


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a FROM t",
        "SELECT a FROM t UNION SELECT a FROM u",
        "WITH x AS (SELECT a FROM t) SELECT a FROM x",
        "SELECT a FROM t WHERE a IN (SELECT a FROM u)",
    ],
)
def test_read_only_queries(sql):
    assert sqlkit.is_read_only(sqlkit.parse(sql))


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("INSERT INTO t VALUES (1)", "sqlite"),
        ("UPDATE t SET a = 1", "sqlite"),
        ("DELETE FROM t", "sqlite"),
        ("CREATE TABLE x AS SELECT * FROM t", "sqlite"),
        ("DROP TABLE t", "sqlite"),
        ("ALTER TABLE t ADD COLUMN b INT", "sqlite"),
        ("ATTACH DATABASE 'other.db' AS other", "sqlite"),
        ("PRAGMA table_info(t)", "sqlite"),
        ("VACUUM", "sqlite"),
        ("SELECT load_extension('evil.so')", "sqlite"),
        ("SELECT writefile('x.txt', a) FROM t", "sqlite"),
        ("SELECT a INTO copy FROM t", "postgres"),
        ("WITH d AS (DELETE FROM t RETURNING a) SELECT a FROM d", "postgres"),
    ],
)
def test_writing_statements_are_not_read_only(sql, dialect):
    assert not sqlkit.is_read_only(sqlkit.parse(sql, dialect))


# --- transpile --------------------------------------------------------------------------


def test_transpile_refuses_other_dialects():
    with pytest.raises(SQLError) as error:
        sqlkit.transpile("SELECT 1", read="sqlite", write="mysql")
    assert error.value.reason == "unsupported-dialect"


def test_transpile_reports_bad_sql():
    with pytest.raises(SQLError) as error:
        sqlkit.transpile("SELECT (", write="duckdb")
    assert error.value.reason == "parse-error"


def test_transpile_refuses_what_the_target_cannot_express():
    with pytest.raises(SQLError) as error:
        sqlkit.transpile("SELECT * FROM t AS x(a, b)", write="bigquery")
    assert error.value.reason == "unsupported-sql"


# --- analyze ----------------------------------------------------------------------------


def sql_meta_validator() -> jsonschema.Draft202012Validator:
    item = json.loads(ITEM_SCHEMA.read_text())
    return jsonschema.Draft202012Validator({**item["$defs"]["sql_meta"], "$defs": item["$defs"]})


def test_analyze_with_a_schema(schema):
    meta = sqlkit.analyze(
        "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id "
        'WHERE T2.year > 2010 AND T1.country = "France"',
        schema,
    )
    assert meta == {
        "skeleton": "SELECT t1.name FROM singer AS t1 JOIN concert AS t2 ON t1.singer_id = "
        "t2.singer_id WHERE t2.year > _ AND t1.country = '_'",
        "hardness": "medium",
        "operations": ["Select", "Join", "Multi-Filter", "Threshold"],
        "tables": ["Singer", "concert"],
        "columns": [
            "Singer.Country",
            "Singer.Name",
            "Singer.Singer_ID",
            "concert.Singer_ID",
            "concert.Year",
        ],
    }
    sql_meta_validator().validate(meta)


def test_analyze_without_a_schema():
    meta = sqlkit.analyze('SELECT Name FROM Singer WHERE Country = "France" LIMIT 2', None)
    assert meta == {
        "skeleton": "SELECT name FROM singer WHERE country = '_' LIMIT _",
        "hardness": "easy",
        "operations": ["Select"],
        "tables": ["singer"],
        "columns": ["singer.country", "singer.name"],
    }
    sql_meta_validator().validate(meta)


def test_analyze_raises_when_the_sql_does_not_bind(schema):
    with pytest.raises(SQLError) as error:
        sqlkit.analyze("SELECT salary FROM singer", schema)
    assert error.value.reason == "unknown-column"


@pytest.mark.parametrize("sql", ["DELETE FROM singer", "PRAGMA table_info(singer)"])
def test_analyze_refuses_statements_that_are_not_queries(sql, schema):
    with pytest.raises(SQLError) as error:
        sqlkit.analyze(sql, schema)
    assert error.value.reason == "not-read-only"


def test_analyze_agrees_with_the_functions_it_combines(schema):
    sql = "SELECT country, count(*) FROM singer GROUP BY country HAVING count(*) > 2"
    qualified = sqlkit.qualify(sqlkit.parse(sql), schema)
    refs = sqlkit.references(qualified)
    meta = sqlkit.analyze(sql, schema)
    assert meta["skeleton"] == sqlkit.skeleton(sqlkit.parse(sql))
    assert meta["hardness"] == sqlkit.hardness(qualified)
    assert meta["operations"] == sqlkit.operations(qualified)
    assert (tuple(meta["tables"]), tuple(meta["columns"])) == (refs.tables, refs.columns)


def test_shape_analyses_know_whether_a_text_orders_its_rows():
    """A text analyzed once tells an engine whether it orders its rows, for every text of
    its shape, as parsing it would; a text never analyzed is not known (the engine parses)."""
    schema = DatabaseSchema("shop", [Table("item", [Column("name"), Column("price")])])
    shapes = sqlkit.ShapeAnalyses(schema)
    texts = [
        "SELECT name FROM item WHERE price > 5 ORDER BY price",
        "SELECT name FROM item WHERE price > 5",
        "SELECT name FROM (SELECT name, price FROM item ORDER BY price) WHERE price > 'a'",
    ]
    for sql in texts:
        shapes.analyze(sql)
    for sql in [*texts, "SELECT name FROM item WHERE price > 70 ORDER BY price"]:
        assert shapes.ordered(sql) is sqlkit.has_order_by(sqlkit.parse(sql))
    assert [shapes.ordered(sql) for sql in texts] == [True, False, False]
    assert shapes.ordered("SELECT price FROM item ORDER BY name") is None
