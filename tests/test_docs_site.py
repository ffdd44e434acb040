"""The documentation site's generated pages hold everything they are generated from."""

from __future__ import annotations

import json
import re
import shutil

from answerable.cli import main
from tests.conftest import REPO
from tools.docs_pages import (
    RECIPE_SCHEMA,
    commands_page,
    recipe_page,
    schema_keys,
    taxonomy_page,
    walk_commands,
)
from tools.griffe_doctests import fence_doctests


def every_schema_key(node: dict, prefix: str, definitions: dict) -> set[str]:
    """Every key the recipe schema defines, found independently of the page's walk."""
    if "$ref" in node:
        node = definitions[node["$ref"].rsplit("/", 1)[-1]]
    found = set()
    for name, child in node.get("properties", {}).items():
        found.add(prefix + name)
        found |= every_schema_key(child, prefix + name + ".", definitions)
        if "items" in child:
            found |= every_schema_key(child["items"], prefix + name + "[].", definitions)
    return found


def test_the_recipe_page_has_every_key_with_its_type_default_and_description():
    schema = json.loads(RECIPE_SCHEMA.read_text())
    page = recipe_page()
    definitions = schema["$defs"]
    keys = every_schema_key(schema, "", definitions)
    assert len(keys) > 100 and "sources[].databases" in keys and "review.hold_release" in keys
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([^`]+)` \|.*$", page, re.M)}
    assert set(rows) == keys
    for key, node, _ in schema_keys(schema, "", definitions):
        if "description" in node:
            assert " ".join(node["description"].split())[:40].replace("<", "&lt;") in rows[key]
        if "default" in node:
            shown = "null" if node["default"] is None else node["default"]
            assert f"`{json.dumps(shown) if not isinstance(shown, str) else shown}`" in rows[key]


def test_the_command_page_has_every_command_with_its_options_and_example():
    page = commands_page()
    for name, command in walk_commands(main, "answerable"):
        section = page.split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]
        assert "```bash\nanswerable" in section, name
        for option in command.params:
            if option.param_type_name == "option":
                assert option.opts[-1] in section, (name, option.opts)


def test_the_taxonomy_page_has_every_category_of_the_item_schema():
    categories = json.loads((REPO / "schemas" / "item.schema.json").read_text())["properties"][
        "category"
    ]["enum"]
    page = taxonomy_page()
    for category in filter(None, categories):
        assert f"| `{category}` |" in page


def test_doctests_in_docstrings_become_code_blocks():
    text = "Add two numbers.\n\n>>> 1 + 1\n2\n\nThen more prose."
    assert fence_doctests(text) == (
        "Add two numbers.\n\n```pycon\n>>> 1 + 1\n2\n```\n\nThen more prose."
    )
    assert fence_doctests(">>> x\n1") == "```pycon\n>>> x\n1\n```"


def test_every_relative_link_of_the_hand_written_pages_finds_its_page():
    """What `mkdocs build --strict` checks in CI, here for a quick answer."""
    docs = REPO / "docs"
    generated = {"reference/recipe.md", "reference/commands.md", "reference/taxonomy.md"}
    for page in docs.rglob("*.md"):
        for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", page.read_text()):
            path = (page.parent / target).resolve()
            assert path.exists() or str(path.relative_to(docs)) in generated, (page, target)


def test_the_python_api_page_finds_the_stage_packages_on_a_fresh_clone():
    """mkdocstrings fixes griffe's search folders in its on_config: the package tree must
    exist by then, not only once the generated pages are written (a fresh clone has none)."""
    from mkdocs.config import load_config

    from tools.docs_hooks import API_TREE

    shutil.rmtree(API_TREE, ignore_errors=True)
    config = load_config(str(REPO / "mkdocs.yml"))
    config = config.plugins.on_config(config)
    handler = config.plugins["mkdocstrings"].handlers.get_handler("python")
    options = handler.get_options({})
    found = handler.collect("answerable.release.reader.read_items", options)
    assert found.path == "answerable.release.reader.read_items"


def test_the_count_of_hand_labelled_cases_on_the_ambiguity_page_is_the_fixtures():
    from tests.validity_cases import load_cases

    page = (REPO / "docs" / "explanation" / "ambiguity-that-holds-up.md").read_text()
    said = re.search(r"holds (\d+) hand-labelled cases", page)
    assert said and int(said.group(1)) == len(load_cases())
