"""Issue 12: ``release.debias: aflite`` (Le Bras et al. 2020) and the shortcut audit in
the release card."""

from __future__ import annotations

import hashlib
import json
import random
import textwrap

import pytest

from answerable.release.cut.audit import family
from answerable.release.cut.config import release_config
from answerable.release.cut.debias import aflite
from answerable.release.documents.card import audit_lines
from answerable.release.reader import read_release_manifest as read_manifest
from tests.conftest import run_in
from tests.test_audit import planted
from tests.test_cli import tiny_project
from tests.test_release_guards import SEEDS


def shortcut_and_pairs(n: int = 200, seed: int = 5) -> list[dict]:
    """Families of an answerable parent and one child: in the first half the child's words
    give its label away ("Show that ... again", "List every ... now"), in the second the
    parent and the child are asked in the same words (no shortcut)."""
    rng = random.Random(seed)
    nouns = ["patient", "player", "team", "stay", "drug", "match", "season", "coach"]
    names = ["Ann", "Bob", "Cy", "Dee", "Eve", "Flo", "Gus", "Hal", "Ivy", "Jo"]
    items = []
    for k in range(n):
        noun, parent = rng.choice(nouns), f"p{k:04d}"
        label = "ambiguous" if k % 2 else "unanswerable"
        if k < n // 2:
            question = f"How many {noun}s?"
            child = f"Show that {noun} again" if k % 2 else f"List every {noun} now"
        else:
            question = f"How many {noun}s did {rng.choice(names)} see?"
            child = f"How many {noun}s did {rng.choice(names)} see?"
        items.append({"id": parent, "label": "answerable", "question": question})
        items.append(
            {
                "id": f"c{k:04d}",
                "label": label,
                "question": child,
                "category": "planted" if k < n // 2 else "paired",
                "provenance": {"parent": parent, "generator": f"gen_{label}"},
            }
        )
    return items


@pytest.fixture(scope="module")
def reached():
    """AFLite with room to reach its target (up to 60% of the pool)."""
    return aflite(shortcut_and_pairs(), 13, target=0.3, max_share=0.6)


@pytest.fixture(scope="module")
def capped():
    """AFLite held to 5% of the pool, short of its target."""
    return aflite(shortcut_and_pairs(), 13, target=0.3, max_share=0.05)


def families_cut(items: list[dict], kept: list[dict]) -> set[str]:
    """The families that lost some but not all of their items."""
    kept_ids = {i["id"] for i in kept}
    split = set()
    for name in {family(i) for i in items}:
        members = [i["id"] in kept_ids for i in items if family(i) == name]
        if any(members) and not all(members):
            split.add(name)
    return split


def test_aflite_drops_whole_families_and_stops_at_the_target(reached):
    items = shortcut_and_pairs()
    kept, report = reached
    assert report["before"]["shortcut_gain"] > 0.3 >= report["after"]["shortcut_gain"]
    assert report["reached"] and "unreached" not in report
    assert families_cut(items, kept) == set()
    gone = {family(i) for i in items} - {family(i) for i in kept}
    assert len(gone) == report["dropped_families"] > 0
    assert all(int(name[1:]) < 100 for name in gone)  # only families with a shortcut
    assert len(kept) > 0.6 * len(items)  # it stopped at the target, not at its cap
    assert report["dropped_by_category"] == {"none": len(gone), "planted": len(gone)}
    assert [i["id"] for i in kept] == [i["id"] for i in items if i in kept]


def test_aflite_keeps_the_labels_proportions(reached):
    dropped = reached[1]["dropped_by_label"]
    assert dropped["answerable"] == dropped["ambiguous"] + dropped["unanswerable"]
    assert abs(dropped["ambiguous"] - dropped["unanswerable"]) <= 1


def test_aflite_keeps_to_its_cap_and_says_what_carries_the_label(capped):
    items = shortcut_and_pairs()
    kept, report = capped
    assert len(items) - len(kept) <= 0.05 * len(items)
    assert report["after"]["shortcut_gain"] > 0.3 and not report["reached"]
    assert families_cut(items, kept) == set()
    line = report["unreached"]
    assert "\n" not in line and "above 0.3" in line and "carried by" in line
    assert "ambiguous word 'again'" in line or "ambiguous word 'show'" in line


def test_aflite_is_byte_identical_for_a_seed_whatever_the_order(capped):
    items = shortcut_and_pairs()
    again = aflite(list(reversed(items)), 13, target=0.3, max_share=0.05)
    assert json.dumps(again[1], sort_keys=True) == json.dumps(capped[1], sort_keys=True)
    assert sorted(i["id"] for i in again[0]) == sorted(i["id"] for i in capped[0])


def test_aflite_does_nothing_below_its_target():
    items = shortcut_and_pairs()
    kept, report = aflite(items, 13, target=0.9)
    assert kept == items and report["rounds"] == 0 and report["reached"]


def test_one_label_is_left_alone_with_a_reason():
    items = [i for i in shortcut_and_pairs() if i["label"] == "answerable"]
    kept, report = aflite(items, 13)
    assert kept == items and report["skipped"] == "fewer than 2 labels or 10 items"


