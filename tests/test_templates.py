"""template_v1: expansion against golden fixtures, quoting, determinism, rejects.

The golden file ``tests/fixtures/templates/expected.jsonl`` holds what the templates of
``shop.yaml`` expand to on ``shop.sql`` with seed 1; rewrite it after a deliberate
change with ``ANSWERABLE_UPDATE_GOLDEN=1 python -m pytest tests/test_templates.py``
and read the diff.
"""

from __future__ import annotations

import os
import random
import sqlite3
import textwrap
from itertools import islice
from pathlib import Path

import pytest

from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef
from answerable.builders.sqlkit import parse
from answerable.builders.templates import (
    Settings,
    SQLWriter,
    Template,
    TemplateError,
    expand_templates,
    load_templates,
    value_node,
)
from answerable.builders.templates.expand import Expander
from answerable.builders.templates.model import GENERATOR
from answerable.builders.templates.text2sql import rewrite_all_subqueries
from answerable.builders.templates.values import Domain, decode, draws, product_size, shuffled
from answerable.kernel.errors import ConfigError, SQLError
from answerable.kernel.ids import canonical_json, rng_for
from answerable.kernel.records import read_jsonl
from answerable.schemas import validate
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "templates"
GOLDEN = FIXTURES / "expected.jsonl"


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> DatabaseRef:
    path = tmp_path_factory.mktemp("shop") / "shop.sqlite"
    con = sqlite3.connect(path)
    con.executescript((FIXTURES / "shop.sql").read_text(encoding="utf-8"))
    con.close()
    return DatabaseRef("shop", path, DatabaseSchema.from_sqlite(path, "shop"))


def expand(templates, ref, seed=1, **settings):
    return expand_templates(templates, {ref.db_id: ref}, Settings(seed=seed, **settings))


def shop_templates():
    loaded = load_templates([FIXTURES / "shop.yaml"], FIXTURES)
    assert loaded.rejects == []
    return loaded.templates


def golden_line(item: dict) -> dict:
    params = item["provenance"]["params"]
    return {
        "template": params["template"],
        "values": params["values"],
        "question": item["question"],
        "sql": item["sql"],
        "rows": item["result"]["rows"],
        "row_count": item["result"]["row_count"],
        "hash": item["result"]["hash"],
        "hardness": item["sql_meta"]["hardness"],
        "operations": item["sql_meta"]["operations"],
    }


def test_expansion_matches_the_golden_file(shop):
    made = expand(shop_templates(), shop)
    lines = [
        golden_line(i)
        for i in sorted(made.items, key=lambda i: (i["provenance"]["external_id"], i["id"]))
    ]
    if os.environ.get("ANSWERABLE_UPDATE_GOLDEN"):
        GOLDEN.write_text("".join(canonical_json(line) + "\n" for line in lines), encoding="utf-8")
    assert lines == list(read_jsonl(GOLDEN))


def test_every_item_is_valid_and_its_stored_sql_gives_the_stored_hash(shop):
    made = expand(shop_templates(), shop)
    assert len(made.items) >= 12
    with ReadOnlyDatabase(shop.path) as db:
        for item in made.items:
            validate("item", item)
            again = db.execute(item["sql"])
            assert again.hash == item["result"]["hash"], item["sql"]
            assert again.columns == item["result"]["columns"]
            assert 0 < item["result"]["row_count"] <= 100


# ---- values into SQL: through the tree, never string formatting ---------------------

HARD_VALUES = [
    "O'Brien",
    'Zoë "Z" Müller',
    "李雷",
    "back\\slash",
    "100%_sure",
    "",
    "''",
    "line\nbreak",
    "emoji 🎉",
    0,
    -3,
    2.5,
    -0.125,
    1e-7,
    2**62,
    "2023-02-14",
    None,
]


@pytest.mark.parametrize("value", HARD_VALUES, ids=repr)
def test_a_literal_reads_back_as_the_same_value(value):
    sql = SQLWriter(parse("SELECT :v AS v")).sql({"v": value})
    con = sqlite3.connect(":memory:")
    assert con.execute(sql).fetchone()[0] == value
    assert con.execute("SELECT :v AS v", {"v": value}).fetchone()[0] == value


