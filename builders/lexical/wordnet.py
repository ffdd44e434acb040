"""WordNet 3.0 from Debian's packages, read with nltk, with nothing downloaded.

``wordnet-base`` and ``wordnet-sense-index`` install the dictionary files under
``/usr/share/wordnet``; nltk's reader also needs a ``lexnames`` file that Debian does not
ship (the 45 lines of the ``lexnames(5WN)`` table). :func:`wordnet` copies the installed
files into ``<cache>/corpora/wordnet`` (``<cache>`` is ``$ANSWERABLE_CACHE/nltk_data``,
by default ``~/.cache/answerable/nltk_data``), writes ``lexnames`` there, puts ``<cache>``
on ``nltk.data.path`` and returns ``nltk.corpus.wordnet``. Without the packages it raises
:class:`WordNetMissing`, whose message is one line naming them.

The relations used by the gate and the candidates are nouns only, and read both ways:
:func:`relation` says whether one word names the same thing as another (``synonym``), a
kind of it (``hyponym``) or a more general thing (``hypernym``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

from answerable.kernel.errors import ConfigError
from answerable.kernel.variables import cache_root

DEBIAN_DIR = Path("/usr/share/wordnet")
APT_PACKAGES = "wordnet-base wordnet-sense-index"
LEXNAMES = [
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
]
"""The lexicographer files in number order (``lexnames(5WN)``)."""
_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
NEEDED = ("index.noun", "data.noun", "noun.exc", "index.sense")
HYPONYM_DEPTH = 2


class WordNetMissing(ConfigError):
    """WordNet's files are not installed."""


def lexnames_text() -> str:
    """The ``lexnames`` file: number, name and syntactic category, tab separated."""
    return "".join(
        f"{i:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES)
    )


def cache_dir() -> Path:
    """Where the nltk corpus folder is assembled."""
    return cache_root() / "nltk_data"


def available(source: Path = DEBIAN_DIR) -> bool:
    """Whether Debian's WordNet files are installed."""
    return all((source / name).is_file() for name in NEEDED)


def missing(source: Path = DEBIAN_DIR) -> WordNetMissing:
    """The error raised when WordNet is absent: one line naming the apt packages."""
    return WordNetMissing(
        str(source), None, "WordNet 3.0 is not installed", fix=f"apt-get install {APT_PACKAGES}"
    )


def corpus_folder(source: Path = DEBIAN_DIR, cache: Path | None = None) -> Path:
    """``<cache>/corpora/wordnet`` with the installed files linked in and ``lexnames``."""
    if not available(source):
        raise missing(source)
    folder = (cache or cache_dir()) / "corpora" / "wordnet"
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if path.is_file():
            _write_once(folder / path.name, path.read_bytes())
    _write_once(folder / "lexnames", lexnames_text().encode())
    return folder


def _write_once(target: Path, data: bytes) -> None:
    """Write a file unless it is there with the same size (atomically: concurrent builds
    may assemble the same folder). nltk refuses files linked from outside its root."""
    if target.exists() and target.stat().st_size == len(data):
        return
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    partial.write_bytes(data)
    partial.replace(target)


@functools.cache
def wordnet():
    """nltk's WordNet reader over Debian's WordNet 3.0 (assembled on first use).

    Loaded once per process, in about 1.5 CPU seconds: a build loads it before forking
    its workers (``lexical.preload``), so they share it."""
    WordNetCorpusReader = _reader_class()
    import nltk  # imported by now, by the line above

    folder = corpus_folder()
    root = str(folder.parent.parent)
    if root not in nltk.data.path:  # nltk reads only under its data path
        nltk.data.path.insert(0, root)

    class Reader(WordNetCorpusReader):
        """nltk's reader with its indexes read from :class:`CompactIndex`'s file."""

        def map_wn(self, version="wordnet"):
            """No map for the Open Multilingual Wordnet, which is not used (nltk builds
            one from every sense key at load, two thirds of the load's time)."""
            return None

        def _scan_satellites(self):  # the first of the three indexes nltk loads
            self._compact = CompactIndex.read(folder)
            if self._compact is None:
                super()._scan_satellites()
            else:
                self.satellite_offsets = self._compact.satellites

        def _load_lemma_pos_offset_map(self):
            if self._compact is None:
                super()._load_lemma_pos_offset_map()
            else:
                self._lemma_pos_offset_map = self._compact.lemmas

        def _load_exception_map(self):  # the last: the index file is written after it
            if self._compact is None:
                super()._load_exception_map()
                CompactIndex.write(folder, self)
            else:
                self._exception_map = self._compact.exceptions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        reader = Reader(str(folder), None)
    os.register_at_fork(after_in_child=lambda: _own_data_files(reader))
    return reader


