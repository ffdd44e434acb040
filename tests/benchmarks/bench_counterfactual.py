"""Counterfactual edits over 10,000 verified answerable demo items, timed.

Run with ``python tests/benchmarks/bench_counterfactual.py [N]``. The templates builder
(which will make many answerable demo items) is not on this branch, so the benchmark
makes its own: it varies the literals of the demo seed items (``raw/demo/seeds``) with
values sampled from the column each literal is compared with, replacing the literal in
the sqlglot tree (and its mention in the question), executes every variant on the demo
database and keeps it when the result is not empty. That setup is not timed.

The timed part is the counterfactual step itself, with every item selected for one
problematic edit (``rate`` 1) and a fifth also getting a control: grounding, proposals,
materialization of each distinct edit on a copy of the demo database (in a fresh
folder, so nothing is reused from an earlier run) and every verification. The last line
is exactly ``items=<n> edits=<m> seconds=<s> items_per_s=<r> peak_rss_mb=<mb>`` (wall
clock); the line before gives the process's CPU seconds, which a shared machine
disturbs less.
"""

from __future__ import annotations

import itertools
import math
import random
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.counterfactual import Config, edit_env, run_counterfactual
from answerable.builders.counterfactual.grounding import find_value
from answerable.builders.demo import generate_demo
from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.builders.items import plain_item
from answerable.builders.sources import load_source
from answerable.builders.sqlkit.parsing import compared_with
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import item_id

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "raw" / "demo" / "seeds"
SEED = 13
SAMPLE = 300  # values sampled per compared column


def seed_examples(demo: Path):
    """The demo seed examples and the demo databases."""
    examples, databases = [], {}
    for name in ("clinic", "league"):
        spec = {"name": f"{name}-seeds", "format": "jsonl", "path": f"{name}.jsonl"}
        data = load_source({**spec, "databases": "demo"}, SEEDS, demo)
        examples += data.examples
        databases.update(data.databases)
    return examples, databases


def column_values(db, table: str, column: str) -> list:
    """Up to SAMPLE distinct non-null values of a column."""
    query = (
        exp.select(exp.column(column, quoted=True))
        .distinct()
        .from_(exp.Table(this=exp.to_identifier(table, quoted=True)))
        .where(exp.column(column, quoted=True).is_(exp.null()).not_())
        .order_by(exp.column(column, quoted=True))
    )
    values = [v for (v,) in db.execute(query.sql("sqlite"), ordered=True, row_cap=5000).rows]
    return random.Random(f"{table}.{column}").sample(values, min(SAMPLE, len(values)))


def variants(example: dict, schema, db) -> Iterator[tuple[str, str]]:
    """(question, sql) pairs with the compared literals replaced by values sampled from
    their columns (in the sqlglot tree, and in the question's mention): every combination
    of the sampled values at most once, in a seeded order."""
    tree = sqlkit.qualify(sqlkit.parse(example["sql"]), schema)
    refs = sqlkit.references(tree)
    slots = []
    for index, node in enumerate(tree.find_all(exp.Literal)):
        _, other = compared_with(node)
        literal = next((lit for lit in refs.literals if lit.value == _value(node)), None)
        if isinstance(other, exp.Column) and literal is not None and literal.column:
            table, _, column = literal.column.rpartition(".")
            values = [
                v
                for v in column_values(db, table, column)
                if isinstance(v, str) == node.is_string and not isinstance(v, bytes)
            ]
            mention = find_value(example["question"], literal, [])
            if values:
                slots.append((index, node.is_string, mention, values))
    if not slots:
        return
    slots.sort(key=_from_the_end)
    for chosen in _combinations([slot[3] for slot in slots], random.Random(example["id"])):
        question, copy = example["question"], tree.copy()
        literals = list(copy.find_all(exp.Literal))
        for (index, is_string, mention, _), value in zip(slots, chosen, strict=True):
            new = exp.Literal.string(value) if is_string else exp.Literal.number(value)
            literals[index].replace(new)
            if mention is not None:
                question = question[: mention.start] + str(value) + question[mention.end :]
        yield question, copy.sql("sqlite")


