"""Issue 12: ``release.debias: aflite`` (Le Bras et al. 2020) and the shortcut audit in
the release card."""

from __future__ import annotations

import hashlib
import json
import random
import textwrap

from answerable.release.card import audit_lines
from answerable.release.config import release_config
from answerable.release.contents import read_release_manifest as read_manifest
from answerable.release.debias import FLOOR, aflite
from tests.conftest import run_in
from tests.test_audit import planted
from tests.test_cli import tiny_project
from tests.test_release_guards import SEEDS


def mixed(n: int = 160, seed: int = 5) -> list[dict]:
    """The planted items (ambiguous ones say "that"), plus as many ambiguous and
    unanswerable children again whose questions look like the answerable ones."""
    rng = random.Random(seed)
    items = planted(n // 2)
    for k in range(n // 2):
        noun = rng.choice(["patient", "player", "team", "stay"])
        parent = f"q{k:04d}"
        items.append({"id": parent, "label": "answerable", "question": f"How many {noun}s?"})
        label = "ambiguous" if k % 2 else "unanswerable"
        items.append(
            {
                "id": f"d{k:04d}",
                "label": label,
                "question": f"How many {noun}s here?",
                "provenance": {"parent": parent, "generator": "plain"},
            }
        )
    return items


def test_aflite_drops_what_the_words_give_away_and_keeps_the_rest():
    items = mixed()
    kept, report = aflite(items, 13)
    kept_ids = {i["id"] for i in kept}
    planted_children = {i["id"] for i in items if i["id"].startswith("c")}
    assert len(kept) == report["kept"] >= FLOOR * len(items)
    assert report["kept_share"] == round(len(kept) / len(items), 4) < 1
    assert len(planted_children - kept_ids) > len(planted_children) / 2  # most went
    assert report["after"]["words"] < report["before"]["words"]
    assert sum(report["dropped_by_label"].values()) == len(items) - len(kept)
    assert [i["id"] for i in kept] == [i["id"] for i in items if i["id"] in kept_ids]


def test_aflite_is_deterministic_in_the_seed_and_the_order():
    items = mixed()
    first = aflite(items, 13)
    assert aflite(list(reversed(items)), 13)[1] == first[1]
    assert {i["id"] for i in aflite(list(reversed(items)), 13)[0]} == {i["id"] for i in first[0]}


def test_one_label_is_left_alone_with_a_reason():
    items = [i for i in mixed() if i["label"] == "answerable"]
    kept, report = aflite(items, 13)
    assert kept == items and report["skipped"] == "fewer than 2 labels"


def test_the_card_says_what_the_audit_found_and_what_aflite_kept():
    items = mixed()
    from answerable.release.audit import audit

    _, debias = aflite(items, 13)
    text = "\n".join(audit_lines(audit(items), debias))
    assert "bag-of-words model" in text and "| gen_ambiguous |" in text
    assert f"{debias['kept']} of {debias['items']} items kept" in text
    assert "No shortcut audit" in audit_lines(None, None)[0]


def test_release_config_reads_debias():
    assert release_config({"debias": "aflite"}).debias == "aflite"
    assert release_config({}).debias is None


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
    card = (release / "README.md").read_text()
    assert "## Shortcut audit" in card and "Debiased with AFLite" in card


def test_max_shortcut_gain_refuses_a_release_the_words_give_away_and_names_why():
    """``release.max_shortcut_gain``: the planted "that" carries the label, so the release
    is refused with the carrier named; the mixed items' own shortcut is reported."""
    import pytest

    from answerable.errors import ConfigError
    from answerable.release.publish import prepare_release
    from answerable.release.write import to_frame

    def hexed(key: str) -> str:  # the release's ids are hex
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    items = [
        {**i, "id": hexed(i["id"])}
        | (
            {"provenance": {**i["provenance"], "parent": hexed(i["provenance"]["parent"])}}
            if "provenance" in i
            else {}
        )
        for i in planted()
    ]
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
