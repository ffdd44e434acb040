"""The counterfactual step: verified answerable items in, edited items and rejects out.

For every answerable parent (an item with gold SQL, not itself made by this step) two
seeded draws decide what it gets: with probability ``rate`` one problematic item (the
enabled edits are tried in a seeded order and the first whose verification passes is
kept; each failed verification is a reject), and with probability ``control_rate`` one
answerable control. Draws, choices and ids depend only on the recipe seed and the
parent's id, so a rerun gives the same items.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from answerable import __version__
from answerable.builders.counterfactual.generators.base import EditEnv, Parent, Proposal, prepare
from answerable.builders.counterfactual.generators.helpers import verified_by
from answerable.builders.counterfactual.materialize import VariantStore
from answerable.builders.counterfactual.registry import CONTROL_EDIT, GENERATORS, PROBLEM_EDITS
from answerable.builders.counterfactual.script import edit_script, variant_id
from answerable.builders.counterfactual.verify import Failure, reading_records
from answerable.builders.executor import Limits
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import item_id
from answerable.pipeline import StepOutput, first_of_each_id, reject

STEP = "counterfactual"
OWN_GENERATORS = frozenset(GENERATORS)


@dataclass(frozen=True)
class Config:
    """The recipe's ``counterfactual`` section (see ``schemas/recipe.schema.json``)."""

    rate: float = 0.2
    edits: tuple[str, ...] = PROBLEM_EDITS
    synonyms: int = 2
    control_rate: float = 0.1
    control_max_columns: int = 3
    every_edit: bool = False  # surveys: verify and keep every applicable edit of a parent
    model_candidates: bool = False  # the drafting model proposes near-synonyms too
    embeddings: bool = False  # rank the model's names by sentence embeddings

    @classmethod
    def from_section(cls, section: dict) -> Config:
        """The config of a recipe section; absent keys take their defaults."""
        known = {k: v for k, v in section.items() if k in cls.__dataclass_fields__}
        if "edits" in known:
            known["edits"] = tuple(known["edits"])
        return cls(**known)

    def signature(self) -> dict:
        """What the step's cache key holds of the config."""
        return {**vars(self), "edits": list(self.edits)}


@dataclass
class Stats:
    """Counts per edit: proposed, skipped (by reason), rejected (by reason), emitted."""

    parents: int = 0
    selected: int = 0
    proposed: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)
    emitted: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        """A plain-text table for scripts and logs."""
        out = [f"parents {self.parents}, selected for a problematic edit {self.selected}"]
        out.append("per edit: proposed, emitted; skipped and rejected by reason")
        for name in sorted(set(self.proposed) | {k[0] for k in self.skipped}):
            out.append(f"  {name}: proposed {self.proposed[name]}, emitted {self.emitted[name]}")
            for (edit, reason), n in sorted(self.skipped.items()):
                if edit == name:
                    out.append(f"    skipped {reason}: {n}")
            for (edit, reason), n in sorted(self.rejected.items()):
                if edit == name:
                    out.append(f"    rejected {reason}: {n}")
        return out


def edit_env(databases: dict, variants: Path, seed: int, limits: Limits, config: Config) -> EditEnv:
    """The environment of one run: variants materialized under ``variants``."""
    return EditEnv(
        databases,
        VariantStore(variants, limits),
        seed,
        limits,
        synonyms=config.synonyms,
        control_max=config.control_max_columns,
    )


# what is_parent reads, and db_id (of the provenance, only its generator is read)
PARENT_FIELDS = ("db_id", "label", "sql", "provenance.generator")


def is_parent(item: dict) -> bool:
    """An answerable item with gold SQL that this step did not make."""
    generator = (item.get("provenance") or {}).get("generator")
    return (
        item.get("label") == "answerable"
        and bool(item.get("sql"))
        and (generator not in OWN_GENERATORS)
    )


