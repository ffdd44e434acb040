"""Counterfactual edits, piece by piece: words, grounding, scripts, copies, leaks, checks."""

from __future__ import annotations

import doctest
import importlib
import itertools
import json
import os
import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.counterfactual import leaks, lexicon
from answerable.builders.counterfactual.bio import bio_tags
from answerable.builders.counterfactual.candidates import contrast_groups, near_synonym_groups
from answerable.builders.counterfactual.fills import choose_fill, fill_values
from answerable.builders.counterfactual.gate import judge_value, looks_like
from answerable.builders.counterfactual.generators import base
from answerable.builders.counterfactual.generators.value_unanswerable import _filters_every_row
from answerable.builders.counterfactual.grounding import ground, occurrences, stem, words
from answerable.builders.counterfactual.leaks import name_leaks, value_leaks
from answerable.builders.counterfactual.materialize import (
    MaterializeError,
    VariantStore,
    materialize,
    materialize_full,
)
from answerable.builders.counterfactual.query_shapes import Shapes
from answerable.builders.counterfactual.script import (
    add_column,
    apply_to_schema,
    drop_column,
    set_value,
    variant_id,
)
from answerable.builders.counterfactual.stage import UNDRAWN_FIELDS, Config, draws, is_parent
from answerable.builders.counterfactual.step import _shard_parents
from answerable.builders.counterfactual.values import fresh_candidates
from answerable.builders.counterfactual.verify import is_nothing
from answerable.builders.executor import ReadOnlyDatabase, Result
from answerable.builders.lexical import wordnet
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.builders.sqlite_files import DELTA_TABLE
from answerable.kernel import records
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import sha256_file
from answerable.pipeline import ItemsSoFar
from answerable.pipeline.shards import StoredUnits, UnitsInPlace
from tests.conftest import REPO
from tests.release_helpers import make_item

MODULES = (
    "bio",
    "candidates",
    "explain",
    "fills",
    "grounding",
    "lexicon",
    "script",
    "query_shapes",
    "trees",
    "values",
)
FIXTURES = REPO / "tests" / "fixtures" / "counterfactual"


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(f"answerable.builders.counterfactual.{name}")
    result = doctest.testmod(module, extraglobs={"random": random})
    assert result.failed == 0


# ---- words ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "tokens", "head"),
    [
        ("home_score", ["home", "score"], "score"),
        ("length_of_stay", ["length", "of", "stay"], "length"),
        ("FirstName", ["first", "name"], "name"),
        ("height_cm", ["height", "cm"], "height"),
        ("RESTAURANT_ID", ["restaurant", "id"], "restaurant"),
        ("HTMLTitle", ["html", "title"], "title"),
    ],
)
def test_name_tokens_and_head(name, tokens, head):
    assert lexicon.name_tokens(name) == tokens
    assert lexicon.head_token(name) == head


@pytest.mark.parametrize(
    ("name", "declared", "role"),
    [
        ("player_id", "INTEGER", "identifier"),
        ("is_penalty", "INTEGER", "flag"),
        ("admit_time", "TEXT", "time"),
        ("birth_date", "TEXT", "date"),
        ("icd_code", "TEXT", "code"),
        ("long_title", "TEXT", "name"),
        ("red_cards", "INTEGER", "count"),
        ("height_cm", "INTEGER", "measure"),
        ("position", "TEXT", "category"),
    ],
)
def test_column_roles(name, declared, role):
    assert lexicon.column_role(name, declared) == role


@pytest.mark.parametrize(
    ("a", "b", "table", "same"),
    [
        ("length_of_stay", "stay_length", None, True),
        ("date_of_birth", "birth_date", None, True),
        ("player_name", "name", "players", True),
        ("actual_price", "price", None, True),
        ("sex", "gender", None, True),
        ("home_score", "away_score", None, False),
        ("first_name", "last_name", None, False),
        ("primary_position", "position", None, False),
    ],
)
def test_exact_synonyms(a, b, table, same):
    assert lexicon.is_exact_synonym(a, b, table) is same


def test_contrast_groups_leave_out_words_the_name_has():
    assert ("home", "away") not in contrast_groups("matches", "home_score")
    assert contrast_groups("matches", "score")[0] == ("home", "away")
    assert contrast_groups("players", "name")[0] == ("first", "last")
    assert contrast_groups("teams", "name")[0] == ("short", "long")
    assert contrast_groups("tracks", "name") == []  # a track has no first name
    assert contrast_groups("players", "position") == []  # primary is the default


