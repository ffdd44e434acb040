"""The shortcut audit: how well the question's surface alone predicts an item's label.

A benchmark whose labels can be guessed from question length or from words such as
"that" or "please" measures those artifacts, not the skill it means to test. The audit
trains two scikit-learn baselines to predict ``label`` and reports how far they beat the
majority class:

- ``surface``: a depth-5 decision tree on length (characters, words), counts of numbers
  and quotes, schema overlap (the share of question words that are words of the
  database's table and column names) and what a model sees of the schema the item is
  asked over, after its edit when it has one (a counterfactual item's variant): its
  columns and tables, the mean words of a column's name, and the columns whose last
  name word another column of their table shares (``urban_population`` beside
  ``metropolitan_population``);
- ``words``: logistic regression on the question's bag of words (unigrams and bigrams).

The *shortcut gain* of a model is its accuracy's gain over the majority class as a
share of what there is to gain, ``(accuracy - majority) / (1 - majority)``: 0 when it
does no better than always saying the commonest label, 1 when it is never wrong. The
report's ``shortcut_gain`` is the larger of the two models', and ``carriers`` names the
features and words that carry the label (``release.max_shortcut_gain`` refuses a
release above its bound and names them).

Accuracy is measured by k-fold cross-validation grouped by family (a parent and the items
made from it stay in one fold, so a model is never tested on the sibling of an item it
was trained on). The report gives both accuracies against the majority class, the most
telling surface features (the tree's importances) and words (the largest logistic
weights per label), and, per generator and per category, the share of its items each
model predicts right (held out). A model near the majority class means no shortcut; a
model far above it means the labels can be guessed without reading the schema.

The models are fitted on at most :data:`MAX_ITEMS` items: a larger build is audited on a
seeded sample of whole families (see :func:`sample_families`), and the report says so
(``sampled``). The fits grow faster than the items do, so at scale this keeps the audit's
time and memory flat; thousands of items are plenty to see a shortcut.

>>> report = audit([])
>>> report["skipped"]
'fewer than 2 labels or 10 items'
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import polars as pl

from answerable.builders.drafting.text import name_words
from answerable.builders.drafting.text import words as split_words
from answerable.builders.schema import DatabaseSchema
from answerable.kernel.ids import content_hash
from answerable.kernel.records import ItemFiles

FOLDS = 5
TREE_DEPTH = 5
TOP = 8
MIN_ITEMS = 10
MAX_ITEMS = 10_000  # the fits' sample at scale, families kept whole
SURFACE_FEATURES = (
    "chars",
    "words",
    "numbers",
    "quotes",
    "schema_overlap",
    "schema_size",
    "schema_tables",
    "name_words",
    "shared_heads",
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_QUOTES = re.compile(r"[\"'`‘’“”]")


class SchemaShape(NamedTuple):
    """What the surface model reads of a schema: the words of its names and its shape."""

    words: frozenset[str]
    columns: int
    tables: int = 0
    name_words: float = 0.0  # mean words per column name
    shared_heads: int = 0  # columns whose last name word another of their table shares


def schema_words(schema) -> SchemaShape:
    """The :class:`SchemaShape` of a schema (a :class:`DatabaseSchema`)."""
    found, columns, lengths, shared = set(), 0, 0, 0
    for table in schema.tables:
        found |= set(name_words(table.name))
        heads = Counter()
        for column in table.columns:
            parts = name_words(column.name)
            columns += 1
            lengths += len(parts)
            found |= set(parts)
            heads[parts[-1] if parts else ""] += 1
        shared += sum(n for head, n in heads.items() if n > 1 and head)
    mean = round(lengths / columns, 4) if columns else 0.0
    return SchemaShape(frozenset(found), columns, len(schema.tables), mean, shared)


def surface_features(question: str, schema: SchemaShape | tuple | None) -> list[float]:
    """The surface model's features of one question (see :data:`SURFACE_FEATURES`)."""
    words = split_words(question)
    shape = SchemaShape(*schema) if schema else SchemaShape(frozenset(), 0)
    overlap = sum(w in shape.words for w in words) / len(words) if words else 0.0
    return [
        float(len(question)),
        float(len(words)),
        float(len(_NUMBER.findall(question))),
        float(len(_QUOTES.findall(question))),
        round(overlap, 6),
        float(shape.columns),
        float(shape.tables),
        float(shape.name_words),
        float(shape.shared_heads),
    ]


