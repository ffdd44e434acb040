"""Templates: reading them from YAML, checking them, and what a checked one knows.

A template file is YAML: either a list of templates, or a mapping with ``templates``
(the list) and defaults for them (``db_id``, ``dialect``, ``quota``, ``tags``). Each
template is checked against ``schemas/template.schema.json`` and then on its own terms:
its SQL parses and only reads; question texts use ``{name}``, the SQL ``:name``, and
every placeholder of the SQL appears in every question and has exactly one source of
values. A template that fails is rejected with its id and reason; the others go on.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml
from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.templates.problems import TemplateError
from answerable.builders.templates.writing import RESULT_WORDS, text_placeholders
from answerable.kernel.errors import ConfigError, RecordError, SQLError
from answerable.kernel.yamlfile import load_yaml
from answerable.pipeline import reject
from answerable.schemas import validate

GENERATOR = "template_v1"
FILE_DEFAULTS = ("db_id", "dialect", "quota", "tags")
RANGE_TYPES = ("integer", "number", "date", "datetime")


@dataclass(frozen=True)
class Template:
    """One checked template: its record as written, where it came from, and its parts.

    ``record`` is valid under the template schema; ``source`` names the file (or the
    imported dataset) for provenance.
    """

    record: dict
    source: str = ""

    @property
    def id(self) -> str:
        return self.record["id"]

    @property
    def db_id(self) -> str:
        return self.record["db_id"]

    @property
    def questions(self) -> list[str]:
        return self.record["questions"]

    @property
    def dialect(self) -> str:
        return self.record.get("dialect", "sqlite")

    @property
    def quota(self) -> int | None:
        return self.record.get("quota")

    @property
    def placeholders(self) -> dict[str, dict]:
        return self.record.get("placeholders") or {}

    @property
    def bindings(self) -> list[str]:
        return [binding["query"] for binding in self.record.get("bindings") or ()]

    @cached_property
    def tree(self) -> exp.Expr:
        """The parsed SQL, placeholders included (``SQLError`` when it does not parse)."""
        return sqlkit.parse(self.record["sql"], self.dialect)

    @cached_property
    def names(self) -> list[str]:
        """The placeholder names of the SQL, sorted."""
        return sorted({node.name for node in self.tree.find_all(exp.Placeholder)})


@dataclass
class TemplateSet:
    """Templates that passed their checks, and rejects for those that did not."""

    templates: list[Template] = field(default_factory=list)
    rejects: list[dict] = field(default_factory=list)

    def extend(self, other: TemplateSet) -> None:
        """Add another set's templates and rejects."""
        self.templates += other.templates
        self.rejects += other.rejects


def check_template(template: Template) -> Template:
    """Return ``template`` if it can be expanded, else raise ``TemplateError``/``SQLError``.

    Checks: the dialect is SQLite (where pairs run); the SQL parses and only reads;
    every placeholder is named (``:name``, not ``?``); question placeholders are exactly
    the SQL's; each placeholder has one source (a ``placeholders`` entry or a column of
    a ``bindings`` query); a range placeholder has ``min`` and ``max``; allowed values
    are plain values; the answer text names only placeholders, ``{result}`` and
    ``{row_count}``.
    """
    if template.dialect != "sqlite":
        raise TemplateError("unsupported-dialect", "templates run on SQLite: write them in sqlite")
    tree = template.tree
    if not sqlkit.is_read_only(tree):
        raise SQLError("not-read-only", "a template's SQL must be a query")
    if any(not node.name for node in tree.find_all(exp.Placeholder)):
        raise TemplateError("anonymous-placeholder", "write placeholders as :name, not ?")
    names = set(template.names)
    for index, text in enumerate(template.questions):
        in_text = set(text_placeholders(text))
        if in_text - names:
            unknown = ", ".join(sorted(in_text - names))
            raise TemplateError("unknown-placeholder", f"questions[{index}] uses {unknown}")
        if names - in_text:
            missing = ", ".join(sorted(names - in_text))
            raise TemplateError(
                "question-missing-placeholder", f"questions[{index}] does not say {missing}"
            )
    answer = template.record.get("answer")
    unknown = set(text_placeholders(answer or "")) - names - set(RESULT_WORDS)
    if unknown:
        raise TemplateError("unknown-placeholder", f"answer uses {', '.join(sorted(unknown))}")
    _check_sources(template, names)
    return template