def test_near_synonym_groups_are_new_and_not_synonyms(demo_dir):
    schema = DatabaseSchema.from_sqlite(demo_dir / "league.sqlite")
    for table in schema.tables:
        existing = {c.name for c in table.columns}
        for column in table.columns:
            for group in near_synonym_groups(schema, table.name, column.name, 3):
                assert not set(group) & existing
                assert not any(lexicon.is_exact_synonym(g, column.name, table.name) for g in group)
    assert near_synonym_groups(schema, "players", "name")[0] == ("first_name", "last_name")
    assert near_synonym_groups(schema, "players", "position") == []
    assert near_synonym_groups(schema, "players", "player_id") == []


# ---- grounding -----------------------------------------------------------------------


def demo_schemas(demo_dir: Path) -> dict[str, DatabaseSchema]:
    return {
        d: DatabaseSchema.from_sqlite(demo_dir / f"{d}.sqlite", d) for d in ("clinic", "league")
    }


def test_grounding_of_the_demo_seeds_matches_the_golden_file(demo_dir):
    schemas, found = demo_schemas(demo_dir), []
    for name in ("clinic", "league"):
        for line in (REPO / "raw" / "demo" / "seeds" / f"{name}.jsonl").read_text().splitlines():
            seed = json.loads(line)
            refs = sqlkit.references(sqlkit.qualify(sqlkit.parse(seed["sql"]), schemas[name]))
            spans = ground(seed["question"], refs).spans()
            for span in spans:
                assert seed["question"][span["start"] : span["end"]] == span["text"]
            found.append({"question": seed["question"], "spans": spans})
    assert found == golden(FIXTURES / "grounding.json", found)


def test_grounding_prefers_the_longest_mention_and_skips_keys():
    schema = DatabaseSchema(
        "h",
        [Table("icu_stays", [Column("stay_id"), Column("length_of_stay", "REAL")])],
    )
    refs = sqlkit.references(
        sqlkit.qualify(sqlkit.parse("SELECT stay_id, length_of_stay FROM icu_stays"), schema)
    )
    grounding = ground("Which ICU stays had the longest length of stay?", refs)
    assert [(m.text, m.concept) for m in grounding.mentions()] == [
        ("length of stay", "icu_stays.length_of_stay")
    ]


def test_a_parent_is_grounded_once_and_only_when_read(monkeypatch):
    schema = DatabaseSchema("h", [Table("icu_stays", [Column("length_of_stay", "REAL")])])
    item = {
        "id": "p1",
        "db_id": "h",
        "question": "What is the longest length of stay?",
        "sql": "SELECT MAX(length_of_stay) FROM icu_stays",
    }
    questions = []
    monkeypatch.setattr(base, "ground", lambda q, refs: questions.append(q) or ground(q, refs))
    parent = base.prepare(item, schema)
    assert questions == []  # qualified, not grounded: most parents get no edit
    assert parent.grounding is parent.grounding
    assert questions == [item["question"]]
    assert parent.grounding == ground(item["question"], parent.refs)


