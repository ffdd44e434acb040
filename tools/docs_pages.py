"""Reference pages written from the code, so that none of them is copied by hand.

- :func:`recipe_page`: every key of ``schemas/recipe.schema.json`` with its type, default
  and description;
- :func:`commands_page`: every ``answerable`` command from its click definition: usage,
  help, options and its example (the command's epilog);
- :func:`taxonomy_page`: every category with its label, definition and example, from
  :func:`answerable.builders.drafting.categories.definitions` (the text the review page,
  Argilla's guidelines and the drafting prompts use).

``tools/gen_docs.py`` writes them into the site at build time; the tests call them too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click

from answerable.commands.examples import EXAMPLES

REPO = Path(__file__).resolve().parents[1]
RECIPE_SCHEMA = REPO / "schemas" / "recipe.schema.json"


# ---------------------------------------------------------------- the recipe


def schema_type(node: dict) -> str:
    """A key's type as a reader says it: ``string``, ``integer or null``, ``one of: a, b``."""
    if "enum" in node:
        return "one of: " + ", ".join(_literal(v) for v in node["enum"])
    if "const" in node:
        return f"exactly {_literal(node['const'])}"
    kinds = node.get("type")
    if kinds is None and ("anyOf" in node or "oneOf" in node):
        return " or ".join(schema_type(option) for option in node.get("anyOf", node.get("oneOf")))
    if isinstance(kinds, list):
        return " or ".join(kinds)
    if kinds == "array" and isinstance(node.get("items"), dict):
        return f"list of {schema_type(node['items'])}"
    if kinds == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"map of {schema_type(node['additionalProperties'])}"
    return kinds or "any"


def _literal(value) -> str:
    return "null" if value is None else json.dumps(value) if not isinstance(value, str) else value


def schema_keys(node: dict, prefix: str, definitions: dict) -> Iterator[tuple[str, dict, bool]]:
    """``(dotted key, schema node, required)`` for every key under ``node``, depth first;
    a list of objects shows its item's keys as ``key[].name``."""
    required = set(node.get("required", ()))
    for name, child in node.get("properties", {}).items():
        child = _resolve(child, definitions)
        key = f"{prefix}{name}"
        yield key, child, name in required
        items = _resolve(child.get("items", {}), definitions) if "items" in child else {}
        if "properties" in child:
            yield from schema_keys(child, key + ".", definitions)
        elif "properties" in items:
            yield from schema_keys(items, key + "[].", definitions)


def _resolve(node: dict, definitions: dict) -> dict:
    ref = node.get("$ref", "")
    return definitions[ref.rsplit("/", 1)[-1]] if ref.startswith("#/$defs/") else node


def _cell(text: str) -> str:
    """Text for one table cell: one line, pipes escaped, ``<`` shown rather than read as HTML."""
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")


def recipe_page(schema_path: Path = RECIPE_SCHEMA) -> str:
    """The recipe reference: one table row per key of the recipe schema."""
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    definitions = schema.get("$defs", {})
    rows = ["| key | type | default | description |", "|---|---|---|---|"]
    for key, node, required in schema_keys(schema, "", definitions):
        default = "required" if required else _literal(node["default"]) if "default" in node else ""
        default = f"`{default}`" if default not in ("", "required") else default
        rows.append(
            f"| `{key}` | {_cell(schema_type(node))} | {_cell(default)} "
            f"| {_cell(node.get('description', ''))} |"
        )
    return "\n".join(
        [
            "# Recipe",
            "",
            "<!-- Generated at build time from schemas/recipe.schema.json by tools/gen_docs.py:"
            " edit the schema's descriptions, not this page. -->",
            "",
            _cell(schema.get("description", "")),
            "",
            "A recipe is YAML, checked against `schemas/recipe.schema.json` before anything "
            "runs (`answerable validate RECIPE`). Relative input paths resolve against the "
            "recipe's folder and may lie outside it (`../shared/data/...`); each must exist "
            "and be of its kind (`databases` a folder, every other input a file, "
            "`templates.paths` either), and is only read. A build writes into `workdir` and "
            "`out` alone, which resolve against the current directory; a source database "
            "that is a symbolic link is refused unless the source sets `follow_symlinks: "
            "true`. A string "
            "may name environment variables as `${NAME}` or `${NAME:-default}`. "
            "`sources[].name` is a key of each entry of the `sources` list.",
            "",
            *rows,
            "",
        ]
    )


