"""Lexical knowledge shared by drafting and the counterfactual edits.

- ``inflection``: the one :func:`singular` and :func:`plural` (through ``inflect``);
- ``wordnet``: WordNet 3.0 from Debian's packages through nltk (synonyms, hyponyms,
  hypernyms), assembled with nothing downloaded;
- ``contrasts``: qualifier pairs that make two readings of a noun (curated domain
  contrasts) and the rules that say why other pairs do not (default-marked, ordinal,
  range, parts of a total);
- ``person_names``: which part of a person's name a value is (Faker's name lists).
- ``lexicon``: the word lists the language rules read (synonym groups, function and
  generic words, words for people and places), each reader's list side by side.
"""

from answerable.builders.lexical import inflection, wordnet
from answerable.builders.lexical.inflection import plural, singular

__all__ = ["plural", "preload", "singular"]


def preload() -> None:
    """Load ``inflect`` and (when installed) WordNet in this process now: a stage calls
    it before forking its workers, which then share them instead of each loading its
    own (WordNet takes a second or two of CPU per process)."""
    inflection.engine()
    if wordnet.available():
        wordnet.wordnet()
