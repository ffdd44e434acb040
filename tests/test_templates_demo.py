"""The demo templates (raw/demo/templates) and the demo build's template pairs."""

from __future__ import annotations

from collections import Counter

import pytest

from answerable.builders import sqlkit
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.common import DatabaseRef
from answerable.builders.templates import Settings, SQLWriter, expand_templates, load_templates
from answerable.kernel.records import read_jsonl, read_parquet
from tests.conftest import DEMO_RECIPE, REPO, run_in

TEMPLATES = REPO / "raw" / "demo" / "templates"


@pytest.fixture(scope="module")
def demo_refs(demo_dir):
    return {
        db: DatabaseRef(
            db, demo_dir / f"{db}.sqlite", DatabaseSchema.from_sqlite(demo_dir / f"{db}.sqlite", db)
        )
        for db in ("clinic", "league")
    }


@pytest.fixture(scope="module")
def one_pair_each(demo_refs):
    loaded = load_templates([TEMPLATES], REPO / "raw" / "demo")
    assert loaded.rejects == []
    return loaded.templates, expand_templates(
        loaded.templates, demo_refs, Settings(seed=13, quota=1)
    )


def test_at_least_40_templates_each_with_several_questions(one_pair_each):
    templates, made = one_pair_each
    assert len(templates) >= 40
    assert all(len(t.questions) >= 2 for t in templates)
    assert Counter(i["provenance"]["external_id"] for i in made.items) == Counter(
        {t.id: 1 for t in templates}
    )


def test_they_cover_every_operation_and_hardness(one_pair_each, demo_refs):
    _, made = one_pair_each
    operations, hardness = set(), set()
    for item in made.items:
        meta = sqlkit.analyze(item["sql"], demo_refs[item["db_id"]].schema)
        assert meta == item["sql_meta"]
        operations.update(meta["operations"])
        hardness.add(meta["hardness"])
    assert operations == set(sqlkit.OPERATIONS)
    assert hardness == {"easy", "medium", "hard"}


def test_the_memoized_writer_matches_sqlglot_on_every_demo_template(one_pair_each):
    templates, made = one_pair_each
    values = {
        i["provenance"]["external_id"]: i["provenance"]["params"]["values"] for i in made.items
    }
    for template in templates:
        writer = SQLWriter(template.tree)
        assert writer.sql(values[template.id]) == writer.tree(values[template.id]).sql("sqlite")


WRITTEN_VALUES = ["it's", "Ünïcode", "", "50%", 0, 7, -3, 2.5, -0.125, 1e-7, 2**62, None]


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb", "postgres"])
def test_the_writers_pieces_give_what_sqlglot_prints_for_every_shape(one_pair_each, dialect):
    """Every demo template, in each engine's dialect (as the expander writes it), over
    value sets of every shape: the text from remembered pieces is the whole tree's."""
    import random

    from answerable.builders import sqlkit

    templates, _made = one_pair_each
    rng = random.Random(5)
    for template in templates:
        tree = template.tree
        if dialect != "sqlite":
            tree = sqlkit.portable(tree.copy(), "sqlite", dialect)
        writer = SQLWriter(tree, dialect)
        for _ in range(30):
            values = {name: rng.choice(WRITTEN_VALUES) for name in template.names}
            assert writer.sql(values) == writer.tree(values).sql(dialect), template.id


def drawn(output) -> dict:
    """Each template's value set, by template id."""
    return {
        i["provenance"]["external_id"]: i["provenance"]["params"]["values"] for i in output.items
    }


def test_another_seed_draws_other_values(demo_refs, one_pair_each):
    templates, made = one_pair_each
    other = expand_templates(templates, demo_refs, Settings(seed=14, quota=1))
    first, second = drawn(made), drawn(other)
    changed = [t for t, v in first.items() if second.get(t) != v]
    assert len(changed) > len(templates) * 0.8


@pytest.fixture()
def built(demo_build):
    return demo_build


def test_demo_build_pairs_are_verified_and_rerun_to_the_same_hash(built):
    cwd, result = built
    assert "template_v1:" in result.output
    items = read_parquet(cwd / ".answerable" / "answerable-demo" / "candidates.parquet")
    pairs = [i for i in items if i["provenance"]["generator"] == "template_v1"]
    assert len(pairs) >= 100
    demo = cwd / ".answerable" / "demo"
    for item in pairs:
        assert 0 < item["result"]["row_count"] <= 100 and not item["result"]["truncated"]
        with ReadOnlyDatabase(demo / f"{item['db_id']}.sqlite") as db:
            assert db.execute(item["sql"]).hash == item["result"]["hash"], item["sql"]


def test_demo_build_rejects_carry_reasons(built):
    cwd, _ = built
    rejects = list(
        read_jsonl(cwd / ".answerable" / "answerable-demo" / "reports" / "rejects.jsonl")
    )
    for line in rejects:
        if line["step"] == "template_v1":
            assert line["reason"] and line["template"]


def test_rerun_takes_the_template_step_from_the_cache(built):
    cwd, _ = built
    result = run_in(cwd, "build", DEMO_RECIPE, "--no-release")
    assert result.exit_code == 0, result.output
    assert (
        "template_v1:" in result.output
        and "(cached)" in result.output.split("template_v1:")[1].splitlines()[0]
    )


def test_a_missing_template_path_names_the_recipe_key(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        DEMO_RECIPE.read_text()
        .replace("paths: [templates]", "paths: [no-such-folder]")
        .replace("path: seeds/", f"path: {DEMO_RECIPE.parent}/seeds/")
    )
    result = run_in(tmp_path, "build", recipe)
    assert result.exit_code == 1
    assert "templates.paths[0]" in result.output and "not found" in result.output


def test_a_template_file_outside_the_recipe_folder_is_named_relative_to_it():
    recipe_folder = REPO / "raw" / "recipes" / "scare"
    loaded = load_templates([recipe_folder / ".." / ".." / "demo" / "templates"], recipe_folder)
    sources = {template.source for template in loaded.templates}
    assert sources == {"../../demo/templates/clinic.yaml", "../../demo/templates/league.yaml"}
