"""The memos that keep per-templated-item work per shape, per table or per phrase
(issue 14) give what the uncached path gives: a parent's first table (drafting's
``main_table``), the missing-column drafter's pools of absent attributes, the compiled
whole-word patterns of ``find_phrase``."""

from __future__ import annotations

import re

import pytest
from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.drafting import drafts, offline
from answerable.builders.drafting.context import foreign_columns, load_context
from answerable.builders.drafting.text import find_phrase
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.builders.sources.spider import load_spider
from answerable.builders.sources.text2sql import load_text2sql
from answerable.kernel.errors import SQLError
from tests.conftest import shared_data
from tests.test_shapes import demo_items
from tests.test_templates_demo import demo_refs  # noqa: F401 (a fixture)


def parsed_first_table(sql: str, dialect: str = "sqlite") -> str | None:
    """What ``main_table`` gave before its memo: the query parsed, its first table."""
    try:
        table = sqlkit.parse(sql, dialect).find(exp.Table)
    except SQLError:
        return None
    return table.name if table is not None else None


@pytest.fixture
def fresh_memo():
    """An empty first-table memo, as a new process starts with."""
    drafts._first_table.cache_clear()
    drafts._FIRST_TABLES.clear()
    yield
    drafts._first_table.cache_clear()
    drafts._FIRST_TABLES.clear()


def assert_first_tables(sqls: list[str], dialect: str = "sqlite") -> None:
    for sql in sqls:
        assert drafts.main_table({"sql": sql, "dialect": dialect}) == parsed_first_table(
            sql, dialect
        ), sql


def test_first_tables_of_the_demo_templates_and_seeds(demo_refs, fresh_memo):  # noqa: F811
    made, seeds = demo_items(demo_refs)
    items = [*made, *seeds]
    assert_first_tables([item["sql"] for item in items])
    assert len(drafts._FIRST_TABLES) < len(items) // 2  # shapes were reused


def test_a_value_that_names_a_table_is_not_taken_from_the_shape(fresh_memo):
    """A string in a table's place is a table name, not a value: two queries of one
    token shape with other tables each get their own (the shape stands aside)."""
    sqls = ["SELECT * FROM 'item' WHERE price > 5", "SELECT * FROM 'other' WHERE price > 5"]
    assert_first_tables(sqls + sqls)
    assert [drafts.main_table({"sql": s}) for s in sqls] == ["item", "other"]
    assert drafts._FIRST_TABLES == {}


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name FROM item WHERE",  # does not parse
        "SELECT 'unclosed FROM item",  # does not tokenize
        "SELECT 1 + 2",  # no table
        "SELECT name FROM (SELECT name FROM item WHERE price > 3) WHERE name = 'x'",
        "WITH t AS (SELECT kind FROM item) SELECT * FROM t, item WHERE t.kind = 'toy'",
    ],
)
def test_queries_without_a_plain_first_table(sql, fresh_memo):
    assert_first_tables([sql, sql.replace("3", "4").replace("'x'", "'y'")] * 2)


def test_a_full_memo_starts_again(monkeypatch, fresh_memo):
    monkeypatch.setattr(drafts, "FIRST_TABLES_KEPT", 2)
    sqls = [f"SELECT a FROM t{n} WHERE b > {n}" for n in range(5)]
    assert_first_tables(sqls * 2)
    assert len(drafts._FIRST_TABLES) <= 2


def test_first_tables_of_geoquery_and_spider(fresh_memo):
    folder = shared_data("geoquery")
    geo = load_text2sql(folder / "geography.json", "geo", folder / "geography.sqlite")
    folder = shared_data("spider")
    spider = load_spider(folder / "tables.json", folder / "dev.json", "spider", None)
    sqls = [example["sql"] for example in [*geo.examples, *spider.examples]]
    assert_first_tables(sqls)
    assert_first_tables(sqls)  # the second time from the memos


def test_absent_columns_are_the_uncached_ones(demo_refs):  # noqa: F811
    """Every table and kind of the demo's databases (and a Spider sample's), asked twice
    in a row: the pool of the uncached path, and a list the caller may change."""
    schemas = {db: ref.schema for db, ref in demo_refs.items()}
    try:
        folder = shared_data("spider")
        spider = load_spider(folder / "tables.json", folder / "dev.json", "spider", None)
        schemas |= {db: spider.databases[db].schema for db in sorted(spider.databases)[:8]}
    except pytest.skip.Exception:
        pass
    for db, schema in schemas.items():
        context = load_context(db, schema, None, foreign_columns(db, schemas))
        for table in schema.tables:
            for subtype in offline.COLUMN_SUBTYPES:
                expected = offline._absent_columns(subtype, table, context)
                first = offline.absent_columns(subtype, table, context)
                assert first == expected, (db, table.name, subtype)
                first.append("changed by the caller")
                assert offline.absent_columns(subtype, table, context) == expected


def test_absent_columns_of_a_table_outside_the_schema():
    kennel = DatabaseSchema("kennel", [Table("dogs", [Column("dog_id"), Column("age")])])
    context = load_context("kennel", kennel, None)
    alike = Table("dogs", [Column("dog_id"), Column("age")])  # equal, but not the schema's
    for subtype in offline.COLUMN_SUBTYPES:
        expected = offline._absent_columns(subtype, alike, context)
        assert offline.absent_columns(subtype, alike, context) == expected


@pytest.mark.parametrize(
    "phrase",
    ["Recent", "recent", "C++", "100%", "a.b", "(x)", "Zürich", "O'Brien", "x_y", " Leeds ", "s"],
)
def test_find_phrase_with_compiled_patterns_finds_what_a_search_finds(phrase):
    """``find_phrase`` through the kept patterns (``whole_words``) finds the span that a
    search with the pattern compiled anew finds, on texts around the phrase's edges."""
    texts = [
        f"Which {phrase} ones?",
        f"{phrase.upper()}!",
        f"Which{phrase}?",
        f"in ({phrase}) and {phrase.lower()}",
        "nothing here",
    ]
    for text in texts * 2:
        stripped = phrase.strip()
        match = re.search(rf"(?<![\w]){re.escape(stripped)}(?![\w])", text, flags=re.IGNORECASE)
        expected = (match.start(), match.end()) if match else None
        assert find_phrase(text, phrase) == expected, (text, phrase)
    assert find_phrase("any text", "  ") is None


def test_jobs_planned_with_the_stages_tables_are_the_jobs_planned_alone(
    demo_refs,  # noqa: F811
    fresh_memo,
):
    """The main tables the drafting stage finds once (``parent_tables``) plan the same
    jobs as each shard finding them itself, and every job carries its parent's table."""
    from answerable.builders.drafting.categories import CATEGORIES
    from answerable.builders.drafting.per_category import plan_jobs
    from answerable.builders.drafting.stage import foreign_questions, parent_tables

    made, _seeds = demo_items(demo_refs)
    parents = [{**item, "label": "answerable", "db_variant": None} for item in made]
    tables = parent_tables(parents)
    assert tables == {p["id"]: parsed_first_table(p["sql"]) for p in parents}
    planned = plan_jobs(parents, list(CATEGORIES), 1, 13, tables)
    assert planned == plan_jobs(parents, list(CATEGORIES), 1, 13)
    assert all(job.table == parsed_first_table(job.parent["sql"]) for job in planned)
    assert foreign_questions(parents, tables) == foreign_questions(parents)
