"""Source loaders: tiny hand-written fixtures, the real public data, and bad inputs."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
import sqlglot

from answerable.builders.sources import (
    load_ehrsql,
    load_jsonl,
    load_source,
    load_spider,
    load_text2sql,
)
from answerable.builders.sources.text2sql import variable_name
from answerable.kernel.errors import ConfigError
from answerable.kernel.ids import content_hash, sha256_file
from answerable.schemas import is_valid

FIXTURES = Path(__file__).parent / "fixtures" / "sources"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def build_db(script: str, target: Path) -> Path:
    """Create a SQLite file at ``target`` from a fixture SQL script."""
    target.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(target)
    con.executescript((FIXTURES / script).read_text())
    con.commit()
    con.close()
    return target


def shared(*parts: str) -> Path:
    """A file of ../shared/data, or skip when the shared data is not checked out."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path} is absent (clone ../shared next to main)")
    return path


def reasons(data) -> list[str]:
    return [reject["reason"] for reject in data.rejects]


@pytest.fixture
def shop_dir(tmp_path: Path) -> Path:
    """A databases folder holding shop.sqlite."""
    build_db("shop.sql", tmp_path / "dbs" / "shop.sqlite")
    return tmp_path / "dbs"


@pytest.fixture
def pets_db(tmp_path: Path) -> Path:
    return build_db("pets.sql", tmp_path / "pets.sqlite")


# --- jsonl -----------------------------------------------------------------------------


def test_jsonl_reads_examples_in_file_order(shop_dir):
    data = load_jsonl(FIXTURES / "seeds.jsonl", "seeds", shop_dir)
    questions = [r["question"] for r in data.examples]
    assert questions == [
        "How many customers are there?",
        "Who is the best customer?",
        "What will sales be next year?",
    ]
    assert [r["external_id"] for r in data.examples] == ["1", "3", "4"]
    assert [r["label"] for r in data.examples] == ["answerable", "ambiguous", "unanswerable"]
    assert data.examples[1]["category"] == "vague-word"
    assert data.examples[2]["sql"] is None
    assert all(is_valid("source_example", r) for r in data.examples)


def test_jsonl_rejects_empty_duplicate_and_invalid(shop_dir):
    data = load_jsonl(FIXTURES / "seeds.jsonl", "seeds", shop_dir)
    assert reasons(data) == ["empty-question", "duplicate", "invalid-record"]
    assert [r["external_id"] for r in data.rejects] == ["5", "6", "7"]
    assert "same question and SQL as 1" in data.rejects[1]["detail"]
    assert "/sql" in data.rejects[2]["detail"]
    assert all(r["source"] == "seeds" for r in data.rejects)


def test_questions_with_nul_or_esc_are_named_rejects_never_released(tmp_path, shop_dir):
    rows = [
        {"db_id": "shop", "question": "How many customers are there?\x00", "sql": None},
        {"db_id": "shop", "question": "Who is \x1b[2Jthe best customer?", "sql": None},
        {"db_id": "shop", "question": "Which customers\tordered twice?", "sql": None},
    ]
    path = tmp_path / "seeds.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    data = load_jsonl(path, "seeds", shop_dir)
    assert [r["question"] for r in data.examples] == ["Which customers\tordered twice?"]
    found = [(r["reason"], r["external_id"], r["detail"].split()[3]) for r in data.rejects]
    assert found == [("control-character", "1", "U+0000"), ("control-character", "2", "U+001B")]


def test_jsonl_database_and_ids(shop_dir):
    data = load_jsonl(FIXTURES / "seeds.jsonl", "seeds", shop_dir)
    ref = data.databases["shop"]
    assert ref.path == shop_dir / "shop.sqlite"
    assert [t.name for t in ref.schema.tables] == ["customer", "orders"]
    first = data.examples[0]
    expected = {
        "source": "seeds",
        "db_id": "shop",
        "question": first["question"],
        "sql": first["sql"],
    }
    assert first["id"] == content_hash(expected)