def golden(path: Path, value):
    """The expected value stored at ``path``; written from ``value`` when the file is
    missing or ``UPDATE_GOLDEN=1`` is set (then review the diff before committing)."""
    if os.environ.get("UPDATE_GOLDEN") == "1" or not path.is_file():
        path.write_text(json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return json.loads(path.read_text())


# ---- scripts and materialization ----------------------------------------------------


def test_schema_edits_match_what_sqlite_reports(demo_dir, tmp_path):
    schema = DatabaseSchema.from_sqlite(demo_dir / "league.sqlite", "league")
    ops = [
        add_column("matches", "first_home_score", "INTEGER", "home_score", "jitter", 1),
        add_column("matches", "second_home_score", "INTEGER", "home_score", "jitter", 2),
        drop_column("matches", "home_score"),
        drop_column("teams", "name"),
    ]
    target = materialize(demo_dir / "league.sqlite", ops, tmp_path / "v.sqlite")
    merged = DatabaseSchema.from_sqlite(target, "league", base=demo_dir / "league.sqlite")
    assert merged == apply_to_schema(schema, ops)


KEYED = """
CREATE TABLE a (id INTEGER PRIMARY KEY, code TEXT UNIQUE, label TEXT, n REAL CHECK (n >= 0));
CREATE INDEX a_label ON a(label);
CREATE INDEX a_n ON a(n);
CREATE TABLE b (id INTEGER PRIMARY KEY, a_code TEXT REFERENCES a(code), x INT);
CREATE VIEW v_labels AS SELECT label FROM a;
CREATE VIEW v_pairs AS SELECT b.x, a.id FROM b JOIN a ON a.id = b.id;
CREATE TRIGGER t_a AFTER INSERT ON a BEGIN UPDATE b SET x = 1; END;
INSERT INTO a VALUES (1, 'c1', 'L1', 1.5), (2, 'c2', 'L2', 2), (5, 'c5', NULL, 0);
INSERT INTO b VALUES (1, 'c1', 3);
"""


@pytest.fixture
def keyed(tmp_path) -> Path:
    path = tmp_path / "keyed.sqlite"
    con = sqlite3.connect(path)
    con.executescript(KEYED)
    con.commit()
    con.close()
    return path


def objects(path: Path) -> dict[str, str]:
    con = sqlite3.connect(path)
    try:
        return dict(con.execute("SELECT name, type FROM sqlite_master WHERE sql IS NOT NULL"))
    finally:
        con.close()


def rows(path: Path, sql: str) -> list:
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    ("column", "gone", "kept"),
    [
        ("code", set(), {"a_label", "a_n", "v_labels", "v_pairs"}),  # UNIQUE: rebuilt
        ("n", {"a_n"}, {"a_label", "v_labels", "v_pairs"}),  # CHECK and index
    ],
)
def test_drop_column_in_keys_indexes_and_views(keyed, tmp_path, column, gone, kept):
    before = sha256_file(keyed)
    ops = [drop_column("a", column)]
    target = materialize(keyed, ops, tmp_path / "v.sqlite")
    copy = materialize_full(keyed, ops, tmp_path / "copy.sqlite")
    assert sha256_file(keyed) == before
    names = objects(copy)  # the whole copy's dependents, which the delta must match
    assert not gone & set(names) and kept <= set(names) and "t_a" in names
    assert set(objects(target)) == {DELTA_TABLE}  # a dropped column costs no data
    assert entries(target) == [
        ("a", "table", None),
        ("v_labels", "view", None),
        ("v_pairs", "view", None),
    ]  # views reading a, in the base's order
    merged = DatabaseSchema.from_sqlite(target, "k", base=keyed)
    assert merged == DatabaseSchema.from_sqlite(copy, "k")
    columns = [c.name for c in merged.table("a").columns]
    assert column not in columns and len(columns) == 3
    with ReadOnlyDatabase(target, base=keyed) as db, ReadOnlyDatabase(copy) as whole:
        for sql in ("SELECT id FROM a", "SELECT * FROM a", "SELECT * FROM v_labels"):
            assert db.execute(sql).rows == whole.execute(sql).rows, sql  # same plan, order
        assert db.execute("SELECT x, id FROM v_pairs").rows == [[3, 1]]
        with pytest.raises(SQLError, match=column):
            db.execute(f"SELECT {column} FROM a")


def entries(delta: Path) -> list[tuple]:
    """``(name, type, columns_table)`` of a delta's metadata rows, in order."""
    con = sqlite3.connect(delta)
    try:
        query = f"SELECT name, type, columns_table FROM {DELTA_TABLE} ORDER BY seq"
        return con.execute(query).fetchall()
    finally:
        con.close()


def merged_rows(delta: Path, base: Path, sql: str) -> list:
    with ReadOnlyDatabase(delta, base=base) as db:
        return db.execute(sql).rows


@pytest.mark.parametrize(("column", "view"), [("label", "v_labels"), ("id", "v_pairs")])
def test_an_edit_that_breaks_a_view_fails(keyed, tmp_path, column, view):
    """A full copy would drop the view; a delta cannot hide the base's, which still
    shows the dropped column, so the edit fails and names the view."""
    with pytest.raises(MaterializeError, match=view):
        materialize(keyed, [drop_column("a", column)], tmp_path / "v.sqlite")
    assert list(tmp_path.glob("v*")) == []