def test_the_card_says_what_the_audit_found_and_what_aflite_kept(capped):
    items = shortcut_and_pairs()
    from answerable.release.cut.audit import audit

    debias = capped[1]
    text = "\n".join(audit_lines(audit(items), debias))
    assert "bag-of-words model" in text and "| gen_ambiguous |" in text
    assert f"{debias['kept']} of {debias['items']} items kept" in text
    assert "per category {'none': " in text and f"{debias['unreached']}." in text
    assert "No shortcut audit" in audit_lines(None, None)[0]


def test_release_config_reads_debias():
    assert release_config({"debias": "aflite"}).debias == "aflite"
    assert release_config({}).debias is None
    assert release_config({}).debias_max_share == 0.1
    assert release_config({"debias_max_share": 0.25}).debias_max_share == 0.25


def test_a_build_with_debias_reports_it_in_the_release_report_and_card(tmp_path):
    seeds = SEEDS + [
        {"db_id": "shop", "question": f"Who made item number {k}?", "sql": None}
        | {"label": "unanswerable"}
        for k in range(8)
    ]
    recipe = tiny_project(tmp_path, seeds, extra=textwrap.dedent("release: {debias: aflite}\n"))
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 0, result.output
    release = tmp_path / "releases" / "tiny" / "0.1.0"
    report = json.loads((release / "report.json").read_text())["debias"]
    assert report["method"] == "aflite" and report["items"] == 13
    assert report["kept"] == sum(read_manifest(release)["counts"]["by_split"].values())
    assert report["reached"] or "the label is carried by" in report["unreached"]
    card = (release / "README.md").read_text()
    assert "## Shortcut audit" in card and "Debiased with AFLite" in card
    again = tmp_path / "again"
    again.mkdir()
    recipe = tiny_project(again, seeds, extra=textwrap.dedent("release: {debias: aflite}\n"))
    assert run_in(again, "build", recipe).exit_code == 0
    assert release_bytes(again / "releases" / "tiny" / "0.1.0") == release_bytes(release)


def release_bytes(release) -> dict[str, str]:
    """The sha256 of every file of a release, by its path inside it."""
    return {
        str(path.relative_to(release)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(release.rglob("*"))
        if path.is_file()
    }


def test_debias_short_of_its_target_still_refuses_a_release_above_the_bound():
    """With ``max_shortcut_gain`` the filter aims at the bound; held to its cap short of
    it, the release is refused as without the filter, naming the carriers."""
    from answerable.kernel.errors import ConfigError
    from answerable.kernel.typed_items import to_frame
    from answerable.release.cut.publish import prepare_release

    items = [{**i, "id": hexed(i["id"])} | parent_hexed(i) for i in shortcut_and_pairs()]
    bound = release_config({"debias": "aflite", "max_shortcut_gain": 0.3, "debias_max_share": 0.05})
    with pytest.raises(ConfigError) as refused:
        prepare_release(to_frame(items), bound, 13, "planted")
    assert "release.max_shortcut_gain" in str(refused.value) and "carried by" in str(refused.value)


def hexed(key: str) -> str:
    """A release's ids are hex."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def parent_hexed(item: dict) -> dict:
    if "provenance" not in item:
        return {}
    return {"provenance": {**item["provenance"], "parent": hexed(item["provenance"]["parent"])}}


def test_max_shortcut_gain_refuses_a_release_the_words_give_away_and_names_why():
    """``release.max_shortcut_gain``: the planted "that" carries the label, so the release
    is refused with the carrier named; the mixed items' own shortcut is reported."""
    import pytest

    from answerable.kernel.errors import ConfigError
    from answerable.kernel.typed_items import to_frame
    from answerable.release.cut.publish import prepare_release

    items = [{**i, "id": hexed(i["id"])} | parent_hexed(i) for i in planted()]
    bound = release_config({"max_shortcut_gain": 0.3})
    with pytest.raises(ConfigError) as refused:
        prepare_release(to_frame(items), bound, 1, "planted")
    message = str(refused.value)
    assert "release.max_shortcut_gain" in message
    assert any(f"ambiguous word '{w}'" in message for w in ("show", "that", "again"))
    _frame, report = prepare_release(to_frame(items), release_config({}), 1, "planted")
    assert "shortcut" not in report  # no bound, no audit
    loose = release_config({"max_shortcut_gain": 1.0})
    _frame, report = prepare_release(to_frame(items), loose, 1, "planted")
    assert report["shortcut"]["gain"] > 0.9 and report["shortcut"]["max"] == 1.0


def test_aflite_keeps_the_pool_with_the_smallest_gain_it_saw(monkeypatch):
    """A round can leave the label easier to guess (the drops shift what the audit's
    models learn): the filter then returns the pool before it. Here the gain grows with
    every item dropped, so nothing is dropped in the end."""
    from answerable.release.cut import debias

    items = shortcut_and_pairs()

    def growing(found, schemas=None, seed=0):
        found = list(found)
        gain = round(0.5 + (len(items) - len(found)) / 100, 4)
        accuracy = {"accuracy": 0.5, "gain": gain}
        return {
            "majority": {"accuracy": 0.5},
            "surface": accuracy,
            "words": accuracy,
            "shortcut_gain": gain,
            "carriers": ["ambiguous word 'again'"],
        }

    monkeypatch.setattr(debias, "audit", growing)
    kept, report = debias.aflite(items, 13, target=0.3, max_share=0.1)
    assert report["rounds"] >= 2 and kept == items
    assert report["after"] == report["before"] and report["dropped_families"] == 0
    assert "dropped 0 of 400" in report["unreached"]
