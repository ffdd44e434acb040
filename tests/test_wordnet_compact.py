"""WordNet's indexes read from their compact file are nltk's own, entry for entry."""

from __future__ import annotations

import warnings

import pytest

from answerable.builders.lexical import wordnet

pytestmark = pytest.mark.skipif(not wordnet.available(), reason=str(wordnet.missing()))


@pytest.fixture(scope="module")
def readers(tmp_path_factory):
    """nltk's plain reader, and ours twice over one fresh folder: the first builds the
    compact file, the second reads it."""
    folder = wordnet.corpus_folder(cache=tmp_path_factory.mktemp("nltk_data"))
    plain_class = wordnet._reader_class()
    import nltk  # imported by now, by the line above

    root = str(folder.parent.parent)
    nltk.data.path.insert(0, root)  # nltk reads only under its data path
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = plain_class(str(folder), None)
        built, read = _ours(folder), _ours(folder)
        yield plain, built, read
    finally:
        nltk.data.path.remove(root)


def _ours(folder):
    """Our reader over ``folder`` (the cached ``wordnet()`` is for the user's cache)."""
    wordnet.wordnet.cache_clear()
    original = wordnet.corpus_folder
    wordnet.corpus_folder = lambda: folder
    try:
        return wordnet.wordnet()
    finally:
        wordnet.corpus_folder = original
        wordnet.wordnet.cache_clear()


def test_the_compact_indexes_hold_what_nltk_builds(readers):
    plain, built, read = readers
    assert built._compact is None and read._compact is not None
    lemmas = read._lemma_pos_offset_map
    assert list(lemmas) == list(plain._lemma_pos_offset_map)
    assert all(lemmas[k] == v for k, v in plain._lemma_pos_offset_map.items())
    assert lemmas["no such lemma"] == {} and "no such lemma" not in lemmas
    assert read.satellite_offsets == plain.satellite_offsets
    assert read._exception_map == plain._exception_map
    assert read._exception_map["s"] is read._exception_map["a"]


def test_answers_are_the_same_from_the_compact_indexes(readers):
    plain, _, read = readers
    for word in ("earnings", "cities", "ran", "better", "patient", "date", "geese", "stadia"):
        for pos in (None, "n", "v", "a", "s", "r"):
            assert read.synsets(word, pos=pos) == plain.synsets(word, pos=pos), (word, pos)
    assert sorted(read.all_lemma_names("a")) == sorted(plain.all_lemma_names("a"))
