"""Review in the build and through ``answerable review``: end to end on a tiny project."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from answerable.kernel.records import read_jsonl, read_parquet
from answerable.release.inspect import load_items
from answerable.release.reader import read_release_manifest as read_manifest
from tests.conftest import REPO, run_in
from tests.review_helpers import fill_sheet
from tests.test_cli import assert_clean_error, seed, tiny_project

REVIEW = textwrap.dedent("""\
    review:
      backend: local
      policy: majority
      min_annotators: 2
    """)
SEEDS = [
    seed("How many items are there?", "SELECT count(*) FROM item"),
    seed("What is the cheapest price?", "SELECT min(price) FROM item"),
    seed("List the names of all items.", "SELECT name FROM item"),
]


@pytest.fixture
def project(tmp_path):
    return tmp_path, tiny_project(tmp_path, SEEDS, extra=REVIEW)


def ids_by_question(cwd) -> dict[str, str]:
    items = read_parquet(cwd / ".answerable" / "tiny" / "candidates.parquet")
    return {i["question"]: i["id"] for i in items}


def decide(cwd, recipe, annotator: str, verdicts: dict[str, dict]):
    """Export, fill the rows of ``verdicts`` (question -> cells) and import as ``annotator``."""
    sheet = cwd / f"{annotator}.csv"
    result = run_in(cwd, "review", "export", recipe, sheet, "--annotator", annotator)
    assert result.exit_code == 0, result.output
    fill_sheet(sheet, verdicts, key="question")
    result = run_in(cwd, "review", "import", recipe, sheet, "--annotator", annotator)
    assert result.exit_code == 0, result.output
    return result


def test_review_from_queue_to_release(project):
    cwd, recipe = project
    release = cwd / "releases" / "tiny" / "0.1.0"

    built = run_in(cwd, "build", recipe)
    assert built.exit_code == 0, built.output
    assert "candidates: 3 items" in built.output
    assert "3 open, 0 in conflict" in built.output
    assert (
        f"release: not cut: 3 items await review; open the review page with "
        f"`answerable review serve {recipe}`, then build again" in built.output
    )
    assert not release.exists()

    ids = ids_by_question(cwd)
    count, cheapest, names = SEEDS[0]["question"], SEEDS[1]["question"], SEEDS[2]["question"]
    vague = {"verdict": "relabel", "new_category": "vague-question"}
    decide(
        cwd,
        recipe,
        "ana",
        {count: vague, cheapest: {"verdict": "accept"}, names: {"verdict": "reject"}},
    )
    decide(
        cwd,
        recipe,
        "ben",
        {
            count: vague,
            cheapest: {"verdict": "reject"},
            names: {"verdict": "reject", "comment": "too broad"},
        },
    )

    conflicts = run_in(cwd, "review", "conflicts", recipe)
    assert conflicts.exit_code == 0, conflicts.output
    assert "1 items in conflict" in conflicts.output
    assert ids[cheapest] in conflicts.output
    assert "ana: accept" in conflicts.output and "ben: reject" in conflicts.output

    progress = run_in(cwd, "review", "progress", recipe)
    assert "1 accepted, 1 rejected" in progress.output.replace("0 open, 1 conflict, ", "")
    assert "Cohen's kappa ana/ben" in progress.output

    again = run_in(cwd, "build", recipe)
    assert "release: not cut: 1 items await review" in again.output

    decide(cwd, recipe, "cy", {cheapest: {"verdict": "accept"}})
    final = run_in(cwd, "build", recipe)
    assert final.exit_code == 0, final.output
    assert "2 accepted (0 auto), 1 rejected, 0 open, 0 in conflict" in final.output
    manifest = read_manifest(release)
    assert manifest["counts"]["total"] == 2
    assert manifest["counts"]["by_label"] == {"ambiguous": 1, "answerable": 1}
    released = {i["question"]: i for i in load_items(release)}
    assert released[count]["category"] == "vague-question"
    assert released[count]["review"]["relabeled_from"] == {"label": "answerable", "category": None}
    assert [d["annotator"] for d in released[cheapest]["review"]["decisions"]] == [
        "ana",
        "ben",
        "cy",
    ]
    rejects = list(read_jsonl(cwd / ".answerable" / "tiny" / "reports" / "rejects.jsonl"))
    assert [(r["id"], r["reason"]) for r in rejects] == [(ids[names], "rejected-in-review")]
    report = json.loads((cwd / ".answerable" / "tiny" / "reports" / "review.json").read_text())
    assert report["counts"]["accepted"] == 2 and report["decisions"] == 7


def test_demo_build_auto_accepts_machine_verified_items(demo_build):
    tmp_path, built = demo_build
    accepted = re.search(r"(\d+) accepted \((\d+) auto\), 0 rejected, (\d+) open", built.output)
    assert accepted and accepted[1] == accepted[2] and int(accepted[3]) > 0, built.output
    # The drafted items await review, and the demo releases what is accepted so far.
    assert f"{accepted[3]} items await review" in built.output
    assert "answerable review serve" in built.output
    items = load_items(tmp_path / "releases" / "answerable-demo" / "0.1.0")
    assert len(items) == int(accepted[1])
    assert all(i["review"]["reason"].startswith("auto-accepted: ") for i in items)


def test_release_is_held_while_items_await_review_unless_the_recipe_says_otherwise(project):
    cwd, recipe = project
    held = run_in(cwd, "build", recipe)
    assert held.exit_code == 0, held.output
    assert "release: not cut:" in held.output
    assert not (cwd / "releases").exists()
    recipe.write_text(recipe.read_text().replace("review:\n", "review:\n  hold_release: false\n"))
    released = run_in(cwd, "build", recipe)
    # nothing is accepted yet, so the release would be empty: an error, and no version used
    assert released.exit_code == 1, released.output
    assert "no items to release, nothing published" in released.output
    assert not (cwd / "releases" / "tiny" / "0.1.0").exists()


def test_review_help_lists_the_commands():
    result = run_in(REPO, "review", "--help")
    assert result.exit_code == 0
    for command in ("serve", "export", "import", "conflicts", "progress"):
        assert command in result.output


def test_serve_with_an_empty_queue_says_to_build_first(project):
    cwd, recipe = project
    assert_clean_error(run_in(cwd, "review", "serve", recipe), "queue is empty", "answerable build")


def test_import_with_bad_rows_exits_1_and_names_them(project):
    cwd, recipe = project
    assert run_in(cwd, "build", recipe).exit_code == 0
    sheet = cwd / "sheet.csv"
    ids = ids_by_question(cwd)
    sheet.write_text(
        "item_id,annotator,verdict,new_category\n"
        f"{ids[SEEDS[0]['question']]},ana,accept,\n"
        "0123456789abcdef,ana,accept,\n"
        f"{ids[SEEDS[1]['question']]},ana,relabel,sort-of-vague\n"
    )
    result = run_in(cwd, "review", "import", recipe, sheet)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "1 decisions recorded" in result.output and "2 rows not recorded" in result.output
    assert "row 3: unknown item id '0123456789abcdef'" in result.output
    assert "row 4: relabel to unknown category 'sort-of-vague'" in result.output
    again = run_in(cwd, "review", "import", recipe, sheet)
    assert "0 decisions recorded, 1 already recorded" in again.output


def test_malformed_import_file_is_a_clean_error(project):
    cwd, recipe = project
    assert run_in(cwd, "build", recipe).exit_code == 0
    sheet = cwd / "sheet.csv"
    sheet.write_text("id;decision\n1;accept\n")
    assert_clean_error(run_in(cwd, "review", "import", recipe, sheet), "row 1 (header)", "fix:")


def test_argilla_backend_without_credentials_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.delenv("ARGILLA_API_URL", raising=False)
    monkeypatch.delenv("ARGILLA_API_KEY", raising=False)
    recipe = tiny_project(tmp_path, SEEDS, extra="review:\n  backend: argilla\n")
    result = run_in(tmp_path, "build", recipe)
    assert_clean_error(result, "review.backend", "ARGILLA_API_URL", "ARGILLA_API_KEY")
    serve = run_in(tmp_path, "review", "serve", recipe)
    assert_clean_error(serve, "reviews in Argilla", "backend: local")


def test_unknown_review_key_names_the_fix(tmp_path):
    recipe = tiny_project(tmp_path, SEEDS, extra="review:\n  policy: loudest\n")
    assert_clean_error(run_in(tmp_path, "build", recipe), "review.policy", "unanimous")


SPOT = textwrap.dedent("""\
    review:
      backend: local
      policy: single
      auto_accept: [seed_v1]
      spot_check: 0.5
    drafting:
      categories: [vague-question, vague-word, missing-column, out-of-scope, out-of-domain]
      per_item: 1
    """)


def queued_by_build(cwd) -> int:
    pushed = json.loads((cwd / ".answerable" / "tiny" / "reports" / "review.json").read_text())
    return pushed["pushed"]["added"] + pushed["pushed"]["updated"] + pushed["pushed"]["unchanged"]


def progress_count(cwd, recipe) -> int:
    shown = run_in(cwd, "review", "progress", recipe)
    assert shown.exit_code == 0, shown.output
    return int(re.match(r"(\d+) items in the queue", shown.output).group(1))


def test_a_rebuild_with_another_seed_retires_what_is_no_longer_a_candidate(tmp_path):
    from answerable.annotation.store import LocalQueue, store_path

    recipe = tiny_project(tmp_path, SEEDS, extra=SPOT)
    assert run_in(tmp_path, "build", recipe, "--no-release").exit_code == 0
    first = {i["id"] for i in read_parquet(tmp_path / ".answerable/tiny/candidates.parquet")}
    assert progress_count(tmp_path, recipe) == queued_by_build(tmp_path)
    sheet = tmp_path / "all.csv"
    run_in(tmp_path, "review", "export", recipe, sheet)
    decided = {row["item_id"] for row in read_csv_rows(sheet)}
    fill_sheet(sheet, {i: {"verdict": "accept"} for i in decided})
    assert run_in(tmp_path, "review", "import", recipe, sheet, "--annotator", "ana").exit_code == 0

    text = recipe.read_text().replace("seed: 1", "seed: 2").replace("0.1.0", "0.2.0")
    recipe.write_text(text)
    rebuilt = run_in(tmp_path, "build", recipe, "--no-release")
    assert rebuilt.exit_code == 0, rebuilt.output
    second = {i["id"] for i in read_parquet(tmp_path / ".answerable/tiny/candidates.parquet")}
    gone = first - second
    assert gone, "another seed drafts other questions"
    assert f"review: {len(gone)} queued items are no longer candidates: retired" in rebuilt.output
    assert progress_count(tmp_path, recipe) == queued_by_build(tmp_path)
    run_in(tmp_path, "review", "export", recipe, sheet, "--all")
    exported = {row["item_id"] for row in read_csv_rows(sheet)}
    assert exported and not exported & gone
    with LocalQueue(store_path(tmp_path / ".answerable", "tiny")) as queue:
        assert gone & decided  # decisions were made on items that are now retired
        assert gone & decided <= {d["item_id"] for d in queue.history()}  # the trail keeps them
        assert not {d["item_id"] for d in queue.pull()} & gone


def test_a_rejected_spot_check_is_reported_with_its_generator(tmp_path):
    recipe = tiny_project(tmp_path, SEEDS, extra=SPOT)
    built = run_in(tmp_path, "build", recipe, "--no-release")
    report = json.loads((tmp_path / ".answerable/tiny/reports/review.json").read_text())
    assert report["spot_checks"]["seed_v1"]["sampled"] == 2  # ceil(0.5 * 3 seeds)
    assert "3 accepted (3 auto)" in built.output  # a spot check does not hold an item back
    items = read_parquet(tmp_path / ".answerable/tiny/candidates.parquet")
    seeds = {i["id"] for i in items if i["provenance"]["generator"] == "seed_v1"}
    sheet = tmp_path / "all.csv"
    run_in(tmp_path, "review", "export", recipe, sheet)
    checked = [row["item_id"] for row in read_csv_rows(sheet) if row["item_id"] in seeds]
    assert len(checked) == 2
    fill_sheet(sheet, {checked[0]: {"verdict": "reject"}, checked[1]: {"verdict": "accept"}})
    assert run_in(tmp_path, "review", "import", recipe, sheet, "--annotator", "ana").exit_code == 0
    rebuilt = run_in(tmp_path, "build", recipe, "--no-release")
    assert (
        f"review: spot check: 1 of 2 checked items of seed_v1 rejected ({checked[0]})"
        in rebuilt.output
    )
    report = json.loads((tmp_path / ".answerable/tiny/reports/review.json").read_text())
    assert report["spot_checks"]["seed_v1"] == {
        "sampled": 2,
        "decided": 2,
        "rejected": 1,
        "rejected_ids": [checked[0]],
    }


def read_csv_rows(path) -> list[dict]:
    import csv

    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))
