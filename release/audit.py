"""The shortcut audit: how well the question's surface alone predicts an item's label.

A benchmark whose labels can be guessed from question length or from words such as
"that" or "please" measures those artifacts, not the skill it means to test. The audit
trains two scikit-learn baselines to predict ``label`` and reports how far they beat the
majority class:

- ``surface``: a depth-5 decision tree on length (characters, words), counts of numbers
  and quotes, schema overlap (the share of question words that are words of the
  database's table and column names) and schema size (columns in the database);
- ``words``: logistic regression on the question's bag of words (unigrams and bigrams).

Accuracy is measured by k-fold cross-validation grouped by family (a parent and the items
made from it stay in one fold, so a model is never tested on the sibling of an item it
was trained on). The report gives both accuracies against the majority class, the most
telling surface features (the tree's importances) and words (the largest logistic
weights per label), and, per generator, the share of its items the words model predicts
right (held out). A model near the majority class means no shortcut; a model far above
it means the labels can be guessed without reading the schema.

The models are fitted on at most :data:`MAX_ITEMS` items: a larger build is audited on a
seeded sample of whole families (see :func:`sample_families`), and the report says so
(``sampled``). The fits grow faster than the items do, so at scale this keeps the audit's
time and memory flat; thousands of items are plenty to see a shortcut.

>>> report = audit([])
>>> report["skipped"]
'fewer than 2 labels or 10 items'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from answerable.builders.drafting.text import name_words
from answerable.builders.drafting.text import words as split_words
from answerable.errors import ConfigError
from answerable.ids import content_hash
from answerable.records import ItemFiles

FOLDS = 5
TREE_DEPTH = 5
TOP = 8
MIN_ITEMS = 10
MAX_ITEMS = 10_000  # the fits' sample at scale, families kept whole
SURFACE_FEATURES = ("chars", "words", "numbers", "quotes", "schema_overlap", "schema_size")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_QUOTES = re.compile(r"[\"'`‘’“”]")


def schema_words(schema) -> tuple[frozenset[str], int]:
    """The lower-case words of a schema's table and column names, and its column count."""
    found, columns = set(), 0
    for table in schema.tables:
        found |= set(name_words(table.name))
        for column in table.columns:
            columns += 1
            found |= set(name_words(column.name))
    return frozenset(found), columns


def surface_features(question: str, schema: tuple[frozenset[str], int] | None) -> list[float]:
    """The surface model's features of one question (see :data:`SURFACE_FEATURES`)."""
    words = split_words(question)
    known, size = schema or (frozenset(), 0)
    overlap = sum(w in known for w in words) / len(words) if words else 0.0
    return [
        float(len(question)),
        float(len(words)),
        float(len(_NUMBER.findall(question))),
        float(len(_QUOTES.findall(question))),
        round(overlap, 6),
        float(size),
    ]


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
    """The audit report of ``items`` (``schemas``: db_id -> :func:`schema_words`), fitted
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
    schemas = schemas or {}
    surface = [surface_features(row["question"], schemas.get(row["db_id"])) for row in rows]
    questions = [row["question"] for row in rows]
    majority = Counter(labels).most_common(1)[0]
    tree, tree_predicted = _surface_model(surface, labels, groups, folds)
    words, words_predicted = _words_model(questions, labels, groups, folds)
    sampled = {"sampled": {"of": everything, "seed": seed}} if len(rows) < everything else {}
    return {
        "items": len(rows),
        **sampled,
        "families": len(set(groups)),
        "folds": folds,
        "labels": dict(sorted(Counter(labels).items())),
        "majority": {"label": majority[0], "accuracy": _round(majority[1] / len(rows))},
        "surface": {
            "accuracy": _accuracy(tree_predicted, labels),
            "features": _importances(tree),
        },
        "words": {
            "accuracy": _accuracy(words_predicted, labels),
            "telling": _telling_words(words),
        },
        "by_generator": _by_generator(rows, words_predicted, labels),
    }


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
    id, from the stored columns (the provenance's two parts read from its JSON text)."""
    provenance = pl.col("provenance")
    parent = provenance.str.json_path_match("$.parent")
    generator = provenance.str.json_path_match("$.generator")
    read = ["id", "label", "question", "db_id", "provenance"]
    stored = pl.concat([pl.scan_parquet(file).select(read) for file in items.files])
    present = (pl.col("label").fill_null("") != "") & (pl.col("question").fill_null("") != "")
    return (
        stored.filter(present)
        .select(
            "id",
            "label",
            "question",
            "db_id",
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
        LogisticRegression(max_iter=2000),
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


def _by_generator(rows: list[dict], predicted: list, labels: list) -> dict[str, dict]:
    """Per generator: items and the share the words model predicts right (held out)."""
    right: Counter = Counter()
    total: Counter = Counter()
    for row, guess, gold in zip(rows, predicted, labels, strict=True):
        name = row["generator"]
        total[name] += 1
        right[name] += guess == gold
    return {
        name: {"items": total[name], "predictable": _round(right[name] / total[name])}
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
    lines.append("  predictable per generator (words model, held out):")
    for name, row in report["by_generator"].items():
        lines.append(f"    {name}: {row['predictable']} of {row['items']}")
    return "\n".join(lines)


def schemas_of(databases: dict) -> dict:
    """:func:`schema_words` of every database of a build (db_id -> DatabaseRef)."""
    return {db_id: schema_words(ref.schema) for db_id, ref in sorted(databases.items())}


def audit_path(path: Path) -> dict:
    """The audit of a recipe's candidates (``RECIPE.yaml``; also written to its
    ``reports/audit.json``) or of a release folder or items file."""
    from answerable.records import iter_parquet, write_json
    from answerable.release.inspect import load_items

    path = Path(path)
    if path.suffix in (".yaml", ".yml"):
        from answerable.build import load_sources
        from answerable.pipeline import Workspace
        from answerable.recipe import load_recipe

        recipe = load_recipe(path)
        workspace = Workspace(recipe.workdir, recipe.dataset)
        if not workspace.candidates.is_file():
            raise ConfigError(path, None, "no candidates yet", fix=f"answerable build {path}")
        report = audit(
            iter_parquet(workspace.candidates),
            schemas_of(load_sources(recipe).databases),
            seed=recipe.seed,  # the build's sample, when there is one
        )
        write_json(report, workspace.reports / "audit.json")
        return report
    return audit(load_items(path), _release_schemas(path))


def _release_schemas(path: Path) -> dict:
    """Schemas of a release's shipped databases (``databases/<db_id>.sqlite``), if any."""
    folder = path / "databases" if path.is_dir() else path.parent / "databases"
    return release_schemas({file.stem: file for file in folder.glob("*.sqlite")})


def release_schemas(files: dict | None) -> dict:
    """:func:`schema_words` of SQLite files (db_id -> path; None: a schema-only source,
    left out)."""
    from answerable.builders.schema import DatabaseSchema

    return {
        db_id: schema_words(DatabaseSchema.from_sqlite(Path(path), db_id))
        for db_id, path in sorted((files or {}).items())
        if path is not None and Path(path).is_file()
    }
