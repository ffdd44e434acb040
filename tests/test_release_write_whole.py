"""A whole frame is written without the spool, to the bytes the spooled chunks give."""

from __future__ import annotations

import polars as pl

from answerable.release import write
from answerable.release.write import to_frame, write_data
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