def test_a_delta_holds_only_the_changed_tables(demo_dir, tmp_path):
    source = demo_dir / "league.sqlite"
    ops = [set_value("players", "position", "Sweeper", 3, seed=1)]
    target = materialize(source, ops, tmp_path / "v.sqlite")
    assert set(objects(target)) == {DELTA_TABLE, "answerable_delta_players"}
    assert entries(target) == [("players", "table", "answerable_delta_players")]
    assert target.stat().st_size < source.stat().st_size / 5
    with ReadOnlyDatabase(target, base=source) as db:
        assert db.execute("SELECT count(*) FROM players WHERE position = 'Sweeper'").rows == [[3]]
        assert db.execute("SELECT count(*) FROM appearances").rows[0][0] > 0  # from the base
    with ReadOnlyDatabase(source) as db:
        assert db.execute("SELECT count(*) FROM players WHERE position = 'Sweeper'").rows == [[0]]


def test_a_failing_edit_leaves_no_file(keyed, tmp_path):
    with pytest.raises(MaterializeError):
        materialize(keyed, [drop_column("nope", "x")], tmp_path / "v.sqlite")
    assert list(tmp_path.glob("v*")) == [] and list(tmp_path.glob(".v*")) == []


def test_variants_are_made_once_and_reused_until_the_source_changes(keyed, tmp_path):
    ops = [set_value("a", "label", "L9", 2, seed=3)]
    store = VariantStore(tmp_path / "variants")
    first = store.ensure("k", keyed, ops)
    assert store.ensure("k", keyed, ops) == first and store.made == 1
    assert first.name == f"{variant_id('k', ops)}.sqlite"
    again = VariantStore(tmp_path / "variants")
    assert again.ensure("k", keyed, ops) == first and again.made == 0
    con = sqlite3.connect(keyed)
    con.execute("UPDATE a SET label = 'changed' WHERE id = 1")
    con.commit()
    con.close()
    changed = VariantStore(tmp_path / "variants")
    changed.ensure("k", keyed, ops)
    assert changed.made == 1
    assert merged_rows(first, keyed, "SELECT COUNT(*) FROM a WHERE label = 'L9'") == [[2]]


def test_materialized_bytes_depend_on_the_edit_only(demo_dir, tmp_path):
    ops = [
        add_column("players", "primary_position", "TEXT", "position", "shuffle", 5),
        drop_column("players", "position"),
    ]
    one = materialize(demo_dir / "league.sqlite", ops, tmp_path / "one.sqlite")
    two = materialize(demo_dir / "league.sqlite", ops, tmp_path / "two.sqlite")
    assert sha256_file(one) == sha256_file(two)


# ---- fills and fresh values ----------------------------------------------------------


def test_fills_keep_the_domain_and_nulls():
    values = ["a", "b", "c", None, "a"]
    assert sorted(fill_values("shuffle", values, 1), key=str) == sorted(values, key=str)
    assert fill_values("jitter", [0, 5, None, 2.5], 2)[2] is None
    assert all(v >= 0 for v in fill_values("jitter", [0, 0, 1], 3))
    shifted = fill_values("shift_days", ["2021-10-27", "2021-10-27 22:00:00", "n/a"], 4)
    assert shifted[0] != "2021-10-27" and shifted[1].endswith(" 22:00:00") and shifted[2] == "n/a"
    assert fill_values("jitter", [1, 2, 3], 9) == fill_values("jitter", [1, 2, 3], 9)
    small, large = fill_values("jitter", [4, 656562], 5)
    assert 1 <= abs(small - 4) <= 3  # a count of cylinders stays a count
    assert 3 < abs(large - 656562) <= 0.3 * 656562 and isinstance(large, int)  # a population
    assert (
        choose_fill("measure", "REAL") == "jitter" and choose_fill("date", "TEXT") == "shift_days"
    )


def test_fresh_values_keep_case_and_shape():
    rng = random.Random(1)
    assert all(
        v.islower() for v in list(fresh_candidates("state", "state_name", "arizona", rng, 4))
    )
    codes = list(fresh_candidates("diagnoses", "icd_code", "78552", rng, 4))
    assert all(len(c) == 5 and c.isdigit() for c in codes)
    seasons = list(fresh_candidates("seasons", "name", "2022-23", rng, 3))
    assert all(len(s) == 7 and s[4] == "-" for s in seasons)


