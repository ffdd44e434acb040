"""Release guards and bad release settings, end to end through ``answerable build``:
one line naming the key and the fix, exit 1, nothing published, no version used up."""

from __future__ import annotations

import textwrap

import pytest

from answerable.kernel.records import ItemFiles, read_jsonl, read_parquet, write_parquet
from answerable.pipeline import StepOutput
from answerable.release.cut.guards import (
    EmptyReleaseError,
    _guard_fields,
    contradictions,
    guard_rejects,
    require_items,
)
from answerable.release.cut.publish import prepare_release
from answerable.release.inspect import load_items
from answerable.release.reader import read_release_manifest as read_manifest
from tests.conftest import run_in
from tests.release_helpers import config, frame_of, hex_id, make_item
from tests.test_cli import assert_clean_error, seed, tiny_project

SEEDS = [
    seed("How many items?", "SELECT count(*) FROM item"),
    seed("What is the dearest item?", "SELECT name FROM item ORDER BY price DESC LIMIT 1"),
    seed("What is the cheapest item?", "SELECT name FROM item ORDER BY price LIMIT 1"),
    seed("Which items cost more than 50?", "SELECT name FROM item WHERE price > 50"),
    {"db_id": "shop", "question": "Who made the items?", "sql": None, "label": "unanswerable"},
]


def drop_withdrawn(output: StepOutput) -> StepOutput:
    """``output`` without the items :func:`guard_rejects` withdraws, which become rejects."""
    withdrawn = guard_rejects(lambda: output.items)
    kept = StepOutput(rejects=list(output.rejects))
    for item in output.items:
        if item["id"] in withdrawn:
            kept.rejects.append(withdrawn[item["id"]])
        else:
            kept.items.append(item)
    return kept


def _release(tmp_path, section: str, seeds=SEEDS):
    recipe = tiny_project(tmp_path, seeds, extra=textwrap.dedent(section))
    return recipe, run_in(tmp_path, "build", recipe)


def _nothing_published(tmp_path):
    assert not (tmp_path / "releases" / "tiny" / "0.1.0").exists()


def test_contradictory_items_are_both_rejected_naming_each_other():
    items = [
        make_item("a", question="How many items?", result_hash="1" * 64),
        make_item("b", question="how many items", result_hash="2" * 64),
        make_item("c", question="How many items?", db_id="other", result_hash="3" * 64),
        make_item("d", question="How many items??", result_hash="1" * 64),
    ]
    found = contradictions(items)
    assert found == {
        hex_id("a"): sorted([hex_id("b"), hex_id("d")]),
        hex_id("b"): sorted([hex_id("a"), hex_id("d")]),
        hex_id("d"): sorted([hex_id("a"), hex_id("b")]),
    }
    kept = drop_withdrawn(StepOutput(items=items))
    assert [i["id"] for i in kept.items] == [hex_id("c")]
    assert {r["reason"] for r in kept.rejects} == {"contradictory"}
    assert hex_id("b") in next(r for r in kept.rejects if r["id"] == hex_id("a"))["detail"]


def test_contradictions_are_per_variant_and_rejects_name_their_generator():
    """Kills: the variant key ``db_variant or ""`` -> ``and`` (two variants of one database
    may answer one question differently), and the reject's generator lost (``None``, or
    ``provenance and {}``): a reject names the generator that made the item."""
    on_variants = [
        make_item("a", question="How many items?", result_hash="1" * 64),
        make_item("b", question="How many items?", result_hash="2" * 64),
    ]
    on_variants[0]["db_variant"], on_variants[1]["db_variant"] = "v" * 16, "w" * 16
    assert contradictions(on_variants) == {}
    clash = [
        make_item("c", question="How many?", result_hash="1" * 64, generator="template_v1"),
        make_item("d", question="How many?", result_hash="2" * 64),
    ]
    clash[1]["provenance"] = None
    rejects = drop_withdrawn(StepOutput(items=clash)).rejects
    assert {r["id"]: r["step"] for r in rejects} == {
        hex_id("c"): "template_v1",
        hex_id("d"): "unknown",
    }


def _value_reading(name: str, parent: str, *, in_source: bool = True, variant=None) -> dict:
    child = make_item(name, label="ambiguous", parent=parent, generator="value_ambiguous_v1")
    child["category"] = "value-ambiguous"
    child["trigger"] = {"kind": "value-ambiguous", "in_source": in_source}
    child["db_variant"] = variant
    return child


