"""A whole frame is written without the spool, to the bytes the spooled chunks give."""

from __future__ import annotations

import polars as pl
import pytest

from answerable.kernel.typed_items import to_frame
from answerable.release.cut import write
from answerable.release.cut.write import write_data
from tests.test_release_bounded import items


def _files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*.*"))}


def test_a_whole_frame_gives_the_files_of_its_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(write, "ROW_GROUP_ROWS", 30)  # splits of one and of several groups
    frame = to_frame(items(100))
    frame = frame.with_columns(
        split=pl.when(pl.int_range(pl.len()) % 5 == 0)
        .then(pl.lit("test"))
        .otherwise(pl.lit("train"))
    )
    chunks = [frame.slice(start, 16) for start in range(0, 100, 16)]
    spooled = write_data(chunks, tmp_path / "chunks", ["parquet", "jsonl"])
    whole = write_data(
        frame.sample(fraction=1.0, shuffle=True, seed=3), tmp_path / "whole", ["parquet", "jsonl"]
    )
    assert whole == spooled
    assert _files(tmp_path / "whole") == _files(tmp_path / "chunks")
    assert not list((tmp_path / "whole").rglob(".spool-*"))


def test_a_builds_chunks_go_to_their_files_without_a_spool(tmp_path, monkeypatch):
    """Chunks are written to their split's files as they come: nothing is written to an
    Arrow spool and read back, and what is written is what a whole frame gives."""
    monkeypatch.setattr(write, "ROW_GROUP_ROWS", 30)
    frame = to_frame(items(100)).with_columns(
        split=pl.when(pl.int_range(pl.len()) % 3 == 0)
        .then(pl.lit("dev"))
        .otherwise(pl.lit("train"))
    )
    whole = write_data(frame, tmp_path / "whole", ["parquet", "jsonl"])

    def no_spool(*_args, **_kwargs):
        raise AssertionError("a chunk was spooled to disk")

    monkeypatch.setattr(pl.DataFrame, "write_ipc", no_spool)
    chunks = [frame.slice(start, 7) for start in range(0, 100, 7)]
    assert write_data(chunks, tmp_path / "chunks", ["parquet", "jsonl"]) == whole
    assert _files(tmp_path / "chunks") == _files(tmp_path / "whole")


def test_a_failed_write_leaves_no_file_behind(tmp_path):
    """Chunks out of id order stop the write: no data file is left, finished or not."""
    frame = to_frame(items(40)).with_columns(split=pl.lit("train"))
    chunks = [frame.slice(20, 20), frame.slice(0, 20)]
    with pytest.raises(ValueError, match="not in id order"):
        write_data(chunks, tmp_path, ["parquet", "jsonl"])
    assert not [p for p in (tmp_path / "data").rglob("*") if p.is_file()]


def test_a_whole_frame_reaches_its_splits_a_slice_at_a_time(tmp_path, monkeypatch):
    """A split's rows are copied out of a whole frame a row group at a time, never the
    whole split at once (at a million items that copy was the write's peak memory)."""
    monkeypatch.setattr(write, "ROW_GROUP_ROWS", 30)
    frame = to_frame(items(100)).with_columns(split=pl.lit("train"))
    added = []
    add = write.SplitFiles.add
    monkeypatch.setattr(
        write.SplitFiles, "add", lambda self, rows: (added.append(rows.height), add(self, rows))[1]
    )
    whole = write_data(frame, tmp_path / "whole", ["parquet", "jsonl"])
    assert added == [30, 30, 30, 10]
    assert whole == write_data([frame], tmp_path / "one", ["parquet", "jsonl"])
