"""SQL checked as a batch: ``sql_meta`` worked out once per shape of query, and each
database's queries run in one exchange with its engine, with the verdicts of one by one."""

from __future__ import annotations

import pytest

from answerable.builders import seeds, sqlkit
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.builders.seeds import SqlChecks, Unverified, verified_many, verified_sql
from tests.test_drafting_twins import demo_twins  # noqa: F401  (a fixture)


@pytest.fixture(scope="module")
def league(demo_dir):
    return DatabaseSchema.from_sqlite(demo_dir / "league.sqlite", "league")


def test_queries_that_differ_in_compared_values_are_analyzed_once(league, monkeypatch):
    real, analyzed = sqlkit._analysis, []
    monkeypatch.setattr(sqlkit, "_analysis", lambda *a: analyzed.append(a) or real(*a))
    shapes = sqlkit.ShapeAnalyses(league)
    texts = [
        f"SELECT name FROM teams WHERE founded_year > {year} AND city = '{city}' LIMIT {n}"
        for year, city, n in [(1900, "Austin", 5), (1950, "West Ritaberg", 10), (2001, "X", 1)]
    ]
    metas = [shapes.analyze(sql) for sql in texts]
    assert len(analyzed) == 1
    assert metas == [sqlkit.analyze(sql, league) for sql in texts]
    metas[0]["columns"].append("changed")  # each caller has its own copy
    assert "changed" not in shapes.analyze(texts[1])["columns"]


def test_a_value_that_reads_as_a_number_is_another_shape(league):
    shapes = sqlkit.ShapeAnalyses(league)
    word = shapes.analyze("SELECT name FROM teams WHERE city > 'Austin'")
    year = shapes.analyze("SELECT name FROM teams WHERE city > '1990'")
    assert "Threshold" not in word["operations"] and "Threshold" in year["operations"]
    first = shapes.analyze("SELECT name, city FROM teams ORDER BY 1")
    second = shapes.analyze("SELECT name, city FROM teams ORDER BY 2")
    assert first == sqlkit.analyze("SELECT name, city FROM teams ORDER BY 1", league)
    assert second == sqlkit.analyze("SELECT name, city FROM teams ORDER BY 2", league)


class Context:
    """What the checks read of a build's context: each database and its schema."""

    def __init__(self, paths: dict):
        self.databases = {db: ReadOnlyDatabase(path) for db, path in paths.items()}
        self.schemas = {db: DatabaseSchema.from_sqlite(p, db) for db, p in paths.items()}

    def database(self, db_id):
        return self.databases[db_id]

    def schema(self, db_id):
        return self.schemas[db_id]


def one_by_one(example, ctx):
    try:
        return verified_sql(example, ctx)
    except Unverified as failure:
        return failure


def verdict(outcome) -> tuple:
    if isinstance(outcome, Unverified):
        return "rejected", outcome.reason, outcome.detail, outcome.example
    return "verified", *outcome


def test_a_batch_has_the_verdicts_of_one_by_one(demo_dir, demo_twins):  # noqa: F811
    ctx = Context({db: demo_dir / f"{db}.sqlite" for db in ("clinic", "league")})
    examples = [
        {"id": str(n), "db_id": twin.job.db_id, "sql": twin.sql, "label": "answerable"}
        for n, (twin, _) in enumerate(demo_twins)
    ]
    wrong = [  # fails to bind, returns no rows, does not parse, asks what the first asks
        ("league", "SELECT nope FROM teams"),
        ("league", "SELECT name FROM teams WHERE 0"),
        ("clinic", "SELECT FROM WHERE"),
        (examples[0]["db_id"], examples[0]["sql"]),
    ]
    examples += [
        {"id": f"x{n}", "db_id": db, "sql": sql, "label": "answerable"}
        for n, (db, sql) in enumerate(wrong)
    ]
    checks = SqlChecks()
    batch = verified_many(examples, ctx, checks)
    again = verified_many(examples, ctx, checks)  # every shape known by now
    alone = [one_by_one(example, ctx) for example in examples]
    assert [verdict(v) for v in batch] == [verdict(v) for v in alone]
    assert [verdict(v) for v in again] == [verdict(v) for v in alone]
    reasons = [v.reason for v in batch[-4:-1]]
    assert reasons == ["unknown-column", "empty-result", "parse-error"], reasons
    assert sum(isinstance(v, tuple) for v in batch) >= len(demo_twins) * 0.8
    for database in ctx.databases.values():
        database.close()


def test_the_seeds_verdicts_come_from_one_batch(demo_dir, monkeypatch):
    ctx = Context({"league": demo_dir / "league.sqlite"})
    calls = []
    original = seeds.verified_many
    monkeypatch.setattr(seeds, "verified_many", lambda ex, c: calls.append(ex) or original(ex, c))
    examples = [
        {"id": "a", "db_id": "league", "question": "Teams?", "sql": "SELECT name FROM teams"},
        {"id": "b", "db_id": "league", "question": "Stadiums?", "sql": "SELECT name FROM stadiums"},
        {"id": "c", "db_id": "league", "question": "Unknown?", "sql": None},
    ]
    for example in examples:
        example.update(label="answerable" if example["sql"] else "unanswerable", source="t")
    output = seeds.verify_examples(examples, ctx)
    assert len(calls) == 1 and [e["id"] for e in calls[0]] == ["a", "b"]
    assert len(output.items) == 3 and not output.rejects
    ctx.database("league").close()


def test_each_text_of_a_batch_is_tokenized_and_parsed_once(demo_dir, monkeypatch):
    """A batch's texts are analyzed, run, then checked for numbers compared as text: the
    shape of each is worked out once for both, and the check reads the tree the analysis
    parsed (as written); a tree no check took is not kept past its batch."""
    ctx = Context({"league": demo_dir / "league.sqlite"})
    seen, parsed = [], []
    for name, calls in (("literal_shape", seen), ("parse", parsed)):
        real = getattr(sqlkit, name)
        monkeypatch.setattr(
            sqlkit, name, lambda sql, *a, f=real, c=calls: c.append(sql) or f(sql, *a)
        )
    texts = [
        "SELECT name FROM teams ORDER BY name",
        "SELECT max(founded_year) FROM teams",
        "SELECT name FROM teams WHERE founded_year > 1950",
        "SELECT name FROM teams WHERE 0",  # no rows: never checked, its tree dropped
    ]
    examples = [
        {"id": str(n), "db_id": "league", "sql": sql, "label": "answerable"}
        for n, sql in enumerate(texts)
    ]
    checks = SqlChecks()
    verdicts = verified_many(examples, ctx, checks)
    assert [isinstance(v, tuple) for v in verdicts] == [True, True, True, False], verdicts
    assert sorted(seen) == sorted(texts)
    assert sorted(parsed) == sorted(texts)
    assert checks.shapes(examples[0], ctx).written(texts[3]) is None
    ctx.database("league").close()