def _own_data_files(reader) -> None:
    """After a fork, the child opens WordNet's data files anew: a file nltk opened before
    the fork shares its read offset with the parent and every sibling, so two processes
    seeking and reading it at once read each other's lines (a synset came back None)."""
    for handle in reader._data_file_map.values():
        with contextlib.suppress(OSError):
            handle.close()
    reader._data_file_map = {}


class LemmaMap(Mapping):
    """nltk's map ``lemma -> {pos: [synset offsets]}``, held as one short string per
    lemma (``"n:2084071,1234;v:..."``) and decoded when a lemma is looked up: reading
    155,000 strings costs a fraction of building as many dicts of lists. A lemma it does
    not hold maps to an empty dict, as in nltk's ``defaultdict`` (without adding it)."""

    def __init__(self, encoded: dict[str, str]):
        self.encoded = encoded

    @staticmethod
    def encode(senses: dict[str, list[int]]) -> str:
        """``{"n": [1, 2], "v": [3]}`` -> ``"n:1,2;v:3"`` (in the dict's order)."""
        return ";".join(f"{pos}:{','.join(map(str, offsets))}" for pos, offsets in senses.items())

    @staticmethod
    def decode(text: str) -> dict[str, list[int]]:
        """The inverse of :meth:`encode`.

        >>> LemmaMap.decode(LemmaMap.encode({"n": [1, 2], "s": [], "v": [3]}))
        {'n': [1, 2], 's': [], 'v': [3]}
        """
        senses = {}
        for part in text.split(";"):
            pos, _, offsets = part.partition(":")
            senses[pos] = [int(o) for o in offsets.split(",")] if offsets else []
        return senses

    def __getitem__(self, lemma: str) -> dict[str, list[int]]:
        text = self.encoded.get(lemma)
        return {} if text is None else self.decode(text)

    def __contains__(self, lemma: object) -> bool:
        return lemma in self.encoded

    def __iter__(self) -> Iterator[str]:
        return iter(self.encoded)

    def __len__(self) -> int:
        return len(self.encoded)


class CompactIndex:
    """The three indexes nltk's reader builds from WordNet's files at every load (the
    lemma map, the adjective satellites, the exceptions), stored once in the corpus
    folder with :mod:`marshal` and read back in a tenth of the time. The file's name
    holds the size and modification time of every dictionary file, so new files are
    indexed again."""

    def __init__(self, lemmas: LemmaMap, satellites: set[int], exceptions: dict):
        self.lemmas, self.satellites, self.exceptions = lemmas, satellites, exceptions

    @staticmethod
    def path(folder: Path) -> Path:
        """The index file for the dictionary files now in ``folder``."""
        stamp = [
            (p.name, p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.iterdir())
            if p.is_file() and not p.name.startswith((".", "compact-"))
        ]
        return folder / f"compact-{hashlib.sha256(repr(stamp).encode()).hexdigest()[:16]}.marshal"

    @classmethod
    def read(cls, folder: Path) -> CompactIndex | None:
        """The stored indexes, or None when there are none for these files."""
        path = cls.path(folder)
        if not path.is_file():
            return None
        lemmas, satellites, exceptions = marshal.loads(path.read_bytes())
        exceptions["s"] = exceptions["a"]  # nltk: satellites share the adjectives' list
        return cls(LemmaMap(lemmas), satellites, exceptions)

    @classmethod
    def write(cls, folder: Path, reader) -> None:
        """Store the indexes nltk's ``reader`` just built (atomically)."""
        lemmas = {k: LemmaMap.encode(v) for k, v in reader._lemma_pos_offset_map.items()}
        exceptions = {pos: m for pos, m in reader._exception_map.items() if pos != "s"}
        data = marshal.dumps((lemmas, reader.satellite_offsets, exceptions))
        _write_once(cls.path(folder), data)


