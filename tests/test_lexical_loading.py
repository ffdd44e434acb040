"""Issue 14: inflect and WordNet load once, lazily, and answer as they did."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest
import typeguard

from answerable.builders import lexical
from answerable.builders.lexical import inflection, wordnet

WORDS = [
    "patients", "diagnoses", "stays", "cities", "criteria", "people", "matches", "capacities",
    "analyses", "wives", "children", "indices", "teams", "leagues", "admissions", "series",
    "geese", "phenomena", "bodies", "boxes", "heroes", "goalkeepers", "stadiums", "data",
]  # fmt: skip


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_engine_answers_as_inflect_with_its_type_checks():
    checked = _run(
        "import inflect, json; e = inflect.engine(); "
        f"print(json.dumps([[e.singular_noun(w), e.plural_noun(w)] for w in {WORDS!r}]))"
    )
    ours = [
        [inflection.engine().singular_noun(w), inflection.engine().plural_noun(w)] for w in WORDS
    ]
    assert ours == json.loads(checked)
    assert typeguard.typechecked is not inflection._unchecked  # put back after the import


def test_the_build_and_the_cli_import_neither_inflect_nor_nltk():
    found = _run(
        "import sys, answerable.cli, answerable.build; "
        "print(sorted(m for m in ('inflect', 'nltk') if m in sys.modules))"
    )
    assert found.strip() == "[]"


@pytest.mark.skipif(not wordnet.available(), reason=str(wordnet.missing()))
def test_wordnet_without_the_multilingual_map_gives_the_same_senses():
    import nltk

    lexical.preload()
    ours = wordnet.wordnet()
    assert ours.map30 is None  # the map nltk builds for the multilingual wordnets, skipped
    from nltk.corpus import wordnet as stock

    assert str(wordnet.cache_dir()) in nltk.data.path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stock.ensure_loaded()
    words = [*sorted(stock._lemma_pos_offset_map)[::1000], "earnings", "date", "prague"]

    def senses(reader, word):
        return [
            (s.name(), s.lemma_names(), [h.name() for h in s.hyponyms()], s.hypernym_paths())
            for s in reader.synsets(word)
        ]

    assert all(senses(ours, w) == senses(stock, w) for w in words)
    assert stock.map30  # nltk's own reader did build it: the test compares two loads


@pytest.mark.skipif(not wordnet.available(), reason=str(wordnet.missing()))
def test_wordnet_loads_without_nltks_heavy_imports_and_leaves_them_importable():
    found = _run(
        "import sys; from answerable.builders.lexical import wordnet; wordnet.wordnet(); "
        "print(sorted(m for m in wordnet.UNUSED_BY_THE_READER if m in sys.modules)); "
        "import sklearn.linear_model, scipy.stats, pandas"
    )
    assert found.strip() == "[]"
