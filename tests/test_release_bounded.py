"""The release chooses its items (sample, split, leakage) on a frame without the fields
those steps never read, then reads those fields for the released items a chunk at a
time and writes them as they come (issue 14, "bounded memory")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from answerable.kernel import records
from answerable.kernel.records import ItemFiles, write_parquet
from answerable.kernel.typed_items import to_frame
from answerable.release.cut import publish, write
from answerable.release.cut.publish import choose, items_frame, left_out_of_choice, prepare_release
from answerable.release.cut.write import read_split, write_data
from answerable.release.documents.card import About
from tests.release_helpers import config, make_item

REPO = Path(__file__).resolve().parents[1]
BULK = "x" * 16_000  # a result cell: the bulk of an item that the choice never reads


def fresh_peak(script: str) -> tuple[int, float]:
    """Run ``script`` in a fresh Python process; it prints a count and its own VmHWM in
    kB (ru_maxrss would start at the forking parent's): the count and the peak in MB."""
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    count, rss_kb = map(int, out.stdout.split())
    return count, rss_kb / 1024


def choice_peak(file: Path, settings: str = "config()", setup: str = "") -> tuple[int, float]:
    """:func:`fresh_peak` of :func:`publish.choose_narrow` on the items of ``file`` (with
    ``settings``, the Python text of a release config, after the lines ``setup``): the
    count of items chosen and the peak in MB."""
    script = f"""
from answerable.kernel.records import ItemFiles
from answerable.release.cut import expressions as keys, publish
from tests.release_helpers import config
{setup}
frame, _ = publish.choose_narrow(ItemFiles([{str(file)!r}]), {settings}, 7, "toy", None)
status = open("/proc/self/status").read()  # this process's own peak
print(frame.height, status.split("VmHWM:")[1].split()[0])
"""
    return fresh_peak(script)


def items(count: int, bulk: str = "x"):
    """``count`` items in families of four, each with a result of one ``bulk`` cell and
    tags (a field a stratum may name)."""
    for n in range(count):
        item = make_item(f"i{n}", parent=f"p{n // 4}", sql=f"SELECT {n}", db_id=f"db{n % 3}")
        item["result"]["rows"] = [[bulk]]
        item["tags"] = [f"t{n % 2}"]
        yield item


@pytest.mark.parametrize(
    "section",
    [
        {"sample": {"share": 0.3}, "split": {"kind": "question"}},
        {"sample": {"count": 20, "strata": ["tags", "db_id"]}, "split": {"kind": "database"}},
        {},
    ],
)
def test_the_choice_without_unread_fields_is_the_choice_on_whole_items(tmp_path, section):
    stored = ItemFiles([write_parquet(items(400), tmp_path / "items.parquet")])
    settings = config(**section)
    whole = prepare_release(items_frame(stored), settings, 7, "toy", None)
    chosen = choose(stored, settings, 7, "toy", None)
    assert chosen[1] == whole[1]
    assert chosen[0].equals(whole[0])
    assert 0 < chosen[0].height < 400 or not section
    # from a list of items too (a review's accepted items)
    listed = choose(list(stored), settings, 7, "toy", None)
    assert listed[0].equals(whole[0]) and listed[1] == whole[1]


def test_a_stratum_keeps_the_field_it_names_in_the_choice():
    assert "tags" in left_out_of_choice(config(sample={"share": 0.5}))
    assert "tags" not in left_out_of_choice(config(sample={"share": 0.5, "strata": ["tags"]}))
    assert left_out_of_choice(config(debias="aflite")) == []


def test_the_release_holds_the_bulk_of_the_released_items_only(tmp_path, monkeypatch):
    """Peak resident memory of choosing 5 % of 500 and of 4,000 items with 16 KB results, in a fresh
    process per run: the growth is well under that of choosing on whole items (which
    holds every result, and copies them)."""

    monkeypatch.setattr(records, "RUN_ROWS", 64)  # row groups as full at both sizes

    def peak(count: int, how: str) -> float:
        file = tmp_path / f"{count}.parquet"
        if not file.exists():
            write_parquet(items(count, BULK), file)
        script = textwrap.dedent(f"""
            from answerable.kernel import records
            from answerable.kernel.records import ItemFiles
            from answerable.release.cut import publish
            from tests.release_helpers import config
            records.BATCH_ROWS = publish.RUN_ROWS = 64  # chunks as full at both sizes
            stored, settings = ItemFiles([{str(file)!r}]), config(sample={{"share": 0.05}})
            if {how!r} == "whole":
                whole = publish.items_frame(stored)
                frame, _ = publish.prepare_release(whole, settings, 7, "toy", None)
            else:
                frame, _ = publish.choose(stored, settings, 7, "toy", None)
            # this process's own peak (ru_maxrss would start at the forking parent's)
            status = open("/proc/self/status").read()
            print(frame.height, status.split("VmHWM:")[1].split()[0])
        """)
        height, megabytes = fresh_peak(script)
        assert 0 < height < count * 0.1
        return megabytes

    whole = peak(4_000, "whole") - peak(500, "whole")
    chosen = peak(4_000, "choose") - peak(500, "choose")
    assert chosen < 0.5 * whole, (chosen, whole)


def test_choose_reads_only_some_columns_for_the_choice(tmp_path, monkeypatch):
    stored = ItemFiles([write_parquet(items(50), tmp_path / "items.parquet")])
    asked = []
    real = {name: getattr(publish, name) for name in ("stored_frames", "stored_chunks")}

    def spy(name):
        def read(items, names):
            asked.append(tuple(names))
            return real[name](items, names)

        return read

    monkeypatch.setattr(ItemFiles, "fields", lambda *_: pytest.fail("read as dicts"))
    for name in real:
        monkeypatch.setattr(publish, name, spy(name))
    settings = config(sample={"share": 0.5})
    chosen, _ = choose(stored, settings, 7, "toy", None)
    assert "result" not in asked[0] and "id" in asked[0]
    assert set(asked[1]) == {"id", *publish.rejoined(settings)}
    assert {"result", "candidates", "provenance"} <= set(asked[1])
    full = write.polars_schema()
    assert len(asked) == 2 and chosen.select(list(full)).schema == full


def test_the_narrow_frame_holds_only_the_parts_the_choice_reads(tmp_path):
    stored = ItemFiles([write_parquet(items(50), tmp_path / "items.parquet")])
    frame = publish.narrow_frame(stored, config(sample={"share": 0.5}))
    assert "params" not in frame.schema["provenance"].to_schema()
    assert frame["candidates"].null_count() == frame["result"].null_count() == 50
    # the skeleton (as long as the SQL) only for a query split or a skeleton check
    assert frame["sql_meta"].null_count() == 50
    for section in ({"split": {"kind": "query"}}, {"leakage": {"same_skeleton": "warn"}}):
        frame = publish.narrow_frame(stored, config(**section))
        assert frame.schema["sql_meta"] == pl.Struct({"skeleton": pl.String})
        assert frame["sql_meta"].struct.field("skeleton").null_count() == 0
    # a stratum adds the part it names; the first candidate's stratum for scare_stratum
    strata = {"share": 0.5, "strata": ["hardness", "scare_stratum"]}
    named = config(sample=strata, split={"kind": "query"})
    schema = publish.narrow_schema(named)
    assert set(schema["sql_meta"].to_schema()) == {"skeleton", "hardness"}
    assert schema["candidates"] == pl.List(pl.Struct({"stratum": pl.String}))
    whole, narrow = items_frame(stored), publish.narrow_frame(stored, named)
    for part in ("skeleton", "hardness"):
        assert narrow["sql_meta"].struct.field(part).equals(whole["sql_meta"].struct.field(part))
    first = whole["candidates"].list.first().struct.field("stratum")
    assert narrow["candidates"].list.first().struct.field("stratum").equals(first)


def _cut(items, out: Path, **section):
    return publish.cut_release(
        items,
        out=out,
        dataset="toy",
        version="1.0.0",
        seed=7,
        recipe_signature="0" * 16,
        inputs=[],
        config=config(**section),
        about=About(description="toy", license="Apache-2.0"),
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("section", [{}, {"sample": {"share": 0.5}, "split": {"kind": "query"}}])
def test_a_release_written_a_chunk_at_a_time_has_the_bytes_of_one_written_whole(
    tmp_path, monkeypatch, section
):
    stored = ItemFiles([write_parquet(items(300), tmp_path / "items.parquet")])
    whole = _cut(stored, tmp_path / "whole", **section)  # 300 items: one chunk
    monkeypatch.setattr(publish, "RUN_ROWS", 16)
    chunked = _cut(stored, tmp_path / "chunked", **section)
    shuffled = _cut(list(stored)[::-1], tmp_path / "listed", **section)  # not in id order
    assert whole.manifest == chunked.manifest == shuffled.manifest
    assert _files(whole.path) == _files(chunked.path) == _files(shuffled.path)
    assert not list(whole.path.rglob(".spool-*"))


def test_a_split_larger_than_a_row_group_is_written_a_row_group_at_a_time(tmp_path, monkeypatch):
    frame = to_frame(items(100)).with_columns(split=pl.lit("train"))
    monkeypatch.setattr(write, "ROW_GROUP_ROWS", 30)
    chunks = [frame.slice(start, 16) for start in range(0, 100, 16)]
    entries = write_data(chunks, tmp_path, ["parquet", "jsonl"])
    assert [(e["path"], e["rows"]) for e in entries] == [
        ("data/train.parquet", 100),
        ("data/train.jsonl", 100),
    ]
    assert pq.ParquetFile(tmp_path / "data/train.parquet").metadata.num_row_groups == 4
    for entry in entries:
        assert read_split(tmp_path / entry["path"]).equals(frame)
    with pytest.raises(ValueError, match="not in id order"):
        write_data(chunks[::-1], tmp_path / "again", ["parquet"])


def test_a_split_of_whole_row_groups_ends_with_no_empty_one(tmp_path, monkeypatch):
    """A split of exactly one row group is written as polars writes the whole frame, and
    one of two row groups has two, not a third empty one."""
    frame = to_frame(items(60)).with_columns(split=pl.lit("train"))
    monkeypatch.setattr(write, "ROW_GROUP_ROWS", 30)
    one = frame.head(30)
    write_data([one.head(16), one.slice(16)], tmp_path / "one", ["parquet"])
    one.write_parquet(tmp_path / "whole.parquet", compression="zstd", statistics=False)
    written = (tmp_path / "one/data/train.parquet").read_bytes()
    assert written == (tmp_path / "whole.parquet").read_bytes()
    write_data([frame], tmp_path / "two", ["parquet"])
    file = pq.ParquetFile(tmp_path / "two/data/train.parquet")
    assert [file.metadata.row_group(g).num_rows for g in range(file.num_row_groups)] == [30, 30]
    assert read_split(tmp_path / "two/data/train.parquet").equals(frame)


def test_the_cut_holds_the_bulk_of_one_chunk_of_released_items(tmp_path, monkeypatch):
    """Peak resident memory of cutting a whole release (every item released, written
    with its documents) of 500 and of 4,000 items with 32 KB results, each in a fresh
    process: the 3,500 items more carry 107 MB of results, and the peak grows by far less
    (the narrow frame of the choice grows with the items; one chunk of results is held).
    The allocators' own noise is ~10 MB either way, whatever the results' size, so the
    results are large enough for a quarter of them to stand well above it."""
    bulky = BULK * 2

    monkeypatch.setattr(records, "RUN_ROWS", 64)  # row groups as full at both sizes

    def peak(count: int) -> float:
        file = tmp_path / f"{count}.parquet"
        write_parquet(items(count, bulky), file)
        script = textwrap.dedent(f"""
            from pathlib import Path
            from answerable.kernel import records
            from answerable.kernel.records import ItemFiles
            from answerable.release.cut import publish, write
            from tests.test_release_bounded import _cut
            records.BATCH_ROWS = publish.RUN_ROWS = write.ROW_GROUP_ROWS = 64
            made = _cut(ItemFiles([{str(file)!r}]), Path({str(tmp_path / str(count))!r}))
            # this process's own peak (ru_maxrss would start at the forking parent's)
            status = open("/proc/self/status").read()
            print(made.manifest["counts"]["total"], status.split("VmHWM:")[1].split()[0])
        """)
        total, megabytes = fresh_peak(script)
        assert total == count
        return megabytes

    bulk = 3_500 * len(bulky) / 2**20
    growth = peak(4_000) - peak(500)
    assert growth < 0.25 * bulk, (growth, bulk)


def test_the_choice_holds_no_candidate_sql(tmp_path):
    """Peak resident memory of the choice alone (:func:`publish.choose_narrow`, every item
    released) of 500 and of 4,000 items, each in a fresh process. Each item carries
    16 KB of candidate SQL, which the choice never reads (a build's largest nested field:
    690 bytes of JSON per item at quota 1000): the 3,500 items more carry 56 MB of it,
    and the peak grows by far less (the narrow frame is made from the Parquet columns it
    reads). Made from the items' dicts, as before, it grew by 150 MB."""
    piece = "x" * 4_000

    def bulky(count: int):
        for item in items(count):
            item["candidates"] = [{"sql": f"SELECT '{piece}'", "stratum": "s"}] * 4
            yield item

    def peak(count: int) -> float:
        height, megabytes = choice_peak(write_parquet(bulky(count), tmp_path / f"{count}.pq"))
        assert height == count
        return megabytes

    bulk = 3_500 * 4 * len(piece) / 2**20
    growth = peak(4_000) - peak(500)
    assert growth < 0.25 * bulk, (growth, bulk)


WORDS = " ".join(f"w{n}" for n in range(400))  # ~2 KB of text


def _bulky(count: int, part: str):
    """:func:`items` with ~4 KB more of ``part``: the question, the SQL, or the stored
    JSON the choice does not keep (generator parameters and the SQL skeleton)."""
    for n, item in enumerate(items(count)):
        if part == "question":
            item["question"] = f"Which {n} {WORDS} {WORDS}?"
        elif part == "sql":
            item["sql"] = f"SELECT '{n} {WORDS} {WORDS}'"
        else:
            item["sql_meta"]["skeleton"] = f"SELECT '{WORDS}'"
            item["provenance"]["params"] = {"text": WORDS}
        yield item


@pytest.mark.parametrize(("part", "bound"), [("question", 2.5), ("sql", 2.5), ("json", 0.8)])
def test_the_choice_holds_its_text_once_and_no_stored_json(tmp_path, monkeypatch, part, bound):
    """Peak resident memory of the choice alone (:func:`publish.choose_narrow`, every item
    released, a question split with its exact-match leakage checks) of 500 and of 4,000
    items, each in a fresh process, each item with 4 KB more of one part. The released
    frame holds the question and the SQL once, and the peak grows by about 1.4 to 1.5
    times their bulk: no second copy is held for every item of the keys the split and
    the leakage checks only compare (hashes made a piece at a time). Of the stored JSON
    (generator parameters; the SQL skeleton, which a question split does not read) the
    choice holds a row group's at a time: about 0.45 times its bulk, the items' other
    fields. With the normalized questions riding along with the frame, every SQL
    normalized at once and the JSON read whole, these grew by 4.6, 3.5 and 1.1 times."""

    monkeypatch.setattr(records, "RUN_ROWS", 256)  # row groups as full at both sizes

    def peak(count: int) -> float:
        file = write_parquet(_bulky(count, part), tmp_path / f"{count}.parquet")
        settings = 'config(split={"kind": "question"}, leakage={"near_question": "off"})'
        pieces = "publish.RUN_ROWS = keys.PIECE_ROWS = 256  # pieces as full at both sizes"
        height, megabytes = choice_peak(file, settings, pieces)
        assert height == count
        return megabytes

    bulk = 3_500 * 2 * len(WORDS) / 2**20
    growth = peak(4_000) - peak(500)
    assert growth < bound * bulk, (growth, bulk, growth / bulk)