class Shapes:
    """The :class:`SchemaShape` an item is asked over: its database's, or its edited
    variant's when its ``edit`` changes the schema (worked out once per edit)."""

    def __init__(self, schemas: dict | None):
        self.schemas = schemas or {}
        self.edited: dict[tuple[str, str], SchemaShape | None] = {}

    def of(self, db_id: str | None, edit) -> SchemaShape | None:
        """The shape of ``db_id`` after ``edit`` (a dict, its JSON text, or None)."""
        found = self.schemas.get(db_id)
        if not isinstance(found, DatabaseSchema):
            return found  # a shape already (or none)
        ops = _schema_ops(edit)
        if not ops:
            return self._base(db_id, found)
        key = (db_id, json.dumps(ops, sort_keys=True))
        if key not in self.edited:
            from answerable.builders.counterfactual.script import apply_to_schema

            try:
                self.edited[key] = schema_words(apply_to_schema(found, ops))
            except (KeyError, ValueError):  # an edit of another schema: its base shape
                self.edited[key] = self._base(db_id, found)
        return self.edited[key]

    def _base(self, db_id: str, schema: DatabaseSchema) -> SchemaShape:
        key = (db_id, "")
        if key not in self.edited:
            self.edited[key] = schema_words(schema)
        return self.edited[key]


def _schema_ops(edit) -> list[dict]:
    """The ops of an item's edit that change the schema."""
    if isinstance(edit, str):
        edit = json.loads(edit) if edit else None
    ops = (edit or {}).get("ops") or []
    return [op for op in ops if op.get("op") in ("add_column", "drop_column")]


def family(item: dict) -> str:
    """The family an item belongs to: its parent's id, else its own."""
    return (item.get("provenance") or {}).get("parent") or item["id"]


def audit(
    items: Iterable[dict],
    schemas: dict | None = None,
    folds: int = FOLDS,
    limit: int = MAX_ITEMS,
    seed: int = 0,
) -> dict:
    """The audit report of ``items`` (``schemas``: db_id -> its :class:`DatabaseSchema`
    or :class:`SchemaShape`), fitted
    on at most ``limit`` of them (a sample of whole families drawn with ``seed``).

    Only what the models read is kept of each item, so ``items`` may be a stream; of
    items in Parquet files (a build's candidates) only the sampled ones become rows."""
    rows, everything = audited_rows(items, limit, seed)
    labels = [row["label"] for row in rows]
    groups = [row["family"] for row in rows]
    if len(set(labels)) < 2 or len(rows) < MIN_ITEMS:
        return {"items": len(rows), "skipped": f"fewer than 2 labels or {MIN_ITEMS} items"}
    folds = min(folds, len(set(groups)))
    if folds < 2:
        return {"items": len(rows), "skipped": "fewer than 2 families"}
    if not _every_fold_trains_on_two_labels(labels, groups, folds):
        skipped = "a label's items all fall in one fold (too few families of that label)"
        return {"items": len(rows), "skipped": skipped}
    shapes = Shapes(schemas)
    surface = [
        surface_features(row["question"], shapes.of(row["db_id"], row.get("edit"))) for row in rows
    ]
    questions = [row["question"] for row in rows]
    majority = Counter(labels).most_common(1)[0]
    base = majority[1] / len(rows)
    tree, tree_predicted = _surface_model(surface, labels, groups, folds)
    words, words_predicted = _words_model(questions, labels, groups, folds)
    sampled = {"sampled": {"of": everything, "seed": seed}} if len(rows) < everything else {}
    surface_accuracy = _accuracy(tree_predicted, labels)
    words_accuracy = _accuracy(words_predicted, labels)
    importances, telling = _importances(tree), _telling_words(words)
    return {
        "items": len(rows),
        **sampled,
        "families": len(set(groups)),
        "folds": folds,
        "labels": dict(sorted(Counter(labels).items())),
        "majority": {"label": majority[0], "accuracy": _round(base)},
        "surface": {
            "accuracy": surface_accuracy,
            "gain": gain(surface_accuracy, base),
            "features": importances,
        },
        "words": {
            "accuracy": words_accuracy,
            "gain": gain(words_accuracy, base),
            "telling": telling,
        },
        "shortcut_gain": max(gain(surface_accuracy, base), gain(words_accuracy, base)),
        "carriers": carriers(words_accuracy >= surface_accuracy, importances, telling),
        "by_generator": _by_field(rows, "generator", words_predicted, tree_predicted, labels),
        "by_category": _by_field(rows, "category", words_predicted, tree_predicted, labels),
    }