def test_a_parent_proved_ambiguous_on_its_own_database_is_superseded():
    """A value the source holds in two columns makes the parent's own question ambiguous
    on the unedited database: the answerable parent is withdrawn, named in its reject;
    a child on an edited variant supersedes nothing, nor does an unanswerable parent."""
    items = [
        make_item("p", question="How many tracks by AC/DC?", generator="template_v1"),
        _value_reading("c2", "p"),
        _value_reading("c1", "p"),
        make_item("q", question="How many people live in Edmonton?"),
        _value_reading("d", "q", in_source=False, variant="v" * 16),
        make_item("r", label="unanswerable"),
        _value_reading("e", "r"),
    ]
    kept = drop_withdrawn(StepOutput(items=items))
    assert sorted(i["id"] for i in kept.items) == sorted(
        hex_id(n) for n in ("c1", "c2", "q", "d", "r", "e")
    )
    (withdrawn,) = kept.rejects
    assert (withdrawn["id"], withdrawn["reason"], withdrawn["step"]) == (
        hex_id("p"),
        "superseded",
        "template_v1",
    )
    assert withdrawn["detail"].startswith(min(hex_id("c1"), hex_id("c2")))
    assert drop_withdrawn(StepOutput(items=items[3:])).rejects == []


def test_guards_over_stored_items_read_a_few_fields_and_decide_as_over_dicts(tmp_path):
    """The build's guards read the candidates file for five fields of each item, not
    the items whole: the same rejects as over the items themselves."""
    items = [
        make_item("p", question="How many tracks by AC/DC?", generator="template_v1"),
        _value_reading("c1", "p"),
        make_item("a", question="How many items?", result_hash="1" * 64),
        make_item("b", question="how many items", result_hash="2" * 64, generator="x_v1"),
        make_item("r", label="unanswerable"),
    ]
    stored = ItemFiles([write_parquet(items, tmp_path / "items.parquet")])
    found = guard_rejects(lambda: stored)
    assert found == guard_rejects(lambda: items)
    assert {r["reason"] for r in found.values()} == {"superseded", "contradictory"}
    assert found[hex_id("b")]["step"] == "x_v1"  # the generator, read from the provenance
    few = list(_guard_fields(stored))
    assert few[0]["result"] is None and few[0]["question"] is None  # never decoded


def test_an_empty_release_says_what_to_do():
    """Kills: the fix of the empty-release error reworded or cut."""
    with pytest.raises(EmptyReleaseError) as caught:
        require_items(0, "demo 1.0.0")
    assert str(caught.value) == (
        "release demo 1.0.0: no items to release, nothing published (fix: check the "
        "rejects report and the review queue, or loosen release.sample)"
    )
    require_items(1, "demo 1.0.0")


def test_contradictory_seeds_are_rejects_in_a_build(tmp_path):
    seeds = [*SEEDS, seed("How many items?", "SELECT count(*) FROM item WHERE price > 50")]
    _, result = _release(tmp_path, "", seeds)
    assert result.exit_code == 0, result.output
    rejects = list(read_jsonl(tmp_path / ".answerable" / "tiny" / "reports" / "rejects.jsonl"))
    # the seed step already rejects seeds that contradict each other (``contradiction``);
    # the release's guard (``contradictory``) stays for items made later
    contradictory = [r for r in rejects if r["reason"] in ("contradiction", "contradictory")]
    assert len(contradictory) == 2
    assert contradictory[0]["id"] in contradictory[1]["detail"]
    released = load_items(tmp_path / "releases" / "tiny" / "0.1.0")
    assert "How many items?" not in {i["question"] for i in released}


def test_an_empty_release_publishes_nothing_and_uses_up_no_version(tmp_path):
    empty = [seed("Which items cost more than 1000?", "SELECT name FROM item WHERE price > 1000")]
    recipe, result = _release(tmp_path, "", empty)
    assert_clean_error(result, "no items to release, nothing published", "fix:")
    _nothing_published(tmp_path)
    (tmp_path / "seeds.jsonl").write_text(
        "".join(__import__("json").dumps(s) + "\n" for s in SEEDS)
    )
    again = run_in(tmp_path, "build", recipe)
    assert again.exit_code == 0, again.output
    assert read_manifest(tmp_path / "releases" / "tiny" / "0.1.0")["counts"]["total"] == 5


def test_the_release_section_splits_and_reports(tmp_path):
    _, result = _release(
        tmp_path,
        """\
        release:
          split: {kind: question, ratios: {train: 0.5, test: 0.5}, test_only: [unanswerable]}
        """,
    )
    assert result.exit_code == 0, result.output
    release = tmp_path / "releases" / "tiny" / "0.1.0"
    manifest = read_manifest(release)
    assert sum(manifest["counts"]["by_split"].values()) == 5
    assert "report.json" in {f["path"] for f in manifest["files"]}
    items = load_items(release)
    assert next(i for i in items if i["label"] == "unanswerable")["split"] == "test"


