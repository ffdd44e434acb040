"""Items to and from Parquet and JSON Lines: exact round trips, content-only bytes."""

from __future__ import annotations

import os
from types import SimpleNamespace

import polars as pl
import pyarrow.parquet as pq

from answerable import pipeline
from answerable.kernel import records
from answerable.kernel.ids import content_hash, item_id, rng_for, sha256_file
from answerable.kernel.item_model import polars_schema
from answerable.kernel.records import (
    ItemFiles,
    RowReader,
    complete,
    iter_parquet,
    read_jsonl,
    read_parquet,
    read_rows,
    without_ids,
    write_jsonl,
    write_parquet,
)
from answerable.kernel.typed_items import to_frame
from answerable.pipeline import BuildContext, ItemsSoFar

ITEMS = [
    {
        "id": "b" * 16,
        "db_id": "clinic",
        "question": "How many patients are there?",
        "sql": "SELECT count(*) FROM patients",
        "label": "answerable",
        "category": None,
        "result": {"row_count": 1, "columns": ["n"], "rows": [[1200]], "hash": "0" * 64},
        "provenance": {"generator": "seed_v1", "params": {"nested": [1, 2.5, None, "ü"]}},
    },
    {
        "id": "a" * 16,
        "db_id": "league",
        "question": "Predict next season's champion.",
        "sql": None,
        "label": "unanswerable",
        "category": "out-of-scope",
        "spans": [{"start": 0, "end": 7, "tag": "UNK", "text": "Predict"}],
        "provenance": {"generator": "offline_v1"},
    },
]


def test_parquet_round_trip_is_exact(tmp_path):
    path = write_parquet(ITEMS, tmp_path / "items.parquet")
    back = read_parquet(path)
    assert back == sorted((complete(i) for i in ITEMS), key=lambda i: i["id"])


def test_parquet_bytes_depend_on_content_only(tmp_path):
    first = write_parquet(ITEMS, tmp_path / "one.parquet")
    second = write_parquet(list(reversed(ITEMS)), tmp_path / "two.parquet")
    assert sha256_file(first) == sha256_file(second)


def test_jsonl_round_trip(tmp_path):
    path = write_jsonl(ITEMS, tmp_path / "items.jsonl")
    assert list(read_jsonl(path)) == ITEMS
    assert not list(tmp_path.glob(".*tmp"))


def test_ids_are_content_hashes():
    assert item_id("db", "q", "SELECT 1") == item_id("db", "q", "SELECT 1")
    assert item_id("db", "q", "SELECT 1") != item_id("db", "q", "SELECT 2")
    assert item_id("db", "q", None, "v1", {"drop": "t.c"}) != item_id("db", "q", None)
    assert content_hash({"a": 1, "b": 2}) == content_hash({"b": 2, "a": 1})


def test_rng_depends_on_seed_step_and_key():
    draw = [rng_for(1, "step", "x").random() for _ in range(2)]
    assert draw[0] == draw[1]
    assert rng_for(2, "step", "x").random() != draw[0]
    assert rng_for(1, "other", "x").random() != draw[0]
    assert rng_for(1, "step", "y").random() != draw[0]


def many(n: int) -> list[dict]:
    """``n`` items like ITEMS' first, each with its own id and question."""
    made = []
    for k in range(n):
        item = dict(ITEMS[0], question=f"How many patients are older than {k}?")
        made.append(dict(item, id=content_hash(k)[:16]))
    return made


def test_more_items_than_a_run_are_merged_from_sorted_runs(tmp_path, monkeypatch):
    items = many(50)
    whole = read_parquet(write_parquet(items, tmp_path / "whole.parquet"))  # one piece
    monkeypatch.setattr(records, "RUN_ROWS", 8)  # 7 runs, merged into row groups of 8
    shuffled = list(items)
    rng_for(1, "test").shuffle(shuffled)
    first = write_parquet(iter(items), tmp_path / "one.parquet")
    second = write_parquet(iter(shuffled), tmp_path / "two.parquet")
    assert read_parquet(first) == whole == list(iter_parquet(first))
    assert sha256_file(first) == sha256_file(second)  # still content-only bytes
    assert pq.ParquetFile(first).num_row_groups == 7
    assert read_rows(first, 6, 5) == whole[6:11]  # across two row groups
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # runs cleaned up


