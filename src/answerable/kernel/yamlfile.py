"""Reading YAML written by someone else (recipes, template files) safely.

``yaml.safe_load`` builds no objects, but three things still get through it: a key
written twice in one mapping (the last one wins, silently: two ``dataset:`` keys), an
anchor used inside itself (a list or mapping that contains itself, which any later walk
over the data follows forever), and aliases nested so that a few hundred bytes stand for
billions of values (YAML shares them, but anything that copies the data, such as
expanding ``${variables}``, unrolls them). :func:`load_yaml` composes the document first
and refuses each of these with the line it is on, before any value is built.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

MAX_VALUES = 1_000_000
"""How many values a document may stand for once its aliases are unrolled."""

MERGE_KEY = "tag:yaml.org,2002:merge"


def load_yaml(text: str) -> Any:
    """The data of one YAML document (None for an empty one), safe-loaded.

    Raises :class:`yaml.YAMLError` (with ``problem`` and ``problem_mark``, like every
    PyYAML error) for a syntax error, a key written twice in one mapping, an anchor used
    inside itself, or aliases that unroll to more than :data:`MAX_VALUES` values.
    """
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check(node, {}, set())
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check(node: Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """How many values ``node`` stands for unrolled; refuses what :func:`load_yaml` says.

    ``sizes`` remembers each node already counted (an alias is the same node object as
    its anchor, so each is walked once); ``open_nodes`` holds the nodes being walked, so a
    node met again inside itself is an anchor used inside itself.
    """
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise _error("an anchor is used inside itself (its value would contain itself)", node)
    open_nodes.add(key)
    size = 1
    if isinstance(node, SequenceNode):
        size += sum(_check(item, sizes, open_nodes) for item in node.value)
    elif isinstance(node, MappingNode):
        _refuse_repeated_keys(node)
        size += sum(
            _check(k, sizes, open_nodes) + _check(v, sizes, open_nodes) for k, v in node.value
        )
    open_nodes.discard(key)
    if size > MAX_VALUES:
        raise _error(
            f"its aliases unroll to more than {MAX_VALUES:,} values (nested aliases?)", node
        )
    sizes[key] = size
    return size


def _refuse_repeated_keys(node: MappingNode) -> None:
    """A key written twice in one mapping (plain keys; merge keys ``<<`` aside)."""
    seen: dict[str, Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == MERGE_KEY or not isinstance(key_node.value, str):
            continue
        first = seen.setdefault(key_node.value, key_node)
        if first is not key_node:
            line = first.start_mark.line + 1
            raise _error(f"key {key_node.value!r} written twice (first on line {line})", key_node)


def _error(problem: str, node: Node) -> yaml.YAMLError:
    return ConstructorError(None, None, problem, node.start_mark)