def test_literals_are_tree_nodes():
    assert value_node(-3).sql() == "-3"
    assert value_node(None).sql() == "NULL"
    assert value_node("it's").sql() == "'it''s'"
    assert SQLWriter(parse("SELECT 5 - :x")).sql({"x": -3}) == "SELECT 5 - -3"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2**64, "nul\x00", b"\x00"])
def test_values_sqlite_cannot_write_are_refused(value):
    with pytest.raises(TemplateError) as error:
        value_node(value)
    assert error.value.reason == "unrepresentable-value"


def test_the_memoized_writer_prints_what_sqlglot_prints():
    writer = SQLWriter(
        parse(
            "SELECT a, COUNT(*) FROM t AS x JOIN u ON x.id = u.id, v WHERE x.b = :b AND x.c IN "
            "(SELECT c FROM w WHERE d > :d) GROUP BY a HAVING COUNT(*) > :n ORDER BY 2 LIMIT :n"
        )
    )
    for values in ({"b": "it's", "d": -1.5, "n": 3}, {"b": None, "d": 0, "n": 10}):
        assert writer.sql(values) == writer.tree(values).sql("sqlite")
    assert ", v WHERE" in writer.param_sql  # a comma join stays a comma
    wrapped = SQLWriter(parse("SELECT a FROM t WHERE a > ALL (SELECT b FROM u WHERE c = :c)"))
    assert wrapped.sql({"c": 1}) == wrapped.tree({"c": 1}).sql("sqlite")


def test_a_shape_whose_pieces_would_write_other_text_is_written_from_the_tree():
    """A negative value under a minus sign: sqlglot writes ``- -3`` (``--3`` would start
    a comment), which the pieces cut around a marker cannot know; the writer checks the
    pieces against the whole tree once per shape and keeps the tree for this one."""
    writer = SQLWriter(parse("SELECT a FROM t WHERE b = -:x AND c = :y"))
    for x, y in ((-3, "p"), (-5, "q"), (4, "r"), (6, "s")):
        values = {"x": x, "y": y}
        assert writer.sql(values) == writer.tree(values).sql("sqlite")
    assert writer.sql({"x": -5, "y": "q"}) == "SELECT a FROM t WHERE b = - -5 AND c = 'q'"


def test_pieces_are_kept_only_under_plain_operators():
    """A placeholder as the argument of a function sqlglot knows (which a dialect may
    write by its arguments' values, as it shifts a position) is always written from the
    tree; under a comparison or a function it does not know, from the pieces."""
    plain = SQLWriter(parse("SELECT a FROM t WHERE b = :b AND c < date('now', :d)"))
    plain.sql({"b": 1, "d": "-1 day"})
    assert plain._pieces  # the shape's pieces are kept
    assert plain.sql({"b": 2, "d": "+2 days"}) == (
        "SELECT a FROM t WHERE b = 2 AND c < DATE('now', '+2 days')"
    )
    writer = SQLWriter(parse("SELECT a FROM t WHERE b = :b AND substr(c, :n) = 'x'"))
    for n in (1, 2):
        assert writer.sql({"b": 1, "n": n}) == writer.tree({"b": 1, "n": n}).sql("sqlite")
    assert writer._pieces is None


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb", "postgres"])
def test_the_writer_uses_the_dialects_generator_and_learns_every_shape(dialect):
    """sqlglot's compiled build (``sqlglot[c]``) refuses to make an instance of a Python
    subclass of its generators: the writer writes with the dialect's own generator, and
    learns the pieces of every shape of values (quoted, negative, NULL) from the text
    around a literal of the same shape whose text is a mark."""
    from sqlglot.dialects.dialect import Dialect

    writer = SQLWriter(parse("SELECT a FROM t WHERE b = :b AND c IN (:c, :d) AND e > :e"), dialect)
    assert type(writer._generator) is Dialect.get_or_raise(dialect).generator_class
    shapes = [("it's", -3, None, 2.5), ("", 7, -0.125, -1), ("50%", None, 0, 1e-7)]
    for b, c, d, e in [*shapes, ("x", -8, None, 4.5), ("y", 1, -2.5, -9)]:
        values = {"b": b, "c": c, "d": d, "e": e}
        assert writer.sql(values) == writer.tree(values).sql(dialect)
    assert len(writer._pieces) == len(shapes)
    assert all(pieces is not None for pieces in writer._pieces.values())


