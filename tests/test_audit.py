"""Issue 12: the shortcut audit (scikit-learn baselines grouped by family)."""

from __future__ import annotations

import json
import random

from answerable.kernel.records import ItemFiles, write_jsonl, write_parquet
from answerable.release.cut.audit import audit, family, surface_features
from tests.conftest import DEMO_RECIPE, run_in


def planted(n: int = 120, seed: int = 3) -> list[dict]:
    """Items whose ambiguous questions, and only those, say "that" (a planted shortcut);
    each parent has one answerable and one child item."""
    rng = random.Random(seed)
    nouns = ["patient", "player", "team", "stay", "drug", "match", "season", "coach"]
    items = []
    for k in range(n):
        noun = rng.choice(nouns)
        parent = f"p{k:04d}"
        items.append({"id": parent, "label": "answerable", "question": f"How many {noun}s?"})
        label = "ambiguous" if k % 2 else "unanswerable"
        words = f"Show that {noun} again" if label == "ambiguous" else f"List every {noun} now"
        items.append(
            {
                "id": f"c{k:04d}",
                "label": label,
                "question": words,
                "provenance": {"parent": parent, "generator": f"gen_{label}"},
            }
        )
    return items


def test_a_planted_word_is_found_and_beats_the_majority_class():
    report = audit(planted())
    assert report["majority"]["accuracy"] == 0.5
    assert report["words"]["accuracy"] >= 0.95
    assert "that" in report["words"]["telling"]["ambiguous"]
    assert report["by_generator"]["gen_ambiguous"]["predictable"] >= 0.95
    assert report["families"] == 120  # parent and child share one family


def test_the_audit_is_deterministic_and_reports_surface_features():
    items = planted()
    assert audit(items) == audit(list(reversed(items)))
    assert set(audit(items)["surface"]["features"]) <= {
        "chars",
        "words",
        "numbers",
        "quotes",
        "schema_overlap",
        "schema_size",
        "schema_tables",
        "name_words",
        "shared_heads",
    }


def test_a_large_build_is_audited_on_a_seeded_sample_of_whole_families():
    items = planted(200)  # 400 items in 200 families of two
    report = audit(items, limit=150, seed=5)
    assert report["items"] == 150 and report["families"] == 75  # whole families only
    assert report["sampled"] == {"of": 400, "seed": 5}
    assert report["words"]["accuracy"] >= 0.95  # the planted word is still found
    assert audit(list(reversed(items)), limit=150, seed=5) == report
    assert audit(items, limit=150, seed=6) != report  # another seed, another sample
    assert "sampled" not in audit(items, limit=400)


def test_a_builds_candidates_are_audited_from_their_columns(tmp_path, monkeypatch):
    """Items in Parquet files (a build's candidates) give the report the dicts give, and
    only the sampled ones become rows: no item is decoded whole."""
    items = planted(200)
    items[3]["question"] = ""  # neither kind of item without a question is audited
    items[5] = {**items[5], "provenance": {"parent": "", "generator": ""}}  # its own family
    stored = ItemFiles([write_parquet(items, tmp_path / "candidates.parquet")])
    wanted = {limit: audit(items, limit=limit, seed=5) for limit in (150, 1000)}
    monkeypatch.setattr(ItemFiles, "_read", lambda _self: iter(()))  # decoding gives nothing
    for limit, report in wanted.items():
        assert audit(stored, limit=limit, seed=5) == report
    assert wanted[150]["sampled"] == {"of": 399, "seed": 5}


def test_features_and_families():
    schema = (frozenset({"patients", "age"}), 12)
    assert surface_features("Patients older than 70 in '2021'?", schema) == [
        33.0,
        6.0,  # numbers are words too
        2.0,
        2.0,
        0.166667,  # 'patients' of six words
        12.0,
        0.0,  # a bare (words, columns) pair says nothing of tables or names
        0.0,
        0.0,
    ]
    assert family({"id": "x", "provenance": {"parent": "p"}}) == "p"
    assert family({"id": "x"}) == "x"


def test_too_few_items_or_one_label_is_skipped_with_a_reason():
    assert "skipped" in audit(planted(3))
    one = [i for i in planted() if i["label"] == "answerable"]
    assert audit(one)["skipped"].startswith("fewer than 2 labels")


def test_a_label_held_by_one_family_is_skipped_not_a_scikit_learn_traceback(tmp_path):
    items = [i for i in planted() if i["label"] == "answerable"] + [planted()[1]]
    assert audit(items)["skipped"].startswith("a label's items all fall in one fold")
    write_jsonl(items, tmp_path / "items.jsonl")
    result = run_in(tmp_path, "audit", tmp_path / "items.jsonl")
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "audit skipped: a label's items all fall in one fold" in result.output


def test_audit_command_on_an_items_file_and_a_bad_path(tmp_path):
    file = write_jsonl(planted(), tmp_path / "items.jsonl")
    result = run_in(tmp_path, "audit", file)
    assert result.exit_code == 0, result.output
    assert "majority class (answerable): 0.5" in result.output
    assert "bag-of-words model" in result.output
    bad = run_in(tmp_path, "audit", tmp_path / "absent.jsonl")
    assert bad.exit_code == 1 and bad.output.count("\n") == 1


def test_every_build_writes_the_audit_and_the_command_reads_the_recipe(demo_build):
    cwd, _ = demo_build
    reports = cwd / ".answerable" / "answerable-demo" / "reports"
    report = json.loads((reports / "build.json").read_text())["audit"]
    assert report["items"] > 100 and report["folds"] == 5
    assert report["surface"]["accuracy"] > report["majority"]["accuracy"]
    result = run_in(cwd, "audit", DEMO_RECIPE)
    assert result.exit_code == 0, result.output
    assert json.loads((reports / "audit.json").read_text()) == report


def test_the_surface_model_sees_the_edited_schema_and_the_gain_is_reported():
    """A dropped column is a tell a model sees (one column fewer than the database has),
    though the questions are the same words: the gain says so, and the carrier is named."""
    from answerable.builders.schema import Column, DatabaseSchema, Table

    schema = DatabaseSchema(
        "shop",
        [Table("items", [Column("item_id"), Column("name"), Column("price"), Column("stock")])],
    )
    rng = random.Random(4)
    items = []
    for k in range(80):
        question = f"What is the price of item {rng.randint(1, 9)}?"
        items.append(
            {"id": f"p{k:03d}", "label": "answerable", "question": question, "db_id": "shop"}
        )
        edit = {
            "db_id": "shop",
            "ops": [{"op": "drop_column", "table": "items", "column": "price"}],
        }
        items.append(
            {
                "id": f"c{k:03d}",
                "label": "unanswerable",
                "question": question,
                "db_id": "shop",
                "edit": json.dumps(edit),
                "category": "missing-column",
                "provenance": {"parent": f"x{k:03d}", "generator": "drop_column_v1"},
            }
        )
    report = audit(items, {"shop": schema})
    assert report["surface"]["accuracy"] == 1.0 and report["words"]["accuracy"] <= 0.6
    assert report["shortcut_gain"] == 1.0 == report["surface"]["gain"]
    assert report["carriers"][0] in ("feature schema_size", "feature schema_overlap")
    assert report["by_category"]["missing-column"]["by_surface"] == 1.0
    blind = audit(items, {})  # without the schemas the tell is invisible
    assert blind["shortcut_gain"] <= 0.2
