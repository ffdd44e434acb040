"""Prediction files: both layouts, abstentions, and one clear line for each bad file."""

from __future__ import annotations

import json

import pytest

from answerable.kernel.errors import ConfigError
from answerable.release.evaluate.predictions import read_predictions
from tests.evaluate_helpers import write_lines


def test_json_lines_with_every_field(tmp_path):
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            {"id": "a", "sql": "SELECT 1"},
            {"id": "b", "sql": None, "label": "ambiguous", "category": "column-ambiguous"},
            {"id": "c", "sql": "null", "tags": ["O", "B-COL"], "answer": "no such column"},
        ],
    )
    got = read_predictions(path)
    assert list(got) == ["a", "b", "c"]
    assert got["a"].sql == "SELECT 1" and got["a"].predicted_label == "answerable"
    assert got["b"].abstains and got["b"].predicted_label == "ambiguous"
    assert got["b"].category == "column-ambiguous"
    assert got["c"].abstains and got["c"].tags == ("O", "B-COL") and got["c"].line == 3


def test_ehrsql_object_with_null_string_and_null(tmp_path):
    path = tmp_path / "prediction.json"
    path.write_text(json.dumps({"a": "SELECT 1", "b": "null", "c": None}, indent=2))
    got = read_predictions(path)
    assert got["a"].sql == "SELECT 1"
    assert got["b"].abstains and got["c"].abstains


def test_a_single_json_lines_record_is_not_taken_for_an_object(tmp_path):
    path = write_lines(tmp_path / "p.jsonl", [{"id": "a", "sql": "SELECT 1"}])
    assert read_predictions(path)["a"].sql == "SELECT 1"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "a", "sql": "SELECT 1"}', "SELECT 2"], "line 2: not JSON"),
        (['{"id": "a"}', '{"sql": "SELECT 1"}'], "line 2: no id"),
        (['{"id": "a"}', "[1, 2]"], "line 2: not a JSON object"),
        (['{"id": "a"}', '{"id": "b"}', '{"id": "a"}'], "id a given twice, on lines 1 and 3"),
        (['{"id": "a", "label": "maybe"}'], "line 1: /label"),
        (['{"id": "a", "SQL": "SELECT 1"}'], "known keys"),
        (['{"id": "a", "sql": 3}'], "line 1: /sql"),
        (
            [
                '{"id": "a", "bindings": [{"start": 0, "end": 1, "concept": "t.c"}]}',
                '{"id": "b", "bindings": [{"start": -1, "end": 1, "concept": "t.c"}]}',
            ],
            "line 2: /bindings/0/start",
        ),
        (
            [
                '{"id": "a", "bindings": [{"start": 0, "end": 1, "concept": "t.c"}]}',
                '{"id": "b", "bindings": [{"start": 0, "end": 1}]}',
            ],
            "line 2: /bindings/0",
        ),
    ],
)
def test_bad_lines_name_the_line(tmp_path, lines, message):
    path = write_lines(tmp_path / "p.jsonl", lines)
    with pytest.raises(ConfigError, match=message) as caught:
        read_predictions(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_duplicate_id_in_an_object(tmp_path):
    path = tmp_path / "prediction.json"
    path.write_text('{"a": "SELECT 1", "b": "null", "a": "SELECT 2"}')
    with pytest.raises(ConfigError, match="a: id given twice"):
        read_predictions(path)


def test_an_object_value_must_be_sql_or_null(tmp_path):
    path = tmp_path / "prediction.json"
    path.write_text('{"a": 3}')
    with pytest.raises(ConfigError, match="a: value must be SQL text or null"):
        read_predictions(path)


def test_empty_missing_and_binary_files(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(ConfigError, match="no predictions"):
        read_predictions(empty)
    with pytest.raises(ConfigError, match="no such prediction file"):
        read_predictions(tmp_path / "absent.jsonl")
    binary = tmp_path / "p.parquet"
    binary.write_bytes(b"PAR1\xff\xfe\x00")
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_predictions(binary)
