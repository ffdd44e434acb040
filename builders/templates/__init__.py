"""template_v1: question/SQL templates expanded into verified pairs with gold results.

BiomedSQL turned 40 templates into 68,227 triples by inserting entities and executing
every query; EHRSQL and SCARE sample values from the database first so that no gold
query comes back empty. Here:

- ``model``: templates in YAML, checked (:func:`load_templates`, :class:`Template`);
- ``values``: where placeholder values come from, drawn without repeats;
- ``writing``: values into the SQL tree as literals (:class:`SQLWriter`) and into the
  question text;
- ``paraphrase``: the hook that chooses or rewrites a question text (:class:`Paraphraser`);
- ``expand``: expansion, execution, checks and items (:func:`expand_templates`);
- ``text2sql``: the text2sql-data templates imported (:func:`load_text2sql_templates`);
- ``stage``: the recipe's ``templates`` section, checked; ``step``: the build step.
"""

from __future__ import annotations

from answerable.builders.templates.expand import Settings, expand_template, expand_templates
from answerable.builders.templates.model import (
    GENERATOR,
    Template,
    TemplateSet,
    check_template,
    load_templates,
)
from answerable.builders.templates.paraphrase import OFFLINE, OfflineParaphraser, Paraphraser
from answerable.builders.templates.problems import TemplateError
from answerable.builders.templates.stage import check_templates, template_files
from answerable.builders.templates.text2sql import load_text2sql_templates
from answerable.builders.templates.writing import SQLWriter, fill_question, value_node

__all__ = [
    "GENERATOR",
    "OFFLINE",
    "OfflineParaphraser",
    "Paraphraser",
    "SQLWriter",
    "Settings",
    "Template",
    "TemplateError",
    "TemplateSet",
    "check_template",
    "check_templates",
    "expand_template",
    "expand_templates",
    "fill_question",
    "load_templates",
    "load_text2sql_templates",
    "template_files",
    "value_node",
]
