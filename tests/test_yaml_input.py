"""YAML written by someone else: repeated keys, anchors used inside themselves and
nested aliases are refused at load with the line, before any value is built."""

from __future__ import annotations

import pytest
import yaml

from answerable.builders.templates.model import read_template_file
from answerable.kernel.errors import ConfigError
from answerable.kernel.yamlfile import load_yaml
from tests.conftest import run_in
from tests.test_recipe import GOOD, write


def laughs(levels: int = 9, width: int = 9) -> str:
    """A billion-laughs block: each level lists the previous one ``width`` times."""
    lines = ['l0: &l0 "lol"']
    for level in range(1, levels + 1):
        refs = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"l{level}: &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


def indented(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (GOOD + "surprise:\n" + indented(laughs()), "aliases unroll to more than 1,000,000"),
        (GOOD + "description:\n" + indented(laughs()), "aliases unroll to more than 1,000,000"),
        (GOOD + "loop: &me [1, *me]\n", "an anchor is used inside itself"),
        (GOOD + "dataset: other\n", "key 'dataset' written twice (first on line 1)"),
    ],
    ids=["laughs-unknown-key", "laughs-description", "self-reference", "two-dataset-keys"],
)
def test_hostile_recipe_yaml_is_one_line_with_exit_1(tmp_path, text, words):
    recipe = write(tmp_path, text)
    result = run_in(tmp_path, "validate", recipe)
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], result.output
    assert "not valid YAML: line" in lines[0]


def test_a_template_file_with_a_key_written_twice_is_refused(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("templates:\n  - id: a\n    question: q\n    question: r\n")
    with pytest.raises(ConfigError, match="key 'question' written twice"):
        read_template_file(path)


def test_plain_aliases_and_merge_keys_still_load():
    text = "base: &b {x: 1}\nuse: *b\nmerged:\n  <<: *b\n  y: 2\n"
    assert load_yaml(text) == {"base": {"x": 1}, "use": {"x": 1}, "merged": {"x": 1, "y": 2}}
    assert load_yaml("") is None
    with pytest.raises(yaml.YAMLError):
        load_yaml("a: [unclosed\n")