@pytest.mark.skipif(not wordnet.available(), reason=str(wordnet.missing()))
def test_fresh_values_are_real_words_of_the_kind_of_the_column():
    drugs = ["Furosemide", "Vancomycin", "Heparin", "Insulin", "Aspirin", "Morphine"]
    fresh = list(fresh_candidates("prescriptions", "drug", "Heparin", random.Random(2), 4, drugs))
    assert len(fresh) == 4 and not set(fresh) & set(drugs)
    assert all(judge_value(v, "prescriptions.drug", drugs).ok for v in fresh), fresh
    feet = ["left", "right", "both"]  # no kind WordNet can say: no blend such as 'rith'
    assert (
        list(fresh_candidates("players", "preferred_foot", "left", random.Random(2), 4, feet)) == []
    )


def test_looks_like_compares_shapes():
    assert looks_like("Medicare", ["Medicaid", "Private", "Self Pay"])
    assert not looks_like("Vancomycin", ["mg", "mL", "units"])


# ---- leaks ----------------------------------------------------------------------------


def test_leaks_found_on_the_demo_data(demo_dir):
    clinic = DatabaseSchema.from_sqlite(demo_dir / "clinic.sqlite", "clinic")
    league = DatabaseSchema.from_sqlite(demo_dir / "league.sqlite", "league")
    with (
        ReadOnlyDatabase(demo_dir / "clinic.sqlite") as c,
        ReadOnlyDatabase(demo_dir / "league.sqlite") as le,
    ):
        stay = value_leaks(c, clinic, "icu_stays", "length_of_stay")
        assert [(x.how, x.columns) for x in stay] == [
            ("derivable", ("icu_stays.out_time", "icu_stays.in_time"))
        ]
        assert [x.how for x in value_leaks(c, clinic, "lab_events", "unit")] == [
            "same-values-via-key"
        ]
        assert "stadiums.city" in {x.columns[0] for x in value_leaks(le, league, "teams", "city")}
        assert value_leaks(le, league, "players", "position") == []


def test_a_columns_leak_queries_go_in_one_exchange_each_text_once(demo_dir):
    """Every check of a column (same table, each key both ways, derivable, aggregates)
    is one exchange with the SQL worker; the count of a key's joinable rows, the same
    for every key, is asked once."""
    league = DatabaseSchema.from_sqlite(demo_dir / "league.sqlite", "league")
    with ReadOnlyDatabase(demo_dir / "league.sqlite") as db:
        sent = []
        many = db.execute_many
        db.execute = lambda *a, **k: sent.append(1)
        db.execute_many = lambda statements: sent.append(statements) or many(statements)
        found = value_leaks(db, league, "players", "height_cm")
        neighbours = list(leaks._neighbours(league, league.table("players")))
    assert len(sent) == 1 and len(neighbours) >= 2
    texts = [sql for sql, _ in sent[0]]
    assert len(texts) == len(set(texts)) and sum(t[7:15] == "COUNT(*)" for t in texts) >= 2
    assert found == []  # no column of the demo gives a player's height


def test_a_columns_leaks_are_found_once_among_processes_sharing_a_folder(demo_dir, tmp_path):
    """The shard workers of a step share their column checks: the second to ask reads
    what the first found (the same leaks, a derivable one's operation too), sending no
    query; without a folder each finds its own."""
    clinic = DatabaseSchema.from_sqlite(demo_dir / "clinic.sqlite", "clinic")
    found, sent = [], []
    for _ in range(2):
        with ReadOnlyDatabase(demo_dir / "clinic.sqlite") as db:
            many = db.execute_many
            db.execute_many = lambda statements, many=many: sent.append(1) or many(statements)
            found.append(
                leaks.shared_value_leaks(tmp_path, db, clinic, "icu_stays", "length_of_stay")
            )
    assert (
        found[0]
        == found[1]
        == [leaks.Leak("derivable", ("icu_stays.out_time", "icu_stays.in_time"), "difference")]
    )
    assert sent == [1]
    with ReadOnlyDatabase(demo_dir / "clinic.sqlite") as db:
        alone = leaks.shared_value_leaks(None, db, clinic, "icu_stays", "length_of_stay")
    assert alone == found[0]


def test_name_leaks():
    schema = DatabaseSchema(
        "p", [Table("people", [Column("birth_date"), Column("date_of_birth"), Column("name")])]
    )
    assert [x.columns for x in name_leaks(schema, "people", "birth_date")] == [
        ("people.date_of_birth",)
    ]
    assert name_leaks(schema, "people", "name") == []


