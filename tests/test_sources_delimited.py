"""TSV/CSV question sources (column and category maps) and DDL schemas: unit tests, bad
input, the OncoMX-NAQ file end to end and a build over it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from answerable.builders.sources import load_source
from answerable.builders.sources.ddl import ddl_schema
from answerable.builders.sources.delimited import normal_label
from answerable.kernel.errors import ConfigError
from tests.conftest import REPO, run_in, shared_data

STANDIN = REPO / "raw" / "recipes" / "naq" / "oncomx_standin.sql"  # the NAQ recipe's

NAQ_CATEGORIES = {
    "Non-SQL Questions": "out-of-scope",
    "Columns Missing": "missing-column",
    "Value Missing": "missing-value",
    "Out of Domain": "out-of-domain",
    "Column Ambiguous": "column-ambiguous",
    "Value Ambiguous": "value-ambiguous",
    "Contextual Ambiguous": "ambiguous-reference",
    "Operator Ambiguous": "operator-ambiguous",
}
"""OncoMX-NAQ's eight labels, mapped as DESIGN's taxonomy table maps them."""


def spec(path: Path, **extra) -> dict:
    return {
        "name": "naq",
        "format": "tsv",
        "path": str(path),
        "db_id": "oncomx",
        "schema": str(STANDIN),
        "categories": NAQ_CATEGORIES,
        **extra,
    }


def write(tmp_path: Path, text: str, name: str = "q.tsv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def config_error(tmp_path: Path, entry: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        load_source(entry, tmp_path, None)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_labels_match_trimmed_and_case_folded():
    assert normal_label(" Operator  Ambiguous ") == normal_label("operator ambiguous")
    assert normal_label("Value Missing") != normal_label("Values Missing")


def test_rows_keep_their_category_subtype_split_and_label(tmp_path):
    text = (
        "q\tkind\tsub\tpart\tgold\n"
        "Which biomarkers are more reliable?\tOperator Ambiguous \ttone\ttest\t\n"
        "How many diseases are there?\tanswerable\t\tdev\tSELECT count(*) FROM disease\n"
    )
    path = write(tmp_path, text)
    columns = {"question": "q", "category": "kind", "subtype": "sub", "split": "part"}
    entry = spec(path, columns={**columns, "sql": "gold"})
    entry["categories"] = {**NAQ_CATEGORIES, "Answerable": "answerable"}
    data = load_source(entry, tmp_path, None)
    first, second = data.examples
    assert (first["label"], first["category"]) == ("ambiguous", "operator-ambiguous")
    assert (first["subtype"], first["split"], first["sql"]) == ("tone", "test", None)
    assert first["source_category"] == "Operator Ambiguous"
    assert first["external_id"] == "2"
    assert (second["label"], second["category"]) == ("answerable", None)
    assert second["sql"] == "SELECT count(*) FROM disease"
    assert data.notes == [
        f"{path}: category 'Operator Ambiguous ' read as 'Operator Ambiguous' (1 rows)"
    ]
    assert data.databases["oncomx"].path is None  # no stub database: binding only


def test_csv_with_a_tables_json_schema(tmp_path):
    tables = tmp_path / "tables.json"
    entry = {
        "db_id": "shop",
        "table_names_original": ["item"],
        "column_names_original": [[-1, "*"], [0, "id"], [0, "price"]],
        "column_types": ["text", "number", "number"],
        "primary_keys": [1],
        "foreign_keys": [],
    }
    tables.write_text(json.dumps([entry]), encoding="utf-8")
    path = write(
        tmp_path, 'question,sql\n"How many items, in all?",SELECT count(*) FROM item\n', "q.csv"
    )
    source = {
        "name": "shop-q",
        "format": "csv",
        "path": "q.csv",
        "db_id": "shop",
        "tables": "tables.json",
    }
    data = load_source(source, tmp_path, None)
    assert data.examples[0]["question"] == "How many items, in all?"
    assert data.examples[0]["label"] == "answerable"
    assert [t.name for t in data.databases["shop"].schema.tables] == ["item"]
    assert path.is_file()


CSV_SCHEMA = "CREATE TABLE item (id INTEGER PRIMARY KEY, price REAL);\n"


def load_csv(tmp_path: Path, text: str):
    write(tmp_path, CSV_SCHEMA, "shop.sql")
    write(tmp_path, text, "q.csv")
    entry = {"name": "q", "format": "csv", "path": "q.csv", "db_id": "shop", "schema": "shop.sql"}
    return load_source(entry, tmp_path, None)


def malformed(data) -> list[tuple[str, str]]:
    return [(r["external_id"], r["detail"]) for r in data.rejects if r["reason"] == "malformed-row"]


def test_csv_rows_with_extra_fields_or_an_open_quote_are_named_rejects(tmp_path):
    text = (
        "question,sql\n"
        "How many items are there?,SELECT count(*) FROM item\n"
        "What is the top price?,SELECT max(price) FROM item,oops,more\n"
        "What is the lowest price?,SELECT min(price) FROM item\n"
        '"Which items cost more than 3?,SELECT id FROM item WHERE price > 3\n'
        "What is the mean price?,SELECT avg(price) FROM item\n"
    )
    data = load_csv(tmp_path, text)
    assert [e["question"] for e in data.examples] == [
        "How many items are there?",
        "What is the lowest price?",
    ]
    found = malformed(data)
    assert [number for number, _ in found] == ["3", "5"]
    assert "2 more field(s) than the header's 2" in found[0][1]
    assert "line 5: a quote opened here is never closed" in found[1][1]


def test_a_csv_cell_over_the_reader_limit_is_one_reject_and_the_rest_load(tmp_path):
    text = (
        "question,sql\n"
        f"{'x' * 300_000},SELECT 1\n"
        "How many items are there?,SELECT count(*) FROM item\n"
    )
    data = load_csv(tmp_path, text)
    assert [e["question"] for e in data.examples] == ["How many items are there?"]
    assert [(n, "field larger than field limit" in d) for n, d in malformed(data)] == [("2", True)]


def test_ddl_schema_reads_tables_keys_and_foreign_keys():
    schema = ddl_schema(STANDIN, "oncomx")
    edrn = schema.table("biomarker_edrn")
    assert [c.name for c in edrn.columns] == [
        "id",
        "uberon_anatomical_id",
        "qa_state",
        "phase",
        "biomarker_title",
        "biomarker_type",
    ]
    assert ("id", "biomarker", "id") in edrn.foreign_keys
    healthy = schema.table("healthy_expression")
    assert healthy.primary_key == ["ensembl_gene_id", "uberon_anatomical_id"]
    assert schema.table("disease").primary_key == ["id"]


def test_ddl_of_ehrsql_mimic_iv_parses():
    schema = ddl_schema(shared_data("ehrsql2024", "mimic_iv.sql"), "mimic_iv")
    admissions = schema.table("admissions")
    assert admissions.column("hadm_id") is not None
    assert ("subject_id", "patients", "subject_id") in admissions.foreign_keys


# ---- bad input: one line naming the file, row or key and the fix ------------------------


def test_missing_column_names_the_header_and_fix(tmp_path):
    path = write(tmp_path, "question\tkind\nWhy?\tNon-SQL Questions\n")
    message = config_error(tmp_path, spec(path, columns={"category": "category"}))
    assert str(path) in message and "header" in message
    assert "no column 'category' for category (columns: question, kind)" in message
    assert "fix: add the column or map category" in message


def test_unmapped_category_names_the_row_and_fix(tmp_path):
    path = write(tmp_path, "question\tcategory\nWhy?\tNon-SQL Questions\nHm?\tRiddles \n")
    message = config_error(tmp_path, spec(path, columns={"category": "category"}))
    assert f"{path}: row 3" in message
    assert "category 'Riddles' is not in the category map" in message
    assert "fix: add it under categories: of source 'naq'" in message


def test_category_map_to_an_unknown_category_names_the_key(tmp_path):
    path = write(tmp_path, "question\tcategory\nWhy?\tNon-SQL Questions\n")
    entry = spec(path, columns={"category": "category"})
    entry["categories"] = {**NAQ_CATEGORIES, "Non-SQL Questions": "non-sql"}
    message = config_error(tmp_path, entry)
    assert "categories.Non-SQL Questions" in message and "unknown category 'non-sql'" in message
    assert "fix: map it to one of:" in message and "out-of-scope" in message


def test_ddl_that_does_not_parse_names_the_file(tmp_path):
    path = write(tmp_path, "question\nWhy?\n")
    bad = write(tmp_path, "CREATE TABLE t (a INT,, b;\n", "bad.sql")
    message = config_error(tmp_path, spec(path, schema=str(bad)))
    assert str(bad) in message and "the DDL does not parse" in message
    assert "fix: give CREATE TABLE statements" in message


def test_question_file_without_a_schema_says_what_to_add(tmp_path):
    path = write(tmp_path, "question\nWhy?\n")
    entry = spec(path)
    del entry["schema"]
    message = config_error(tmp_path, entry)
    assert "a question file needs the schema" in message and "schema: <DDL file>" in message


def test_bad_tsv_exits_1_with_one_line_from_the_cli(tmp_path):
    write(tmp_path, "question\tcategory\nWhy?\tRiddles\n")
    (tmp_path / "schema.sql").write_text(STANDIN.read_text(encoding="utf-8"), encoding="utf-8")
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        "dataset: t\nversion: 0.1.0\nseed: 1\nsources:\n"
        "  - {name: naq, format: tsv, path: q.tsv, db_id: oncomx, schema: schema.sql,\n"
        "     columns: {category: category}, categories: {Why: out-of-scope}}\n",
        encoding="utf-8",
    )
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 1
    assert "row 2: category 'Riddles' is not in the category map" in result.output
    assert "Traceback" not in result.output


# ---- real data: the 80 OncoMX-NAQ questions ---------------------------------------------


def test_naq_imports_80_questions_10_per_category(tmp_path):
    path = shared_data("querycarefully", "unanswerable_questions.tsv")
    data = load_source(spec(path, columns={"category": "category"}), tmp_path, None)
    assert len(data.examples) == 80 and data.rejects == []
    by_category = Counter(e["category"] for e in data.examples)
    assert by_category == dict.fromkeys(NAQ_CATEGORIES.values(), 10)
    assert Counter(e["source_category"] for e in data.examples) == dict.fromkeys(NAQ_CATEGORIES, 10)
    labels = Counter(e["label"] for e in data.examples)
    assert labels == {"ambiguous": 40, "unanswerable": 40}
    assert all(e["sql"] is None for e in data.examples)
    # the file's labels with trailing spaces are reported, one note per spelling
    assert any(
        "'Operator Ambiguous ' read as 'Operator Ambiguous' (4 rows)" in n for n in data.notes
    )
    assert len(data.notes) == 8


def test_naq_builds_into_items_with_their_source_category(tmp_path):
    naq = shared_data("querycarefully", "unanswerable_questions.tsv")
    recipe = tmp_path / "recipe.yaml"
    categories = "".join(f"      {k}: {v}\n" for k, v in NAQ_CATEGORIES.items())
    recipe.write_text(
        "dataset: naq\nversion: 0.1.0\nseed: 1\nsources:\n"
        f"  - name: naq\n    format: tsv\n    path: {naq}\n    db_id: oncomx\n"
        f"    schema: {STANDIN}\n    columns: {{category: category}}\n    categories:\n"
        + categories,
        encoding="utf-8",
    )
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    assert "read as 'Operator Ambiguous' (4 rows)" in result.output
    lines = (tmp_path / "releases" / "naq" / "0.1.0").rglob("*.jsonl")
    items = [json.loads(line) for f in lines for line in f.read_text(encoding="utf-8").splitlines()]
    items = [i for i in items if "question" in i]
    assert len(items) == 80
    operator = [i for i in items if i["category"] == "operator-ambiguous"]
    assert len(operator) == 10
    assert {i["provenance"]["source_category"] for i in operator} == {"Operator Ambiguous"}
    params = [i["provenance"]["params"] for i in items]  # open field: JSON text in a release
    assert {json.loads(p)["verified_by"] for p in params} == {"none"}