def test_item_files_are_read_each_time_and_count_from_metadata(tmp_path):
    path = write_parquet(ITEMS, tmp_path / "items.parquet")
    stored = ItemFiles([path, path])
    expected = read_parquet(path) * 2
    assert len(stored) == 4 and list(stored) == expected and list(stored) == expected
    assert stored.ids() == [i["id"] for i in expected] and stored[3] == expected[3]


def test_items_so_far_let_a_later_stage_replace_an_earlier_item():
    so_far = ItemsSoFar()
    so_far.add([{"id": "a", "n": 1}, {"id": "b", "n": 1}])
    so_far.add([{"id": "c", "n": 2}])
    assert [(i["id"], i["n"]) for i in so_far] == [("a", 1), ("b", 1), ("c", 2)]
    so_far.add([{"id": "b", "n": 3}])  # b, annotated by a later stage
    assert [(i["id"], i["n"]) for i in so_far] == [("a", 1), ("c", 2), ("b", 3)]
    assert len(so_far) == 3


def test_a_write_sweeps_the_temporaries_of_killed_processes(tmp_path):
    """A SIGKILLed build leaves ``.<name>.<pid>.tmp`` beside what it was writing; the
    next write into that folder removes those of dead processes and keeps a live one's."""
    import subprocess
    import sys

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = tmp_path / f".league.sqlite.{int(gone.stdout)}.tmp"
    journal = dead.with_name(dead.name + "-journal")  # SQLite's, when killed mid-transaction
    live = tmp_path / f".clinic.sqlite.{os.getppid()}.tmp"
    other = tmp_path / ".demo.k3x9.tmp"  # not ours: no process id in its name
    unknown = tmp_path / f".league.sqlite.{int(gone.stdout)}.tmp-other"  # not a side file
    for path in (dead, journal, live, other, unknown):
        path.write_text("partial")
    records.write_json({"a": 1}, tmp_path / "report.json")
    assert not dead.exists() and not journal.exists()
    assert live.exists() and other.exists() and unknown.exists()
    assert records.read_json(tmp_path / "report.json") == {"a": 1}


def test_without_ids_writes_the_bytes_write_parquet_writes_for_the_rest(tmp_path, monkeypatch):
    """The build drops withdrawn items from the candidates file from its stored columns;
    the file must be byte for byte the one writing the remaining items makes, in one
    piece (up to RUN_ROWS items) or merged in row groups (more)."""
    monkeypatch.setattr(records, "RUN_ROWS", 8)
    items = sorted(many(30), key=lambda item: item["id"])
    for dropped in (set(), {items[0]["id"], items[17]["id"]}, {i["id"] for i in items[8:]}):
        rest = [i for i in items if i["id"] not in dropped]
        expected = write_parquet(rest, tmp_path / "expected.parquet")
        path = write_parquet(items, tmp_path / "items.parquet")
        assert without_ids(path, dropped) == path
        assert read_parquet(path) == read_parquet(expected)
        assert sha256_file(path) == sha256_file(expected), len(rest)
    assert pq.ParquetFile(path).num_row_groups == 1  # 8 left: written in one piece
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_row_reader_reads_rows_by_position_and_keeps_the_last_group(tmp_path, monkeypatch):
    """Shards read consecutive rows: the reader decodes a row group once for all the
    shards in it, and still reads any rows asked for, in any order."""
    monkeypatch.setattr(records, "RUN_ROWS", 8)
    path = write_parquet(many(30), tmp_path / "items.parquet")
    whole = read_parquet(path)
    reader = RowReader(path)
    assert reader.starts == [0, 8, 16, 24, 30]
    decoded = []
    read_group = reader.file.read_row_group
    monkeypatch.setattr(
        reader.file, "read_row_group", lambda g, **kw: decoded.append(g) or read_group(g, **kw)
    )
    shards = [reader.rows(start, 3) for start in range(0, 30, 3)]
    assert [i for shard in shards for i in shard] == whole
    assert decoded == [0, 1, 2, 3]  # each group once, though shards 2, 5 and 7 cross two
    assert reader.rows(5, 20) == whole[5:25] and reader.rows(28, 9) == whole[28:]
    assert reader.rows(0, 2) == whole[:2] and reader.rows(30, 4) == []
    assert read_rows(path, 6, 5) == whole[6:11]