UNUSED_BY_THE_READER = ("sklearn", "scipy", "pandas")
"""What ``import nltk`` pulls in for its classifiers and statistics (1.3 of the import's
1.6 CPU seconds), none of which its WordNet reader uses."""


def _reader_class():
    """nltk's WordNet reader class, imported with :data:`UNUSED_BY_THE_READER` marked
    absent (nltk then leaves out what needs them) unless this process already has them."""
    absent = [name for name in UNUSED_BY_THE_READER if name not in sys.modules]
    for name in absent:
        sys.modules[name] = None  # an import of it raises ImportError meanwhile
    try:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    finally:
        for name in absent:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]
    return WordNetCorpusReader


@functools.cache
def noun_synsets(word: str) -> tuple:
    """The word's noun senses (a phrase's words joined by ``_``, as WordNet spells it)."""
    return tuple(wordnet().synsets(word.strip().replace(" ", "_"), pos="n"))


def synonyms(word: str) -> set[str]:
    """Other lemmas of the word's noun senses (``earnings`` -> ``net income``, ``profit``)."""
    found = {
        lemma.replace("_", " ").lower()
        for synset in noun_synsets(word)
        for lemma in synset.lemma_names()
    }
    return found - {word.lower()}


@functools.cache
def _below(word: str) -> frozenset[str]:
    """Lemmas of the hyponyms of the word's senses, to :data:`HYPONYM_DEPTH` levels."""
    found, layer = set(), list(noun_synsets(word))
    for _ in range(HYPONYM_DEPTH):
        layer = [h for s in layer for h in s.hyponyms()]
        found |= {lemma.lower() for s in layer for lemma in s.lemma_names()}
    return frozenset(name.replace("_", " ") for name in found)


def hyponyms(word: str) -> set[str]:
    """Kinds of the word (two levels down): ``date`` -> ``due date``, ``birth date`` ..."""
    return set(_below(word))


@functools.cache
def hypernyms(word: str) -> frozenset[str]:
    """Everything the word's noun senses are a kind of (``city`` -> ``municipality`` ...)."""
    return frozenset(
        lemma.replace("_", " ").lower()
        for synset in noun_synsets(word)
        for path in synset.hypernym_paths()
        for ancestor in path[:-1]
        for lemma in ancestor.lemma_names()
    )


def relation(word: str, other: str) -> str | None:
    """How ``other`` relates to ``word``: ``synonym``, ``hyponym`` (a kind of it),
    ``hypernym`` (more general), or None."""
    if other.lower() in synonyms(word):
        return "synonym"
    if other.lower() in _below(word):
        return "hyponym"
    if other.lower() in hypernyms(word):
        return "hypernym"
    return None


def is_word(text: str) -> bool:
    """Whether WordNet knows the text as a word of any part of speech."""
    return bool(wordnet().synsets(text.strip().replace(" ", "_")))


def is_plain_word(word: str) -> bool:
    """Whether WordNet knows ``word`` as a word of its own: written in lower case in one
    of its senses, or as the head word of one (``English``, ``September``). A word it
    holds only as a capitalised variant of another sense's head is an abbreviation or an
    acronym no one asks for by that name (``Sep`` of September, ``GDP``, ``ROM``)."""
    reader = wordnet()
    word = word.strip().replace(" ", "_")
    forms = {word.lower()} | {
        found for pos in "nvar" if (found := reader.morphy(word.lower(), pos)) is not None
    }
    return any(
        lemma.name().lower() in forms and (lemma.name().islower() or place == 0)
        for synset in reader.synsets(word)
        for place, lemma in enumerate(synset.lemmas())
    )


def is_noun(word: str) -> bool:
    """Whether WordNet knows the word as a noun."""
    return bool(noun_synsets(word))