def test_kept_open_reuses_one_connection_per_source_across_calls(shop, monkeypatch):
    """Inside ``kept_open`` the template calls share one connection to a source, closed
    when the block ends; outside, each call opens and closes its own; the items are the
    same either way."""
    from answerable.builders.templates.expand import kept_open

    opened = []
    real_open = DatabaseRef.open

    def counted(ref, limits):
        opened.append(real_open(ref, limits))
        return opened[-1]

    monkeypatch.setattr(DatabaseRef, "open", counted)
    templates = shop_templates()[:3]
    alone = [expand([t], shop, quota=2).items for t in templates]
    assert len(opened) == 3
    with kept_open():
        kept = [expand([t], shop, quota=2).items for t in templates]
        assert len(opened) == 4
        assert opened[-1].execute("SELECT 1").rows == [[1]]  # still open between calls
    with pytest.raises(SQLError, match="closed database"):
        opened[-1].execute("SELECT 1")  # closed with the block
    assert kept == alone


def test_a_forked_process_never_closes_its_parents_kept_connections(shop):
    """Closing a copy of the parent's connection (a PostgreSQL session's socket) in a
    forked process would end the parent's session: the child closes only its own."""
    from answerable.builders.templates import expand as expansion

    with expansion.kept_open():
        first = expand(shop_templates()[:1], shop, quota=1)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: its own calls, then leaves without cleaning up
            expand(shop_templates()[:1], shop, quota=1)
            copies = [db for key, db in expansion._DATABASES.items() if key[0] == parent]
            try:
                # the parent's worker is not the child's: nothing reaches it from here
                assert copies and all(not db._worker.alive for db in copies)
            except Exception:
                os._exit(1)
            os._exit(0)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        again = expand(shop_templates()[:1], shop, quota=1)  # on the parent's connection
    assert again.items == first.items and first.items


# ---- determinism and parallelism ------------------------------------------------------


def test_same_seed_same_items_other_seed_other_values(shop):
    templates = shop_templates()
    first, again, other = (
        expand(templates, shop),
        expand(templates, shop),
        expand(templates, shop, seed=2),
    )
    assert canonical_json(first.items) == canonical_json(again.items)
    assert canonical_json(first.rejects) == canonical_json(again.rejects)
    assert drawn(first) != drawn(other)


def drawn(output) -> list[str]:
    """The value sets of an output's items."""
    return sorted(canonical_json(i["provenance"]["params"]["values"]) for i in output.items)


@pytest.mark.parametrize("workers, segment", [(2, 128), (2, 1), (1, 3)])
def test_workers_and_segments_do_not_change_the_output(shop, workers, segment):
    templates = shop_templates()
    one = expand(templates, shop, workers=1)
    other = expand(templates, shop, workers=workers, segment=segment)
    assert canonical_json(one.items) == canonical_json(other.items)
    assert canonical_json(one.rejects) == canonical_json(other.rejects)


def test_an_expander_goes_on_from_its_last_segment_and_draws_any_segment_alike(shop):
    """Segments in order go on with the shuffle where the last one stopped; any other
    segment (out of order, again, past the end) draws as a fresh shuffle would."""
    with ReadOnlyDatabase(shop.path) as db:
        expanders = [Expander(t, db, shop.schema, Settings(seed=3)) for t in shop_templates()]
        expander = max(expanders, key=lambda made: product_size(made.domains))
        template, total = expander.template, product_size(expander.domains)
        rng = rng_for(3, GENERATOR, template.id)
        fresh = list(islice(shuffled(total, rng), total))
        assert total > 6
        in_order = [expander.draws(start, start + 3) for start in range(0, total + 3, 3)]
        assert [i for part in in_order for i in part] == fresh
        assert expander._draws[0] == total  # gone on: the last segment left it at the end
        for start, stop in [(4, 6), (0, 2), (2, 5), (2, 5), (total - 1, total + 4)]:
            assert expander.draws(start, stop) == fresh[start:stop]
        made = [expander.expand(decode(expander.domains, i)) for i in fresh[1:3]]
        assert expander.segment(1, 3) == made