# what run_counterfactual reads of a parent drawn for no edit (see is_parent, _prepare)
UNDRAWN_FIELDS = ("id", "db_id", "label", "sql", "dialect", "provenance")


def draws(parent_id: str, env: EditEnv, config: Config) -> tuple[bool, bool]:
    """Whether the parent is drawn for a problematic edit, and for a control: two seeded
    draws on its id (made once per process and parent)."""
    if parent_id not in env.draws:
        selected = env.rng(f"{STEP}/select", parent_id).random() < config.rate
        control = env.rng(f"{STEP}/control", parent_id).random() < config.control_rate
        env.draws[parent_id] = selected, control
    return env.draws[parent_id]


def run_counterfactual(items: list[dict], env: EditEnv, config: Config) -> tuple[StepOutput, Stats]:
    """Edited items for the answerable parents among ``items``, with rejects and counts.
    A parent drawn for no edit (:func:`draws`) is read for :data:`UNDRAWN_FIELDS` only."""
    output, stats, seen = StepOutput(), Stats(), set()
    for item in sorted((i for i in items if is_parent(i)), key=lambda i: i["id"]):
        stats.parents += 1
        selected, control = draws(item["id"], env, config)
        parent = _prepare(item, env, output, drawn=selected or control)
        if parent is None:
            continue
        if selected:
            stats.selected += 1
            made = _verified(parent, env, config.edits, output, stats, config.every_edit)
            _emit(made, output, seen)
        if control:
            _emit(_verified(parent, env, (CONTROL_EDIT,), output, stats), output, seen)
    return output, stats


def _prepare(item: dict, env: EditEnv, output: StepOutput, drawn: bool = True) -> Parent | None:
    """The prepared parent, or None: rejected (its engine, or its SQL does not bind), or
    not ``drawn`` for any edit. A parent drawn for none is prepared only as far as its
    reject needs: when a text masked alike bound, so does it (:meth:`Shapes.binds`)."""
    engine = getattr(env.databases.get(item["db_id"]), "engine", "sqlite")
    if engine != "sqlite":  # variants are edited SQLite files (materialize.py)
        detail = f"edits are made on SQLite sources only; {item['db_id']} is read by {engine}"
        output.rejects.append(reject(item["id"], STEP, "engine-not-supported", detail))
        return None
    try:
        schema = env.databases[item["db_id"]].schema
        views = env.views(item["db_id"])
        plain = item.get("dialect", "sqlite") == "sqlite"
        if not drawn and plain and env.shapes.binds(item["sql"], schema):
            return None
        parent = prepare(item, schema, views, env.shapes)
    except (SQLError, KeyError) as error:
        output.rejects.append(reject(item["id"], STEP, "parent-does-not-bind", str(error)))
        return None
    if plain:
        env.shapes.remember(item["sql"], parent.query, schema)
    return parent if drawn else None


def _verified(
    parent: Parent,
    env: EditEnv,
    names: tuple[str, ...],
    output: StepOutput,
    stats: Stats,
    every: bool = False,
) -> list[dict]:
    """Edits tried in a seeded order, each proposed only when its turn comes: the item
    of the first that passes its checks (with ``every``, of each that passes). A parent
    no edit applies to is one reject, whose detail lists each edit's reason."""
    order = list(names)
    env.rng(f"{STEP}/order", parent.id).shuffle(order)
    skips, made, proposed = [], [], 0
    for name in order:
        proposal = GENERATORS[name].propose(parent, env)
        if isinstance(proposal, str):
            stats.skipped[name, proposal] += 1
            skips.append(f"{name}: {proposal}")
            continue
        proposed += 1
        stats.proposed[name] += 1
        item = _verified_item(proposal, env, output, stats)
        if item is not None:
            made.append(item)
            if not every:
                break
    if not proposed:
        detail = "; ".join(sorted(skips))
        output.rejects.append(
            reject(parent.id, STEP, "no-applicable-edit", detail, db_id=parent.db_id)
        )
    return made


