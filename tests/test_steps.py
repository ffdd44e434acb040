"""Build steps: the runner caches and shards a step's work, a recipe's ``steps:`` list is
checked when the steps are assembled, and the list chooses what a build runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from answerable.build import STEPS
from answerable.kernel.errors import ConfigError
from answerable.kernel.ids import content_hash
from answerable.kernel.progress import SILENT
from answerable.kernel.recipe import Recipe
from answerable.pipeline import Execution, ItemsSoFar, StepOutput, Workspace
from answerable.pipeline.steps import Work, assemble, run_step
from tests.conftest import run_in
from tests.test_cli import assert_clean_error, seed, tiny_project

REPO = Path(__file__).resolve().parents[1]
DEFAULT = [step.name for step in STEPS]


def recipe_with(data: dict) -> Recipe:
    data = {"dataset": "t", "version": "0.1.0", "seed": 1, "sources": [{}], **data}
    return Recipe(Path("recipe.yaml"), data, Path("w"), Path("o"))


def test_the_default_order_is_the_builds_and_every_step_declares_itself():
    assert DEFAULT == [
        "seed_v1",
        "template_v1",
        "counterfactual",
        "drafting",
        "candidate_sql",
        "cross_check",
    ]
    for step in STEPS:
        assert step.section and step.makes and isinstance(step.withdraws, bool)


def test_the_schema_lists_exactly_the_steps_in_their_order():
    schema = json.loads((REPO / "schemas" / "recipe.schema.json").read_text())
    assert schema["properties"]["steps"]["items"]["enum"] == DEFAULT


def test_sections_turn_steps_on_in_the_default_order():
    recipe = recipe_with({"drafting": {}, "counterfactual": {}})
    assert [s.name for s in assemble(recipe, STEPS)] == [
        "seed_v1",
        "counterfactual",
        "drafting",
        "candidate_sql",
    ]
    crossed = recipe_with({"execution": {"cross_check": ["duckdb"]}})
    assert [s.name for s in assemble(crossed, STEPS)] == ["seed_v1", "cross_check"]


def test_a_list_chooses_and_orders_the_steps():
    recipe = recipe_with(
        {"drafting": {}, "counterfactual": {}, "steps": ["seed_v1", "drafting", "candidate_sql"]}
    )
    assert [s.name for s in assemble(recipe, STEPS)] == ["seed_v1", "drafting", "candidate_sql"]
    reordered = recipe_with(
        {"drafting": {}, "counterfactual": {}, "steps": ["seed_v1", "drafting", "counterfactual"]}
    )
    assert [s.name for s in assemble(reordered, STEPS)] == ["seed_v1", "drafting", "counterfactual"]


@pytest.mark.parametrize(
    ("steps", "key", "words", "fix"),
    [
        (["seed_v1", "merge"], "steps[1]", "unknown step 'merge'", "use steps of: seed_v1"),
        (["seed_v1", "seed_v1"], "steps[1]", "listed twice", "list each step once"),
        (["drafting", "seed_v1"], "steps[0]", "reads verified", "seed_v1 or template_v1 before"),
        (["seed_v1", "candidate_sql", "drafting"], "steps[1]", "drafted", "list drafting before"),
        (["seed_v1", "cross_check", "counterfactual"], "steps[1]", "edited", "counterfactual"),
    ],
)  # fmt: skip
def test_a_wrong_list_names_the_key_and_the_fix(steps, key, words, fix):
    with pytest.raises(ConfigError) as caught:
        assemble(recipe_with({"drafting": {}, "steps": steps}), STEPS)
    assert caught.value.key == key
    assert words in str(caught.value)
    assert fix in caught.value.fix


def test_a_wrong_list_is_one_line_before_anything_is_built(tmp_path):
    recipe = tiny_project(
        tmp_path, [seed("How many items?", "SELECT count(*) FROM item")], "steps: [drafting]\n"
    )
    result = run_in(tmp_path, "build", recipe)
    assert_clean_error(result, str(recipe), "steps[0]", "seed_v1", "fix:")
    assert not (tmp_path / ".answerable" / "tiny" / "steps").exists()
    assert_clean_error(run_in(tmp_path, "validate", recipe), "steps[0]", "fix:")


def test_an_unknown_step_in_a_recipe_file_is_one_line(tmp_path):
    recipe = tiny_project(
        tmp_path,
        [seed("How many items?", "SELECT count(*) FROM item")],
        "steps: [seed, drafting]\n",
    )
    assert_clean_error(run_in(tmp_path, "build", recipe), str(recipe), "steps[0]", "fix:")


def test_a_build_runs_the_steps_listed(tmp_path):
    recipe = tiny_project(
        tmp_path,
        [seed("How many items?", "SELECT count(*) FROM item")],
        "steps: [seed_v1]\ndrafting: {}\n",
    )
    result = run_in(tmp_path, "build", recipe, "--no-release")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / ".answerable" / "tiny" / "reports" / "build.json").read_text())
    assert list(report["steps"]) == ["seed_v1"]


# ---- the runner -------------------------------------------------------------------------


class ToyStep:
    """Units 0..n-1 in shards: each unit an item, every third a reject; the merge keeps
    the items in order and counts them. ``nothing``: no work for this recipe."""

    name = "toy_v1"
    section = "toy"
    needs: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    makes = ("toy",)
    withdraws = False

    def __init__(self, units: int, nothing: bool = False, dies_at: int | None = None):
        self.units, self.nothing, self.calls, self.closed = units, nothing, [], 0
        self.dies_at = dies_at  # the unit whose shard is killed

    def signature(self, ctx, items):
        return None if self.nothing else ({"units": self.units}, {"items": items.ids()})

    def work(self, ctx, items, folder):
        def run(shard):
            if self.dies_at in shard:
                raise KeyboardInterrupt
            self.calls.append(list(shard))
            made = StepOutput([{"id": f"t{n:03d}", "question": str(n)} for n in shard])
            made.rejects += [{"id": f"t{n:03d}", "reason": "third"} for n in shard if n % 3 == 0]
            return made

        def merge(made):
            items = list(made.items)
            every = len(items)
            return StepOutput(
                [{**i, "question": f"{i['question']} of {every}"} for i in items], made.rejects
            )

        work = Work(run=run, units=list(range(self.units)), merge=merge)
        work.resources.callback(self.close)
        return work

    def close(self):
        self.closed += 1


def toy_context(tmp_path: Path):
    return SimpleNamespace(
        execution=Execution(1, 4),
        progress=SILENT,
        close=lambda: None,
        workspace=Workspace(tmp_path, "toy"),
        signature=lambda step, config, inputs: content_hash([step, config, inputs]),
    )


def test_the_runner_stores_a_step_and_serves_it_again(tmp_path):
    ctx, step = toy_context(tmp_path), ToyStep(10)
    made, cached = run_step(step, ctx, ItemsSoFar())
    assert not cached and step.closed == 1
    assert step.calls == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]  # shards of shard_size
    assert [i["question"] for i in made.items] == [f"{n} of 10" for n in range(10)]
    assert [r["id"] for r in made.rejects] == ["t000", "t003", "t006", "t009"]
    again, cached = run_step(step, ctx, ItemsSoFar())
    assert cached and step.calls == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and step.closed == 1
    assert list(again.items) == list(made.items) and list(again.rejects) == list(made.rejects)
    folders = sorted(p.name for p in (tmp_path / "toy" / "steps").iterdir())
    assert len(folders) == 1 and folders[0].startswith("toy_v1-")


def test_the_runner_resumes_from_the_shards_a_killed_step_stored(tmp_path):
    ctx = toy_context(tmp_path)
    killed = ToyStep(10, dies_at=8)
    with pytest.raises(KeyboardInterrupt):
        run_step(killed, ctx, ItemsSoFar())
    assert killed.calls == [[0, 1, 2, 3], [4, 5, 6, 7]] and killed.closed == 1
    step = ToyStep(10)
    made, cached = run_step(step, ctx, ItemsSoFar())
    assert not cached and step.calls == [[8, 9]]  # the two finished shards are not redone
    assert [i["question"] for i in made.items] == [f"{n} of 10" for n in range(10)]
    assert [r["id"] for r in made.rejects] == ["t000", "t003", "t006", "t009"]


def test_a_step_with_nothing_to_do_stores_nothing(tmp_path):
    made, cached = run_step(ToyStep(5, nothing=True), toy_context(tmp_path), ItemsSoFar())
    assert (list(made.items), list(made.rejects), cached) == ([], [], False)
    assert not (tmp_path / "toy" / "steps").exists()


def test_items_withdrawn_are_gone_from_every_view():
    items = ItemsSoFar()
    items.add([{"id": "a", "v": 1}, {"id": "b", "v": 1}, {"id": "c", "v": 1}])
    items.add([{"id": "b", "v": 2}])
    items.withdraw(["c"])
    assert list(items) == [{"id": "a", "v": 1}, {"id": "b", "v": 2}]
    assert len(items) == 2 and items.ids() == ["a", "b"]
    assert [i["id"] for i in items.fields("v")] == ["a", "b"]
