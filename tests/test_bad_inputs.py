# ruff: noqa: E501  (a table reads best one row per line)
"""Every bad input the project has a test for, one row per case, with the one line the
user sees (its stable part) and the test that proves it.

``python -m tests.test_bad_inputs`` prints the table and the count. The tests here keep
the table true: each named test exists, each message is what that test or the code says,
and the hostile SQL rows run here against the SQL gate.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest

from answerable.builders.executor import Limits, ReadOnlyDatabase
from answerable.kernel.errors import SQLError
from tests.test_sql_gate import make_small_db

REPO = Path(__file__).resolve().parents[1]
CODE = ("src", "builders", "annotation", "release")


class Case(NamedTuple):
    area: str
    case: str
    test: str  # file::function
    message: str  # the stable part of the one line the user sees


def sql_case(case: str, test: str, reason: str, sql: str = "", limits: Limits | None = None):
    """A hostile-SQL row; with ``sql`` it also runs here (reason = the reject's reason)."""
    row = Case("hostile SQL", case, test, reason)
    if sql:
        RUNNABLE[case] = (sql, limits or Limits(timeout_s=1.0), reason)
    return row


RUNNABLE: dict[str, tuple[str, Limits, str]] = {}
GATE = "tests/test_sql_gate.py::"
PROBE = GATE + "test_probe_ends_within_twice_the_limit_with_bounded_memory"
REFUSED = GATE + "test_functions_outside_the_allow_list_are_refused"
CAPS = GATE + "test_caps_and_connection_limits_give_named_reasons"
EXE = "tests/test_executor.py::test_refused_statements_leave_the_file_unchanged"
CLI = "tests/test_cli.py::"
SOURCES = "tests/test_sources.py::"
DELIMITED = "tests/test_sources_delimited.py::"
RECIPE = "tests/test_recipe.py::test_config_errors_name_file_key_and_fix"
VARIABLES = "tests/test_recipe_variables.py::"
NAMES = "tests/test_names.py::"
AUTHOR = "tests/test_authoring.py::"
INERT = "tests/test_inert.py::"
TRANSFER = "tests/test_review_transfer.py::"
REVIEW = "tests/test_review_cli.py::"
OS = "tests/test_os_errors.py::"
LIMITS = "tests/test_limits.py::"
ENGINES = "tests/test_engines.py::"
CROSS = "tests/test_crosscheck.py::"
PG = "tests/test_postgres_engine.py::"
PGB = "tests/test_postgres_build.py::"
HARD = "tests/test_hard_limits.py::"
INSIDE = "tests/test_paths_inside.py::"
SECRETS = "tests/test_secrets_masked.py::"
CONTRA = "tests/test_contradictions.py::"
SOUND = "tests/test_source_soundness.py::"
YAML = "tests/test_yaml_input.py::"
RELDB = "tests/test_release_databases.py::"

CASES = [
    # --- hostile SQL (issue 16's security probe and the gate's limits) ---------------------
    sql_case("string-doubling recursive CTE", PROBE, "too-big",
             "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) "
             "SELECT length(s) FROM r"),
    sql_case("printf('%.*c', 2e9, 'x')", PROBE, "too-big", "SELECT printf('%.*c', 2e9, 'x')"),
    sql_case("printf with a 2e9 literal width", PROBE, "too-big",
             "SELECT printf('%2000000000d', 1)"),
    sql_case("zeroblob(400000000)", PROBE, "too-big", "SELECT zeroblob(400000000)"),
    sql_case("fts3_tokenizer leaks a pointer", PROBE, "function-not-allowed",
             "SELECT fts3_tokenizer('simple')"),
    sql_case("fts3_tokenizer plants a pointer", PROBE, "function-not-allowed",
             "SELECT fts3_tokenizer('simple', x'0000000000000000')"),
    sql_case("load_extension", PROBE, "function-not-allowed", "SELECT load_extension('x.so')"),
    sql_case("100 KB cells forever", PROBE, "timeout",
             "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
             "SELECT max(printf('%.*c', 100000, 'x')) FROM r"),
    sql_case("random()", REFUSED, "function-not-allowed", "SELECT random()"),
    sql_case("randomblob()", REFUSED, "function-not-allowed", "SELECT randomblob(8)"),
    sql_case("sqlite_version()", REFUSED, "function-not-allowed", "SELECT sqlite_version()"),
    sql_case("sqlite_compileoption_get()", REFUSED, "function-not-allowed",
             "SELECT sqlite_compileoption_get(0)"),
    sql_case("changes()", REFUSED, "function-not-allowed", "SELECT changes()"),
    sql_case("last_insert_rowid()", REFUSED, "function-not-allowed",
             "SELECT last_insert_rowid()"),
    sql_case("sqlite_source_id()", REFUSED, "function-not-allowed", "SELECT sqlite_source_id()"),
    sql_case("rtreenode()", REFUSED, "function-not-allowed", "SELECT rtreenode(2, x'00')"),
    sql_case("a cell over the cell cap", CAPS, "result-too-large",
             "SELECT printf('%.*c', 2000, 'x')", Limits(cell_bytes=1000)),
    sql_case("kept rows over the result cap", CAPS, "result-too-large",
             "SELECT printf('%.*c', 600, 'x') FROM t", Limits(result_bytes=5000)),
    sql_case("expression 400 deep", CAPS, "too-big", "SELECT " + " + ".join(["1"] * 400)),
    sql_case("100 compound selects", CAPS, "too-big", " UNION ALL ".join(["SELECT 1"] * 100)),
    sql_case("SQL over the SQL length limit", CAPS, "too-big", "SELECT '" + "x" * 2000 + "'",
             Limits(sql_bytes=1000)),
    sql_case("a value over the value limit", CAPS, "too-big", "SELECT length(zeroblob(5000))",
             Limits(value_bytes=4000)),
    sql_case("ATTACH after the gate", GATE + "test_gate_denies_attach_but_keeps_what_our_code_attached_first",
             "not-read-only", "ATTACH DATABASE 'other.db' AS other"),
    sql_case("DROP TABLE", EXE, "not-read-only", "DROP TABLE t"),
    sql_case("DELETE", EXE, "not-read-only", "DELETE FROM t"),
    sql_case("UPDATE", EXE, "not-read-only", "UPDATE t SET id = 1"),
    sql_case("INSERT", EXE, "not-read-only", "INSERT INTO t (id) VALUES (1)"),
    sql_case("a second statement", EXE, "multiple-statements", "SELECT 1; DROP TABLE t"),
    sql_case("WITH ... DELETE", EXE, "not-read-only", "WITH x AS (SELECT 1) DELETE FROM t"),
    sql_case("PRAGMA", EXE, "not-read-only", "PRAGMA journal_mode = DELETE"),
    sql_case("pragma table function", EXE, "not-read-only", "SELECT * FROM pragma_table_info('t')"),
    sql_case("VACUUM", EXE, "not-read-only", "VACUUM"),
    sql_case("unknown column", EXE, "unknown-column", "SELECT nope FROM t"),
    sql_case("unknown table", EXE, "unknown-table", "SELECT * FROM nope"),
    sql_case("unparseable SQL", EXE, "parse-error", "SELECT FROM WHERE"),
    sql_case("a runaway count", "tests/test_executor.py::test_time_limit_stops_a_runaway_query",
             "timeout", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
             "SELECT count(*) FROM c"),
    sql_case("hostile seeds in a build", GATE + "test_hostile_seeds_are_named_rejects_and_the_build_goes_on",
             "function-not-allowed"),
    sql_case("a file that is not SQLite", "tests/test_executor.py::test_not_a_database",
             "not-a-database"),
    # --- names used as paths --------------------------------------------------------------
    Case("names", "db_id ../../outside/secret", NAMES + "test_planted_db_ids_are_rejects_and_nothing_outside_is_opened", "has a path separator"),
    Case("names", "db_id /etc/secret", NAMES + "test_name_problem_names_the_rule", "is an absolute path"),
    Case("names", "db_id C:secret", NAMES + "test_name_problem_names_the_rule", "is an absolute path"),
    Case("names", "db_id ..", NAMES + "test_name_problem_names_the_rule", "is or contains .."),
    Case("names", "db_id with a backslash", NAMES + "test_name_problem_names_the_rule", "has a path separator"),
    Case("names", "db_id with ESC", NAMES + "test_name_problem_names_the_rule", "has a control character"),
    Case("names", "db_id with a newline", NAMES + "test_name_problem_names_the_rule", "has a control character"),
    Case("names", "dataset ../escape", NAMES + "test_recipe_names_used_in_the_release_path", "dataset"),
    Case("names", "dataset /abs", NAMES + "test_recipe_names_used_in_the_release_path", "dataset"),
    Case("names", "version 1.0.0-../x", NAMES + "test_recipe_names_used_in_the_release_path", "version"),
    # --- sources written beside, files replaced -------------------------------------------
    Case("files", "WAL source left -wal/-shm", "tests/test_source_files.py::test_validate_and_build_leave_a_wal_source_folder_as_it_was", "candidates: 1 items"),
    Case("files", "changes still in a -wal", "tests/test_source_files.py::test_changes_still_in_the_wal_are_read_from_a_private_copy", "immutable"),
    Case("files", "demo init over a user's file", "tests/test_overwrite.py::test_demo_init_refuses_to_replace_an_existing_file", "already exists"),
    Case("files", "review export over a user's file", "tests/test_overwrite.py::test_review_export_replaces_an_earlier_export_but_not_a_users_file", "already exists"),
    Case("files", "bio --out over a user's file", "tests/test_overwrite.py::test_bio_replaces_its_own_file_but_not_a_users_file", "--force"),
    Case("files", "a published version rebuilt", CLI + "test_published_version_is_never_rewritten", "already published"),
    # --- authoring errors (exit 1) --------------------------------------------------------
    Case("authoring", "question placeholder missing from the SQL", AUTHOR + "test_template_authoring_errors_exit_1", "questions[0] uses currency"),
    Case("authoring", "SQL placeholder without values", AUTHOR + "test_template_authoring_errors_exit_1", "no values for name"),
    Case("authoring", "template field of the wrong type", AUTHOR + "test_template_authoring_errors_exit_1", "questions"),
    Case("authoring", "template over an unknown db_id", AUTHOR + "test_template_authoring_errors_exit_1", "no source loads database"),
    Case("authoring", "placeholder the SQL does not use", AUTHOR + "test_template_authoring_errors_exit_1", "are not in the SQL"),
    Case("authoring", "template SQL that writes", AUTHOR + "test_template_authoring_errors_exit_1", "must be a query"),
    Case("authoring", "one template id twice", AUTHOR + "test_duplicate_template_ids_exit_1", "used twice"),
    Case("authoring", "two sources with one name", AUTHOR + "test_two_sources_with_the_same_name_exit_1", "is also the name of"),
    Case("recipe", "unknown top-level key", RECIPE, "unknown key"),
    Case("recipe", "unknown source key", RECIPE, "unknown key"),
    Case("recipe", "seed not an integer", RECIPE, "not of type 'integer'"),
    Case("recipe", "no version", RECIPE, "missing key 'version'"),
    Case("recipe", "unknown source format", RECIPE, "is not one of"),
    Case("recipe", "source path not found", RECIPE, "not found"),
    Case("recipe", "source without path", RECIPE, "missing key 'path'"),
    Case("recipe", "jsonl source without databases", RECIPE, "missing key 'databases'"),
    Case("recipe", "demo databases without a demo section", RECIPE, "no 'demo' section"),
    Case("recipe", "recipe not YAML", RECIPE, "not valid YAML: line"),
    Case("recipe", "recipe a list", RECIPE, "must be a mapping"),
    Case("recipe", "recipe file missing", "tests/test_recipe.py::test_missing_recipe_file", "recipe file not found"),
    Case("recipe", "a ${VAR} that is not set", VARIABLES + "test_an_unset_variable_names_file_key_and_variable", "${TINY_DBS} is not set"),
    Case("recipe", "${ANSWERABLE_DATA} outside a checkout, unset", VARIABLES + "test_the_data_root_outside_a_checkout_must_be_set", "is not set"),
    Case("recipe", "a data file missing under ${ANSWERABLE_DATA}", VARIABLES + "test_missing_data_says_which_path_and_where_to_get_it", "get it from"),
    Case("recipe", "the ${ANSWERABLE_DATA} folder missing", VARIABLES + "test_a_missing_data_folder_is_said_so", "the data folder does not exist"),
    Case("recipe", "templates.text2sql file missing", "tests/test_templates_answers.py::test_a_missing_text2sql_file_is_named", "templates.text2sql[0].path: not found"),
    Case("recipe", "template answer text with an unknown placeholder", "tests/test_templates_answers.py::test_a_bad_answer_text_stops_the_build_with_one_line", "answer uses patient"),
    Case("recipe", "unknown review policy", REVIEW + "test_unknown_review_key_names_the_fix", "unanimous"),
    Case("recipe", "Argilla without credentials", REVIEW + "test_argilla_backend_without_credentials_is_a_config_error", "ARGILLA_API_KEY"),
    # --- source files ---------------------------------------------------------------------
    Case("sources", "source file missing", SOURCES + "test_missing_files", "not found"),
    Case("sources", "databases folder missing", SOURCES + "test_missing_databases_folder", "folder not found"),
    Case("sources", "malformed JSONL line", SOURCES + "test_malformed_jsonl_names_the_line", "malformed JSON at column"),
    Case("sources", "malformed JSON file", SOURCES + "test_malformed_json_names_the_position", "malformed JSON at line"),
    Case("sources", "database file not SQLite", SOURCES + "test_not_a_sqlite_file", "not a SQLite database"),
    Case("sources", "db_id without a database file", SOURCES + "test_jsonl_without_database_file", "no SQLite file for db_id"),
    Case("sources", "JSONL line not an object", SOURCES + "test_jsonl_wrong_shape", "expected a JSON object, found a list"),
    Case("sources", "misspelt sql key", SOURCES + "test_jsonl_wrong_shape", "unknown key 'querry'"),
    Case("sources", "line without db_id", SOURCES + "test_jsonl_wrong_shape", "missing key 'db_id'"),
    Case("sources", "question not a string", SOURCES + "test_jsonl_wrong_shape", "expected a string, found an integer"),
    Case("sources", "empty question, duplicate, invalid record", SOURCES + "test_jsonl_rejects_empty_duplicate_and_invalid", "same question and SQL as"),
    Case("sources", "source missing a required key", SOURCES + "test_load_source_names_the_missing_key", "required for format"),
    Case("sources", "TSV without a mapped column", DELIMITED + "test_missing_column_names_the_header_and_fix", "add the column or map"),
    Case("sources", "TSV label not in the category map", DELIMITED + "test_unmapped_category_names_the_row_and_fix", "is not in the category map"),
    Case("sources", "category map to an unknown category", DELIMITED + "test_category_map_to_an_unknown_category_names_the_key", "unknown category"),
    Case("sources", "DDL file that does not parse", DELIMITED + "test_ddl_that_does_not_parse_names_the_file", "the DDL does not parse"),
    Case("sources", "question file without a schema", DELIMITED + "test_question_file_without_a_schema_says_what_to_add", "a question file needs the schema"),
    Case("sources", "a 1 MB question", LIMITS + "test_a_1mb_question_is_rejected_by_the_default_limits", "limits.max_line_bytes (1000000)"),
    Case("sources", "a question past 2,000 characters", LIMITS + "test_default_question_and_sql_limits", "question of 2107 characters"),
    Case("sources", "SQL past its limit", LIMITS + "test_default_question_and_sql_limits", "limits.max_sql_chars (20000)"),
    Case("sources", "limits set in the recipe", LIMITS + "test_the_recipe_sets_the_limits", "limits.max_question_chars (28)"),
    Case("sources", "a UTF-8 BOM", LIMITS + "test_a_utf8_bom_is_read_as_a_bom", "candidates: 1 items"),
    Case("sources", "bad seeds in a build", CLI + "test_bad_seeds_are_rejected_with_reasons_and_the_build_goes_on", "empty-result"),
    Case("sources", "unknown recipe key on the command line", CLI + "test_unknown_recipe_key", "colour"),
    Case("sources", "malformed seed file on the command line", CLI + "test_malformed_seed_file", "line 1"),
    # --- untrusted text -------------------------------------------------------------------
    Case("text", "ESC sequences that clear the screen", INERT + "test_printable_writes_control_characters_out", "\\x1b"),
    Case("text", "ESC ] that sets the terminal title", INERT + "test_review_conflicts_prints_comments_inert", "looks fine\\\\x1b[2J"),
    Case("text", "bidi override", INERT + "test_printable_writes_control_characters_out", "bidi override"),
    Case("text", "=HYPERLINK in a question", INERT + "test_review_export_writes_no_live_formula", "'=HYPERLINK"),
    Case("text", "cells starting with + - @ tab CR", INERT + "test_csv_cells_are_neutralised_and_restored", "csv_cell"),
    Case("text", "a neutralised cell read back", INERT + "test_export_and_import_round_trip_every_cell", "read_rows"),
    Case("text", "user:password in OPENAI_BASE_URL", INERT + "test_an_echoing_model_server_never_puts_the_key_on_screen", "***@"),
    Case("text", "a model server echoing Bearer sk-...", INERT + "test_an_echoing_model_server_never_puts_the_key_on_screen", "SECRETSECRET"),
    Case("text", "a long remote error body", INERT + "test_urls_and_remote_bodies_are_redacted", "more)"),
    # --- review files ---------------------------------------------------------------------
    Case("review", "CSV with an unclosed quote", INERT + "test_an_unclosed_quote_is_one_line_and_records_nothing", "not readable as CSV"),
    Case("review", "same annotator twice in one file", INERT + "test_the_same_annotator_twice_in_one_file_is_named", "already decided"),
    Case("review", "import header without item_id/verdict", TRANSFER + "test_files_that_cannot_be_read_are_refused_whole", "row 1 (header) lacks the column(s)"),
    Case("review", "import file of an unknown format", TRANSFER + "test_files_that_cannot_be_read_are_refused_whole", "unknown format"),
    Case("review", "import file missing", TRANSFER + "test_files_that_cannot_be_read_are_refused_whole", "file not found"),
    Case("review", "import file not UTF-8", TRANSFER + "test_files_that_cannot_be_read_are_refused_whole", "not UTF-8"),
    Case("review", "unknown item id in an import", REVIEW + "test_import_with_bad_rows_exits_1_and_names_them", "unknown item id"),
    Case("review", "relabel to an unknown category", REVIEW + "test_import_with_bad_rows_exits_1_and_names_them", "relabel to unknown category"),
    Case("review", "malformed import file", REVIEW + "test_malformed_import_file_is_a_clean_error", "row 1 (header)"),
    # --- the operating system -------------------------------------------------------------
    Case("os", "a full disk", OS + "test_a_full_disk_is_one_line_and_leaves_no_half_file", "No space left on device"),
    Case("os", "a read-only work folder", OS + "test_a_read_only_folder_is_one_line", "fix:"),
    Case("os", "a read-only release folder", OS + "test_a_read_only_folder_is_one_line", "fix:"),
    Case("os", "an export path that is a folder", OS + "test_a_path_that_is_a_folder_is_one_line", "sheet.csv"),
    Case("os", "a work folder gone read-only (review queue)", OS + "test_a_work_folder_gone_read_only_after_the_build_is_one_line", "queue.sqlite"),
    Case("os", "a file where a folder should be", OS + "test_a_file_where_a_folder_should_be_is_one_line", "taken"),
    # --- PostgreSQL sources (issue 17) -----------------------------------------------------
    Case("postgres", "an unreachable server", PG + "test_unreachable_server", "unreachable"),
    Case("postgres", "a wrong password", PG + "test_wrong_password", "password authentication failed"),
    Case("postgres", "a DSN without a database", PG + "test_dsn_without_a_database", "names no database (fix: add dbname="),
    Case("postgres", "a DSN that does not parse", PG + "test_dsn_that_does_not_parse_is_not_quoted", "does not parse"),
    Case("postgres", "a DSN variable that is not set", PG + "test_dsn_from_the_environment", "is not set"),
    Case("postgres", "a superuser role", PG + "test_a_superuser_is_refused", "is a superuser"),
    Case("postgres", "a table without SELECT", PG + "test_a_table_without_select_is_a_named_reject", "permission denied for table"),
    Case("postgres", "a statement timeout", PG + "test_statement_timeout", "timeout"),
    Case("postgres", "a type the hash does not know", PG + "test_a_type_the_hash_does_not_know_is_a_named_reject", "unhashable-type"),
    Case("postgres", "a schema the role cannot read", PGB + "test_server_source_errors_are_one_line", "holds no table this role can read"),
    Case("postgres", "a SQLite column mixing text and numbers", "tests/test_postgres_tables.py::test_a_column_mixing_text_and_numbers_is_refused_and_nothing_is_left", "no single PostgreSQL type keeps them"),
    Case("postgres", "an export of a type SQLite cannot hold", "tests/test_postgres_tables.py::test_export_refuses_a_type_sqlite_cannot_hold", "cannot hold faithfully"),
    # --- model server ---------------------------------------------------------------------
    Case("model", "401 refusal", "tests/test_drafting_client.py::test_a_refusal_stops_at_once_and_says_what_to_fix", "api_key_env"),
    Case("model", "gives up after retries", "tests/test_drafting_client.py::test_it_gives_up_after_max_retries_and_caches_nothing", "gave up after 3 attempts"),
    # --- engines (issue 17) ---------------------------------------------------------------
    Case("engines", "unknown engine in a source", CROSS + "test_unknown_source_engine_is_one_line", "unknown engine"),
    Case("engines", "unknown engine in execution.cross_check", CROSS + "test_unknown_cross_check_engine_is_one_line", "execution.cross_check"),
    Case("engines", "a DuckDB source without its file", CROSS + "test_a_duckdb_source_without_its_file_is_one_line", "no DuckDB file"),
    Case("engines", "engine: on a format that reads SQLite only", CROSS + "test_engine_on_a_format_that_cannot_read_it_is_one_line", "reads SQLite files only"),
    Case("engines", "counterfactual edits of a server source without scratch_schema", CROSS + "test_counterfactual_parents_on_a_server_without_scratch_schema_are_named_rejects", "fix: add scratch_schema"),
    Case("engines", "a spider source on DuckDB without its file", "tests/test_engine_sources.py::test_a_spider_source_without_a_duckdb_file_is_one_line", "no duckdb file for db_id"),
    Case("engines", "an edit script DuckDB cannot apply", "tests/test_engine_variants.py::test_an_op_on_a_missing_table_or_column_is_a_materialize_error", "materialize-failed"),
    Case("engines", "gold results differ between engines", CROSS + "test_build_rejects_disagreeing_items_with_both_results", "cross-check-disagrees"),
    Case("engines", "an interval in a result", ENGINES + "test_duckdb_values_the_hash_does_not_know_are_a_named_error", "an interval (cast it to text"),
    Case("engines", "an array in a result", ENGINES + "test_duckdb_values_the_hash_does_not_know_are_a_named_error", "an array (unnest it"),
    Case("engines", "JSON, a struct or a map in a result", ENGINES + "test_duckdb_values_the_hash_does_not_know_are_a_named_error", "a JSON object, struct or map"),
    Case("engines", "a numeric a float cannot hold", ENGINES + "test_duckdb_values_the_hash_does_not_know_are_a_named_error", "which a float cannot hold"),
    Case("engines", "a file that is not DuckDB", ENGINES + "test_not_a_duckdb_file", "not a DuckDB database"),
    Case("engines", "DuckDB: DROP, DELETE, UPDATE, INSERT", ENGINES + "test_duckdb_refuses_writes_and_leaves_the_file_unchanged", "not-read-only"),
    Case("engines", "DuckDB: COPY, EXPORT, ATTACH, INSTALL, LOAD", ENGINES + "test_duckdb_connection_refuses_writes_without_our_statement_check", "INSTALL sqlite"),
    Case("engines", "DuckDB: SET, PRAGMA, CHECKPOINT", ENGINES + "test_duckdb_refuses_writes_and_leaves_the_file_unchanged", "SET enable_external_access = true"),
    Case("engines", "DuckDB: read_csv, read_text, glob on a path", ENGINES + "test_duckdb_refuses_writes_and_leaves_the_file_unchanged", "read_csv('/etc/passwd')"),
    Case("engines", "DuckDB: random, uuid, now, nextval", ENGINES + "test_duckdb_refuses_writes_and_leaves_the_file_unchanged", "results differ between runs"),
    Case("engines", "DuckDB: a second statement", ENGINES + "test_duckdb_refuses_writes_and_leaves_the_file_unchanged", "multiple-statements"),
    Case("engines", "DuckDB: a runaway query", ENGINES + "test_duckdb_time_limit_interrupts_a_runaway_query", "query ran past its time limit"),
    # --- hardening, round three: hard limits, paths, secrets, contradictions -------------
    Case("hard limit", "instr() over megabyte strings: one slow SQLite step", HARD + "test_one_slow_engine_step_is_stopped_one_second_past_the_limit", "its worker was stopped"),
    Case("hard limit", "one slow step in another thread", HARD + "test_the_limit_holds_in_other_threads_too", "timeout"),
    Case("hard limit", "slow-step gold SQL in a build", HARD + "test_hostile_seeds_in_a_build_are_named_rejects_within_the_limit", "timeout"),
    Case("hard limit", "24 bare JOINs (exponential parse)", HARD + "test_a_parse_that_grows_exponentially_is_a_named_reject", "too-complex"),
    Case("hard limit", "24 bare JOINs parsed in another thread", HARD + "test_a_parse_in_another_thread_is_bounded_in_the_worker", "too-complex"),
    Case("hard limit", "3,000 nested parentheses", HARD + "test_sql_nested_past_the_recursion_limit_is_a_named_reject", "too-deep"),
    Case("hard limit", "a value past the worker's memory cap", HARD + "test_a_value_past_the_memory_cap_fails_the_statement", "too-big"),
    Case("paths", "db_id ../, ., a/b, ESC in an item", INSIDE + "test_the_item_schema_refuses_a_db_id_that_is_not_a_plain_name", "ESCAPE"),
    Case("paths", "export of a db_id holding ../", INSIDE + "test_export_of_a_tampered_db_id_writes_nothing_outside_out", "is outside"),
    Case("paths", "export over a user's tables.json", INSIDE + "test_export_replaces_a_users_file_only_with_force", "already exists"),
    Case("paths", "evaluate --out over a user's file", INSIDE + "test_evaluate_out_replaces_a_file_only_with_force", "already exists"),
    Case("paths", "a symlinked source database", INSIDE + "test_a_symlinked_source_database_is_refused", "is a symbolic link"),
    Case("options", "evaluate --resamples -5 / 100000000", INSIDE + "test_evaluate_resamples_outside_a_sane_range_is_a_usage_error", "--resamples"),
    Case("options", "review serve --port 99999", INSIDE + "test_review_serve_on_port_99999_is_a_usage_error", "--port"),
    Case("secrets", "a server echoing the key and the Basic header", SECRETS + "test_a_server_that_echoes_the_key_and_the_basic_header_shows_neither", "***"),
    Case("secrets", "a key in no key=... shape", SECRETS + "test_masking_is_by_value_not_by_pattern", "the server said: *** is unknown"),
    Case("contradictions", "same question with and without SQL", CONTRA + "test_the_same_question_with_and_without_sql_is_a_contradiction_naming_both", "contradiction"),
    Case("contradictions", "unanswerable seed whose SQL runs", CONTRA + "test_a_seed_labelled_unanswerable_whose_sql_runs_is_a_mislabel", "mislabel"),
    Case("contradictions", "EHRSQL data.json: an id used twice", SOURCES + "test_ehrsql_an_id_used_for_two_questions_rejects_both_named", "duplicate-id"),
    Case("contradictions", "EHRSQL label.json: a key written twice", SOURCES + "test_ehrsql_an_id_labelled_twice_is_rejected_not_the_last_label_kept", "more than one label"),
    Case("sources", "CSV row with extra fields", DELIMITED + "test_csv_rows_with_extra_fields_or_an_open_quote_are_named_rejects", "more field(s) than the header's"),
    Case("sources", "CSV row with an unterminated quote", DELIMITED + "test_csv_rows_with_extra_fields_or_an_open_quote_are_named_rejects", "a quote opened here is never closed"),
    Case("sources", "a 300,000-character CSV cell", DELIMITED + "test_a_csv_cell_over_the_reader_limit_is_one_reject_and_the_rest_load", "field larger than field limit"),
    Case("sources", "a corrupt source page", SOUND + "test_a_corrupt_source_database_is_refused_with_one_line", "fails PRAGMA integrity_check"),
    Case("sources", "a WAL source with uncheckpointed commits", SOUND + "test_a_source_with_commits_still_in_its_wal_is_refused_before_any_work", "beside it holds changes not yet in the database file"),
    Case("sources", "a WAL-mode source shipped (mode=ro makes -wal/-shm)", SOUND + "test_a_wal_mode_source_is_shipped_in_rollback_journal_mode", "PRAGMA journal_mode = DELETE"),
    Case("sources", "NUL or ESC in a question", SOURCES + "test_questions_with_nul_or_esc_are_named_rejects_never_released", "control-character"),
    Case("yaml", "billion laughs under an unknown key", YAML + "test_hostile_recipe_yaml_is_one_line_with_exit_1", "aliases unroll to more than"),
    Case("yaml", "billion laughs under description:", YAML + "test_hostile_recipe_yaml_is_one_line_with_exit_1", "laughs-description"),
    Case("yaml", "an anchor used inside itself", YAML + "test_hostile_recipe_yaml_is_one_line_with_exit_1", "an anchor is used inside itself"),
    Case("yaml", "two dataset: keys", YAML + "test_hostile_recipe_yaml_is_one_line_with_exit_1", "written twice"),
    Case("yaml", "a template file with a key written twice", YAML + "test_a_template_file_with_a_key_written_twice_is_refused", "written twice"),
    Case("recipe", "release.license: NOT-A-LICENSE", RECIPE, "is not an SPDX license id"),
    Case("recipe", "row_cap: 99999999999999999999", RECIPE, "integer is out of range"),
    Case("paths", "a manifest listing a file outside the release", INSIDE + "test_verify_refuses_a_manifest_listing_a_file_outside_the_release", "is outside the release folder"),
    Case("release", "inspect/audit on a JSONL-only release", RELDB + "test_inspect_and_audit_read_a_release_that_ships_json_lines_only", "a release that ships JSON Lines only"),
    Case("release", "materialize over a non-JSON sidecar", RELDB + "test_a_damaged_sidecar_is_one_line_and_force_remakes_the_copy", "already exists"),
    Case("review", "dave and Dave as two annotators", "tests/test_review_store.py::test_annotator_names_differing_in_case_and_spaces_are_one_annotator", "casefold"),
    Case("review", "a 100,000-deep JSON POST", "tests/test_review_server.py::test_json_nested_100000_deep_is_400_not_500", "JSON nested too deeply"),
    Case("release", "audit when a label's items sit in one family", "tests/test_audit.py::test_a_label_held_by_one_family_is_skipped_not_a_scikit_learn_traceback", "a label's items all fall in one fold"),
    Case("signals", "Ctrl-C during a build with workers", "tests/test_interrupt.py::test_ctrl_c_during_a_build_with_workers_is_one_line_and_exit_130", "interrupted (fix: run the same command again"),
]  # fmt: skip


@cache
def _functions(test_file: str) -> frozenset[str]:
    tree = ast.parse((REPO / test_file).read_text(encoding="utf-8"))
    return frozenset(n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))