def _verified_item(proposal: Proposal, env: EditEnv, output: StepOutput, stats: Stats):
    """The item of a proposal that passes its checks; a reject (and None) otherwise.

    A materialization or execution error during the checks is a failed check too."""
    try:
        failure = GENERATORS[proposal.generator].verify(proposal, env)
    except SQLError as error:
        failure = Failure(error.reason, str(error))
    if failure is None:
        stats.emitted[proposal.generator] += 1
        return make_item(proposal, env)
    stats.rejected[proposal.generator, failure.reason] += 1
    output.rejects.append(
        reject(
            proposal_id(proposal),
            proposal.generator,
            failure.reason,
            failure.detail,
            parent=proposal.parent.id,
            db_id=proposal.parent.db_id,
            question=proposal.question,
        )
    )
    return None


def _emit(items: list[dict], output: StepOutput, seen: set) -> None:
    for item in items:
        if item["id"] in seen:
            output.rejects.append(_repeated(item))
            continue
        seen.add(item["id"])
        output.items.append(item)


def _repeated(item: dict) -> dict:
    return reject(item["id"], STEP, "duplicate", "the same edited item again")


def drop_repeated(output: StepOutput) -> StepOutput:
    """The output with each id's first item only (the later ones become rejects), as
    one run over every parent in order gives: shards of parents are merged by it."""
    return first_of_each_id(output, lambda item, _first: _repeated(item))  # a stream


def _identity(proposal: Proposal) -> tuple[str | None, str | None, dict]:
    """The fields an item's id hashes besides database and question: sql, variant, edit."""
    parent = proposal.parent
    edit = edit_script(parent.db_id, proposal.ops)
    if proposal.question_edit is not None:
        edit["question"] = proposal.question_edit
    answerable = GENERATORS[proposal.generator].label == "answerable"
    db_variant = variant_id(parent.db_id, proposal.ops) if proposal.ops else None
    return (parent.item["sql"] if answerable else None), db_variant, edit


def proposal_id(proposal: Proposal) -> str:
    """The id the proposal's item has (or would have had, when it is rejected)."""
    sql, db_variant, edit = _identity(proposal)
    return item_id(proposal.parent.db_id, proposal.question, sql, db_variant, edit)


def make_item(proposal: Proposal, env: EditEnv) -> dict:
    """The item record of a verified proposal."""
    generator, parent = GENERATORS[proposal.generator], proposal.parent
    sql, db_variant, edit = _identity(proposal)
    answerable = sql is not None
    source = parent.item.get("provenance") or {}
    return {
        "id": proposal_id(proposal),
        "db_id": parent.db_id,
        "db_variant": db_variant,
        "question": proposal.question,
        "sql": sql,
        "dialect": parent.item.get("dialect", "sqlite"),
        "label": generator.label,
        "category": generator.category,
        "subtype": proposal.subtype,
        "spans": proposal.spans,
        "trigger": proposal.trigger,
        "explanation": proposal.explanation,
        "edit": edit,
        "result": proposal.result if answerable else None,
        "sql_meta": parent.item.get("sql_meta") if answerable else None,
        "provenance": {
            "generator": generator.name,
            "tool_version": __version__,
            "source": source.get("source"),
            "external_id": source.get("external_id"),
            "params": {**proposal.params, "verified_by": verified_by(env, parent)},
            "seed": env.seed,
            "parent": parent.id,
        },
        **_readings(proposal),
    }


def _readings(proposal: Proposal) -> dict:
    """``readings`` of an ambiguous item verified by execution: each reading's name
    (the candidate column, or the column the value is compared with), SQL and results."""
    if not proposal.reading_results:
        return {}
    trigger = proposal.trigger or {}
    names = trigger.get("candidates") or trigger.get("columns") or []
    return {"readings": reading_records(names, proposal.readings, proposal.reading_results)}