def _combinations(pools: list[list], rng: random.Random) -> Iterator[tuple]:
    """Each combination of one value per pool at most once, in a seeded random order
    (enumerated and shuffled when there are few, drawn with a memory when many)."""
    size = math.prod(len(p) for p in pools)
    if size <= 50_000:
        every = list(itertools.product(*pools))
        rng.shuffle(every)
        yield from every
        return
    seen = set()
    while len(seen) < size:
        chosen = tuple(rng.randrange(len(p)) for p in pools)
        if chosen not in seen:
            seen.add(chosen)
            yield tuple(p[i] for p, i in zip(pools, chosen, strict=True))


def _from_the_end(slot) -> int:
    """Replace mentions from the end of the question, so earlier offsets stay valid."""
    mention = slot[2]
    return -(mention.start if mention is not None else -1)


def _value(node: exp.Literal):
    if node.is_string:
        return node.this
    return int(node.this) if node.this.isdigit() else float(node.this)


def verified_items(examples, databases, limits: Limits, target: int) -> list[dict]:
    """Verified answerable items: each seed, then literal variants of the seeds taken in
    turn, each executed and kept when it returns rows; a seed whose variants keep coming
    back empty (or repeat) drops out."""
    open_dbs = {d: ReadOnlyDatabase(ref.path, limits) for d, ref in databases.items()}
    items, pools = {}, []
    for example in examples:
        add_item(items, example["question"], example["sql"], example, open_dbs)
        schema, db = databases[example["db_id"]].schema, open_dbs[example["db_id"]]
        pools.append((example, variants(example, schema, db)))
    while pools and len(items) < target:
        for entry in list(pools):
            if len(items) >= target:
                break
            if not _next_kept(items, entry, open_dbs):
                pools.remove(entry)
    for db in open_dbs.values():
        db.close()
    return list(items.values())


def _next_kept(items: dict, entry, open_dbs, patience: int = 200) -> bool:
    """Add the pool's next variant that returns rows; False once it seems spent."""
    example, pool = entry
    for question, sql in itertools.islice(pool, patience):
        if add_item(items, question, sql, example, open_dbs):
            return True
    return False


def add_item(items: dict, question: str, sql: str, example: dict, open_dbs) -> bool:
    """Execute one variant; keep it as a verified item when it returns rows (as seed_v1
    does; the items carry no sql_meta, which the step does not read)."""
    db_id = example["db_id"]
    identity = item_id(db_id, question, sql)
    if identity in items:
        return False
    try:
        result = open_dbs[db_id].execute(sql)
    except SQLError:
        return False
    if result.row_count == 0:
        return False
    items[identity] = plain_item(
        db_id,
        question,
        sql,
        result=result.to_record(),
        sql_meta=None,
        provenance={"generator": "bench_literals", "source": example["source"]},
    )
    return True


def main(target: int = 10_000) -> None:
    with tempfile.TemporaryDirectory() as folder:
        demo, limits = Path(folder) / "demo", Limits(timeout_s=2.0, row_cap=100)
        generate_demo(demo, 7)
        started = time.perf_counter()
        examples, databases = seed_examples(demo)
        items = verified_items(examples, databases, limits, target)
        print(
            f"setup: {len(items)} verified answerable items from {len(examples)} seeds "
            f"in {time.perf_counter() - started:.1f} s (not timed below)"
        )
        config = Config(rate=1.0, control_rate=0.2)
        env = edit_env(databases, Path(folder) / "variants", SEED, limits, config)
        started, cpu = time.perf_counter(), time.process_time()
        output, stats = run_counterfactual(items, env, config)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        made = env.variants.made
        env.close()
    print("\n".join(stats.lines()))
    print("emitted by category:", dict(Counter(i["category"] or "control" for i in output.items)))
    print(f"variants materialized: {made}; rejects: {len(output.rejects)}")
    print(f"cpu seconds of this process: {cpu:.2f} ({len(items) / cpu:.1f} items per cpu second)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"items={len(items)} edits={len(output.items)} seconds={seconds:.2f} "
        f"items_per_s={len(items) / seconds:.1f} peak_rss_mb={peak:.0f}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