def test_draws_are_unique_and_a_prefix_does_not_depend_on_how_many_are_taken():
    domains = [
        Domain(("a",), rows=tuple((i,) for i in range(7))),
        Domain(("b",), kind="integer", start=0, count=5),
    ]
    everything = [tuple(v.values()) for v in draws(domains, random.Random(5))]
    assert len(everything) == len(set(everything)) == 35
    first = [
        tuple(v.values()) for _, v in zip(range(4), draws(domains, random.Random(5)), strict=False)
    ]
    assert first == everything[:4]


def test_ranges_step_by_their_unit():
    days = Domain(("d",), kind="date", start=__import__("datetime").date(2024, 2, 28), count=3)
    assert [days.at(i) for i in range(3)] == [("2024-02-28",), ("2024-02-29",), ("2024-03-01",)]
    price = Domain(("p",), kind="number", start=-6.0, count=261, decimals=1)
    assert price.at(0) == (-6.0,) and price.at(65) == (0.5,) and price.at(260) == (20.0,)


# ---- rejects: every dropped expansion or template is reported with its reason --------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "templates.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


BAD = """\
db_id: shop
templates:
  - id: bad.empty
    questions: ["Who bought {item} for more than 1000?"]
    sql: SELECT customer_id FROM purchase WHERE item = :item AND price > 1000
    placeholders: {item: {column: purchase.item}}
    quota: 2
  - id: bad.many
    questions: ["Which purchases are not {item}?"]
    sql: SELECT id FROM purchase WHERE item <> :item
    placeholders: {item: {values: [tea]}}
  - id: bad.nulls
    questions: ["What is the largest price of {item} above 1000?"]
    sql: SELECT MAX(price) FROM purchase WHERE item = :item AND price > 1000
    placeholders: {item: {values: [tea]}}
  - id: bad.slow
    questions: ["How far does {n} count?"]
    sql: >-
      WITH RECURSIVE c(x) AS (SELECT :n UNION ALL SELECT x + 1 FROM c)
      SELECT MAX(x) FROM c AS y
    placeholders: {n: {values: [1]}}
  - id: bad.sql
    questions: ["What {x}?"]
    sql: SELECT FROM WHERE :x
    placeholders: {x: {values: [1]}}
  - id: bad.unknown
    questions: ["Who is {who}?"]
    sql: SELECT name FROM customer WHERE name = :name
    placeholders: {name: {column: customer.name}}
  - id: bad.unbound
    questions: ["Who is {name}?"]
    sql: SELECT name FROM customer WHERE name = :name
  - id: bad.column
    questions: ["Who is {name}?"]
    sql: SELECT name FROM customer WHERE name = :name
    placeholders: {name: {column: customer.nickname}}
  - id: bad.binding
    questions: ["Who is {name}?"]
    sql: SELECT name FROM customer WHERE name = :name
    bindings: [{query: SELECT nickname AS name FROM customer}]
  - id: bad.database
    db_id: nowhere
    questions: ["Who is {name}?"]
    sql: SELECT name FROM customer WHERE name = :name
    placeholders: {name: {values: [x]}}
  - id: bad.schema
    questions: []
    sql: SELECT 1
  - id: bad.unbound
    questions: ["Again?"]
    sql: SELECT 1
  - id: bad.dialect
    dialect: postgres
    questions: ["Anything?"]
    sql: SELECT 1
  - id: bad.values
    questions: ["Is it {x}?"]
    sql: SELECT :x
    placeholders: {x: {values: [[1, 2]]}}
"""