def _check_sources(template: Template, names: set[str]) -> None:
    declared = set(template.placeholders)
    if declared - names:
        unused = ", ".join(sorted(declared - names))
        raise TemplateError("unknown-placeholder", f"placeholders {unused} are not in the SQL")
    joint = {name for query in template.bindings for name in binding_columns(query)}
    for name, spec in template.placeholders.items():
        kinds = [key for key in ("column", "query", "values") if key in spec]
        ranged = spec.get("type") in RANGE_TYPES and "min" in spec and "max" in spec
        if name in joint and ("column" in spec or "query" in spec):
            raise TemplateError("bad-placeholder", f"{name} has values from a binding already")
        if any(isinstance(v, list | dict) for v in spec.get("values", ())):
            raise TemplateError("bad-placeholder", f"{name}: values must be plain values")
        if name not in joint and (len(kinds) > 1 or not (kinds or ranged)):
            raise TemplateError(
                "bad-placeholder",
                f"{name}: give one of column, query or values, or a type with min and max",
            )
    unbound = names - declared - joint
    if unbound:
        missing = ", ".join(sorted(unbound))
        raise TemplateError("unknown-placeholder", f"no values for {missing}")


def binding_columns(query: str) -> list[str]:
    """The output column names of a binding query (its placeholders, in order)."""
    tree = sqlkit.parse(query)
    if not isinstance(tree, exp.Query):
        raise TemplateError("binding-failed", "a binding must be a query")
    return list(tree.named_selects)


def template_reject(record: Any, reason: str, detail: str, source: str = "") -> dict:
    """The rejects-report line of a template that cannot be expanded."""
    template_id = record.get("id") if isinstance(record, dict) else None
    db_id = record.get("db_id") if isinstance(record, dict) else None
    return reject(
        template_id, GENERATOR, reason, detail, template=template_id, db_id=db_id, source=source
    )


def accept(records: list[tuple[Any, str]]) -> TemplateSet:
    """Validate and check ``(record, source)`` pairs; a repeated id is rejected."""
    out, seen = TemplateSet(), set()
    for record, source in records:
        template_id = record.get("id") if isinstance(record, dict) else None
        try:
            if template_id in seen:
                raise TemplateError("duplicate-template", f"id {template_id!r} is used twice")
            seen.add(template_id)
            validate("template", record)
            out.templates.append(check_template(Template(record, source)))
        except RecordError as error:
            out.rejects.append(template_reject(record, "invalid-template", str(error), source))
        except (TemplateError, SQLError) as error:
            out.rejects.append(template_reject(record, error.reason, str(error), source))
    return out


def read_template_file(path: Path) -> list[Any]:
    """The template records of one YAML file, with the file's defaults applied.

    A file that cannot be read or is not shaped as a list of templates (or a mapping
    with ``templates``) is a ``ConfigError``; one bad template is not (it is rejected
    later with its reason).
    """
    try:
        data = load_yaml(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(path, None, f"cannot read: {error.strerror}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise ConfigError(path, None, f"not valid YAML: {where}{error}".splitlines()[0]) from None
    defaults = {}
    if isinstance(data, dict):
        defaults = {key: data[key] for key in FILE_DEFAULTS if key in data}
        data = data.get("templates")
    if not isinstance(data, list):
        raise ConfigError(
            path, "templates", "expected a list of templates", fix="see raw/demo/templates/"
        )
    return [plain({**defaults, **t}) if isinstance(t, dict) else t for t in data]


def plain(value: Any) -> Any:
    """YAML's dates and datetimes as ISO strings, all the way down."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def template_paths(paths: list[Path]) -> list[Path]:
    """The template files named: files as given, folders as their ``*.yaml`` files, sorted."""
    files = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml"))
        else:
            files.append(path)
    return files


def load_templates(paths: list[Path], base: Path | None = None) -> TemplateSet:
    """Read and check every template of the given files and folders.

    A template's ``source`` is its file's path relative to ``base`` (the recipe's
    folder, with ``..`` for a file outside it), so items do not record where the
    recipe's folder happens to lie on the building machine. Ids must be unique across
    all the files.
    """
    records = [
        (record, _relative(file, base))
        for file in template_paths(paths)
        for record in read_template_file(file)
    ]
    return accept(records)


def _relative(path: Path, base: Path | None) -> str:
    path = Path(path)
    if base is None:
        return path.as_posix()
    return Path(os.path.relpath(path.resolve(), Path(base).resolve())).as_posix()