def gain(accuracy: float, majority: float) -> float:
    """A model's shortcut gain: ``(accuracy - majority) / (1 - majority)`` (0 when every
    item has one label).

    >>> gain(0.9, 0.5)
    0.8
    """
    return _round((accuracy - majority) / (1 - majority)) if majority < 1 else 0.0


def carriers(by_words: bool, importances: dict, telling: dict) -> list[str]:
    """What carries the label, the better model's first: its top features or words."""
    features = [f"feature {name}" for name in list(importances)[:3]]
    words = [f"{label} word '{w}'" for label, found in telling.items() for w in found[:2]]
    return words + features if by_words else features + words


def audited_rows(items: Iterable[dict], limit: int, seed: int) -> tuple[list[dict], int]:
    """The rows the fits read (:func:`sample_families` of the items that have a label and
    a question, sorted by id) and how many items had both. Items in Parquet files are
    read as columns and sampled there: a large build's items never all become rows."""
    if not isinstance(items, ItemFiles):
        rows = sorted(
            (_audited(i) for i in items if i.get("label") and i.get("question")),
            key=lambda row: row["id"],
        )
        return sample_families(rows, limit, seed), len(rows)
    frame = _audited_frame(items)
    everything = frame.height
    if everything > limit:
        sizes = dict(frame.group_by("family").len().iter_rows())
        frame = frame.filter(pl.col("family").is_in(chosen_families(sizes, limit, seed)))
    return frame.to_dicts(), everything


def _audited_frame(items: ItemFiles) -> pl.DataFrame:
    """:func:`_audited` of every item with a label and a question, as columns sorted by
    id, from the stored columns (the provenance's two parts read from its struct)."""
    provenance = pl.col("provenance")
    parent = provenance.struct.field("parent")
    generator = provenance.struct.field("generator")
    read = ["id", "label", "question", "db_id", "provenance", "edit", "category"]
    stored = pl.concat([pl.scan_parquet(file).select(read) for file in items.files])
    present = (pl.col("label").fill_null("") != "") & (pl.col("question").fill_null("") != "")
    return (
        stored.filter(present)
        .select(
            "id",
            "label",
            "question",
            "db_id",
            "edit",
            pl.col("category").fill_null("none"),
            family=pl.when(parent.fill_null("") != "").then(parent).otherwise(pl.col("id")),
            generator=pl.when(generator.fill_null("") != "")
            .then(generator)
            .otherwise(pl.lit("unknown")),
        )
        .sort("id", maintain_order=True)  # as sorted() orders items of one id
        .collect(engine="streaming")
    )


def _audited(item: dict) -> dict:
    """What the audit reads of an item."""
    return {
        "id": item["id"],
        "label": item["label"],
        "question": item["question"],
        "db_id": item.get("db_id"),
        "edit": item.get("edit"),
        "category": item.get("category") or "none",
        "family": family(item),
        "generator": (item.get("provenance") or {}).get("generator") or "unknown",
    }


def sample_families(rows: list[dict], limit: int, seed: int) -> list[dict]:
    """``rows`` (in order) of whole families, drawn in a seeded order of their ids until
    ``limit`` rows are taken; all of them when there are no more than ``limit``.

    >>> rows = [{"id": str(n), "family": str(n // 2)} for n in range(6)]
    >>> [r["id"] for r in sample_families(rows, 4, seed=1)]
    ['2', '3', '4', '5']
    """
    if len(rows) <= limit:
        return rows
    chosen = chosen_families(Counter(row["family"] for row in rows), limit, seed)
    return [row for row in rows if row["family"] in chosen]


def chosen_families(sizes: dict[str, int], limit: int, seed: int) -> set[str]:
    """The families (name -> items) :func:`sample_families` keeps: whole families in a
    seeded order of their names, each taken while the items taken stay within ``limit``."""
    chosen, taken = set(), 0
    for name in sorted(sizes, key=lambda name: content_hash([seed, name])):
        if taken + sizes[name] > limit:
            continue
        chosen.add(name)
        taken += sizes[name]
    return chosen


def _every_fold_trains_on_two_labels(labels, groups, folds) -> bool:
    """True when each cross-validation fold leaves at least two labels to train on (a
    model fitted on one label is refused by scikit-learn)."""
    from sklearn.model_selection import GroupKFold

    splits = GroupKFold(folds).split(labels, labels, groups)
    return all(len({labels[i] for i in train}) >= 2 for train, _ in splits)