# ---- query shapes --------------------------------------------------------------------


SHAPE_DB = DatabaseSchema(
    "shop",
    [
        Table("Item", [Column("Name", "TEXT"), Column("Price", "REAL"), Column("Kind", "TEXT")]),
        Table("Sale", [Column("Item_Name", "TEXT"), Column("Qty", "INTEGER")]),
    ],
)


@pytest.mark.parametrize(
    "sqls",
    [
        ["SELECT name FROM item WHERE price > 5", "SELECT name FROM item WHERE price > 7.5"],
        [
            "SELECT name FROM item WHERE kind IN ('a', 'b') LIMIT 3",
            "SELECT name FROM item WHERE kind IN ('c', 'd') LIMIT 9",
        ],
        [
            "SELECT price + 1 AS p FROM item GROUP BY p",  # the alias is expanded: no reuse
            "SELECT price + 2 AS p FROM item GROUP BY p",
        ],
        [
            'SELECT name FROM item WHERE kind = "toy" ORDER BY 1',
            'SELECT name FROM item WHERE kind = "food" ORDER BY 1',
        ],
    ],
)
def test_shapes_give_what_a_full_qualification_gives(sqls):
    shapes = Shapes()
    for sql in sqls:
        query, full = shapes.query(sql, SHAPE_DB), sqlkit.qualify(sqlkit.parse(sql), SHAPE_DB)
        assert_same_query(query, full)


DEMO_SEEDS = [
    json.loads(line)
    for name in ("clinic", "league")
    for line in (REPO / "raw" / "demo" / "seeds" / f"{name}.jsonl").read_text().splitlines()
]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    index=st.integers(min_value=0, max_value=len(DEMO_SEEDS) - 1),
    texts=st.lists(st.text(min_size=1, max_size=12), min_size=8, max_size=8),
    numbers=st.lists(st.integers(min_value=0, max_value=10**6), min_size=8, max_size=8),
)
def test_shapes_reuse_is_exact_on_any_values(demo_dir, index, texts, numbers):
    seed = DEMO_SEEDS[index]
    schema = demo_schemas_cached(demo_dir)[seed["db_id"]]
    shapes = Shapes()
    shapes.query(seed["sql"], schema)
    tree = sqlkit.parse(seed["sql"])
    for i, node in enumerate(list(tree.find_all(exp.Literal))):
        new = texts[i % 8] if node.is_string else str(numbers[i % 8])
        node.replace(exp.Literal.string(new) if node.is_string else exp.Literal.number(new))
    sql = tree.sql("sqlite")
    query, full = shapes.query(sql, schema), sqlkit.qualify(sqlkit.parse(sql), schema)
    assert_same_query(query, full)


def assert_same_query(query, full: exp.Expr) -> None:
    """The query (reused from its shape or not) reads as the full qualification: its
    literals' texts and private tree before its shared tree is made, then the tree."""
    texts = [text for _, text in query.literal_texts()]
    private = query.private_tree()
    assert texts == [node.this for node in full.find_all(exp.Literal)]
    assert private.sql() == full.sql()
    assert query.tree.sql() == full.sql() and query.tree is not private
    assert [text for _, text in query.literal_texts()] == texts
    assert query.refs == sqlkit.references(full)


_SCHEMAS: dict = {}


def demo_schemas_cached(demo_dir: Path) -> dict[str, DatabaseSchema]:
    if demo_dir not in _SCHEMAS:
        _SCHEMAS[demo_dir] = demo_schemas(demo_dir)
    return _SCHEMAS[demo_dir]


# ---- small checks --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "required"),
    [
        ("SELECT a FROM t WHERE b = 'x' AND c > 1", True),
        ("SELECT a FROM t WHERE b = 'x' OR c > 1", False),
        ("SELECT a FROM t WHERE b = 'x' UNION SELECT a FROM u", False),
        ("SELECT a FROM t EXCEPT SELECT a FROM u WHERE b = 'x'", False),
        ("SELECT a FROM t WHERE b = 'x' EXCEPT SELECT a FROM u", True),
        ("SELECT a FROM t WHERE id IN (SELECT id FROM u WHERE b = 'x')", True),
        ("SELECT a FROM t WHERE id NOT IN (SELECT id FROM u WHERE b = 'x')", False),
        ("SELECT a FROM t WHERE (SELECT COUNT(*) FROM u WHERE b = 'x') > 1", False),
        ("SELECT a FROM t WHERE b IN ('x', 'y')", False),
        ("SELECT a FROM (SELECT a FROM t WHERE b = 'x') AS s", True),
    ],
)
def test_values_that_filter_every_row(sql, required):
    literals = [(node, node.this) for node in sqlkit.parse(sql).find_all(exp.Literal)]
    assert _filters_every_row(literals, "x") is required