BAD_SETTINGS = {
    "ratios that do not sum to one": (
        "release: {split: {ratios: {train: 0.5, test: 0.4}}}",
        ["<recipe>", "release.split.ratios", "sum to 0.9"],
    ),
    "quotas that exceed the pool": (
        "release: {sample: {strata: [label], count: 10}}",
        ["<recipe>", "release.sample.count", "the pool holds 5"],
    ),
    "a stratum short of its minimum": (
        "release: {sample: {strata: [label], count: 2}}",
        ["stratum label=unanswerable holds 1 items", "minimum 2"],
    ),
    "an unknown stratum field": (
        "release: {sample: {strata: [colour], count: 1}}",
        ["<recipe>", "release.sample.strata", "'colour'"],
    ),
    "a query split over items without sql": (
        "release: {split: {kind: query, ratios: {train: 0.5, test: 0.5}}}",
        ["<recipe>", "release.split.kind", "skeleton"],
    ),
}


def test_validate_checks_the_release_settings(tmp_path):
    recipe = tiny_project(tmp_path, SEEDS, extra="release: {split: {ratios: {train: 0.5}}}\n")
    result = run_in(tmp_path, "validate", recipe)
    assert_clean_error(result, str(recipe), "release.split.ratios", "sum to 0.5", "fix:")


@pytest.mark.parametrize("case", sorted(BAD_SETTINGS))
def test_a_bad_release_setting_is_one_line_and_publishes_nothing(tmp_path, case):
    section, words = BAD_SETTINGS[case]
    recipe, result = _release(tmp_path, section + "\n")
    words = [str(recipe) if word == "<recipe>" else word for word in words]
    assert_clean_error(result, *words, "fix:")
    _nothing_published(tmp_path)


def test_a_family_larger_than_a_split(tmp_path):
    seeds = [
        seed(f"Is item {i} cheap?", f"SELECT price < 10 FROM item WHERE id = {i}")
        for i in range(1, 20)
    ]
    recipe, result = _release(
        tmp_path,
        """\
        counterfactual: {rate: 1.0, edits: [drop_column_v1], control_rate: 1.0}
        release: {split: {ratios: {train: 0.95, test: 0.05}}}
        """,
        seeds,
    )
    assert_clean_error(result, str(recipe), "release.split.ratios", "must stay together", "fix:")
    _nothing_published(tmp_path)


def test_a_leak_set_to_error_stops_the_release(tmp_path):
    seeds = [*SEEDS, seed("How many items are there?", "SELECT count(*) FROM item")]
    _, result = _release(
        tmp_path,
        """\
        release:
          split: {ratios: {train: 0.5, test: 0.5}}
          leakage: {same_sql: error}
        """,
        seeds,
    )
    assert_clean_error(result, "release leakage: same_sql", "fix:")
    _nothing_published(tmp_path)


def test_the_split_a_source_gives_is_kept_on_the_item_and_in_the_release(tmp_path):
    seeds = [{**s, "split": ("train", "dev")[n % 2]} for n, s in enumerate(SEEDS)]
    _, result = _release(tmp_path, "release: {split: {kind: source}}\n", seeds)
    assert result.exit_code == 0, result.output
    candidates = read_parquet(tmp_path / ".answerable" / "tiny" / "candidates.parquet")
    wanted = {s["question"]: s["split"] for s in seeds}
    assert {i["question"]: i["split"] for i in candidates} == wanted
    released = load_items(tmp_path / "releases" / "tiny" / "0.1.0")
    assert {i["question"]: i["split"] for i in released} == wanted
    manifest = read_manifest(tmp_path / "releases" / "tiny" / "0.1.0")
    assert manifest["counts"]["by_split"] == {"dev": 2, "train": 3}


def test_the_release_report_holds_sampling_splits_and_leakage():
    """Kills: a section of report.json written under another name (readers and the card
    look for ``sampling``, ``splits`` and ``leakage``)."""
    items = [make_item(f"r{n}", result_hash=f"{n:064x}") for n in range(12)]
    frame, report = prepare_release(frame_of(items), config(), 3, "fixture 0.1.0")
    assert sorted(report) == ["leakage", "sampling", "splits"]
    assert report["sampling"]["chosen"] == frame.height == 12