def _surface_model(features, labels, groups, folds):
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from sklearn.tree import DecisionTreeClassifier

    model = DecisionTreeClassifier(max_depth=TREE_DEPTH, random_state=0)
    predicted = cross_val_predict(model, features, labels, groups=groups, cv=GroupKFold(folds))
    return model.fit(features, labels), list(predicted)


def _words_model(questions, labels, groups, folds):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline

    model = make_pipeline(
        CountVectorizer(ngram_range=(1, 2), min_df=2, token_pattern=r"[a-z0-9]+"),
        LogisticRegression(max_iter=2000, solver="newton-cg"),
    )
    predicted = cross_val_predict(model, questions, labels, groups=groups, cv=GroupKFold(folds))
    return model.fit(questions, labels), list(predicted)


def _round(value: float) -> float:
    return round(float(value), 4)


def _accuracy(predicted: list, labels: list) -> float:
    return _round(sum(p == g for p, g in zip(predicted, labels, strict=True)) / len(labels))


def _importances(tree) -> dict[str, float]:
    ranked = sorted(
        zip(SURFACE_FEATURES, tree.feature_importances_, strict=True), key=lambda x: -x[1]
    )
    return {name: _round(weight) for name, weight in ranked if weight > 0}


def _telling_words(model) -> dict[str, list[str]]:
    """Per label, the words whose weights point to it most (one row for two labels)."""
    vectorizer, regression = model.steps[0][1], model.steps[1][1]
    vocabulary = vectorizer.get_feature_names_out()
    classes = list(regression.classes_)
    rows = regression.coef_
    if len(classes) == 2:  # one row: positive weights mean classes[1]
        rows = [-rows[0], rows[0]]
    found = {}
    for label, weights in zip(classes, rows, strict=True):
        order = sorted(range(len(vocabulary)), key=lambda k: (-weights[k], vocabulary[k]))
        found[label] = [str(vocabulary[k]) for k in order[:TOP] if weights[k] > 0]
    return found


def _by_field(rows: list[dict], field: str, words: list, surface: list, labels: list) -> dict:
    """Per value of ``field`` (generator, category): items and the share of them each
    model predicts right (held out): ``predictable`` the words model, ``by_surface``
    the surface model."""
    total: Counter = Counter()
    right = {"predictable": Counter(), "by_surface": Counter()}
    for row, by_words, by_surface, gold in zip(rows, words, surface, labels, strict=True):
        name = row[field]
        total[name] += 1
        right["predictable"][name] += by_words == gold
        right["by_surface"][name] += by_surface == gold
    return {
        name: {"items": total[name]}
        | {model: _round(found[name] / total[name]) for model, found in right.items()}
        for name in sorted(total)
    }


def format_audit(report: dict) -> str:
    """The audit as plain text for the terminal."""
    if "skipped" in report:
        return f"audit skipped: {report['skipped']} ({report['items']} items)"
    sampled = report.get("sampled")
    lines = [
        f"{report['items']} items"
        + (f" (a seeded sample of whole families, of {sampled['of']})" if sampled else "")
        + f" in {report['families']} families, {report['folds']}-fold "
        f"grouped by family; labels {report['labels']}",
        f"  majority class ({report['majority']['label']}): {report['majority']['accuracy']}",
        f"  surface model:       {report['surface']['accuracy']}  "
        f"features {report['surface']['features']}",
        f"  bag-of-words model:  {report['words']['accuracy']}",
    ]
    for label, words in report["words"]["telling"].items():
        lines.append(f"    {label}: {', '.join(words)}")
    lines.append(
        f"  shortcut gain: {report['shortcut_gain']} (surface {report['surface']['gain']}, "
        f"words {report['words']['gain']}); carried by {', '.join(report['carriers'])}"
    )
    for field in ("generator", "category"):
        lines.append(f"  predictable per {field} (words / surface model, held out):")
        for name, row in report[f"by_{field}"].items():
            lines.append(
                f"    {name}: {row['predictable']} / {row['by_surface']} of {row['items']}"
            )
    return "\n".join(lines)


def schemas_of(databases: dict) -> dict:
    """The schema of every database of a build (db_id -> DatabaseRef), for the audit."""
    return {db_id: ref.schema for db_id, ref in sorted(databases.items())}


def release_schemas(files: dict | None) -> dict:
    """The schemas of SQLite files, for the audit (db_id -> path; None: a schema-only
    source, left out)."""
    return {
        db_id: DatabaseSchema.from_sqlite(Path(path), db_id)
        for db_id, path in sorted((files or {}).items())
        if path is not None and Path(path).is_file()
    }
