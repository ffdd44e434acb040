"""The process-wide :func:`query_shapes.shared` gives drafting and candidate SQL what the direct
path gives (parse, then qualify): the same qualified SQL, the same references, the same
parse, for every query of the demo's templates and seeds and of real benchmarks."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.counterfactual import query_shapes
from answerable.builders.counterfactual.query_shapes import Shapes
from answerable.builders.drafting import candidates, offline, settled_by_question
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.builders.sources.spider import load_spider
from answerable.builders.sources.text2sql import load_text2sql
from answerable.builders.templates import Settings, expand_templates, load_templates
from answerable.kernel.errors import SQLError
from tests.conftest import REPO, shared_data
from tests.test_templates_demo import demo_refs  # noqa: F401 (a fixture)

SHOP = DatabaseSchema(
    "shop", [Table("Item", [Column("Name"), Column("Price"), Column("Kind")], ["Name"])]
)


def direct(sql: str, schema: DatabaseSchema, dialect: str = "sqlite"):
    """What the steps did before shapes: ``(parse, qualified tree)``; None when the
    query does not bind (SQLError from the parse or the qualification)."""
    try:
        parsed = sqlkit.parse(sql, dialect)
        return parsed, sqlkit.qualify(parsed, schema, dialect)
    except SQLError:
        return None


def assert_same(shapes_: Shapes, sql: str, schema: DatabaseSchema, dialect: str = "sqlite"):
    """The shape path gives the direct path's qualified SQL, references and parse (and an
    error where it errs); a parse the caller edits leaves the shape's next query alone."""
    expected = direct(sql, schema, dialect)
    if expected is None:
        with pytest.raises(SQLError):
            shapes_.query(sql, schema, dialect)
        return
    parsed, full = expected
    query = shapes_.query(sql, schema, dialect)
    assert query.sql(dialect) == full.sql(dialect), sql
    assert query.refs == sqlkit.references(full), sql
    mine = query.parsed()
    assert mine.sql(dialect) == parsed.sql(dialect), sql
    assert mine == parsed, sql  # the same tree, not only the same text
    for node in mine.find_all(exp.Literal):
        node.set("this", "edited")  # the caller's own: the shape does not change
    assert shapes_.query(sql, schema, dialect).parsed() == parsed, sql


def test_a_reused_shape_gives_its_own_values_and_its_own_trees():
    shapes_ = Shapes()
    for price, kind in ((5, "toy"), (7, "food"), (5, "toy"), (12.5, "it's")):
        text = kind.replace("'", "''")
        sql = f"SELECT name FROM item WHERE price > {price} AND kind = '{text}'"
        assert_same(shapes_, sql, SHOP)
    assert shapes_.reused >= 3


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name FROM item WHERE price > -5",  # a sign outside the literal
        "SELECT name FROM item ORDER BY 1",  # a position, not a value
        "SELECT name, price * 2 AS p FROM item WHERE p > 3",  # an alias copied
        'SELECT name FROM item WHERE kind = "toy"',  # a quoted word becomes a string
        "SELECT nothing FROM item WHERE price > 1",  # does not bind
        "SELECT name FROM item WHERE",  # does not parse
    ],
)
def test_shapes_that_stand_aside_or_fail_do_as_the_direct_path(sql):
    shapes_ = Shapes()
    assert_same(shapes_, sql, SHOP)
    assert_same(shapes_, sql.replace("5", "9").replace("3", "4"), SHOP)


def test_a_full_cache_starts_again_and_holds_its_schemas():
    shapes_ = Shapes(limit=2)
    sqls = [f"SELECT name FROM item WHERE price > {n} {'AND price < 9 ' * n}" for n in range(4)]
    for sql in sqls * 2:
        assert_same(shapes_, sql, SHOP)
    assert len(shapes_._templates) <= 2 and shapes_._schemas == {id(SHOP): SHOP}


def test_shared_is_one_per_process():
    assert query_shapes.shared() is query_shapes.shared()
    assert query_shapes.shared().limit == query_shapes.SHARED_LIMIT