def test_jsonl_finds_nested_database_layout(tmp_path):
    build_db("shop.sql", tmp_path / "dbs" / "shop" / "shop.sqlite")
    data = load_jsonl(FIXTURES / "seeds.jsonl", "seeds", tmp_path / "dbs")
    assert data.databases["shop"].path == tmp_path / "dbs" / "shop" / "shop.sqlite"


def test_jsonl_limit(shop_dir):
    data = load_jsonl(FIXTURES / "seeds.jsonl", "seeds", shop_dir, limit=2)
    assert len(data.examples) == 2


def test_loading_never_writes_the_database(shop_dir):
    before = sha256_file(shop_dir / "shop.sqlite")
    load_jsonl(FIXTURES / "seeds.jsonl", "seeds", shop_dir)
    assert sha256_file(shop_dir / "shop.sqlite") == before


# --- spider ----------------------------------------------------------------------------


def test_spider_schema_only():
    data = load_spider(
        FIXTURES / "spider_tables.json", FIXTURES / "spider_questions.json", "spider", None
    )
    assert [r["external_id"] for r in data.examples] == ["0", "1", "3"]
    assert reasons(data) == ["empty-question"]
    assert set(data.databases) == {"shop", "school"}
    assert all(ref.path is None for ref in data.databases.values())
    school = data.databases["school"].schema
    assert [c.name for c in school.table("student").columns] == ["id", "name", "grade"]
    assert data.databases["shop"].schema.table("orders").foreign_keys == [
        ("customer_id", "customer", "id")
    ]


def test_spider_uses_database_file_when_present(tmp_path):
    build_db("shop.sql", tmp_path / "dbs" / "shop" / "shop.sqlite")
    data = load_spider(
        FIXTURES / "spider_tables.json",
        FIXTURES / "spider_questions.json",
        "spider",
        tmp_path / "dbs",
    )
    assert data.databases["shop"].path == tmp_path / "dbs" / "shop" / "shop.sqlite"
    assert data.databases["school"].path is None


# --- text2sql --------------------------------------------------------------------------


def test_text2sql_fills_question_and_sql(pets_db):
    data = load_text2sql(FIXTURES / "pets.json", "pets", pets_db)
    by_id = {r["external_id"]: r for r in data.examples}
    assert list(by_id) == ["0.0", "0.1", "1.0", "4.0"]
    assert by_id["0.0"]["question"] == "which cat pets are there"
    assert by_id["0.0"]["sql"] == (
        "SELECT PETalias0.NAME FROM PET AS PETalias0 WHERE PETalias0.SPECIES = 'cat'"
    )
    assert by_id["0.1"]["split"] == "test"
    assert by_id["1.0"]["question"] == "how many pets of o'brien are older than 3 ?"
    assert by_id["1.0"]["sql"] == (
        "SELECT COUNT(*) FROM PET AS PETalias0 "
        "WHERE PETalias0.AGE > 3 AND PETalias0.OWNER = 'o''brien'"
    )
    assert by_id["1.0"]["variables"] == {"age0": "3", "owner0": "o'brien"}
    assert set(data.databases) == {"pets"}
    assert data.databases["pets"].path == pets_db


def test_text2sql_filled_sql_runs(pets_db):
    data = load_text2sql(FIXTURES / "pets.json", "pets", pets_db)
    con = sqlite3.connect(f"{pets_db.as_uri()}?mode=ro", uri=True)
    counts = {r["external_id"]: len(con.execute(r["sql"]).fetchall()) for r in data.examples}
    con.close()
    assert counts == {"0.0": 1, "0.1": 1, "1.0": 1, "4.0": 1}


def test_text2sql_rejects(pets_db):
    data = load_text2sql(FIXTURES / "pets.json", "pets", pets_db, db_id="animals")
    assert reasons(data) == ["unfilled-variable", "parse-error", "parse-error", "duplicate"]
    assert data.rejects[0]["external_id"] == "1.1"
    assert "age0" in data.rejects[0]["detail"]
    assert data.rejects[2]["detail"] == "expected one SQL statement, found 2"
    assert {r["db_id"] for r in data.examples} == {"animals"}