def test_nothing_means_no_rows_or_only_zeros_and_nulls():
    def result(rows, count=None):
        return Result(["c"], rows, len(rows) if count is None else count, "0" * 64, False)

    assert is_nothing(result([]))
    assert is_nothing(result([[0]])) and is_nothing(result([[None, 0]]))
    assert not is_nothing(result([[3]]))
    assert not is_nothing(result([[0]], count=5))


def test_bio_tags_mark_span_tokens():
    item = {
        "id": "x",
        "question": "Which players are goalkeepers, by home score?",
        "spans": [
            {"start": 18, "end": 29, "tag": "VAL"},
            {"start": 34, "end": 44, "tag": "AMB"},
        ],
    }
    tagged = bio_tags(item)
    assert list(zip(tagged["tokens"], tagged["tags"], strict=True)) == [
        ("Which", "O"),
        ("players", "O"),
        ("are", "O"),
        ("goalkeepers", "B-VAL"),
        (",", "O"),
        ("by", "O"),
        ("home", "B-AMB"),
        ("score", "I-AMB"),
        ("?", "O"),
    ]


def test_config_and_parents():
    config = Config.from_section({"rate": 0.5, "edits": ["drop_column_v1"], "synonyms": 3})
    assert config.rate == 0.5 and config.edits == ("drop_column_v1",) and config.synonyms == 3
    assert Config.from_section({}) == Config()
    seed = {"label": "answerable", "sql": "SELECT 1", "provenance": {"generator": "seed_v1"}}
    assert is_parent(seed)
    assert not is_parent({**seed, "provenance": {"generator": "drop_unused_v1"}})
    assert not is_parent({**seed, "label": "unanswerable", "sql": None})


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(alphabet="aAbB_1 .'%-\u0130\u017f\u212a", max_size=14),
    st.text(alphabet="aAbB_1 .'%-\u0130\u017f\u212a", min_size=1, max_size=3),
)
def test_a_values_occurrences_are_the_case_blind_whole_word_matches(question, text):
    """Found without a pattern in ASCII text, with one otherwise: the same spans."""
    from answerable.builders.drafting.text import whole_words

    expected = [match.span() for match in whole_words(text).finditer(question)]
    assert list(occurrences(text, question)) == expected


def test_a_words_joined_stem_is_the_stem_of_it_and_the_next_word():
    found = words("Which care unit admitted most patients?")
    assert [w.joined for w in found[:-1]] == [
        stem(a.text + b.text) for a, b in itertools.pairwise(found)
    ]
    assert found[-1].joined == "" and found[1].joined == stem("careunit")


def test_a_parent_drawn_for_no_edit_is_read_with_only_the_fields_the_step_reads(tmp_path):
    items = [make_item(f"p{n}", sql=f"SELECT {n}") for n in range(60)]
    so_far = ItemsSoFar()
    so_far.add(records.ItemFiles([records.write_parquet(items, tmp_path / "items.parquet")]))
    units = UnitsInPlace(so_far.places(), [i["id"] for i in items])
    env = base.EditEnv({}, VariantStore(tmp_path / "variants"), seed=13)
    config = Config(rate=0.2, control_rate=0.2)
    read = _shard_parents(units, units.ids, env, config, {})
    whole = StoredUnits(list(so_far), tmp_path / "units.parquet").load(units.ids)
    drawn = [any(draws(item["id"], env, config)) for item in whole]
    assert 0 < sum(drawn) < len(whole)  # both kinds are here
    for item, full, chosen in zip(read, whole, drawn, strict=True):
        if chosen:
            assert item == full
        else:
            assert {k: item[k] for k in UNDRAWN_FIELDS} == {k: full[k] for k in UNDRAWN_FIELDS}
            assert item["question"] is None and full["question"]  # not read