def demo_items(demo_refs) -> tuple[list[dict], list[dict]]:  # noqa: F811
    """The demo's templates expanded a few per template (so shapes are reused), and its
    seeds."""
    loaded = load_templates([REPO / "raw" / "demo" / "templates"], REPO / "raw" / "demo")
    made = expand_templates(loaded.templates, demo_refs, Settings(seed=3, quota=4)).items
    seeds = [
        json.loads(line)
        for name in ("clinic", "league")
        for line in (REPO / "raw" / "demo" / "seeds" / f"{name}.jsonl").read_text().splitlines()
    ]
    return made, seeds


def test_the_demo_templates_and_seeds(demo_refs):  # noqa: F811
    """Every query of the demo's templates and its seeds, through one Shapes as a
    build's process asks it."""
    made, seeds = demo_items(demo_refs)
    shapes_ = Shapes()
    for item in [*made, *seeds]:
        assert_same(shapes_, item["sql"], demo_refs[item["db_id"]].schema)
    assert shapes_.reused >= len(made) // 2


def test_geoquery_gold_queries_with_their_values():
    """GeoQuery's 246 templates, each filled with its sentences' values: many queries of
    one shape with other values."""
    folder = shared_data("geoquery")
    data = load_text2sql(folder / "geography.json", "geo", folder / "geography.sqlite")
    schema = data.databases["geography"].schema
    shapes_ = Shapes()
    for example in data.examples:
        assert_same(shapes_, example["sql"], schema)
    assert shapes_.reused > len(data.examples) // 2


def test_spider_dev_gold_queries():
    folder = shared_data("spider")
    data = load_spider(folder / "tables.json", folder / "dev.json", "spider", None)
    shapes_ = Shapes()
    for example in data.examples:
        assert_same(shapes_, example["sql"], data.databases[example["db_id"]].schema)
    assert shapes_.reused > 0


def test_the_drafting_steps_give_what_the_direct_path_gives():
    """Each step that asks shared(): the drafter's named values, the reference check and
    the candidates, on queries of one shape with other values (a fresh shared Shapes, so
    the first of each shape takes the full path and the others the template)."""
    query_shapes.shared.cache_clear()
    context = DatabaseContext("shop", SHOP, {"Item": {"Kind": ["toy", "food", "tool"]}})
    for n, kind in enumerate(["toy", "food", "tool", "toy"]):
        sql = f"SELECT name, price FROM item WHERE kind = '{kind}' AND price > {n} ORDER BY name"
        offline._string_literals.cache_clear()
        assert offline._string_literals(sql, context) == ((kind, "Item.Kind"),)
        parent = {"sql": sql}
        found = settled_by_question.reference_determined(
            f"The {kind} of that item?", "that item", parent, SHOP
        )
        assert found == kind
        made = candidates.perturbed_candidates(sql, context, random.Random(n), 8)
        rewrite = [c["sql"] for c in made if c["edit"] == "qualified_rewrite"]
        assert rewrite == [direct(sql, SHOP)[1].sql("sqlite")]
        assert Counter(c["edit"] for c in made)["qualified_rewrite"] == 1
    assert query_shapes.shared().reused >= 3 * 2