# --- ehrsql ----------------------------------------------------------------------------


def test_ehrsql_fixture():
    data = load_ehrsql(
        FIXTURES / "ehrsql_data.json",
        FIXTURES / "ehrsql_label.json",
        FIXTURES / "ehrsql_tables.json",
        "ehr",
        db_id="clinic",
    )
    assert [r["external_id"] for r in data.examples] == ["q1", "q2"]
    unanswerable = data.examples[1]
    assert (unanswerable["sql"], unanswerable["label"], unanswerable["category"]) == (
        None,
        "unanswerable",
        None,
    )
    assert reasons(data) == ["empty-question", "missing-label"]
    assert data.databases["clinic"].path is None
    assert data.databases["clinic"].schema.table("admissions") is not None


def ehrsql_files(tmp_path, data: list[dict], labels_text: str):
    (tmp_path / "data.json").write_text(json.dumps({"version": "t", "data": data}))
    (tmp_path / "label.json").write_text(labels_text)
    args = (tmp_path / "data.json", tmp_path / "label.json", FIXTURES / "ehrsql_tables.json")
    return load_ehrsql(*args, "ehr", db_id="clinic")


def test_ehrsql_an_id_used_for_two_questions_rejects_both_named():
    data = [
        {"id": "a", "question": "How many admissions are there?"},
        {"id": "a", "question": "What is the weather?"},
        {"id": "b", "question": "How many patients are there?"},
    ]
    labels = {"a": "SELECT count(*) FROM admissions", "b": "null"}
    with TemporaryDirectory() as folder:
        loaded = ehrsql_files(Path(folder), data, json.dumps(labels))
    assert [r["external_id"] for r in loaded.examples] == ["b"]
    assert [(r["reason"], r["external_id"]) for r in loaded.rejects] == [("duplicate-id", "a")] * 2
    assert "2 questions (data[0], data[1])" in loaded.rejects[0]["detail"]


def test_ehrsql_an_id_labelled_twice_is_rejected_not_the_last_label_kept():
    data = [{"id": "a", "question": "What is the weather?"}, {"id": "b", "question": "Hi?"}]
    labels = '{"a": "null", "b": "null", "a": "SELECT count(*) FROM admissions"}'
    with TemporaryDirectory() as folder:
        loaded = ehrsql_files(Path(folder), data, labels)
    assert [r["external_id"] for r in loaded.examples] == ["b"]
    assert [(r["reason"], r["external_id"]) for r in loaded.rejects] == [("duplicate-id", "a")]
    assert "more than one label" in loaded.rejects[0]["detail"]


def test_keep_reads_only_the_labels_listed_and_says_how_many_went():
    spec = {
        "name": "ehr",
        "format": "ehrsql",
        "path": "ehrsql_data.json",
        "labels": "ehrsql_label.json",
        "tables": "ehrsql_tables.json",
        "db_id": "clinic",
        "keep": ["answerable"],
    }
    data = load_source(spec, FIXTURES, None)
    assert [r["external_id"] for r in data.examples] == ["q1"]
    assert data.notes == ["source 'ehr': 1 examples left out (keep: answerable)"]
    assert [
        r["external_id"] for r in load_source({**spec, "keep": None}, FIXTURES, None).examples
    ] == ["q1", "q2"]


# --- load_source -----------------------------------------------------------------------


def test_load_source_resolves_relative_paths(tmp_path, shop_dir):
    spec = {"name": "seeds", "format": "jsonl", "path": "seeds.jsonl", "databases": "demo"}
    data = load_source(spec, FIXTURES, demo_dir=shop_dir)
    assert len(data.examples) == 3


