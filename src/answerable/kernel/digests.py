"""The sha256 of a build's own files, kept by their file status between builds.

A rebuild checks that its candidates, rejects report and release are still the files an
earlier build wrote by their sha256. Reading tens of megabytes to learn they did not
change is most of a rebuild where nothing changed, so, as make and dvc decide, a file
whose size, modification time, inode and status-change time are those it had when it
was hashed keeps that hash; any write changes one of them (the build writes by
renaming a new file into place: a new inode). The hashes are kept in one JSON file
beside the step outputs, those of the last build's files only; a damaged one is hashed
afresh.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "a.txt").write_text("one")
>>> known = FileDigests(folder / "digests.json")
>>> known.sha256(folder / "a.txt") == sha256_file(folder / "a.txt")
True
>>> known.save(); FileDigests(folder / "digests.json").known == known.known
True
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from answerable.kernel.ids import sha256_file
from answerable.kernel.records import write_json


class FileDigests:
    """sha256 of files by path, taken from ``file`` while a file's status is the one it
    had when hashed (see the module's docstring); :meth:`save` keeps them for the next
    build."""

    def __init__(self, file: Path):
        self.file = Path(file)
        self.known = _read(self.file)
        self._used: set[str] = set()  # the keys asked for: the ones kept by save
        self._changed = False

    def sha256(self, path: str | Path) -> str:
        """The sha256 of ``path``'s bytes: kept, or read now and kept."""
        key = str(Path(path).absolute())
        self._used.add(key)
        status = _status(path)
        kept = self.known.get(key)
        if kept is not None and kept[:-1] == status:
            return kept[-1]
        digest = sha256_file(path)
        self.known[key] = [*status, digest]
        self._changed = True
        return digest

    def adopt(self, path: str | Path, digest: str) -> None:
        """Keep ``digest`` as ``path``'s sha256 for its status now: for a file whose
        writer has just hashed what it wrote (a release's files, listed in its manifest)."""
        key = str(Path(path).absolute())
        self._used.add(key)
        self.known[key] = [*_status(path), digest]
        self._changed = True

    def save(self) -> None:
        """Write the hashes of the files asked for (only when one was added, replaced or
        is no longer asked for)."""
        if self._changed or self._used != set(self.known):
            self.known = {key: self.known[key] for key in sorted(self._used)}
            write_json(self.known, self.file)
            self._changed = False


def _status(path: str | Path) -> list[int]:
    stat = os.stat(path)
    return [stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns]


def _read(file: Path) -> dict[str, list]:
    """The kept hashes, or none when the file is missing or not what :meth:`save` wrote."""
    try:
        known = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {k: v for k, v in known.items() if isinstance(v, list) and len(v) == 5}
