"""The paper recipes (raw/recipes/<seed>/recipe.yaml) build end to end over the public
data in ../shared/data, and their releases have the composition each paper reports.

Each test builds its recipe once (through the CLI, as a user would) and compares the
release with the paper's own figures; the tolerance is stated beside each check.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from answerable.builders.drafting.text import name_words
from answerable.builders.sources.common import spider_tables
from tests.conftest import REPO, run_in, shared_data
from tests.test_sources_delimited import NAQ_CATEGORIES

RECIPES = REPO / "raw" / "recipes"


def build(name: str, cwd: Path) -> tuple[Path, list[dict]]:
    """Build ``raw/recipes/<name>`` in ``cwd``: the release folder and its items."""
    result = run_in(cwd, "build", RECIPES / name / "recipe.yaml")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("release: "))
    release = Path(line.split()[1])
    items = [
        json.loads(row)
        for path in sorted((release / "data").glob("*.jsonl"))
        for row in path.read_text(encoding="utf-8").splitlines()
    ]
    return release, items


def shares(counter: Counter) -> dict:
    total = sum(counter.values())
    return {key: count / total for key, count in counter.items()}


# ---- OncoMX-NAQ ---------------------------------------------------------------------------

# Query Carefully, Section 3.2.1 (the categories, in the file's words, as the recipe maps
# them) and 3.2.2 ("10 representative examples selected for each category"): exact.


def test_naq_recipe_gives_10_questions_in_each_of_the_8_categories(tmp_path):
    shared_data("querycarefully", "unanswerable_questions.tsv")
    _release, items = build("naq", tmp_path)
    assert len(items) == 80
    assert Counter(i["category"] for i in items) == dict.fromkeys(NAQ_CATEGORIES.values(), 10)
    named = Counter((i["provenance"]["source_category"], i["category"]) for i in items)
    assert named == {pair: 10 for pair in NAQ_CATEGORIES.items()}
    assert {i["split"] for i in items} == {"test"}  # an evaluation set
    assert Counter(i["label"] for i in items) == {"ambiguous": 40, "unanswerable": 40}


# ---- TrustSQL -----------------------------------------------------------------------------

# TrustSQL, Table 1, EHRSQL column: the unanswerable questions by type (934 in all).
TRUSTSQL_EHRSQL_TYPES = {
    ("missing-column", "surface"): 185,
    ("missing-column", "related"): 189,
    ("missing-column", "unrelated"): 187,
    ("out-of-scope", None): 191,  # TrustSQL's non-sql
    ("out-of-domain", None): 182,
}


@pytest.mark.slow
def test_trustsql_recipe_has_the_papers_splits_and_unanswerable_types(tmp_path):
    shared_data("ehrsql2024", "valid_data.json")
    tables = shared_data("spider", "tables.json")
    _release, items = build("trustsql", tmp_path)
    answerable = [i for i in items if i["label"] == "answerable"]
    unanswerable = [i for i in items if i["label"] == "unanswerable"]
    # Section 3.4: answerable questions split 6:2:2 by question; tolerance 2 points each
    # (families and equal questions move as one)
    split = shares(Counter(i["split"] for i in answerable))
    for name, ratio in {"train": 0.6, "dev": 0.2, "test": 0.2}.items():
        assert abs(split[name] - ratio) <= 0.02, split
    # Section 3.4 and Table 1's caption: unanswerable only in test, as many as the
    # answerable test questions: exact
    assert {i["split"] for i in unanswerable} == {"test"}
    assert len(unanswerable) == sum(i["split"] == "test" for i in answerable)
    # Table 1: each type's share within 2 points of the paper's EHRSQL share
    mine = shares(Counter((i["category"], i["subtype"]) for i in unanswerable))
    for kind, share in shares(Counter(TRUSTSQL_EHRSQL_TYPES)).items():
        assert abs(mine.get(kind, 0) - share) <= 0.02, (kind, mine)
    # Section 3.3's definitions: an unrelated column is sampled from another database
    # (here Spider's), a surface column is another table's of the same database
    spider = {
        " ".join(name_words(c[1]))
        for entry in spider_tables(tables).values()
        for c in entry["column_names_original"]
    }
    mimic = next(iter(spider_tables(shared_data("ehrsql2024", "tables.json")).values()))
    columns = {c[1].lower() for c in mimic["column_names_original"]}
    for item in unanswerable:
        column = json.loads(item["trigger"])["text"]  # an open field: JSON text
        if item["subtype"] == "unrelated":
            assert column.replace("_", " ") in spider and column not in columns, item
        if item["subtype"] == "surface":
            assert column in columns, item


# ---- SCARE --------------------------------------------------------------------------------

SCARE_STRATA = ("answerable-correct", "answerable-incorrect", "ambiguous", "unanswerable")
# Section 4.1.2: three kinds of ambiguity and three of unanswerability
SCARE_CATEGORIES = {
    "ambiguous": {"vague-question", "vague-word", "ambiguous-reference"},
    "unanswerable": {"small-talk", "out-of-scope", "missing-column"},
}


def scare_stratum(item: dict) -> str:
    candidates = item.get("candidates") or []
    if item["label"] != "answerable":
        return item["label"]
    return candidates[0]["stratum"]


@pytest.mark.slow
def test_scare_recipe_has_four_equal_strata_per_database(tmp_path):
    shared_data("geoquery", "geography.sqlite")
    _release, items = build("scare", tmp_path)
    # Table 2: the same count in every stratum of every database (350 there; the recipe's
    # count here): exact
    cells = Counter((i["db_id"], scare_stratum(i)) for i in items)
    databases = {db for db, _ in cells}
    assert len(databases) == 3
    assert set(cells) == {(db, s) for db in databases for s in SCARE_STRATA}
    assert len(set(cells.values())) == 1, cells
    # Section 4.1.2: every database holds all six categories in its problem strata
    for db in databases:
        for label, wanted in SCARE_CATEGORIES.items():
            found = {i["category"] for i in items if i["db_id"] == db and i["label"] == label}
            assert found == wanted, (db, label, found)
    # the strata are what their candidate says: a correct one gives the gold result, an
    # incorrect one has one of SCARE's error types
    for item in items:
        first = (item.get("candidates") or [None])[0]
        if scare_stratum(item) == "answerable-correct":
            assert first["result_hash"] == item["result"]["hash"]
        if scare_stratum(item) == "answerable-incorrect" and first["error"] is None:
            assert first["error_type"] in ("T/C", "J/G", "PV", "OL", "OG"), first
    # small talk reads as small talk: no general-knowledge question among them
    for item in items:
        if item["category"] == "small-talk":
            assert json.loads(item["provenance"]["params"])["transform"] == "small_talk"


# ---- without the data ------------------------------------------------------------------


@pytest.mark.parametrize(
    "recipe", sorted(RECIPES.glob("*/recipe.yaml")), ids=lambda p: p.parent.name
)
def test_a_recipe_without_its_data_says_what_is_missing_and_where_to_get_it(
    recipe, tmp_path, monkeypatch
):
    if "${ANSWERABLE_DATA}" not in recipe.read_text(encoding="utf-8"):
        pytest.skip("the recipe reads no public data")
    monkeypatch.setenv("ANSWERABLE_DATA", str(tmp_path / "no-data"))
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 1, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith("error: ") and "Traceback" not in result.output
    assert f"not found: {tmp_path / 'no-data'}/" in line
    assert "the data folder does not exist" in line
    assert "get it from " in line and "export ANSWERABLE_DATA=" in line
