"""What the build step of template_v1 reads: the recipe's ``templates`` section.

```yaml
templates:
  paths: [templates]   # YAML files, or folders of *.yaml, relative to the recipe
  quota: 4             # verified pairs per template that sets no quota
  row_cap: 100         # results with more rows are rejected (too-many-rows)
  attempts: 4          # at most quota x attempts expansions tried per template
  workers: 2           # processes (default: the recipe's workers); never changes the output
  paraphrases: 3       # with a model endpoint: rewrites per template the model writes
  answers: model       # with a model endpoint: each pair's answer from its result
```

Without an endpoint (``drafting.llm.base_url`` or ``OPENAI_BASE_URL``) the questions
are the template's texts and the answers its ``answer`` text, as offline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from answerable.builders.drafting.stage import llm_settings, model_cache
from answerable.builders.drafting.templated import answers, paraphrases
from answerable.builders.templates.expand import (
    Settings,
)
from answerable.builders.templates.model import (
    TemplateSet,
    load_templates,
    template_paths,
)
from answerable.builders.templates.paraphrase import OFFLINE, ListParaphraser, Paraphraser
from answerable.builders.templates.text2sql import KNOWN_RENAMES, load_text2sql_templates
from answerable.kernel.errors import ConfigError
from answerable.kernel.recipe import Recipe
from answerable.pipeline import BuildContext


def template_files(recipe: Recipe) -> list[Path]:
    """The template files the recipe names (folders give their ``*.yaml`` files) and the
    text2sql-data files it imports; the recipe loader has checked that each exists."""
    section = recipe.section("templates")
    files = template_paths([recipe.resolve(p) for p in section.get("paths", [])])
    return files + [recipe.resolve(e["path"]) for e in section.get("text2sql", [])]


def imported_templates(recipe: Recipe) -> TemplateSet:
    """The text2sql-data templates of ``templates.text2sql``; an entry that cannot be a
    template is a reject with its reason (the data's, not the recipe author's, to fix)."""
    found = TemplateSet()
    for entry in recipe.section("templates").get("text2sql", []):
        loaded, _ref = load_text2sql_templates(
            recipe.resolve(entry["path"]),
            recipe.resolve(entry["database"]),
            entry.get("db_id"),
            repair=entry.get("repair", True),
            renames=KNOWN_RENAMES.get(Path(entry["database"]).stem),
        )
        found.extend(loaded)
    return found


def settings_of(ctx: BuildContext) -> Settings:
    """The expansion settings from the recipe's ``templates`` and ``execution`` sections."""
    section = ctx.recipe.section("templates")
    return Settings(
        seed=ctx.recipe.seed,
        quota=section.get("quota", Settings.quota),
        row_cap=section.get("row_cap", Settings.row_cap),
        attempts=section.get("attempts", Settings.attempts),
        timeout_s=ctx.limits.timeout_s,
        keep_rows=ctx.limits.row_cap,
        workers=section.get("workers", Settings.workers),
    )


def check_templates(recipe: Recipe, databases: dict | None = None) -> TemplateSet:
    """The recipe's templates, or a :class:`ConfigError` for the first authoring error.

    A template that does not validate, repeats an id, names a placeholder its SQL or
    value sources do not define, or (when ``databases`` is given) names a db_id no
    source loads is the author's to fix: the build stops. What an expansion meets in
    the data (an empty result, too many rows) stays a reject.
    """
    paths = recipe.section("templates").get("paths", [])
    loaded = load_templates(template_paths([recipe.resolve(p) for p in paths]), recipe.base)
    for problem in loaded.rejects:
        raise ConfigError(
            recipe.base / problem["source"],
            f"template {problem['template']!r}",
            problem["detail"],
            fix="correct the template (the README's 'Templates' section shows the format)",
        )
    loaded.templates += imported_templates(recipe).templates
    for template in loaded.templates:
        if databases is not None and template.db_id not in databases:
            raise ConfigError(
                recipe.base / template.source,
                f"template {template.id!r}: db_id",
                f"no source loads database {template.db_id!r}",
                fix=f"use one of: {', '.join(sorted(databases)) or '(none)'}",
            )
    return loaded


@dataclass(frozen=True)
class ModelUse:
    """What the model does for templates: ``paraphrases`` rewrites per template, and
    answers from results; nothing without an endpoint."""

    llm: object | None  # LLMSettings
    paraphrases: int = 0
    answers: bool = False

    @classmethod
    def of(cls, recipe: Recipe) -> ModelUse:
        """From ``templates.paraphrases`` / ``templates.answers`` and the endpoint."""
        section = recipe.section("templates")
        wanted = section.get("paraphrases", 0) or section.get("answers") == "model"
        llm = llm_settings(recipe) if wanted else None
        if llm is None:
            return cls(None)
        return cls(llm, section.get("paraphrases", 0), section.get("answers") == "model")

    def identity(self) -> dict:
        """The signature's part: empty offline, so offline builds keep their cache."""
        if self.llm is None:
            return {}
        return {
            "llm": self.llm.identity(),
            "paraphrases": self.paraphrases,
            "answers": self.answers,
        }

    def paraphraser(self, ctx: BuildContext, templates: list) -> Paraphraser:
        """The model's rewrites of each template's first question, or the offline chooser."""
        if not self.paraphrases:
            return OFFLINE
        firsts = {t.id: t.questions[0] for t in templates}
        with model_cache(ctx) as (cache, usage):
            found = paraphrases(firsts, self.paraphrases, self.llm, cache, usage)
        return ListParaphraser(tuple(sorted(found.items())))

    def answered(self, ctx: BuildContext, items: Iterable[dict]) -> Iterable[dict]:
        """The items with the model's answer from their results (the template's answer
        text stays where the model gave no usable reply)."""
        if not self.answers:
            return items
        items = list(items)  # the model's answers are asked for all at once
        with model_cache(ctx) as (cache, usage):
            replies = answers(items, self.llm, cache, usage)
        return [
            item if reply is None else _with_answer(item, reply, self.llm.model)
            for item, reply in zip(items, replies, strict=True)
        ]


def _with_answer(item: dict, answer: str, model: str) -> dict:
    params = {**item["provenance"]["params"], "answered_by": model}
    return {**item, "answer": answer, "provenance": {**item["provenance"], "params": params}}
