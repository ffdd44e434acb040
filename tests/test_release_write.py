"""The write step: typed data files derived from the item schema, read back by polars,
pandas and Hugging Face datasets without losing a field."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import polars as pl
import pytest

from answerable.kernel.item_model import SchemaShapeError, open_fields, polars_schema
from answerable.kernel.records import read_jsonl
from answerable.kernel.typed_items import to_frame, to_items
from answerable.release.cut.write import read_split, write_data
from answerable.release.reader import count_items
from tests.conftest import REPO
from tests.release_helpers import make_item

REVIEW_ITEMS = REPO / "tests" / "fixtures" / "review" / "items.jsonl"


def _stripped(value):
    """A value with null dict entries left out (how a typed file reads back)."""
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    return value


def _items():
    items = list(read_jsonl(REVIEW_ITEMS))
    items.append(make_item("with-candidates", stratum="answerable-incorrect"))
    return items


def test_nested_fields_are_structs_and_lists_not_json_text():
    schema = polars_schema()
    assert schema["spans"] == pl.List(
        pl.Struct(
            {
                "start": pl.Int64,
                "end": pl.Int64,
                "tag": pl.String,
                "text": pl.String,
                "concept": pl.String,
            }
        )
    )
    assert isinstance(schema["result"], pl.Struct)
    result = {f.name: f.dtype for f in schema["result"].fields}
    assert result["row_count"] == pl.Int64 and result["columns"] == pl.List(pl.String)
    assert result["rows"] == pl.String  # open: cells of any type
    provenance = {f.name: f.dtype for f in schema["provenance"].fields}
    assert provenance["seed"] == pl.Int64 and provenance["params"] == pl.String
    assert isinstance(schema["candidates"], pl.List)
    assert schema["split"] == pl.String


def test_open_fields_are_listed_in_one_place():
    assert open_fields() == [
        "trigger",
        "edit",
        "review",
        "provenance.params",
        "result.rows",
        "readings.rows",
    ]


def test_items_round_trip_through_the_typed_frame():
    items = _items()
    back = to_items(to_frame(items))
    expected = sorted((_stripped(i) for i in items), key=lambda i: i["id"])
    assert [_stripped(i) for i in back] == [
        {"dialect": "sqlite", "spans": [], **i} for i in expected
    ]


def test_a_key_the_schema_does_not_declare_is_an_error_not_a_silent_loss():
    item = make_item("odd")
    item["sql_meta"]["colour"] = "red"
    named = rf"item {item['id']}: sql_meta has key\(s\) \['colour'\]"
    with pytest.raises(SchemaShapeError, match=named):
        to_frame([item])
    item = make_item("odd")
    item["mood"] = "calm"
    with pytest.raises(SchemaShapeError, match="mood"):
        to_frame([item])


def test_an_undeclared_key_inside_a_list_names_the_item_that_holds_it():
    """Items are typed a column at a time, a list's items as one flat column: the error
    still names the item the offending list item came from."""
    items = [make_item(f"fine-{n}") for n in range(3)]
    items[0]["spans"] = [{"start": 0, "end": 4, "tag": "value", "text": "What"}]
    items[2]["spans"] = [dict(items[0]["spans"][0]), {"start": 5, "end": 9, "shade": "red"}]
    named = rf"item {items[2]['id']}: spans has key\(s\) \['shade'\]"
    with pytest.raises(SchemaShapeError, match=named):
        to_frame(items)


def test_a_value_of_another_type_is_cast_as_a_polars_row_casts_it():
    item = make_item("cast")
    item["question"] = 5
    item["provenance"]["seed"] = "9"
    frame = to_frame([item, make_item("plain")])
    assert frame.schema == polars_schema()
    assert frame["question"].to_list()[0] == "5"
    assert frame["provenance"].struct.field("seed").to_list()[0] == 9


def _release(tmp_path):
    items = _items()
    for index, item in enumerate(sorted(items, key=lambda i: i["id"])):
        item["split"] = ("train", "dev", "test")[index % 3]
    files = write_data(to_frame(items), tmp_path, ("parquet", "jsonl"))
    return items, files


def test_one_parquet_and_one_jsonl_per_split(tmp_path):
    items, files = _release(tmp_path)
    paths = [f["path"] for f in files]
    assert paths == [
        f"data/{s}.{f}" for s in ("dev", "test", "train") for f in ("parquet", "jsonl")
    ]
    assert sum(f["rows"] for f in files) == 2 * len(items)
    for split in ("train", "dev", "test"):
        parquet = read_split(tmp_path / "data" / f"{split}.parquet")
        jsonl = read_split(tmp_path / "data" / f"{split}.jsonl")
        assert parquet.schema == polars_schema()
        assert parquet.equals(jsonl)
        assert set(parquet["split"]) == {split}
        assert parquet["id"].is_sorted()


def test_every_jsonl_line_carries_every_field_so_readers_drop_nothing(tmp_path):
    _release(tmp_path)
    path = tmp_path / "data" / "test.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(list(line) == list(polars_schema()) for line in lines)
    provenance = {f.name for f in polars_schema()["provenance"].fields}
    assert all(set(line["provenance"]) == provenance for line in lines)
    # a reader inferring the types sees every column and nested key (a column null in the
    # whole inference window needs infer_schema_length=None, or read_split's schema)
    inferred = pl.read_ndjson(path, infer_schema_length=None)
    assert inferred.columns == list(polars_schema())
    assert {f.name for f in inferred.schema["provenance"].fields} == provenance
    frame = pd.read_json(path, lines=True)
    assert list(frame.columns) == list(polars_schema())


def test_hugging_face_datasets_loads_the_release_with_typed_features(tmp_path):
    datasets = pytest.importorskip("datasets")
    items, _ = _release(tmp_path)
    loaded = datasets.load_dataset(str(tmp_path))
    assert set(loaded) == {"train", "validation", "test"}  # datasets names dev validation
    assert sum(len(part) for part in loaded.values()) == len(items)
    features = loaded["train"].features
    assert set(features["result"]) >= {"row_count", "columns", "rows", "hash"}
    assert features["result"]["row_count"].dtype == "int64"
    assert set(features["provenance"]) >= {"generator", "parent", "seed"}
    row = loaded["test"][0]
    assert isinstance(row["provenance"], dict) and isinstance(row["spans"], list)


def test_the_demo_releases_a_question_split_with_unanswerable_items_only_in_test(demo_build):
    datasets = pytest.importorskip("datasets")
    cwd, _ = demo_build
    release = cwd / "releases" / "answerable-demo" / "0.1.0"
    manifest = json.loads((release / "manifest.json").read_text())
    by_split = manifest["counts"]["by_split"]
    assert set(by_split) == {"train", "dev", "test"}
    assert sum(by_split.values()) == manifest["counts"]["total"]
    loaded = datasets.load_dataset(str(release))
    # The dataset card's configs name each split as the release does (dev, not validation).
    assert {name: len(part) for name, part in loaded.items()} == by_split
    for name in ("train", "dev"):
        assert set(loaded[name]["label"]) == {"answerable"}
    assert "unanswerable" in set(loaded["test"]["label"])
    report = json.loads((release / "report.json").read_text())
    assert set(report) == {"sampling", "splits", "leakage"}
    assert report["splits"]["kind"] == "question"
    assert report["leakage"]["family"] == {"severity": "error", "leaks": 0, "examples": []}
    assert report["leakage"]["same_question"]["leaks"] == 0


def test_the_readme_consumer_runs_a_gold_query_from_the_release_folder_alone(demo_build, tmp_path):
    datasets = pytest.importorskip("datasets")
    from answerable.release.databases import open_item_database

    cwd, _ = demo_build
    release = tmp_path / "copy"
    shutil.copytree(cwd / "releases" / "answerable-demo" / "0.1.0", release)
    demo = datasets.load_dataset(str(release))
    train = pl.read_parquet(release / "data" / "train.parquet")
    hardness = train.select(pl.col("sql_meta").struct.field("hardness"))["hardness"]
    assert set(hardness) <= {"easy", "medium", "hard"} and hardness.null_count() == 0
    answerable = [i for part in demo.values() for i in part if i["label"] == "answerable"]
    edited = [i for i in answerable if i["database"]["delta"]]
    assert edited, "the demo releases answerable items over edited databases (controls)"
    for item in (answerable[0], edited[0]):
        with open_item_database(release, item) as db:
            assert db.execute(item["sql"]).hash == item["result"]["hash"]


def test_the_release_frame_made_a_chunk_at_a_time_is_to_frames(monkeypatch):
    from answerable.kernel import records
    from answerable.release.cut import publish

    items = _items()
    monkeypatch.setattr(publish, "RUN_ROWS", 3)  # several chunks, concatenated
    assert len(items) > 6
    assert publish.items_frame(iter(reversed(items))).equals(to_frame(items))
    assert publish.items_frame(iter(items)).equals(to_frame(items))
    counted = count_items(iter(items))  # one pass over a stream
    assert counted == count_items(list(items)) and counted["total"] == len(items)
    assert list(records.in_chunks(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
