"""Items to and from Parquet and JSON Lines: exact round trips, content-only bytes."""

from __future__ import annotations

from answerable.ids import content_hash, item_id, rng_for, sha256_file
from answerable.records import complete, read_jsonl, read_parquet, write_jsonl, write_parquet

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
