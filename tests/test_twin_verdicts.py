"""The twins' SQL checked once per text: a later twin with the SQL of an earlier one
takes its verdict, the same verdict checking it again would give."""

from __future__ import annotations

from answerable.builders.drafting.stage import TwinVerdicts
from answerable.builders.seeds import SqlChecks, verified_many
from tests.test_drafting_twins import demo_twins  # noqa: F401  (a fixture)
from tests.test_verified_batches import Context, verdict


def test_a_repeated_twin_sql_is_run_once_with_the_verdict_of_checking_it(
    demo_dir,
    demo_twins,  # noqa: F811
):
    ctx = Context({db: demo_dir / f"{db}.sqlite" for db in ("clinic", "league")})
    sqls = [(twin.job.db_id, twin.sql) for twin, _ in demo_twins]
    sqls += [("league", "SELECT name FROM teams WHERE 0"), ("league", "SELECT nope FROM teams")]
    examples = [  # every text three times, each time another twin (its own id and source)
        {"id": f"{n}-{k}", "db_id": db, "sql": sql, "label": "answerable", "source": f"s{k}"}
        for k in range(3)
        for n, (db, sql) in enumerate(sqls)
    ]
    run = []
    for database in ctx.databases.values():
        real = database.execute_many
        database.execute_many = lambda calls, real=real: run.extend(calls) or real(calls)
    memo = TwinVerdicts()
    half = len(examples) // 2  # two shards: the second repeats texts of the first
    found = memo.verified(examples[:half], ctx) + memo.verified(examples[half:], ctx)
    once = list(run)
    run.clear()
    expected = verified_many(examples, ctx, SqlChecks())
    assert sorted(once) == sorted(set(run)) and len(run) >= 3 * len(once)  # each text once
    for database in ctx.databases.values():
        del database.execute_many
    assert [verdict(v)[:2] for v in found] == [verdict(v)[:2] for v in expected]
    for mine, theirs in zip(found, expected, strict=True):
        if isinstance(theirs, tuple):
            assert mine == theirs  # the example is the twin's own, result and sql_meta equal
            assert mine[0]["source"] == theirs[0]["source"]
        else:
            assert (mine.reason, mine.detail) == (theirs.reason, theirs.detail)
    verified = [v for v in found if isinstance(v, tuple) and v[1]]
    assert verified[0][1] is not verified[len(sqls) - 2][1]  # each twin its own result
    for database in ctx.databases.values():
        database.close()


def test_a_count_a_twin_needs_is_read_once_per_database(tmp_path):
    """Texas's twin counts the rows holding 'texas' once: the twins of its other jobs
    (and of other parents naming texas) take the count read before, and say the same."""
    from answerable.builders.drafting import twins
    from answerable.builders.drafting.drafts import Job
    from answerable.builders.executor import ReadOnlyDatabase
    from answerable.kernel.ids import rng_for
    from tests.test_drafting_twins import SEED, asked_of, geography

    path = geography(tmp_path)
    asked = {
        "what is the population of texas": "SELECT population FROM state WHERE state_name = 'texas'"
    }
    contexts, (texas,) = asked_of(path, asked)
    with ReadOnlyDatabase(path) as database:
        real, run = database.execute, []
        database.execute = lambda sql, *a, **k: run.append(sql) or real(sql, *a, **k)
        made = [
            twins.attribute_question(
                Job(texas, "vague-question", n), contexts["geo"], rng_for(SEED, "x"), database
            )
            for n in range(3)
        ]
    assert len(run) == 1 and "COUNT(*)" in run[0]
    assert {(twin.question, twin.sql) for twin in made} == {(made[0].question, made[0].sql)}
