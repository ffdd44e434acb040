"""The README's figures are the demo build's, and it stays short."""

from __future__ import annotations

import json
import re

from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def number(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found, f"not found: {pattern}"
    return int(found.group(1))


def test_the_readme_is_at_most_300_lines():
    assert len(README.splitlines()) <= 300


def test_the_quick_start_counts_are_the_demo_builds(demo_build):
    cwd, result = demo_build
    out = result.output
    manifest = json.loads(
        (cwd / "releases" / "answerable-demo" / "0.1.0" / "manifest.json").read_text()
    )
    counts = manifest["counts"]
    assert number(r"candidates: (\d+) items", README) == number(r"candidates: (\d+) items", out)
    assert number(r"review: (\d+) items await", README) == number(r"review: (\d+) items await", out)
    assert number(r"\(written\): (\d+) items", README) == counts["total"]
    for label, released in counts["by_label"].items():
        assert f"{label} {released}" in README
    splits = counts["by_split"]
    assert number(r"`train` \((\d+) items\)", README) == splits["train"]
    assert number(r"`dev` \((\d+)\)", README) == splits["dev"]
    assert number(r"`test` \((\d+)\)", README) == splits["test"]
    report = json.loads(
        (cwd / "releases" / "answerable-demo" / "0.1.0" / "report.json").read_text()
    )
    test_labels = report["splits"]["counts"]["test"]["by_label"]
    assert number(r"test\s+split holds (\d+) answerable", README) == test_labels["answerable"]
    assert number(r"all (\d+) unanswerable", README) == test_labels["unanswerable"]
    assert test_labels["unanswerable"] == counts["by_label"]["unanswerable"]  # "all"
    page = (REPO / "docs" / "explanation" / "releases-and-splits.md").read_text()
    answerable = report["splits"]["counts"]
    said = re.search(r"(\d+) train, (\d+) dev and (\d+) test answerable items, its (\d+)", page)
    assert said and [int(n) for n in said.groups()] == [
        answerable["train"]["by_label"]["answerable"],
        answerable["dev"]["by_label"]["answerable"],
        test_labels["answerable"],
        test_labels["unanswerable"],
    ]


def test_the_readme_commands_are_the_documented_ones():
    assert (
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[build]' && "
        "answerable build raw/demo/recipe.yaml"
    ) in README
    assert "pip install -e '.[test,ray]' && python -m pytest" in README
    ci = (REPO / ".ci" / "run").read_text()
    for package in ("chromium", "wordnet-base", "wordnet-sense-index", "sqlite3", "postgresql"):
        assert f"missing+=({package})" in ci and f"`{package}`" in README


def test_every_relative_link_of_the_readme_exists():
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README):
        assert (REPO / target).exists(), target