@cache
def _code_text() -> str:
    return "\n".join(
        p.read_text(encoding="utf-8") for root in CODE for p in sorted((REPO / root).rglob("*.py"))
    )


def test_the_table_holds_at_least_80_cases_and_no_case_twice():
    assert len(CASES) >= 80
    assert len({(c.area, c.case) for c in CASES}) == len(CASES)


@pytest.mark.parametrize("row", CASES, ids=[f"{c.area}: {c.case}" for c in CASES])
def test_each_row_names_a_real_test_and_its_real_message(row):
    test_file, function = row.test.split("::")
    assert function in _functions(test_file), f"{row.test} does not exist"
    source = (REPO / test_file).read_text(encoding="utf-8")
    assert row.message in source or row.message in _code_text(), row.message


@pytest.fixture(scope="module")
def gate_db(tmp_path_factory):
    return make_small_db(tmp_path_factory.mktemp("bad") / "t.sqlite")


@pytest.mark.parametrize("case", sorted(RUNNABLE))
def test_hostile_sql_rows_end_on_their_reason(gate_db, case):
    sql, limits, reason = RUNNABLE[case]
    with ReadOnlyDatabase(gate_db, limits) as db, pytest.raises(SQLError) as caught:
        db.execute(sql)
    assert caught.value.reason == reason, caught.value


def main() -> None:
    """Print the table and the count."""
    for row in CASES:
        print(f"{row.area:12} {row.case:45} {row.message}   [{row.test}]")
    print(f"{len(CASES)} bad inputs with a test")


if __name__ == "__main__":
    main()
