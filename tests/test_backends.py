"""Executor backends: the recipe picks one (or fails with a ConfigError that says how to
fix it), errors cross from a worker to the build whole, and the Ray backend gives the
local backend's bytes for the demo build, retries a task whose worker died and resumes
from the stored shards."""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from answerable.builders.executor import Limits
from answerable.kernel.errors import ConfigError, SQLError
from answerable.kernel.progress import Progress
from answerable.kernel.recipe import load_recipe
from answerable.pipeline import BuildContext, Execution, StepOutput, Workspace
from answerable.pipeline.shards import PerProcess, run_in_shards
from tests.conftest import DEMO_RECIPE, run_in
from tests.test_shards import demo_copy, outputs, toy_work

UNITS = list(range(23))
NO_RAY = "the ray backend's tests need Ray: pip install -e '.[test,ray]'"


def context(tmp_path: Path, backend: str, workers: int = 2, size: int = 3):
    return SimpleNamespace(
        execution=Execution(workers, size, backend),
        progress=Progress(),
        close=lambda: None,
        workspace=Workspace(tmp_path, "toy"),
    )


def with_execution(tmp_path: Path, **execution) -> Path:
    """A copy of the demo recipe and its inputs with these ``execution`` keys."""
    recipe = demo_copy(tmp_path, workers=2, shard_size=64)
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data["execution"].update(execution)
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return recipe


# ---- choosing a backend -----------------------------------------------------------------


def test_an_unknown_backend_is_a_config_error_naming_the_key_and_the_choices(tmp_path):
    recipe = with_execution(tmp_path, backend="slurm")
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 1
    assert (
        f"{recipe}: execution.backend: no backend is called 'slurm' (fix: use one of: local, ray)"
    ) in result.output
    assert not (tmp_path / ".answerable").exists()  # it failed before anything ran
    checked = run_in(tmp_path, "validate", recipe)
    assert checked.exit_code == 1 and "execution.backend" in checked.output


def test_the_ray_backend_without_ray_installed_says_how_to_install_it(tmp_path):
    recipe = with_execution(tmp_path, backend="ray")
    hide_ray = "import sys; sys.modules['ray'] = None; from answerable.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", hide_ray, "build", str(recipe)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert (
        f"{recipe}: execution.backend: the ray backend needs Ray, which is not installed "
        "(fix: pip install 'answerable[ray]', or set execution.backend: local)"
    ) in result.stderr
    assert "Traceback" not in result.stderr


def test_how_the_shards_run_is_no_part_of_the_recipes_signature(tmp_path):
    plain = load_recipe(with_execution(tmp_path / "a"))
    on_ray = load_recipe(with_execution(tmp_path / "b", backend="ray", ray_address="head:6379"))
    assert plain.signature() == on_ray.signature()
    assert plain.signature() != load_recipe(with_execution(tmp_path / "c", row_cap=7)).signature()


# ---- what crosses to a worker ----------------------------------------------------------


def test_errors_cross_a_process_boundary_whole():
    for error in (ConfigError("r.yaml", "execution", "bad", fix="mend it"), SQLError("x", "y")):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error)
        assert vars(again) == vars(error)


@pytest.mark.timeout(60)
def test_a_config_error_in_a_forked_worker_reaches_the_build(tmp_path):
    def fails_at_13(shard: list[int]) -> StepOutput:
        if 13 in shard:
            raise ConfigError("t.yaml", "templates", "no such database", fix="name one")
        return toy_work()(shard)

    with pytest.raises(ConfigError, match=r"^t\.yaml: templates: no such database"):
        run_in_shards(context(tmp_path, "local"), tmp_path / "step", "toy", UNITS, fails_at_13, str)


def test_a_pickled_context_and_per_process_value_carry_no_connection(tmp_path):
    recipe = load_recipe(DEMO_RECIPE)
    ctx = BuildContext(recipe, {}, Limits(1.0, 10), Workspace(tmp_path, "d"))
    ctx.progress = Progress("lines")
    with open(os.devnull) as stand_in:  # an open connection would not pickle either
        ctx._open["clinic"] = stand_in
        again = pickle.loads(pickle.dumps(ctx))
    assert again._open == {} and again.progress.mode == "off"
    assert again.recipe.signature() == recipe.signature() and again.limits == ctx.limits

    value = PerProcess(partial(sorted, "cab"), list.clear)
    assert value.get() == ["a", "b", "c"]
    again = pickle.loads(pickle.dumps(value))
    assert (again._pid, again._value) == (None, None)  # made again in the other process
    assert again.get() == ["a", "b", "c"] and again._pid == os.getpid()


