"""The dataset card: ``README.md`` of a release, written from its manifest, items and
report.

A Hugging Face YAML header (one config with a data file per split, license, task
categories, language, size category, pretty name), then what the benchmark is, how it
was built, its composition per split (with the chart), the leakage report, known
limitations, how to load and score it, its licenses and how to cite it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl
import yaml

from answerable.kernel.item_model import open_fields
from answerable.release.cut.dialects import card_lines as dialect_lines
from answerable.release.databases import card_lines as database_lines
from answerable.release.documents.chart import CHART
from answerable.release.documents.glossary import category_lines, field_lines
from answerable.release.reader import data_files, split_order

CARD = "README.md"
SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))
SIZES += ((10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"))
PROVENANCE = ("generator", "tool_version", "model", "prompt_hash")


@dataclass
class About:
    """What a card says beyond the items: the recipe's description and file, the
    dataset's license (SPDX id; None: not chosen), each source database's license where
    known, and the review report (policy, counts, agreement) when people reviewed."""

    description: str = ""
    recipe: str = ""
    license: str | None = None
    source_licenses: dict[str, str] = field(default_factory=dict)
    review: dict | None = None
    audit: dict | None = None  # the build's shortcut audit of its candidates


def size_category(total: int) -> str:
    """Hugging Face's size bucket of a dataset with ``total`` items."""
    return next((name for limit, name in SIZES if total < limit), "n>100M")


def hf_license(spdx: str | None) -> str:
    """The Hugging Face license id of an SPDX id (lower case), ``unknown`` when none."""
    return spdx.lower() if spdx else "unknown"