TRICKY = [
    "SELECT name FROM item WHERE kind = 'toy' AND price > 5",
    "SELECT name FROM item WHERE kind = 'it''s' AND price > 5.25",
    "SELECT name FROM item WHERE kind = '' AND price > -7",
    "SELECT name FROM item WHERE kind = x'AB' AND price > 5",
    "SELECT name FROM item WHERE kind = x'CD' AND price > 5",
    "SELECT name FROM item WHERE kind = N'toy' AND price > 5",
    "SELECT name FROM item WHERE kind = 'a\\' AND price > 5",
    "SELECT name FROM item WHERE kind = $1 AND price > ?2",
    "SELECT name FROM item WHERE kind = $3 AND price > ?4",
    "SELECT name FROM item WHERE kind = 'toy' AND price > 1e5",
    "SELECT name FROM item WHERE kind = 'toy' AND price > 2.",
    "SELECT name FROM item WHERE kind = 'toy' AND price > .5",
    "SELECT name FROM item WHERE kind = 'toy' AND price > 0x1F",
    "SELECT name FROM item WHERE kind = 'toy' -- AND price > 5",
    "SELECT name FROM item WHERE kind = 'toy' /* 5 */ AND price > 5",
    'SELECT "name 1" FROM item WHERE "kind\'s" = 5',
    'SELECT "name 2" FROM item WHERE "kind\'s" = 6',
    "SELECT [name 1], `x 2` FROM item2 WHERE kind = 'toy' AND price > 5",
    "SELECT [name 3], `x 4` FROM item2 WHERE kind = 'toy' AND price > 5",
    "SELECT name FROM item WHERE kind IN ('a', 'b') AND price BETWEEN 1 AND 2",
    "SELECT name FROM item WHERE kind IN ('c', 'd') AND price BETWEEN 3 AND 40",
    "SELECT name FROM item WHERE kind = 'toy' ORDER BY 2 LIMIT 3",
    "SELECT name FROM item WHERE kind = 'tool' ORDER BY 1 LIMIT 10",
]


def _tokens_shape(sql: str):
    try:
        return query_shapes.shape_of(query_shapes.sql_tokens(sql, "sqlite"))
    except SQLError:
        return None


def test_texts_masked_alike_have_one_shape(demo_refs):  # noqa: F811
    """What :meth:`Shapes.binds` rests on, over tricky texts, the demo's queries and
    real benchmarks' when they are here: two texts masked alike tokenize to one shape."""
    made, seeds = demo_items(demo_refs)
    texts = [*TRICKY, *(i["sql"] for i in [*made, *seeds])]
    for name in ("spider", "geoquery"):
        try:
            folder = shared_data(name)
        except pytest.skip.Exception:
            continue
        texts += [line for line in _gold_texts(name, folder)]
    by_mask: dict[str, set] = {}
    for sql in texts:
        text = query_shapes.masked(sql)
        if text is not None:
            by_mask.setdefault(text, set()).add(_tokens_shape(sql))
    assert all(len(shapes_) == 1 and None not in shapes_ for shapes_ in by_mask.values())
    assert len(by_mask) < len(texts) // 2  # most texts share their mask with another
    unsure = [n for n, sql in enumerate(TRICKY) if query_shapes.masked(sql) is None]
    assert unsure == [3, 4, 5, 6, 13, 14, 15, 16]  # blobs, N'', a backslash, comments, a
    # quote in an identifier


def _gold_texts(name: str, folder) -> list[str]:
    if name == "spider":
        data = load_spider(folder / "tables.json", folder / "dev.json", "spider", None)
    else:
        data = load_text2sql(folder / "geography.json", "geo", folder / "geography.sqlite")
    return [example["sql"] for example in data.examples]


def test_binds_vouches_only_for_a_remembered_text_of_a_held_template():
    shapes_ = Shapes(limit=2)
    first = "SELECT name FROM item WHERE kind = 'toy' AND price > 5"
    other = "SELECT name FROM item WHERE kind = 'it''s' AND price > 70.5"
    assert not shapes_.binds(other, SHOP)
    query = shapes_.query(first, SHOP)
    assert not shapes_.binds(other, SHOP)  # not remembered yet
    shapes_.remember(first, query, SHOP)
    assert shapes_.binds(other, SHOP) and shapes_.query(other, SHOP).refs.literals
    assert not shapes_.binds("SELECT name FROM item WHERE kind = 'toy'", SHOP)
    assert not shapes_.binds(other, DatabaseSchema("shop", SHOP.tables))  # another schema
    aside = "SELECT name, price * 2 AS p FROM item WHERE p > 3"  # an alias copied
    shapes_.remember(aside, shapes_.query(aside, SHOP), SHOP)
    assert not shapes_.binds(aside.replace("3", "4"), SHOP)
    shapes_.query("SELECT kind FROM item", SHOP)  # a third shape: the full cache starts again
    assert not shapes_.binds(other, SHOP)
