"""Every metric's name in words, and where its definition comes from, for the text report."""

from __future__ import annotations

# name -> (what it measures, the definition's source)
WORDS: dict[str, tuple[str, str]] = {
    "ex": ("Execution accuracy: answerable items given the gold result", "BiomedSQL §5.1"),
    "jac": ("Jaccard index of predicted and gold result rows, answerable items", "BiomedSQL §5.1"),
    "ser": ("Syntax error rate: SQL that does not parse or run", "BiomedSQL §5.1"),
    "parse_error_rate": ("SQL that does not parse, of the answered items", "this toolkit"),
    "exec_error_rate": ("SQL that parses but fails to run, of the answered items", "this toolkit"),
    "rs_0": ("Reliability score, no penalty for a wrong answer", "TrustSQL §4.4, Eq. 4"),
    "rs_5": ("Reliability score, penalty 5 for a wrong answer", "EHRSQL 2024 shared task"),
    "rs_10": ("Reliability score, penalty 10 for a wrong answer", "TrustSQL §4.4, Eq. 4"),
    "rs_n": ("Reliability score, penalty N (the number of items)", "TrustSQL §4.4, Eq. 4"),
    "coverage": ("Coverage: answerable items given SQL rather than a label", "SCARE §4"),
    "pr": ("Preservation rate: execution accuracy on answerable-correct", "SCARE §4"),
    "cr": ("Correction rate: execution accuracy on answerable-incorrect", "SCARE §4"),
    "detection_accuracy": ("Detection: answered if answerable, else abstained", "Query Carefully"),
    "category_accuracy": ("Problematic items given their gold category", "Query Carefully"),
    "tag_accuracy": ("BIO tag accuracy over the question's tokens", "DTE §5.1, Table 4"),
}  # fmt: skip
PREFIXES: dict[str, tuple[str, str]] = {
    "detection.": ("Detection of the category's items as not answerable", "Query Carefully §3.2"),
    "tag_accuracy.": ("BIO tag accuracy on tokens of the gold tag class", "DTE §5.1, Table 4"),
    "cr_": ("Correction rate on candidates with this SQL error type", "SCARE Table 4"),
}
SUFFIXES: dict[str, tuple[str, str]] = {
    "_precision": ("Precision of predicting the label", "SCARE §4"),
    "_recall": ("Recall of the label", "SCARE §4"),
    "_f1": ("F1 of the label", "SCARE §4"),
}


def describe(name: str) -> tuple[str, str]:
    """``(words, source)`` for a metric name."""
    if name in WORDS:
        return WORDS[name]
    for prefix, (words, source) in PREFIXES.items():
        if name.startswith(prefix):
            return f"{words} ({name[len(prefix) :]})", source
    for suffix, (words, source) in SUFFIXES.items():
        if name.endswith(suffix):
            return f"{words} '{name[: -len(suffix)]}'", source
    return name, "this toolkit"