def header(manifest: dict, about: About) -> str:
    """The YAML front matter the Hugging Face Hub reads."""
    splits = data_files(manifest)
    configs = [
        {
            "config_name": "default",
            "data_files": [
                {"split": split, "path": (files.get("parquet") or files["jsonl"])["path"]}
                for split, files in splits.items()
            ],
        }
    ]
    meta = {
        "pretty_name": manifest["dataset"],
        "license": hf_license(about.license),
        "language": ["en"],
        "task_categories": ["table-question-answering", "text-classification"],
        "size_categories": [size_category(manifest["counts"]["total"])],
        "tags": ["text-to-sql", "unanswerable-questions", "ambiguous-questions"],
        "configs": configs,
        "dataset_info": dataset_info(manifest),
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


def dataset_info(manifest: dict) -> dict:
    """The card's ``dataset_info``: items and Parquet bytes per split. ``datasets`` keys
    its cache of a local folder on the card's YAML, not on the files, so without these
    two releases of one layout would share (and serve each other's) cached data; with
    them it rebuilds, and checks the item counts it reads."""
    splits = [
        {"name": split, "num_bytes": entry["bytes"], "num_examples": entry.get("rows", 0)}
        for split, files in data_files(manifest).items()
        for entry in [files.get("parquet") or files["jsonl"]]
    ]
    size = sum(split["num_bytes"] for split in splits)
    return {"config_name": "default", "splits": splits, "download_size": size, "dataset_size": size}


def provenance_column(frame: pl.DataFrame, name: str) -> pl.Series:
    """One provenance field of every item (null where the frame does not hold it)."""
    column = frame.get_column("provenance") if "provenance" in frame.columns else None
    if column is None or name not in [f.name for f in column.dtype.fields]:
        return pl.Series(name, [None] * frame.height, dtype=pl.String)
    return column.struct.field(name).cast(pl.String)


def generators(frame: pl.DataFrame) -> pl.DataFrame:
    """Items per generator, tool version and model, with the distinct prompt hashes."""
    columns = pl.DataFrame([provenance_column(frame, name) for name in PROVENANCE])
    return (
        columns.group_by(["generator", "tool_version", "model"])
        .agg(
            pl.len().alias("items"), pl.col("prompt_hash").drop_nulls().n_unique().alias("prompts")
        )
        .sort(["generator", "tool_version", "model"], nulls_last=True)
    )


def composition(frame: pl.DataFrame) -> dict[str, dict[str, dict[str, int]]]:
    """``{"label": {split: {label: n}}, "category": {split: {category: n}}}``."""
    found: dict[str, dict[str, dict[str, int]]] = {"label": {}, "category": {}}
    for column in found:
        counts = frame.group_by(["split", column]).len().sort(["split", column], nulls_last=True)
        for split, value, n in counts.iter_rows():
            found[column].setdefault(split, {})[value or "none"] = n
    return found


def composition_tables(frame: pl.DataFrame) -> list[str]:
    """A markdown table per split (train, dev, test first): items per label, category and
    database."""
    lines = []
    keys = ["label", "category", "db_id"]
    for split in split_order(frame.get_column("split").unique().to_list()):
        rows = frame.filter(pl.col("split") == split).group_by(keys).len()
        rows = rows.sort(keys, nulls_last=True)
        lines += [f"### {split} ({rows['len'].sum()} items)", ""]
        lines += ["| label | category | database | items |", "|---|---|---|---:|"]
        lines += [f"| {lab} | {cat or '—'} | {db} | {n} |" for lab, cat, db, n in rows.iter_rows()]
        lines.append("")
    return lines


def flat(value, prefix: str = "") -> list[str]:
    """``- key.path: value`` lines of a nested report section."""
    if isinstance(value, dict):
        return [line for k, v in value.items() for line in flat(v, f"{prefix}{k}.")]
    shown = value if not isinstance(value, list) or len(value) <= 5 else f"{len(value)} entries"
    return [f"- {prefix.rstrip('.') or 'value'}: {shown}"]


def leakage_lines(leakage: dict | None) -> list[str]:
    """The release report's leakage checks as a table (severity, leaks, first example)."""
    if not leakage:
        return ["The release report holds no leakage section."]
    checks = {k: v for k, v in leakage.items() if isinstance(v, dict) and "severity" in v}
    if not checks:
        return flat(leakage)
    lines = [
        "Checks between splits (`report.json`, section `leakage`); an error stops a release.",
        "",
        "| check | severity | leaks | first example |",
        "|---|---|---:|---|",
    ]
    for name, check in checks.items():
        examples = check.get("examples") or []
        first = ", ".join(f"{k}={v}" for k, v in examples[0].items()) if examples else "—"
        leaks = check.get("leaks", "—") if check["severity"] != "off" else "not checked"
        lines.append(f"| {name.replace('_', ' ')} | {check['severity']} | {leaks} | {first} |")
    return lines


def card_text(
    manifest: dict,
    frame: pl.DataFrame,
    about: About,
    report: dict | None,
    examples: dict | None = None,
) -> str:
    """The whole card (``examples``: a value of each field, for the field table)."""
    name, version = manifest["dataset"], manifest["version"]
    counts = manifest["counts"]
    labels = ", ".join(f"{n} {label}" for label, n in counts["by_label"].items())
    lines = [header(manifest, about), f"# {name} {version}", ""]
    lines += [about.description.strip() or "A text-to-SQL benchmark built with answerable.", ""]
    lines += [
        f"{counts['total']} questions over {len(counts.get('by_db', {}))} databases: {labels}. "
        "Each item is a question over a SQLite database with its label (answerable, "
        "ambiguous or unanswerable), its category, and what proves it: the gold SQL and its "
        "executed result for an answerable question; the trigger, the spans of the question "
        "that cause the problem and an explanation otherwise.",
        "",
        "## How it was built",
        "",
        f"Built by answerable {manifest['tool']['version']} from the recipe "
        f"`{about.recipe or 'recipe.yaml'}` (signature `{manifest['recipe_signature']}`, "
        f"seed {manifest['seed']}); inputs are listed with their sha256 in `manifest.json`.",
        "",
        "| generator | version | model | distinct prompts | items |",
        "|---|---|---|---:|---:|",
    ]
    for generator, tool_version, model, items, prompts in generators(frame).iter_rows():
        lines.append(
            f"| {generator} | {tool_version or '—'} | {model or '—'} | {prompts} | {items} |"
        )
    lines += ["", *review_lines(about.review), ""]
    lines += dialect_lines(manifest)  # release.dialects
    lines += ["## Composition", "", f"![Items per split by label and category]({CHART})", ""]
    lines += composition_tables(frame)
    lines += database_lines(frame, manifest["files"])
    lines += field_lines(examples or {})
    lines += category_lines(frame)
    lines += ["## Leakage between splits", ""]
    lines += leakage_lines((report or {}).get("leakage"))
    lines += ["", "## Shortcut audit", "", *audit_lines(about.audit, (report or {}).get("debias"))]
    lines += ["", "## Limitations", "", *limitation_lines(frame, about), ""]
    lines += load_lines(manifest)
    lines += license_lines(about)
    lines += citation_lines(manifest)
    return "\n".join(lines).rstrip() + "\n"


def _audited(audit: dict) -> str:
    """Which candidates the audit was fitted on: all, or a sample of whole families."""
    if "sampled" in audit:
        return (
            f"a seeded sample of {audit['items']} of the build's {audit['sampled']['of']} "
            "candidates (whole families)"
        )
    return f"the build's {audit['items']} candidates"


def audit_lines(audit: dict | None, debias: dict | None) -> list[str]:
    """What the question's surface alone gives away (the build's audit of its candidates)
    and, with ``release.debias``, what the filter kept and the accuracies after it."""
    lines = []
    if not audit:
        lines.append("No shortcut audit is recorded for this release.")
    elif "skipped" in audit:
        lines.append(f"The shortcut audit was skipped: {audit['skipped']}.")
    else:
        lines += [
            f"How well the question alone predicts the label, on {_audited(audit)} "
            f"({audit['folds']}-fold, a parent and its children in one fold; "
            "`answerable audit`): majority class "
            f"{fmt(audit['majority']['accuracy'])}, a decision tree on surface features "
            f"{fmt(audit['surface']['accuracy'])}, a bag-of-words model "
            f"{fmt(audit['words']['accuracy'])}. Far above the majority class means labels "
            "can be guessed without reading the schema.",
            "",
            "| generator | items | predictable from the words |",
            "|---|---:|---:|",
        ]
        for name, row in audit["by_generator"].items():
            lines.append(f"| {name} | {row['items']} | {fmt(row['predictable'])} |")
        telling = "; ".join(f"{k}: {', '.join(v)}" for k, v in audit["words"]["telling"].items())
        lines += ["", f"Words that point most to a label: {telling}."]
    if debias and "skipped" not in debias:
        before, after = debias["before"], debias["after"]
        lines += [
            "",
            f"Debiased with AFLite by family (`release.debias: aflite`): {debias['kept']} of "
            f"{debias['items']} items kept ({fmt(debias['kept_share'])}) after "
            f"{debias['rounds']} rounds; dropped per label {debias['dropped_by_label']}, "
            f"per category {debias['dropped_by_category']}. "
            f"Accuracy before / after: majority {fmt(before.get('majority'))} / "
            f"{fmt(after.get('majority'))}, surface {fmt(before.get('surface'))} / "
            f"{fmt(after.get('surface'))}, words {fmt(before.get('words'))} / "
            f"{fmt(after.get('words'))}; shortcut gain {fmt(before.get('shortcut_gain'))} / "
            f"{fmt(after.get('shortcut_gain'))} (target {fmt(debias['target'])}).",
        ]
        if "unreached" in debias:
            lines += ["", f"{debias['unreached']}."]
    return lines


def review_lines(review: dict | None) -> list[str]:
    """How items were reviewed, with the agreement figures."""
    if not review:
        return ["No human review is recorded for this release."]
    overall = (review.get("agreement") or {}).get("overall") or {}
    fleiss = (overall.get("fleiss") or {}).get("kappa")
    counts = review.get("counts") or {}
    return [
        f"Review: {review.get('policy', 'policy not recorded')}; {review.get('decisions', 0)} "
        f"decisions; {counts.get('accepted', 0)} items accepted ({counts.get('auto_accepted', 0)} "
        f"from machine-verified generators without review), {counts.get('rejected', 0)} "
        f"rejected. Agreement: percent {fmt(overall.get('percent_agreement'))}, Fleiss' "
        f"kappa {fmt(fleiss)} over {overall.get('items', 0)} items decided by two or more "
        "people. Items still awaiting review are not in this release."
    ]


def fmt(value) -> str:
    """A figure, or ``n/a``."""
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def limitation_lines(frame: pl.DataFrame, about: About) -> list[str]:
    """What a user should know before relying on the data."""
    lines = []
    lines.append(
        "- Kept as JSON text in the typed data files (their shape varies from item to item): "
        f"{', '.join(open_fields())}."
    )
    drafted = {
        g for g in provenance_column(frame, "generator").drop_nulls().to_list() if "draft" in g
    }
    if drafted:
        lines.append(
            f"- Questions from {', '.join(sorted(drafted))} were drafted by rules or a model, "
            "not written by people; read the review figures above."
        )
    lines += [
        "- Results are stored capped at the recipe's row cap; `result.row_count` is the "
        "true count and `result.hash` covers every row.",
        "- Ambiguous and unanswerable labels hold for the shipped database (or its edited "
        "variant), not for other versions of it.",
    ]
    if not about.license:
        lines.append("- **No license was chosen** for this dataset (`release.license` is unset).")
    return lines


def load_lines(manifest: dict) -> list[str]:
    """How to load the release and score predictions on it."""
    splits = list(data_files(manifest))
    split = "test" if "test" in splits or not splits else splits[-1]
    return [
        "## Load and score",
        "",
        "```python",
        "from datasets import load_dataset",
        'ds = load_dataset("path/to/this/folder")          # a DatasetDict with every split',
        "import polars as pl",
        f'item = pl.read_parquet("path/to/this/folder/data/{split}.parquet").row(0, named=True)',
        "from answerable.release.databases import open_item_database",
        'with open_item_database("path/to/this/folder", item) as db:  # the gold query, read-only',
        '    rows = db.execute(item["sql"]).rows if item.get("sql") else None',
        "```",
        "",
        'Score predictions (JSONL lines `{id, sql}` or an EHRSQL-style `{id: sql | "null"}` '
        "object, `null` meaning abstain) with `answerable evaluate . predictions.jsonl "
        f"--split {split}`; check the files with `answerable verify . --execute`.",
        "",
    ]


def license_lines(about: About) -> list[str]:
    """The dataset's license and the source databases' licenses where known."""
    lines = ["## License", ""]
    if about.license:
        lines.append(f"This dataset: {about.license} (see `LICENSE`).")
    else:
        lines.append(
            "**Warning: no license was chosen for this dataset.** Without one, others may "
            "not reuse it; set `release.license` in the recipe (an SPDX id)."
        )
    if about.source_licenses:
        lines += ["", "| source database | license |", "|---|---|"]
        lines += [f"| {db} | {text} |" for db, text in sorted(about.source_licenses.items())]
    return [*lines, ""]


def citation_lines(manifest: dict) -> list[str]:
    """A BibTeX entry for the release."""
    key = f"{manifest['dataset']}-{manifest['version']}".replace(".", "_")
    return [
        "## Citation",
        "",
        "```bibtex",
        f"@misc{{{key},",
        f"  title = {{{manifest['dataset']}: a text-to-SQL benchmark with answerable, "
        "ambiguous and unanswerable questions},",
        f"  note = {{Version {manifest['version']}, built with answerable "
        f"{manifest['tool']['version']}, recipe signature {manifest['recipe_signature']}}},",
        "}",
        "```",
        "",
        "Please cite the answerable toolkit too (`CITATION.cff` in its repository).",
    ]
