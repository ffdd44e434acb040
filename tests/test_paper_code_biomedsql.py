"""BiomedSQL: the ``biomedsql`` export is the benchmark table BiomedSQL's own
``analyze_results`` reads, and its EX, Jaccard and syntax error rate on a system's
results equal ``answerable evaluate --profile biomedsql``."""

from __future__ import annotations

import ast
import io
import json

import numpy as np
import pandas as pd
import pytest

from answerable.builders.executor import Limits
from answerable.kernel.errors import SQLError
from answerable.release.databases import open_item_database
from answerable.release.export.biomedsql import result_records
from answerable.release.export.run import export_release
from answerable.release.reader import read_items
from tests.paper_releases import evaluate_json, load_module, paper_release, reference

__all__ = ["paper_release"]  # the session fixture, used by name


def predicted_sql(n: int, item: dict) -> str | None:
    """In turn: the gold SQL, other SQL with the same rows, a wrong answer, an
    abstention, a syntax error."""
    return (
        item["sql"],
        f"SELECT * FROM ({item['sql']}) AS same_rows",
        "SELECT 'no such answer'",
        None,
        "SELEC name FROM",
    )[n % 5]


def system_results(release, items: list[dict]) -> tuple[list[dict], list[dict]]:
    """BiomedSQL's result rows for the predictions (``exec_results`` as records,
    ``sql_ran`` 1, 0 or missing for no SQL), and our prediction lines."""
    theirs, ours = [], []
    for n, item in enumerate(sorted(items, key=lambda i: i["id"])):
        sql = predicted_sql(n, item)
        ours.append({"id": item["id"], "sql": sql})
        ran, records = None, "[]"
        if sql is not None:
            try:
                with open_item_database(release, item, Limits()) as db:
                    result = db.execute(sql)
                ran, records = 1, repr(result_records(result.columns, result.rows))
            except SQLError:
                ran = 0
        theirs.append(
            {
                "uuid": item["id"],
                "exec_results": records,
                "sql_ran": ran,
                "bioscore": n % 4,  # BioScore is not ours to give: any value, not compared
                "total_time": 1.0,
                "input_tokens": 100,
            }
        )
    return theirs, ours


@pytest.mark.slow  # builds a paper recipe: minutes on a loaded machine
def test_biomedsqls_own_metrics_on_the_export_equal_the_biomedsql_profile(
    paper_release, tmp_path, monkeypatch
):
    """BiomedSQL's text and code agree here (SER over every question, a question
    without SQL counted as not run; EX as set equality), so the numbers are equal."""
    monkeypatch.setenv("MPLBACKEND", "Agg")  # its module imports matplotlib
    folder = reference("biomedsql")
    code = load_module("biomedsql_analysis", folder / "utils" / "analysis_utils.py")
    release = paper_release("biomedsql")
    items = read_items(release)
    exported = export_release(release, "biomedsql", tmp_path / "export")
    assert exported.left_out == []
    benchmark = pd.concat(
        [pd.read_csv(tmp_path / "export" / name) for name in sorted(exported.files)]
    )
    assert {"uuid", "answer", "execution_results"} <= set(benchmark.columns)
    assert len(benchmark) == len(items)

    theirs, ours = system_results(release, items)
    # analyze_results as BiomedSQL runs it, up to its metrics (its last step, a
    # DataFrame.drop with both axis and columns, fails on pandas 2): the benchmark's gold
    # records and the system's merged by uuid, both as DataFrames, get_metrics per row
    results = pd.DataFrame(theirs)
    results["sql_ran"] = np.where(results["sql_ran"].isna(), 0, results["sql_ran"])
    merge = benchmark[["uuid", "execution_results"]].merge(results, how="inner", on=["uuid"])
    merge["gold_df"] = merge["execution_results"].apply(ast.literal_eval).apply(pd.DataFrame)
    merge["llm_df"] = merge["exec_results"].apply(ast.literal_eval).apply(pd.DataFrame)
    merge[["ex", "jaccard", "rows"]] = merge.apply(code.get_metrics, axis=1)
    metrics = {
        "ex": merge["ex"].mean(),
        "jaccard_mean": merge["jaccard"].mean(),
        "sql_syntax_error_rate": 1 - results["sql_ran"].mean(),
    }
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in ours))
    report = evaluate_json(tmp_path, release, predictions)  # the release names biomedsql
    assert report["settings"]["profile"] == "biomedsql"
    assert len(merge) == len(items)
    assert report["ex"] == pytest.approx(metrics["ex"], abs=1e-6)
    assert report["jac"] == pytest.approx(metrics["jaccard_mean"], abs=1e-6)
    assert report["ser"] == pytest.approx(metrics["sql_syntax_error_rate"], abs=1e-6)
    assert 0 < report["ex"] < 1


# BiomedSQL, Table 2: its eight SQL categories, which are our operation names as they are
BIOMEDSQL_CATEGORIES = (
    "Select",
    "Distinct",
    "Join",
    "Multi-Filter",
    "Threshold",
    "Calculate",
    "Order-By",
    "Similarity Search",
)


@pytest.mark.slow  # builds a paper recipe: minutes on a loaded machine
def test_biomedsql_sql_categories_map_both_ways(paper_release, tmp_path):
    from answerable.builders.sqlkit.describe import OPERATIONS

    assert set(OPERATIONS) == set(BIOMEDSQL_CATEGORIES)
    exported = export_release(paper_release("biomedsql"), "biomedsql", tmp_path)
    used = {
        name
        for text in exported.files.values()
        for row in pd.read_csv(io.StringIO(text)).itertuples()
        for name in str(row.sql_category).split(";")
        if name != "nan"
    }
    assert used <= set(BIOMEDSQL_CATEGORIES) and len(used) >= 6