class _Counted(dict):
    """An item that counts how many of its kind are alive (a dict cannot be weakly
    referenced, a subclass can)."""

    alive = 0

    def __init__(self, *args):
        super().__init__(*args)
        _Counted.alive += 1

    def __del__(self):
        _Counted.alive -= 1


def test_a_writer_holds_a_batch_of_items_as_dicts_not_runs_of_them(tmp_path, monkeypatch):
    """write_parquet turns items into columns a batch at a time: a stream of large items
    is never held as dicts beyond a batch (it held two runs of them)."""
    monkeypatch.setattr(records, "RUN_ROWS", 64)
    monkeypatch.setattr(records, "BATCH_ROWS", 8)
    most = []

    def stream():
        for item in many(300):
            most.append(_Counted.alive)
            yield _Counted(item)

    stored = write_parquet(stream(), tmp_path / "items.parquet")
    assert max(most) <= 8  # a batch in hand (the one being made is not yet counted)
    assert read_parquet(stored) == read_parquet(write_parquet(many(300), tmp_path / "b.parquet"))


# The candidates' columns before their order came from the item schema (an older work
# folder's candidates.parquet holds them so).
OLDER_ORDER = (
    "id", "db_id", "db_variant", "question", "sql", "dialect", "label", "category", "subtype",
    "explanation", "split", "answer", "spans", "trigger", "edit", "result", "sql_meta",
    "provenance", "review", "candidates", "database", "readings", "tags", "sql_by_dialect",
)  # fmt: skip


def test_a_file_with_the_columns_in_an_older_order_is_read_by_name(tmp_path, monkeypatch):
    """Items files are read by column name, so an earlier version's candidates (the same
    columns in another order) read back as the items they hold, and a rewrite without
    some ids gives what this version writes for the rest."""
    assert set(OLDER_ORDER) == set(records.COLUMNS) and list(OLDER_ORDER) != records.COLUMNS
    items = [complete(item) for item in many(12) + ITEMS]
    for item, n in zip(items, range(len(items)), strict=True):
        item["split"], item["answer"] = f"s{n % 3}", f"answer {n}"
    older = tmp_path / "older.parquet"
    to_frame(items).select(OLDER_ORDER).write_parquet(older)
    assert pq.ParquetFile(older).schema_arrow.names == list(OLDER_ORDER)
    by_id = sorted(items, key=lambda item: item["id"])
    assert read_parquet(older) == list(iter_parquet(older)) == list(ItemFiles([older])) == by_id
    assert read_rows(older, 3, 2) == by_id[3:5]
    monkeypatch.setattr(records, "RUN_ROWS", 4)  # the rewrite merges row groups too
    dropped = {by_id[0]["id"], by_id[7]["id"]}
    expected = write_parquet([i for i in items if i["id"] not in dropped], tmp_path / "new.parquet")
    assert read_parquet(without_ids(older, dropped)) == read_parquet(expected)
    assert sha256_file(older) == sha256_file(expected)


def test_items_are_stored_typed_as_a_release_stores_them(tmp_path):
    """An items file (candidates, a step's output) has the release's typed columns, and
    an item read back gains no struct key it did not have."""
    path = write_parquet(ITEMS, tmp_path / "items.parquet")
    assert pq.read_schema(path).names == list(polars_schema())
    assert pl.read_parquet_schema(path) == dict(polars_schema())
    back = {item["id"]: item for item in read_parquet(path)}
    assert back["a" * 16]["provenance"] == {"generator": "offline_v1"}
    assert back["a" * 16]["spans"] == ITEMS[1]["spans"]


def test_a_step_signature_names_the_items_layout(monkeypatch):
    """A work folder an earlier items layout wrote is not read as this one: the layout is
    part of every step's signature."""
    context = SimpleNamespace(recipe=SimpleNamespace(seed=3))
    now = BuildContext.signature(context, "template_v1", {"a": 1}, ["x"])
    monkeypatch.setattr(pipeline, "ITEMS_LAYOUT", records.ITEMS_LAYOUT - 1)
    assert BuildContext.signature(context, "template_v1", {"a": 1}, ["x"]) != now
