"""The schemas' enums say what the registries hold, no more and no less.

A generator, a drafted category, a source format or a taxonomy label is registered in one
place in the code; the JSON Schemas that check recipes and records list the same names.
These tests read both, so adding to one without the other fails here, naming the
difference, instead of as a recipe refused or a record rejected at build time.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

import pytest

from answerable.annotation.decisions import SPAN_TAGS, TAXONOMY, VERDICTS
from answerable.builders.counterfactual.bio import TAGS
from answerable.builders.counterfactual.registry import CONTROL_EDIT, GENERATORS, PROBLEM_EDITS
from answerable.builders.drafting import categories
from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.error_types import ERROR_TYPES
from answerable.builders.sources import FORMATS
from answerable.builders.sqlkit import OPERATIONS
from answerable.release.evaluate.scare import ERROR_TYPES as SCARE_ERROR_TYPES

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
LABELS = list(TAXONOMY)
CATEGORIES_OF_TAXONOMY = [c for cats in TAXONOMY.values() for c in cats if c is not None]


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def at(document: dict, pointer: str):
    """The value at a JSON pointer (``/properties/label/enum``)."""
    for part in pointer.strip("/").split("/"):
        document = document[int(part)] if isinstance(document, list) else document[part]
    return document


RECIPE, ITEM = schema("recipe"), schema("item")


def test_counterfactual_edits_are_the_registered_generators():
    registered = [name for name in GENERATORS if name != CONTROL_EDIT]
    edits = at(RECIPE, "/properties/counterfactual/properties/edits")
    assert edits["items"]["enum"] == registered
    assert edits["default"] == list(PROBLEM_EDITS)
    assert set(PROBLEM_EDITS) < set(registered)


def test_every_generator_labels_within_the_taxonomy():
    for name, generator in GENERATORS.items():
        assert generator.label in TAXONOMY, name
        assert generator.category in TAXONOMY[generator.label], name


def test_drafted_categories_are_the_registered_ones_and_in_the_taxonomy():
    drafted = at(RECIPE, "/properties/drafting/properties/categories/items/enum")
    assert drafted == list(CATEGORIES)
    for name, category in CATEGORIES.items():
        assert name in TAXONOMY[category.label], name


def test_every_category_module_is_registered_under_its_own_name():
    """Each module of :mod:`.categories` holds one ``CATEGORY``, registered in
    :data:`CATEGORIES` under the name its file spells (``vague_word.py`` is
    ``vague-word``): a module left out of the registry, or registered under another
    name, fails here, naming it."""
    modules = [m.name for m in pkgutil.iter_modules(categories.__path__)]
    found = {}
    for name in modules:
        category = importlib.import_module(f"{categories.__name__}.{name}").CATEGORY
        assert category.name.replace("-", "_") == name, (name, category.name)
        found[category.name] = category
    assert found == CATEGORIES


def test_every_drafted_category_has_its_rule_and_check():
    for name, category in CATEGORIES.items():
        assert callable(category.offline_rule) and callable(category.check), name
        assert category.twin is None or callable(category.twin), name
        assert category.example_writer is None or callable(category.example_writer), name


def test_source_formats_are_the_registered_loaders():
    source = at(RECIPE, "/$defs/source")
    assert source["properties"]["format"]["enum"] == list(FORMATS)
    assert at(source, "/allOf/0/if/properties/format/enum") == list(FORMATS)


@pytest.mark.parametrize(
    ("name", "pointer", "with_null"),
    [
        ("item", "/properties/label/enum", False),
        ("source_example", "/properties/label/enum", False),
        ("prediction", "/properties/label/enum", True),
        ("review_decision", "/properties/label/enum", True),
        ("recipe", "/properties/release/properties/split/properties/test_only/items/enum", False),
        ("recipe", "/$defs/source/properties/keep/items/enum", False),
    ],
)
def test_labels_are_the_taxonomys(name, pointer, with_null):
    assert at(schema(name), pointer) == ([None] if with_null else []) + LABELS


def test_item_categories_are_the_taxonomys():
    assert at(ITEM, "/properties/category/enum") == [None, *CATEGORIES_OF_TAXONOMY]


def test_review_verdicts_are_the_decisions_and_an_undo():
    assert at(schema("review_decision"), "/properties/verdict/enum") == [*VERDICTS, "retract"]


def test_span_tags_error_types_and_operations_are_the_codes():
    assert set(at(ITEM, "/$defs/span/properties/tag/enum")) == set(TAGS) == set(SPAN_TAGS)
    error_types = at(ITEM, "/$defs/candidate/properties/error_type/enum")
    assert error_types == [None, *ERROR_TYPES] == [None, *SCARE_ERROR_TYPES]
    assert at(ITEM, "/$defs/sql_meta/properties/operations/items/enum") == list(OPERATIONS)