def test_every_reject_has_its_reason(shop, tmp_path):
    loaded = load_templates([write(tmp_path, BAD)])
    made = expand(loaded.templates, shop, row_cap=5, timeout_s=0.2)
    reasons = {}
    for line in loaded.rejects + made.rejects:
        reasons.setdefault(line.get("template") or line["id"], set()).add(line["reason"])
    assert made.items == []
    assert reasons == {
        "bad.empty": {"empty-result"},
        "bad.many": {"too-many-rows"},
        "bad.nulls": {"null-result"},
        "bad.slow": {"timeout"},
        "bad.sql": {"parse-error"},
        "bad.unknown": {"unknown-placeholder"},
        "bad.unbound": {"unknown-placeholder", "duplicate-template"},
        "bad.column": {"unknown-column"},
        "bad.binding": {"binding-failed"},
        "bad.database": {"unknown-database"},
        "bad.schema": {"invalid-template"},
        "bad.dialect": {"unsupported-dialect"},
        "bad.values": {"bad-placeholder"},
    }
    empty = [r for r in made.rejects if r["template"] == "bad.empty"]
    assert len(empty) == 2 * 4  # quota x attempts tries, each reported
    assert all(r["sql"] and r["question"] and r["values"] for r in empty)


def test_a_question_filled_with_a_control_character_is_a_named_reject(shop, tmp_path):
    """A value of the database (here a listed value) that holds ESC or NUL makes a
    question no reader sees as it is: a reject, never an item."""
    path = write(
        tmp_path,
        """\
        db_id: shop
        templates:
          - id: ctl.name
            questions: ["How many customers are called {name}?"]
            sql: SELECT COUNT(*) FROM customer WHERE name = :name
            placeholders: {name: {values: ["Ann\\e[2J", "Bo\\0b", "Cy"]}}
        """,
    )
    made = expand(load_templates([path]).templates, shop, quota=3)
    assert [i["question"] for i in made.items] == ["How many customers are called Cy?"]
    controls = sorted(r["detail"] for r in made.rejects if r["reason"] == "control-character")
    assert controls == [f"control-character: the question holds U+00{c}" for c in ("00", "1B")]


def test_a_pair_two_templates_make_is_kept_once(shop, tmp_path):
    path = write(
        tmp_path,
        """\
        db_id: shop
        templates:
          - id: dup.a
            questions: ["How many purchases cost more than {price}?"]
            sql: SELECT COUNT(*) FROM purchase WHERE price > :price
            placeholders: {price: {values: [1, 1.0, 2]}}  # 1.0 is 1: drawn once
          - id: dup.b
            questions: ["How many purchases cost more than {price}?"]
            sql: SELECT COUNT(*) FROM purchase WHERE price > :price
            placeholders: {price: {values: [2]}}
        """,
    )
    made = expand(load_templates([path]).templates, shop)
    assert sorted(i["sql"][-1] for i in made.items) == ["1", "2"]
    duplicates = [r for r in made.rejects if r["reason"] == "duplicate"]
    assert [(r["template"], r["detail"]) for r in duplicates] == [
        ("dup.b", "same pair as template dup.a")
    ]


def test_a_paraphraser_plugs_in_and_cannot_lose_a_placeholder(shop):
    from answerable.builders.templates import expand_template

    class Shouting:
        name = "shouting_v1"

        def paraphrase(self, question, template, rng):
            return question.upper().replace("{NAME}", "{name}")

    class Forgetful:
        name = "forgetful_v1"

        def paraphrase(self, question, template, rng):
            return "Who?"

    template = shop_templates()[0]
    loud = expand_template(template, shop, Settings(seed=1), quota=2, paraphraser=Shouting())
    assert loud.items and all(i["question"].startswith("WHAT DID") for i in loud.items)
    assert {i["provenance"]["params"]["paraphraser"] for i in loud.items} == {"shouting_v1"}
    lost = expand_template(template, shop, Settings(seed=1), quota=2, paraphraser=Forgetful())
    assert lost.items == [] and {r["reason"] for r in lost.rejects} == {
        "paraphrase-lost-placeholder"
    }