# ---------------------------------------------------------------- the commands


def walk_commands(group: click.Group, path: str) -> Iterator[tuple[str, click.Command]]:
    """``(full name, command)`` for every command under ``group``, sorted by name."""
    context = click.Context(group, info_name=path)
    for name in sorted(group.list_commands(context)):
        command = group.get_command(context, name)
        full = f"{path} {name}"
        yield full, command
        if isinstance(command, click.Group):
            yield from walk_commands(command, full)


def command_section(full: str, command: click.Command) -> str:
    """One command's section: its help, usage, options and example."""
    context = click.Context(command, info_name=full)
    usage = " ".join(command.collect_usage_pieces(context))
    lines = [f"## `{full}`", "", inspect_help(command), "", "```text", f"{full} {usage}", "```"]
    options = [p for p in command.get_params(context) if isinstance(p, click.Option)]
    if options:
        lines += ["", "| option | help |", "|---|---|"]
        for option in options:
            names, text = option.get_help_record(context) or ("", "")
            lines.append(f"| `{_cell(names)}` | {_cell(text)} |")
    lines += ["", "Example:" if len(EXAMPLES[full]) == 1 else "Examples:", ""]
    lines += ["```bash", *EXAMPLES[full], "```"]
    return "\n".join(lines)


def inspect_help(command: click.Command) -> str:
    """The command's help text with click's ``\\b`` markers taken out."""
    return "\n".join(line for line in (command.help or "").splitlines() if line.strip() != "\b")


def commands_page() -> str:
    """The command reference: every command of ``answerable``, from its click definition."""
    from answerable.cli import main

    commands = [("answerable", main), *walk_commands(main, "answerable")]
    sections = [command_section(full, cmd) for full, cmd in commands]
    return "\n\n".join(
        [
            "# Commands\n\n<!-- Generated at build time from the click commands by "
            "tools/gen_docs.py: edit the commands' help and epilog, not this page. -->",
            "Every command prints `--help` (`-h`) with the same text and example. Exit codes: "
            "0 success, 1 a problem with the input (one line naming the file, key or record, "
            "and the fix), 2 a usage error. `answerable -q COMMAND` prints results only; "
            "`answerable -v COMMAND` adds detail lines. Shell completion: see "
            "[Shell completion](../how-to/shell-completion.md).",
            *sections,
            "",
        ]
    )


# ---------------------------------------------------------------- the taxonomy


def taxonomy_page() -> str:
    """The taxonomy: each category's label, definition and example, from the code."""
    from answerable.builders.drafting.categories import definitions

    rows = ["| label | category | definition | example |", "|---|---|---|---|"]
    for entry in definitions():
        category = "(none)" if entry.name == entry.label else f"`{entry.name}`"
        rows.append(
            f"| {entry.label} | {category} | {_cell(entry.definition)} | {_cell(entry.example)} |"
        )
    return "\n".join(
        [
            "# Taxonomy",
            "",
            "<!-- Generated at build time from answerable.builders.drafting.categories by "
            "tools/gen_docs.py. -->",
            "",
            "Every item has a `label` (`answerable`, `ambiguous` or `unanswerable`) and, when "
            "it is not answerable, a `category`. The definitions below are the ones the "
            "review page's guidelines, Argilla's label descriptions and the drafting prompts "
            "show. A source's own name for a category is kept on "
            "`provenance.source_category`, so an export writes the seed's words back.",
            "",
            *rows,
            "",
        ]
    )


PAGES = {
    "reference/recipe.md": recipe_page,
    "reference/commands.md": commands_page,
    "reference/taxonomy.md": taxonomy_page,
}
"""Each generated page's path under docs/ and the function that writes it."""
