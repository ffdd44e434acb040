"""The SQL kit on Spider's dev set: every gold query parses and nearly all bind.

Spider is read from the repository's sibling ``../shared/data/spider`` (never copied
into the repository); the tests skip when it is not there.
"""

from __future__ import annotations

import json
import sqlite3

import jsonschema
import pytest
from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.errors import SQLError
from tests.conftest import REPO, shared_data

ITEM_SCHEMA = REPO / "schemas" / "item.schema.json"


@pytest.fixture(scope="module")
def spider() -> tuple[list[dict], dict[str, DatabaseSchema]]:
    examples = json.loads(shared_data("spider", "dev.json").read_text())
    tables = json.loads(shared_data("spider", "tables.json").read_text())
    return examples, {entry["db_id"]: DatabaseSchema.from_spider(entry) for entry in tables}


def test_every_dev_query_parses_and_is_read_only(spider):
    examples, _ = spider
    assert len(examples) == 1034
    for example in examples:
        assert sqlkit.is_read_only(sqlkit.parse(example["query"])), example["query"]


def test_nearly_every_dev_query_binds_and_its_meta_is_valid(spider):
    examples, schemas = spider
    item = json.loads(ITEM_SCHEMA.read_text())
    validator = jsonschema.Draft202012Validator(item["$defs"]["sql_meta"])
    failures = []
    for example in examples:
        try:
            meta = sqlkit.analyze(example["query"], schemas[example["db_id"]])
        except SQLError as error:
            failures.append((example["db_id"], example["query"], str(error)))
            continue
        validator.validate(meta)
        assert meta["tables"], example["query"]
    assert len(failures) <= len(examples) // 100, failures


def empty_database(schema: DatabaseSchema) -> sqlite3.Connection:
    """An in-memory SQLite database with the schema's tables and no rows."""
    con = sqlite3.connect(":memory:")
    for table in schema.tables:
        if table.name.lower().startswith("sqlite_"):
            continue  # reserved by SQLite; world_1 lists sqlite_sequence
        name = exp.to_identifier(table.name, quoted=True)
        columns = [
            exp.ColumnDef(this=exp.to_identifier(c.name, quoted=True)) for c in table.columns
        ]
        create = exp.Create(
            kind="TABLE", this=exp.Schema(this=exp.Table(this=name), expressions=columns)
        )
        con.execute(create.sql("sqlite"))
    return con


def test_sqlite_agrees_and_runs_the_qualified_sql(spider):
    """SQLite binds every gold query on an empty copy of its schema, and its qualified
    form too, with the same number of result columns."""
    examples, schemas = spider
    databases = {db_id: empty_database(schemas[db_id]) for db_id in {e["db_id"] for e in examples}}
    for example in examples:
        con = databases[example["db_id"]]
        gold = con.execute(example["query"]).description
        tree = sqlkit.qualify(sqlkit.parse(example["query"]), schemas[example["db_id"]])
        assert len(con.execute(tree.sql("sqlite")).description) == len(gold), example["query"]