def test_bound_execution_is_used_only_where_it_equals_the_literal_sql(shop, tmp_path):
    path = write(
        tmp_path,
        """\
        db_id: shop
        templates:
          - id: order.position
            questions: ["Purchases ordered by column {n}?"]
            sql: SELECT item, price FROM purchase ORDER BY :n, id LIMIT 3
            placeholders: {n: {values: [2]}}
          - id: select.value
            questions: ["What is {v} doubled?"]
            sql: SELECT :v * 2
            placeholders: {v: {values: [21]}}
        """,
    )
    made = expand(load_templates([path]).templates, shop)
    by_template = {i["provenance"]["external_id"]: i for i in made.items}
    assert by_template["order.position"]["result"]["rows"][0] == ["refund", -5.5]  # by price
    assert by_template["select.value"]["result"]["columns"] == ["21 * 2"]


# ---- files and schema ---------------------------------------------------------------


def test_file_defaults_apply_and_yaml_dates_become_strings(tmp_path):
    path = write(
        tmp_path,
        """\
        db_id: shop
        quota: 7
        templates:
          - id: d.one
            questions: ["What was bought after {day}?"]
            sql: SELECT item FROM purchase WHERE bought > :day
            placeholders: {day: {type: date, min: 2023-01-01, max: 2023-02-01}}
        """,
    )
    [template] = load_templates([path]).templates
    assert template.db_id == "shop" and template.quota == 7
    assert template.placeholders["day"]["min"] == "2023-01-01"
    assert isinstance(template, Template)


def test_a_file_that_is_not_a_template_list_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="templates"):
        load_templates([write(tmp_path, "just: a mapping\n")])
    with pytest.raises(ConfigError, match="YAML"):
        load_templates([write(tmp_path, "templates: [\n")])


def test_rewriting_all_keeps_the_rows_of_where(shop):
    tree = parse(
        "SELECT id FROM purchase AS p WHERE p.price > ALL (SELECT q.price FROM purchase AS q "
        "WHERE q.item = 'tea') ORDER BY id"
    )
    assert rewrite_all_subqueries(tree) == ["fix:all-subquery"]
    with ReadOnlyDatabase(shop.path) as db:
        rows = db.execute(tree.sql("sqlite")).rows
        assert rows == db.execute("SELECT id FROM purchase WHERE price > 4.5 ORDER BY id").rows
        none = tree.sql("sqlite").replace("'tea'", "'nothing'")
        assert len(db.execute(none).rows) == 10  # ALL over no rows is true


@pytest.mark.parametrize(
    ("source", "read", "dialect", "wanted"),
    [
        (  # DuckDB's QUALIFY, emulated elsewhere by a subquery around the whole query
            "SELECT a, b FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) = 1 "
            "AND b = :b",
            "duckdb",
            "sqlite",
            "SELECT a, b FROM (SELECT a, b, ROW_NUMBER() OVER (PARTITION BY a ORDER BY b NULLS "
            "LAST) AS _w FROM t) AS _t WHERE _w = 1 AND b = 3",
        ),
        (
            "SELECT a FROM t WHERE b = :b LIMIT 5",
            "sqlite",
            "tsql",
            "SELECT TOP 5 a FROM t WHERE b = 3",
        ),
    ],
)
def test_a_dialect_rewrite_above_the_root_is_kept_in_every_written_query(
    source, read, dialect, wanted
):
    """The writer once kept the inner query of such a rewrite and lost the outer one
    (its WHERE, its TOP): the filter on ``b`` was dropped."""
    import sqlglot

    from answerable.builders.templates.writing import SQLWriter

    writer = SQLWriter(sqlglot.parse_one(source, read=read), dialect)
    assert writer.sql({"b": 3}) == wanted
    assert writer.sql({"b": 3}) == wanted  # and again: nothing of the first write stays
    assert ":b" in writer.param_sql or "@b" in writer.param_sql or "%(b)s" in writer.param_sql
