"""A rebuild with nothing changed does no work it did before: the rejects report is
kept as the earlier build wrote it, and written again only when it is not that file;
the build's files are not read again to learn they did not change, yet a change is
noticed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from answerable.kernel import digests
from tests.conftest import DEMO_RECIPE, copy_of_demo_build, run_in

REJECTS = ("reports", "rejects.jsonl")


def _rejects_line(output: str) -> str:
    return re.search(r"^rejects: .*$", output, re.MULTILINE).group(0)


def _rebuilt(demo_build) -> tuple[Path, Path, str]:
    """The demo rebuilt in its folder: ``(folder, its rejects report, output)``."""
    cwd, _first = demo_build
    first = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert first.exit_code == 0, first.output
    return cwd, cwd.joinpath(".answerable", "answerable-demo", *REJECTS), first.output


def test_a_cached_rebuild_keeps_the_rejects_report_it_finds_unchanged(demo_build):
    cwd, report, first = _rebuilt(demo_build)
    written, stamp = report.read_bytes(), report.stat().st_mtime_ns
    again = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert again.exit_code == 0, again.output
    assert report.stat().st_mtime_ns == stamp  # not written again
    assert report.read_bytes() == written
    assert _rejects_line(again.output) == _rejects_line(first)


def test_a_changed_or_unremembered_rejects_report_is_written_again_the_same(demo_build):
    cwd, report, first = _rebuilt(demo_build)
    written = report.read_bytes()
    report.write_bytes(written[: len(written) // 2])  # damaged
    damaged = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert damaged.exit_code == 0, damaged.output
    assert report.read_bytes() == written
    for note in (report.parents[1] / "steps").glob("rejects-*.json"):
        note.unlink()
    forgotten = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert forgotten.exit_code == 0, forgotten.output
    assert report.read_bytes() == written
    assert _rejects_line(forgotten.output) == _rejects_line(first)


def test_a_second_rebuild_reads_none_of_the_files_the_first_hashed(demo_build, monkeypatch):
    """The candidates, the rejects report and the release are known by the hashes an
    earlier build kept for them while their file status is unchanged."""
    cwd, _report, first = _rebuilt(demo_build)
    read = []
    hashed = digests.sha256_file
    monkeypatch.setattr(digests, "sha256_file", lambda path: read.append(path) or hashed(path))
    again = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert again.exit_code == 0, again.output
    assert read == []
    assert again.output == first


def test_a_release_file_changed_in_place_is_noticed_with_its_size_and_time_put_back(
    tmp_path_factory,
):
    cwd, _built = copy_of_demo_build(tmp_path_factory, "changed-release")
    assert run_in(cwd, "-q", "build", DEMO_RECIPE).exit_code == 0  # its hashes kept
    card = next(cwd.glob("releases/*/*/README.md"))
    before, text = card.stat(), card.read_bytes()
    card.write_bytes(text[:-1] + (b"?" if text[-1:] != b"?" else b"!"))  # same size
    os.utime(card, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert card.stat().st_mtime_ns == before.st_mtime_ns
    again = run_in(cwd, "-q", "build", DEMO_RECIPE)
    assert again.exit_code == 1
    assert "README.md: sha256 differs from the manifest" in again.output


def test_kept_hashes_serve_a_file_until_it_is_written_again(tmp_path, monkeypatch):
    file, read = tmp_path / "items.txt", []
    file.write_text("one")
    hashed = digests.sha256_file
    monkeypatch.setattr(digests, "sha256_file", lambda path: read.append(path) or hashed(path))
    known = digests.FileDigests(tmp_path / "digests.json")
    first = known.sha256(file)
    known.save()
    again = digests.FileDigests(tmp_path / "digests.json")
    assert again.sha256(file) == first and len(read) == 1  # kept: not read again
    replacement = tmp_path / "new.txt"
    replacement.write_text("two")  # the same size, renamed into place as the build writes
    os.replace(replacement, file)
    assert again.sha256(file) == hashed(file) != first
    other = tmp_path / "other.txt"
    other.write_text("three")
    fresh = digests.FileDigests(tmp_path / "digests.json")
    fresh.sha256(other)
    fresh.save()  # keeps the files asked for since it was read: the other one only
    assert list(digests.FileDigests(tmp_path / "digests.json").known) == [str(other)]
    (tmp_path / "digests.json").write_text("[damaged")
    assert digests.FileDigests(tmp_path / "digests.json").sha256(file) == hashed(file)


def test_a_no_op_rebuild_imports_no_package_it_does_not_run(demo_build):
    """A rebuild with nothing changed loads its steps' stored outputs: no plotting,
    learning, WordNet, Faker, review server or jsonschema's explaining validator."""
    cwd, _report, _first = _rebuilt(demo_build)
    unused = ["matplotlib", "sklearn", "scipy", "nltk", "inflect", "faker", "argilla"]
    unused += ["jsonschema", "referencing", "pandas"]
    code = (
        "import json, sys\n"
        "from answerable.cli import main\n"
        f"try:\n    main(['-q', 'build', {str(DEMO_RECIPE)!r}])\n"
        "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(unused)!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
