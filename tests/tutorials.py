"""Run a tutorial page as a reader would: its files written, its commands run in order.

A tutorial (``docs/tutorials/*.md``) is run block by block:

- a code block with a ``title="path"`` writes that file under the tutorial's folder (a
  second block with the same title appends to it, as the text tells the reader to);
- a ``bash`` block runs its lines in order: ``cd DIR`` changes the folder, ``answerable
  ...`` runs the command line in-process (click's runner) and must exit 0;
- a ``python`` block runs in the current folder;
- ``shell``, ``text`` and other blocks are shown to the reader and not run (installing,
  copying the reader's own database: the test does those itself).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from click.testing import CliRunner, Result

from answerable.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```\s*$", re.M | re.S)
TITLE = re.compile(r'title="([^"]+)"')


@dataclass
class Block:
    """One fenced code block: its language, its file title (if any) and its text."""

    language: str
    title: str | None
    text: str


@dataclass
class Run:
    """What running a tutorial did: each command line with its result, in order."""

    folder: Path
    results: list[tuple[str, Result]] = field(default_factory=list)

    def output(self, command: str) -> str:
        """The output of the command line ``command``, else of the last line that starts
        with it."""
        exact = [r.output for line, r in self.results if line == command]
        found = exact or [r.output for line, r in self.results if line.startswith(command)]
        assert found, f"the tutorial never runs {command!r}"
        return found[-1]


def blocks(page: str) -> list[Block]:
    """The fenced code blocks of a tutorial page, in order."""
    text = (DOCS / "tutorials" / page).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        title = TITLE.search(match.group(2))
        found.append(Block(match.group(1), title.group(1) if title else None, match.group(3)))
    return found


def run_tutorial(
    page: str,
    folder: Path,
    env: dict[str, str] | None = None,
    before: dict[str, Callable[[Path], None]] | None = None,
) -> Run:
    """Run every block of ``page`` with ``folder`` as the starting folder.

    ``before`` maps the start of a command line to what a person does before it (an
    annotator's decisions in Argilla's web app): called once, with the current folder.
    """
    run, cwd, written, waiting = Run(folder), folder, set(), dict(before or {})
    old = Path.cwd()
    try:
        for block in blocks(page):
            if block.title:
                path = folder / block.title
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "a" if path in written else "w", encoding="utf-8") as out:
                    out.write(block.text)
                written.add(path)
            elif block.language == "bash":
                for line in _lines(block.text):
                    for start in [s for s in waiting if line.startswith(s)]:
                        waiting.pop(start)(cwd)
                    cwd = _run_line(line, cwd, run, env)
            elif block.language == "python":
                os.chdir(cwd)
                exec(compile(block.text, f"{page} (python block)", "exec"), {})
    finally:
        os.chdir(old)
    return run


def _lines(text: str) -> list[str]:
    lines = [line.split(" #")[0].strip() for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _run_line(line: str, cwd: Path, run: Run, env: dict[str, str] | None) -> Path:
    words = shlex.split(line)
    if words[0] == "cd":
        return cwd / words[1]
    if words[0] == "export":
        return cwd  # the test sets the environment itself
    assert words[0] == "answerable", f"a tutorial line the test cannot run: {line}"
    os.chdir(cwd)
    result = CliRunner().invoke(main, words[1:], env=env)
    assert result.exit_code == 0, f"{line}\n{result.output}"
    run.results.append((line, result))
    return cwd
