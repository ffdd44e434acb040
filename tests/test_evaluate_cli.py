"""``answerable evaluate`` end to end: the demo release, the references, and bad input."""

from __future__ import annotations

import json

import pytest

from answerable.kernel.ids import sha256_file
from answerable.release.reader import open_release
from tests.conftest import run_in
from tests.evaluate_helpers import tiny_item, tiny_release, write_lines

TOP_KEYS = [
    "items",
    "ex",
    "jac",
    "ser",
    "rs_0",
    "rs_5",
    "rs_10",
    "rs_n",
    "coverage",
    "pr",
    "cr",
    "ambiguous_f1",
    "unanswerable_f1",
    "abstained",
    "missing",
]


@pytest.fixture(scope="module")
def demo_release(demo_build):
    cwd, _ = demo_build
    return cwd / "releases" / "answerable-demo" / "0.1.0"


@pytest.fixture(scope="module")
def demo_items(demo_release):
    return open_release(demo_release).items


def run_json(tmp_path, *args) -> dict:
    result = run_in(tmp_path, "evaluate", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("mode", ["multiset", "set", "ordered", "ehrsql"])
def test_gold_oracle_is_perfect_on_the_demo_release(tmp_path, demo_release, mode):
    report = run_json(tmp_path, demo_release, "--reference", "gold", "--mode", mode)
    assert report["ex"] == 1.0 and report["jac"] == 1.0 and report["ser"] == 0.0
    assert [report[k] for k in ("rs_0", "rs_5", "rs_10", "rs_n")] == [100.0] * 4
    assert report["coverage"] == 1.0 and report["unanswerable_f1"] == 1.0
    assert report["metrics"]["tag_accuracy"] == 1.0
    assert report["settings"]["mode"] == mode
    # the variants' items ran on the release's deltas over their bases
    assert report["breakdowns"]["generator"]["drop_unused_v1"]["ex"] == 1.0


def test_abstain_all_scores_the_unanswerable_share(tmp_path, demo_release, demo_items):
    test_items = [i for i in demo_items if i["split"] == "test"]
    report = run_json(tmp_path, demo_release, "--reference", "abstain", "--split", "test")
    share = sum(i["label"] != "answerable" for i in test_items) / len(test_items)
    assert report["items"] == len(test_items)
    for key in ("rs_0", "rs_5", "rs_10", "rs_n"):
        assert report[key] == pytest.approx(100 * share, abs=1e-6)
    assert report["references"]["abstain_rs"] == report["rs_0"]
    assert report["ex"] == 0.0 and report["coverage"] == 0.0 and report["ser"] is None
    assert report["abstained"] == len(test_items)


def test_json_report_keys_and_out_file(tmp_path, demo_release):
    out = tmp_path / "report.json"
    report = run_json(tmp_path, demo_release, "--reference", "random", "--out", out)
    assert list(report)[: len(TOP_KEYS)] == TOP_KEYS
    assert json.loads(out.read_text()) == report
    for key in ("ex", "jac", "ser", "coverage", "pr", "cr", "unanswerable_f1"):
        assert 0.0 <= report[key] <= 1.0, key
    assert report["rs_n"] <= report["rs_10"] <= report["rs_5"] <= report["rs_0"] <= 100
    low, high = report["ci95"]["rs_0"]
    assert low <= report["rs_0"] <= high
    assert set(report["breakdowns"]) == {
        "split",
        "database",
        "label",
        "category",
        "hardness",
        "operation",
        "generator",
    }
    # seeded: the same command gives the same report
    assert run_json(tmp_path, demo_release, "--reference", "random") == report


def test_a_prediction_file_with_missing_ids_and_a_table(tmp_path, demo_release, demo_items):
    answerable = [i for i in demo_items if i["label"] == "answerable"][:5]
    path = write_lines(
        tmp_path / "p.jsonl",
        [{"id": i["id"], "sql": i["sql"]} for i in answerable[:3]]
        + [{"id": answerable[3]["id"], "sql": "SELECT 1"}],
    )
    report = run_json(tmp_path, demo_release, path)
    assert report["missing"] == len(demo_items) - 4
    assert answerable[4]["id"] in report["missing_ids"]
    answerable_count = sum(i["label"] == "answerable" for i in demo_items)
    assert report["ex"] == pytest.approx(3 / answerable_count, abs=1e-6)
    table = run_in(tmp_path, "evaluate", demo_release, path)
    assert table.exit_code == 0
    assert "ex: Execution accuracy" in table.output and "rs_n: Reliability score" in table.output
    assert "without a prediction" in table.output and "95% bootstrap interval" in table.output


def one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_predictions_for_another_release(tmp_path, demo_release):
    path = write_lines(tmp_path / "p.jsonl", [{"id": "0123456789abcdef", "sql": "SELECT 1"}])
    line = one_line_error(run_in(tmp_path, "evaluate", demo_release, path))
    assert "1 ids are not items of" in line and "0123456789abcdef" in line


def test_a_file_that_is_not_json(tmp_path, demo_release):
    path = tmp_path / "p.csv"
    path.write_text("id,sql\na,SELECT 1\n")
    assert "line 1: not JSON" in one_line_error(run_in(tmp_path, "evaluate", demo_release, path))


def test_a_line_without_id_and_duplicate_ids(tmp_path, demo_release, demo_items):
    first = demo_items[0]["id"]
    no_id = write_lines(tmp_path / "a.jsonl", [{"id": first}, {"sql": "SELECT 1"}])
    assert "line 2: no id" in one_line_error(run_in(tmp_path, "evaluate", demo_release, no_id))
    twice = write_lines(tmp_path / "b.jsonl", [{"id": first}, {"id": first, "sql": "SELECT 1"}])
    line = one_line_error(run_in(tmp_path, "evaluate", demo_release, twice))
    assert f"id {first} given twice, on lines 1 and 2" in line


def test_a_release_without_databases(tmp_path, demo_release):
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(demo_release, bare, ignore=shutil.ignore_patterns("databases"))
    report = run_json(tmp_path, bare, "--reference", "gold")
    assert report["ex"] is None and report["rs_0"] is None  # execution: not available
    assert report["not_available"]["execution"]["items"] == report["items"]
    assert report["metrics"]["detection_accuracy"] == 1.0
    line = one_line_error(run_in(tmp_path, "evaluate", tmp_path, "--reference", "gold"))
    assert "not a release" in line


def test_usage_errors_are_one_line(tmp_path, demo_release):
    assert "not both or neither" in one_line_error(run_in(tmp_path, "evaluate", demo_release))
    for option, wrong, listed in (
        ("--reference", "best", "'gold', 'abstain', 'random'"),
        ("--mode", "fuzzy", "'multiset', 'set', 'ordered', 'ehrsql'"),
        ("--profile", "spider", "'trustsql', 'ehrsql', 'scare', 'biomedsql', 'naq', 'dte'"),
    ):
        result = run_in(tmp_path, "evaluate", demo_release, "--reference", "gold", option, wrong)
        assert result.exit_code == 2, result.output  # click's usage error, choices listed
        assert f"'{wrong}' is not one of {listed}" in result.output
    line = one_line_error(
        run_in(tmp_path, "evaluate", demo_release, "--reference", "gold", "--split", "holdout")
    )
    assert "no items in split 'holdout'" in line


def test_the_options_choices_are_the_registries():
    from answerable.commands import evaluate as command
    from answerable.release.evaluate import compare, profiles, references

    assert tuple(compare.MODES) == command.MODE_CHOICES
    assert command.REFERENCE_CHOICES == references.REFERENCES
    assert tuple(profiles.PROFILES) == command.PROFILE_CHOICES


def test_writing_and_endless_sql_are_errors_and_the_database_is_unchanged(tmp_path):
    items = [tiny_item(f"q{n}", "SELECT count(*) FROM labs") for n in range(4)]
    release = tiny_release(tmp_path, items)  # 2 s per query
    database = release / "databases" / "tiny.sqlite"
    before = sha256_file(database)
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            {"id": items[0]["id"], "sql": "DELETE FROM labs"},
            {"id": items[1]["id"], "sql": "UPDATE labs SET value = 0"},
            {
                "id": items[2]["id"],
                "sql": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                "SELECT count(*) FROM n",
            },
            {"id": items[3]["id"], "sql": "SELECT count(*) FROM labs; DROP TABLE labs"},
        ],
    )
    report = run_json(tmp_path, release, path)
    assert report["errors"] == {"multiple-statements": 1, "not-read-only": 2, "timeout": 1}
    assert report["ser"] == 1.0 and report["rs_0"] == 0.0
    assert sha256_file(database) == before


