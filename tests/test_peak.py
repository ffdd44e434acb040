"""Peak memory of a build: merges that stream (only ids held), rejects kept on disk, and
a cached rerun that reads no item (issue 14, "peak memory and the cached rerun")."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from answerable import build as build_module
from answerable.builders.drafting import stage
from answerable.builders.drafting.stage import without_repeats
from answerable.kernel import records
from answerable.kernel.ids import sha256_file
from answerable.kernel.records import ItemFiles, read_json, read_jsonl, write_jsonl, write_parquet
from answerable.pipeline import (
    ItemsSoFar,
    RejectFile,
    Rejects,
    StepOutput,
    Workspace,
    first_of_each_id,
    sort_rejects,
    sorted_ids,
    with_fields,
)
from answerable.pipeline.shards import StoredUnits
from answerable.release.cut.guards import contradictions
from tests.conftest import DEMO_RECIPE, run_in
from tests.release_helpers import make_item
from tests.test_shards import bulky_work, context, sharded_step, traced_peak


def repeated(item: dict, first) -> dict:
    return {"id": item["id"], "step": "toy", "reason": "duplicate", "detail": first}


def test_first_of_each_id_keeps_the_first_and_rejects_the_rest_as_it_reads():
    items = ({"id": f"i{n % 3}", "n": n} for n in range(7))
    kept = first_of_each_id(
        StepOutput(items, [{"id": "x", "reason": "earlier"}]), repeated, lambda i: i["n"]
    )
    assert kept.rejects == [{"id": "x", "reason": "earlier"}]  # nothing read yet
    assert [i["n"] for i in kept.items] == [0, 1, 2]
    assert [(r["id"], r["detail"]) for r in list(kept.rejects)[1:]] == [
        ("i0", 0),
        ("i1", 1),
        ("i2", 2),
        ("i0", 0),
    ]


def test_rejects_in_order_are_sort_rejects_of_every_part(tmp_path):
    rng = random.Random(3)

    def some(n: int) -> list[dict]:  # few distinct keys: many ties, kept in arrival order
        return [
            {"id": f"r{rng.randrange(4)}", "step": f"s{rng.randrange(3)}", "reason": "x", "n": k}
            for k in range(n)
        ]

    first, stored, last = some(30), some(40), some(25)
    file = write_jsonl(sort_rejects(stored), tmp_path / "rejects.jsonl")
    rejects = Rejects(first)
    rejects += RejectFile(file)
    rejects.append(last[0])
    rejects += last[1:]
    everything = first + sort_rejects(stored) + last
    assert list(rejects.in_order()) == sort_rejects(everything)
    assert len(rejects) == 95 and list(rejects) == everything


def test_a_stored_step_keeps_its_rejects_on_disk(tmp_path):
    workspace = Workspace(tmp_path, "toy")
    rejects = [{"id": f"r{n}", "step": "toy", "reason": "x"} for n in (3, 1, 2)]
    made, cached = workspace.cached_step("toy", "sig", lambda: StepOutput([], rejects))
    again, cached_again = workspace.cached_step("toy", "sig", lambda: 1 / 0)
    assert (cached, cached_again) == (False, True)
    for output in (made, again):
        assert isinstance(output.rejects, RejectFile)
        assert [r["id"] for r in output.rejects] == ["r1", "r2", "r3"]


@pytest.mark.slow  # among the longest of the default run: CI's second pass
def test_a_merge_that_drops_repeats_holds_ids_not_items(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RUN_ROWS", 200)  # the writer sorts 200 items at a time
    ctx = context(tmp_path, 1, 50)

    def twice(shard: list[int]) -> StepOutput:  # every item made twice: one repeat each
        made = bulky_work(shard)
        return StepOutput(made.items + bulky_work(shard).items)

    def step(units: int) -> None:
        made, _ = sharded_step(
            ctx,
            "toy",
            f"sig{units}",
            list(range(units)),
            twice,
            str,
            merge=lambda output: first_of_each_id(output, repeated),
        )
        assert len(made.items) == units and len(made.rejects) == units

    small, large = traced_peak(lambda: step(500)), traced_peak(lambda: step(5000))
    held = traced_peak(lambda: bulky_work(list(range(4500))))  # what 4,500 more items take
    # ten times the items: the peak grows by a small share of what holding them would cost
    assert large - small < 0.2 * held, (small, large, held)


def test_a_cached_rerun_reads_no_candidate_again(demo_build, monkeypatch):
    cwd, _ = demo_build
    work = cwd / ".answerable" / "answerable-demo"
    before = {name: sha256_file(work / name) for name in ("candidates.parquet",)}
    before["rejects"] = sha256_file(work / "reports" / "rejects.jsonl")
    before["report"] = without_cached(read_json(work / "reports" / "build.json"))

    def refused(*_args, **_kwargs):
        raise AssertionError("a cached rerun went over the candidates again")

    for name in ("finished_items", "count_items", "iter_tagged"):
        monkeypatch.setattr(build_module, name, refused)
    result = run_in(cwd, "build", DEMO_RECIPE)
    assert result.exit_code == 0, result.output
    assert "unchanged, already published" in result.output
    assert sha256_file(work / "candidates.parquet") == before["candidates.parquet"]
    assert sha256_file(work / "reports" / "rejects.jsonl") == before["rejects"]
    assert without_cached(read_json(work / "reports" / "build.json")) == before["report"]


def without_cached(report: dict) -> dict:
    """A build report without what says a step came from the cache."""
    steps = {name: {**line, "cached": None} for name, line in report["steps"].items()}
    return {**report, "steps": steps}


def test_items_so_far_give_ids_and_some_fields_without_reading_whole_items(tmp_path):
    def item(key: str, n: int) -> dict:
        return {"id": key, "db_id": "clinic", "question": f"q{n}", "result": {"rows": [[n]]}}

    so_far = ItemsSoFar()
    so_far.add(ItemFiles([write_parquet([item("b", 1), item("a", 1)], tmp_path / "1.parquet")]))
    so_far.add([item("c", 2)])
    so_far.add(ItemFiles([write_parquet([item("a", 3)], tmp_path / "3.parquet")]))
    assert so_far.ids() == sorted_ids(list(so_far)) == ["a", "b", "c"]
    some = list(with_fields(so_far, "question"))
    assert [(i["id"], i["question"]) for i in some] == [("b", "q1"), ("c", "q2"), ("a", "q3")]
    assert [i["result"] for i in some] == [None, {"rows": [[2]]}, None]  # the list: as it is
    assert [i["id"] for i in so_far] == [i["id"] for i in some]


def test_rejects_sorted_in_runs_on_disk_are_the_bytes_of_one_sort(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "SORT_RUN", 7)  # many runs, ties across them
    rng = random.Random(5)
    rejects = [
        {"id": f"r{rng.randrange(5)}", "step": "s", "reason": rng.choice("xy"), "n": n}
        for n in range(60)
    ]
    one = write_jsonl(sort_rejects(rejects), tmp_path / "one.jsonl")
    runs = records.write_sorted_jsonl(iter(rejects), tmp_path / "runs.jsonl", reject_key)
    assert runs.read_bytes() == one.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.jsonl", "runs.jsonl"]


def reject_key(record: dict) -> tuple:
    return (record["step"], record["id"], record["reason"])


def test_a_steps_rejects_are_sorted_and_reported_without_holding_them(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "SORT_RUN", 500)
    workspace = Workspace(tmp_path, "toy")

    def toy_reject(n: int) -> dict:
        return {
            "id": f"{(n * 7919) % 100_003:08d}",
            "step": "toy",
            "reason": "x",
            "detail": "d" * 200,
        }

    def step(count: int) -> None:  # a step's rejects as a stream, then the build's report
        made, _ = workspace.cached_step(
            "toy", f"sig{count}", lambda: StepOutput([], map(toy_reject, range(count)))
        )  # the rejects are a stream: sorted in runs on disk
        report = Rejects([{"id": "a", "step": "source", "reason": "y"}])
        report += made.rejects
        write_jsonl(report.in_order(), tmp_path / f"rejects{count}.jsonl")

    small, large = traced_peak(lambda: step(1_000)), traced_peak(lambda: step(10_000))
    held = traced_peak(lambda: [toy_reject(n) for n in range(9_000)])  # what 9,000 more take
    assert large - small < 0.2 * held, (small, large, held)
    written = list(read_jsonl(tmp_path / "rejects10000.jsonl"))
    assert [r["id"] for r in written[1:]] == sorted(
        f"{(n * 7919) % 100_003:08d}" for n in range(10_000)
    )
    assert written[0]["step"] == "source" and len(written) == 10_001


def test_contradictions_read_from_columns_are_those_read_from_items(tmp_path):
    def item(key: str, question: str, digest: str | None, variant: str | None = None) -> dict:
        result = None if digest is None else {"hash": digest, "row_count": 1}
        fields = {"id": key, "db_id": "clinic", "db_variant": variant, "question": question}
        return fields | {"result": result, "label": "answerable"}

    items = [
        item("a1", "How many patients?", "h1"),
        item("a2", "how many  patients", "h2"),  # the same question, another result
        item("a3", "How many patients?", "h1", variant="clinic.v1"),  # another database
        item("a4", "How many visits?", "h3"),
        item("a5", "How many visits?", None),  # no result: never contradicts
        item("a6", "How many visits?", "h3"),
    ]
    files = ItemFiles([write_parquet(items, tmp_path / "items.parquet")])
    found = contradictions(files)
    assert found == contradictions(items) == {"a1": ["a2"], "a2": ["a1"]}
    empty = ItemFiles([write_parquet([], tmp_path / "none.parquet")])
    assert contradictions(empty) == contradictions([]) == {}


class Drafts:
    """``count`` drafted items asking one question, each of its own parent: all but the
    first repeat it. Made again on each pass (the near-duplicate pass reads them twice)."""

    def __init__(self, count: int):
        self.count = count

    def __iter__(self):
        for n in range(self.count):
            yield {
                "id": f"d{n:06d}",
                "db_id": "clinic",
                "question": "How many patients were admitted in 2020?",
                "category": "out-of-scope",
                "trigger": {"text": "admitted " * 20},  # a bulky reject
                "provenance": {
                    "generator": "offline",
                    "parent": f"p{n}",
                    "params": {"anchor": f"p{n}"},
                },
            }


def no_check(_item: dict) -> None:
    """A draft check every draft passes."""


def test_the_near_duplicate_pass_writes_its_rejects_as_it_reads(tmp_path):
    built = [{"id": "seed", "db_id": "clinic", "question": "Which doctor is on call?"}]
    earlier = [{"id": "x", "step": "offline", "reason": "earlier"}]

    def dedup(count: int, hold: bool = False) -> list:
        checked, folder = StepOutput(Drafts(count), earlier), tmp_path / f"f{count}-{hold}"
        output = without_repeats(
            context(tmp_path, 1, 64), checked, 0.8, built, folder, {"clinic": 1}, no_check
        )
        kept = list(output.items)
        return [kept, list(output.rejects) if hold else len(output.rejects)]

    kept, rejects = dedup(3, hold=True)
    assert [i["id"] for i in kept] == ["d000000"]
    assert [(r["id"], r["reason"], r.get("parent")) for r in rejects] == [
        ("x", "earlier", None),
        ("d000001", "duplicate", "p1"),
        ("d000002", "duplicate", "p2"),
    ]
    assert dedup(10_000)[1] == 10_000
    small, large = traced_peak(lambda: dedup(1_000)), traced_peak(lambda: dedup(10_000))
    held = traced_peak(lambda: dedup(9_000, hold=True)) - small  # 9,000 rejects in a list
    # ten times the repeats: the peak grows by a small share of what holding them costs
    assert large - small < 0.1 * held, (small, large, held)


def test_candidate_sqls_parent_lookup_is_read_a_shard_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(stage, "RUN_ROWS", 256)  # many row groups: shards cross them

    def items(count: int) -> list[dict]:
        # answerable parents (some with empty SQL), drafts of them and of outsiders
        made = [make_item(f"p{n}", sql=f"SELECT {n}" if n % 5 else "") for n in range(count)]
        made += [
            make_item(f"d{n}", label="unanswerable", parent=f"p{n}" if n % 3 else f"out{n}")
            for n in range(count)
        ]
        return made

    def lookups(units: StoredUnits) -> Iterator[dict]:
        parents = stage.ParentSql(units, units.file.with_name("parents.parquet"))
        for start in range(0, len(units.ids), 50):
            yield parents.of(units.ids[start : start + 50])

    def stored(count: int) -> StoredUnits:
        return StoredUnits(items(count), tmp_path / str(count) / "units.parquet")

    everything = {i["id"]: i for i in items(300)}
    looked_up = set()
    for shard in lookups(stored(300)):
        looked_up |= set(shard)
        assert all(found == {"sql": everything[p]["sql"]} for p, found in shard.items())
    wanted = {
        i["provenance"]["parent"]
        for i in everything.values()
        if everything.get(i["provenance"]["parent"] or "", {}).get("sql")
    }
    assert looked_up == wanted and len(wanted) == 160  # p1..p299 with SQL, every third out
    # no process holds every item's SQL: the lookups of 10x the items take no more
    small, large = stored(300), stored(3000)
    small_peak = traced_peak(lambda: sum(map(len, lookups(small))))
    large_peak = traced_peak(lambda: sum(map(len, lookups(large))))
    made = items(3000)
    held = traced_peak(lambda: {i["id"]: {"sql": i["sql"]} for i in made if i["sql"]})
    assert large_peak - small_peak < held / 10, (small_peak, large_peak, held)