def test_load_source_dispatches_each_format(tmp_path, pets_db):
    build_db("shop.sql", tmp_path / "dbs" / "shop.sqlite")
    specs = [
        {
            "name": "s",
            "format": "spider",
            "path": "spider_questions.json",
            "tables": "spider_tables.json",
            "limit": 1,
        },
        {"name": "t", "format": "text2sql", "path": "pets.json", "database": str(pets_db)},
        {
            "name": "e",
            "format": "ehrsql",
            "path": "ehrsql_data.json",
            "labels": "ehrsql_label.json",
            "tables": "ehrsql_tables.json",
            "db_id": "clinic",
        },
        {"name": "j", "format": "jsonl", "path": "seeds.jsonl", "databases": str(tmp_path / "dbs")},
    ]
    counts = [len(load_source(spec, FIXTURES, None).examples) for spec in specs]
    assert counts == [1, 4, 2, 3]


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ({"name": "s", "format": "spider", "path": "q.json"}, "tables"),
        ({"name": "e", "format": "ehrsql", "path": "d.json", "tables": "t.json"}, "labels"),
        ({"name": "t", "format": "text2sql", "path": "x.json"}, "database"),
        ({"name": "j", "format": "jsonl", "path": "x.jsonl"}, "databases"),
        ({"name": "j", "format": "jsonl", "databases": "dbs"}, "path"),
        ({"name": "x", "format": "xlsx", "path": "x.xlsx"}, "format"),
        ({"name": "x", "format": "csv", "path": "x.csv"}, "db_id"),
    ],
)
def test_load_source_names_the_missing_key(spec, key):
    with pytest.raises(ConfigError) as caught:
        load_source(spec, FIXTURES, None)
    assert caught.value.key == key
    assert f"'{spec['name']}'" in str(caught.value)


def test_load_source_demo_without_demo_dir():
    spec = {"name": "j", "format": "jsonl", "path": "seeds.jsonl", "databases": "demo"}
    with pytest.raises(ConfigError, match="demo"):
        load_source(spec, FIXTURES, None)


# --- bad input -------------------------------------------------------------------------


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_missing_files(tmp_path, shop_dir, pets_db):
    missing = tmp_path / "nope.json"
    calls = [
        lambda: load_jsonl(missing, "s", shop_dir),
        lambda: load_spider(missing, FIXTURES / "spider_questions.json", "s", None),
        lambda: load_spider(FIXTURES / "spider_tables.json", missing, "s", None),
        lambda: load_text2sql(missing, "s", pets_db),
        lambda: load_text2sql(FIXTURES / "pets.json", "s", tmp_path / "nope.sqlite"),
        lambda: load_ehrsql(
            missing, FIXTURES / "ehrsql_label.json", FIXTURES / "ehrsql_tables.json", "s"
        ),
        lambda: load_ehrsql(
            FIXTURES / "ehrsql_data.json", missing, FIXTURES / "ehrsql_tables.json", "s"
        ),
    ]
    for call in calls:
        with pytest.raises(ConfigError, match="not found") as caught:
            call()
        assert "nope." in caught.value.file


def test_missing_databases_folder(tmp_path):
    with pytest.raises(ConfigError, match="folder not found"):
        load_jsonl(FIXTURES / "seeds.jsonl", "s", tmp_path / "absent")


def test_malformed_jsonl_names_the_line(tmp_path, shop_dir):
    good = '{"db_id": "shop", "question": "q?", "sql": "SELECT 1"}\n'
    path = write(tmp_path, "bad.jsonl", good + "\n" + '{"db_id": "shop", "question": }\n')
    with pytest.raises(ConfigError, match="line 3: malformed JSON at column"):
        load_jsonl(path, "s", shop_dir)


def test_malformed_json_names_the_position(tmp_path, pets_db):
    path = write(tmp_path, "bad.json", '[\n  {"sql": ["SELECT 1"],}\n]')
    with pytest.raises(ConfigError, match=r"bad.json: malformed JSON at line 2 column"):
        load_text2sql(path, "s", pets_db)