def test_the_release_records_its_recipes_limits_and_evaluate_runs_under_them(
    tmp_path, demo_release
):
    """The demo recipe's execution section (2 s, 100 rows) is in the manifest, and the
    report's settings are the manifest's limits."""
    manifest = json.loads((demo_release / "manifest.json").read_text())
    assert manifest["execution"] == {"timeout_s": 2.0, "row_cap": 100}
    report = run_json(tmp_path, demo_release, "--reference", "abstain", "--resamples", 1)
    assert (report["settings"]["timeout_s"], report["settings"]["row_cap"]) == (2.0, 100)


def test_a_query_over_the_releases_time_limit_times_out_unless_an_option_raises_it(tmp_path):
    """A release verified under 0.05 s per query: a query needing far more is a timeout
    there, and runs (to a wrong answer) with ``--timeout 30``; ``--row-cap`` replaces the
    recorded cap."""
    item = tiny_item("How many labs are there?", "SELECT count(*) FROM labs")
    release = tiny_release(tmp_path, [item])
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["execution"] = {"timeout_s": 0.05, "row_cap": 3}
    (release / "manifest.json").write_text(json.dumps(manifest))
    slow = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000)"
        " SELECT count(*) FROM c"
    )
    path = write_lines(tmp_path / "p.jsonl", [{"id": item["id"], "sql": slow}])
    limited = run_json(tmp_path, release, path, "--resamples", 1)
    assert limited["errors"] == {"timeout": 1}
    assert (limited["settings"]["timeout_s"], limited["settings"]["row_cap"]) == (0.05, 3)
    raised = run_json(tmp_path, release, path, "--resamples", 1, "--timeout", 30, "--row-cap", 7)
    assert raised["errors"] == {} and raised["ex"] == 0.0
    assert (raised["settings"]["timeout_s"], raised["settings"]["row_cap"]) == (30.0, 7)