def test_the_verbose_line_says_where_the_shards_run(monkeypatch):
    """`-v` announces each step with where its pending shards run: the local backend's
    process count (never more than the shards to do), Ray's cluster address."""
    from answerable.backends import local
    from answerable.backends import ray as on_ray

    def ctx(address=None):
        return SimpleNamespace(execution=SimpleNamespace(ray_address=address))

    assert local.where(ctx(), 2, [0, 1, 2]) == "2 workers"
    assert local.where(ctx(), 4, [7]) == "1 worker"
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert on_ray.where(ctx("10.0.0.5:6379"), 2, [0]) == "on the Ray cluster at 10.0.0.5:6379"
    assert on_ray.where(ctx(), 2, [0]) == "on Ray (this machine)"
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")
    assert on_ray.where(ctx(), 2, [0]) == "on the Ray cluster at head:6379"


# ---- Ray -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_instance():
    """A local Ray instance of two CPUs, started once (only this module uses it, and it
    stops when the module ends, so its processes do not outlive its tests); the builds'
    backend joins it. ``address="local"``: never a cluster someone started on this
    machine. No model endpoint in its environment, as no test has one."""
    ray = pytest.importorskip("ray", reason=NO_RAY)
    with pytest.MonkeyPatch.context() as patch:
        for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "RAY_ADDRESS"):
            patch.delenv(name, raising=False)
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    yield ray
    ray.shutdown()


def where(shard: list[int]) -> StepOutput:
    """Each unit's item, with the process that made it and that process's parent."""
    made = toy_work()(shard)
    for item in made.items:
        item |= {"pid": os.getpid(), "parent": os.getppid()}
    return made


def test_ray_runs_every_shard_once_in_its_own_workers(ray_instance, tmp_path):
    made = run_in_shards(context(tmp_path, "ray"), tmp_path / "step", "toy", UNITS, where, str)
    whole = toy_work()(UNITS)
    assert [{k: i[k] for k in ("id", "question")} for i in made.items] == whole.items
    assert made.rejects == whole.rejects
    assert {item["pid"] for item in made.items} & {os.getpid()} == set()
    assert {item["parent"] for item in made.items} & {os.getpid()} == set()  # not forked
    assert len(list((tmp_path / "step" / "shards").iterdir())) == 8  # stored by this process


def test_a_shards_error_on_ray_is_raised_as_itself_and_a_rerun_resumes(ray_instance, tmp_path):
    calls, folder = tmp_path / "calls", tmp_path / "step"

    def fails_at_13(shard: list[int]) -> StepOutput:
        if 13 in shard:
            raise ConfigError("t.yaml", "templates", "no such database", fix="name one")
        return toy_work(calls)(shard)

    ctx = context(tmp_path, "ray", size=4)
    with pytest.raises(ConfigError) as raised:
        run_in_shards(ctx, folder, "toy", UNITS, fails_at_13, str)
    assert str(raised.value) == "t.yaml: templates: no such database (fix: name one)"
    stored = {p.name for p in (folder / "shards").iterdir()}
    assert len(stored) < 6  # the failed shard is not stored

    (tmp_path / "again").mkdir()
    made = run_in_shards(ctx, folder, "toy", UNITS, toy_work(tmp_path / "again"), str)
    assert len(list((tmp_path / "again").iterdir())) == 6 - len(stored)  # only the rest ran
    whole = toy_work()(UNITS)
    assert (list(made.items), made.rejects) == (whole.items, whole.rejects)


def test_ray_runs_a_shard_again_when_its_worker_dies(ray_instance, tmp_path):
    died = tmp_path / "died"

    def dies_once_at_13(shard: list[int]) -> StepOutput:
        if 13 in shard and not died.exists():
            died.touch()
            os._exit(1)  # as a worker killed for memory, or a lost node, would end
        return toy_work()(shard)

    ctx = context(tmp_path, "ray", size=4)
    made = run_in_shards(ctx, tmp_path / "step", "toy", UNITS, dies_once_at_13, str)
    whole = toy_work()(UNITS)
    assert died.exists() and (list(made.items), made.rejects) == (whole.items, whole.rejects)


@pytest.mark.slow
def test_the_demo_build_on_ray_gives_the_local_backends_bytes(
    ray_instance, default_build, tmp_path
):
    from answerable.backends import ray as on_ray

    recipe = with_execution(tmp_path, backend="ray")
    (tmp_path / "run").mkdir()
    ran, original = [], on_ray.outputs

    def counted(*args):
        for index, output in original(*args):
            ran.append(index)
            yield index, output

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(on_ray, "outputs", counted)
        result = run_in(tmp_path / "run", "build", recipe)
    assert result.exit_code == 0, result.output
    assert len(ran) >= 4 * 3  # every sharded stage's shards ran on Ray
    mine, local = outputs(tmp_path / "run"), outputs(default_build)
    assert len(mine) > 50  # candidates, reports, the release and its databases
    assert [name for name in mine if mine[name] != local.get(name)] == []
    assert set(local) == set(mine)