def test_not_a_sqlite_file(tmp_path):
    fake = write(tmp_path, "pets.sqlite", "CREATE TABLE pet (id INTEGER);\n")
    with pytest.raises(ConfigError, match="not a SQLite database"):
        load_text2sql(FIXTURES / "pets.json", "s", fake)
    (tmp_path / "dbs").mkdir()
    write(tmp_path / "dbs", "shop.sqlite", "x" * 100)
    with pytest.raises(ConfigError, match=r"shop\.sqlite: not a SQLite database"):
        load_jsonl(FIXTURES / "seeds.jsonl", "s", tmp_path / "dbs")


def test_jsonl_without_database_file(tmp_path):
    (tmp_path / "dbs").mkdir()
    with pytest.raises(ConfigError, match="no SQLite file for db_id 'shop' under") as caught:
        load_jsonl(FIXTURES / "seeds.jsonl", "s", tmp_path / "dbs")
    assert caught.value.key == "databases"
    assert caught.value.fix


def test_jsonl_without_databases(tmp_path):
    with pytest.raises(ConfigError, match="databases"):
        load_jsonl(FIXTURES / "seeds.jsonl", "s", None)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('["shop", "q?"]', "line 1: expected a JSON object, found a list"),
        (
            '{"db_id": "shop", "question": "q?", "querry": "SELECT 1"}',
            "line 1: unknown key 'querry'",
        ),
        ('{"question": "q?", "sql": "SELECT 1"}', "line 1: missing key 'db_id'"),
        (
            '{"db_id": "shop", "question": 3}',
            "line 1.question: expected a string, found an integer",
        ),
        ('{"db_id": "shop", "question": "q?", "sql": 1}', "line 1.sql: expected a string or null"),
    ],
)
def test_jsonl_wrong_shape(tmp_path, shop_dir, line, message):
    path = write(tmp_path, "bad.jsonl", line + "\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_jsonl(path, "s", shop_dir)


def test_spider_wrong_shape(tmp_path):
    tables = FIXTURES / "spider_tables.json"
    questions = write(tmp_path, "dev.json", '{"db_id": "shop"}')
    with pytest.raises(ConfigError, match=r"dev\.json: expected a list of questions"):
        load_spider(tables, questions, "s", None)
    questions = write(tmp_path, "dev.json", '[{"db_id": "shop", "question": "q?"}]')
    with pytest.raises(ConfigError, match=r"\[0\]: missing key 'query'"):
        load_spider(tables, questions, "s", None)
    bad_tables = write(tmp_path, "tables.json", '[{"table_names_original": []}]')
    with pytest.raises(ConfigError, match=r"tables.json: \[0\]: missing key 'db_id'"):
        load_spider(bad_tables, FIXTURES / "spider_questions.json", "s", None)


def test_spider_unknown_db_id(tmp_path):
    questions = write(
        tmp_path, "dev.json", json.dumps([{"db_id": "zoo", "question": "q?", "query": "SELECT 1"}])
    )
    with pytest.raises(ConfigError, match="no schema for db_id 'zoo'"):
        load_spider(FIXTURES / "spider_tables.json", questions, "s", None)


def test_spider_broken_tables_entry(tmp_path):
    entry = {"db_id": "shop", "table_names_original": ["t"], "column_names_original": [[5, "id"]]}
    tables = write(tmp_path, "tables.json", json.dumps([entry]))
    with pytest.raises(ConfigError, match="entry 'shop' is not a Spider schema"):
        load_spider(tables, FIXTURES / "spider_questions.json", "s", None, limit=1)


def test_text2sql_wrong_shape(tmp_path, pets_db):
    cases = [
        ('{"sql": []}', "expected a list of entries"),
        ('[{"sql": ["SELECT 1"]}]', r"\[0\]: missing key 'sentences'"),
        ('[{"sql": [], "sentences": []}]', r"\[0\].sql: the list of SQL strings is empty"),
        (
            '[{"sql": ["SELECT 1"], "sentences": [{"variables": {}}]}]',
            r"\[0\].sentences\[0\]: missing key 'text'",
        ),
    ]
    for text, message in cases:
        path = write(tmp_path, "bad.json", text)
        with pytest.raises(ConfigError, match=message):
            load_text2sql(path, "s", pets_db)


def test_ehrsql_wrong_shape(tmp_path):
    labels, tables = FIXTURES / "ehrsql_label.json", FIXTURES / "ehrsql_tables.json"
    data = write(tmp_path, "data.json", '[{"id": "q1", "question": "q?"}]')
    with pytest.raises(ConfigError, match=r'expected an object \{"version", "data"\}'):
        load_ehrsql(data, labels, tables, "s", db_id="clinic")
    data = write(tmp_path, "data.json", '{"version": "v", "questions": []}')
    with pytest.raises(ConfigError, match="missing key 'data'"):
        load_ehrsql(data, labels, tables, "s", db_id="clinic")
    bad_labels = write(tmp_path, "label.json", '{"q1": null}')
    with pytest.raises(ConfigError, match=r'label\.json: q1: expected SQL text or "null"'):
        load_ehrsql(FIXTURES / "ehrsql_data.json", bad_labels, tables, "s", db_id="clinic")


# --- the real public data --------------------------------------------------------------


def test_real_spider_dev():
    data = load_spider(
        shared("spider", "tables.json"), shared("spider", "dev.json"), "spider-dev", None
    )
    assert len(data.examples) == 1034
    assert data.rejects == []
    assert len(data.databases) == 20
    assert all(ref.path is None for ref in data.databases.values())
    assert len({r["id"] for r in data.examples}) == 1034


def filled_sql_is_clean(data, raw: list[dict]) -> None:
    """Every filled SQL parses and keeps no variable of its entry, in SQL or question."""
    for record in data.examples:
        entry = raw[int(record["external_id"].split(".")[0])]
        names = {v["name"] for v in entry["variables"]}
        tree = sqlglot.parse_one(record["sql"], read="sqlite")
        assert not names & {variable_name(node) for node in tree.walk()}, record
        assert not any(name in record["question"].split() for name in names), record


def test_real_geoquery():
    path = shared("geoquery", "geography.json")
    raw = json.loads(path.read_text())
    data = load_text2sql(path, "geoquery", shared("geoquery", "geography.sqlite"))
    assert sum(len(entry["sentences"]) for entry in raw) == 877
    assert len(data.examples) == 877
    assert data.rejects == []
    first = data.examples[0]
    assert first["question"] == "what is the biggest city in arizona"
    assert first["db_id"] == "geography"
    assert first["split"] == "dev"
    assert "STATE_NAME = 'arizona'" in first["sql"]
    filled_sql_is_clean(data, raw)


def test_real_restaurants_duplicates_are_rejected():
    path = shared("restaurants", "restaurants.json")
    raw = json.loads(path.read_text())
    data = load_text2sql(path, "restaurants", shared("restaurants", "restaurants.sqlite"))
    assert sum(len(entry["sentences"]) for entry in raw) == 378
    assert len(data.examples) == 125
    assert reasons(data) == ["duplicate"] * 253
    first = data.examples[0]
    assert first["question"] == "how many buttercup kitchen are there in san francisco ?"
    assert "CITY_NAME = 'san francisco'" in first["sql"]
    assert "NAME = 'buttercup kitchen'" in first["sql"]
    filled_sql_is_clean(data, raw)


def test_real_ehrsql():
    folder = ("ehrsql2024",)
    data = load_ehrsql(
        shared(*folder, "valid_data.json"),
        shared(*folder, "valid_label.json"),
        shared(*folder, "tables.json"),
        "ehrsql",
    )
    assert len(data.examples) == 1163
    assert sum(r["label"] == "unanswerable" for r in data.examples) == 232
    assert all(r["sql"] is None for r in data.examples if r["label"] == "unanswerable")
    assert data.rejects == []
    assert list(data.databases) == ["mimic_iv"]
    assert data.databases["mimic_iv"].schema.table("patients") is not None
