"""TrustSQL: the ``trustsql`` export loads in TrustSQL's own scoring code, whose
reliability scores on it equal ``answerable evaluate --profile trustsql``; a schema-only
release (the TrustSQL recipe's) exports every item; the five unanswerable types map to
ours and back."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from answerable.release.export.run import export_release
from answerable.release.export.trustsql import UNANSWERABLE_NOTES, from_trustsql, type_and_note
from answerable.release.reader import database_key, read_items
from answerable.release.whole_copies import write_full_copies
from tests.paper_releases import evaluate_json, load_module, paper_release, reference

__all__ = ["paper_release"]  # the session fixture, used by name

NULL = "null"  # TrustSQL's abstention


def predictions(items: list[dict]) -> dict[str, str | None]:
    """Per item, in turn: the gold SQL, other SQL with the same result, another
    question's SQL on the same database (a wrong answer), an abstention, a syntax error.

    An item whose gold SQL has DISTINCT is abstained on: TrustSQL's code removes DISTINCT
    from the gold SQL of a Spider-style database before running it (its own adjustment,
    not in the paper's text), which changes the gold result it compares with.
    """
    by_database = defaultdict(list)
    for item in items:
        if item["sql"]:
            by_database[database_key(item)].append(item["sql"])
    chosen: dict[str, str | None] = {}
    for n, item in enumerate(sorted(items, key=lambda i: i["id"])):
        gold, others = item["sql"], by_database[database_key(item)] or ["SELECT 1"]
        kind = n % 5
        if gold and "distinct" in gold.lower():
            kind = 3
        if kind == 0:
            chosen[item["id"]] = gold or others[n % len(others)]
        elif kind == 1:
            chosen[item["id"]] = f"SELECT * FROM ({gold or others[0]}) AS same_rows"
        elif kind == 2:
            chosen[item["id"]] = next((sql for sql in others if sql != gold), "SELECT 0")
        elif kind == 3:
            chosen[item["id"]] = None
        else:
            chosen[item["id"]] = "SELEC name FROM"
    return chosen


def trustsql_scores(code, data: list[dict], prediction: dict, db_path: str) -> dict[str, float]:
    """RS(0), RS(10) and RS(N) from TrustSQL's own functions, as its evaluate.py runs them."""
    real_sql, _, real_ans, pred_ans, *_ = code.execute_queries(data, prediction, db_path, 1, 60)
    scores = code.reliability_score(real_ans, pred_ans, gt_sql_dict=real_sql, db_id="others")
    return {
        name: 100.0 * code.penalize(scores, penalty)
        for name, penalty in (("rs_0", 0), ("rs_10", 10), ("rs_n", len(data)))
    }


def test_trustsql_export_and_trustsqls_code_give_the_profiles_scores(demo_build, tmp_path):
    folder = reference("trustsql")
    code = load_module(
        "trustsql_scoring", folder / "scoring_utils.py", folder, folder / "spider_eval"
    )
    release = demo_build[0] / "releases" / "answerable-demo" / "0.1.0"
    items = read_items(release)
    exported = export_release(release, "trustsql", tmp_path / "export")
    assert exported.left_out == []
    data = [r for f in sorted(exported.files) for r in json.loads(exported.files[f])]
    assert len(data) == len(items)

    # TrustSQL opens <db_path>/<db_id>/<db_id>.sqlite: the shipped bases, and whole
    # copies of the edited variants (a variant ships as a delta over its base)
    databases = tmp_path / "databases"
    for base in sorted((release / "databases").glob("*.sqlite")):
        (databases / base.stem).mkdir(parents=True)
        (databases / base.stem / base.name).symlink_to(base)
    for copy in write_full_copies(release, tmp_path / "copies"):
        (databases / copy.stem).mkdir(parents=True, exist_ok=True)
        (databases / copy.stem / copy.name).symlink_to(copy)
    assert code.get_db_id(str(databases)) == "others"  # Spider-style comparison

    chosen = predictions(items)
    theirs = {key: sql or NULL for key, sql in chosen.items()}
    paper = trustsql_scores(code, data, theirs, str(databases))
    ours = tmp_path / "ours.jsonl"
    ours.write_text("".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in chosen.items()))
    report = evaluate_json(tmp_path, release, ours, "--profile", "trustsql")
    assert report["table"]["columns"] == [["RS(0)", "rs_0"], ["RS(10)", "rs_10"], ["RS(N)", "rs_n"]]
    for name, value in paper.items():
        assert report[name] == pytest.approx(value, abs=1e-6), name
    assert report["errors"]  # the syntax errors were scored as errors


@pytest.mark.slow  # builds a paper recipe: minutes on a loaded machine
def test_trustsql_exports_a_schema_only_release_whole(paper_release, tmp_path):
    release = paper_release("trustsql")
    items = read_items(release)
    exported = export_release(release, "trustsql", tmp_path)
    records = [r for f in exported.files.values() for r in json.loads(f)]
    assert exported.left_out == [] and len(records) == len(items)
    wanted = {"id", "db_id", "question", "query", "type", "note", "template"}
    assert all(wanted <= set(r) for r in records)
    kinds = Counter(f"{r['type']}:{r['note']}" for r in records if r["type"] == "inf")
    assert set(kinds) == {f"inf:{note}" for note in UNANSWERABLE_NOTES.values()}
    splits = {name.rsplit("_", 1)[1].removesuffix(".json") for name in exported.files}
    assert splits == {"train", "dev", "test"}


def test_trustsql_unanswerable_types_map_both_ways():
    for ours, note in UNANSWERABLE_NOTES.items():
        assert from_trustsql(note) == ours
        item = {"label": "unanswerable", "category": ours[0], "subtype": ours[1], "sql": None}
        assert type_and_note(item, set()) == ("inf", note)
    assert len(set(UNANSWERABLE_NOTES.values())) == 5  # the paper's five types
