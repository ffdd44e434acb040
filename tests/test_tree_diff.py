"""The error types' tree diff (``tree_diff.TreeDiff``) gives sqlglot's edits, node for node,
with the SQL of each content written once per process: on every perturbation of the demo
seeds and of the demo's template queries, on model-like candidates (other gold queries of
the same database, Spider dev) and on the trees whose text sqlglot writes in a way of its
own."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest
from sqlglot import diff, exp

from answerable.builders import sqlkit
from answerable.builders.drafting import error_types, tree_diff
from answerable.builders.drafting.candidates import PERTURBATIONS
from answerable.builders.drafting.context import load_context
from answerable.builders.drafting.error_types import classify
from answerable.builders.drafting.tree_diff import Contents, TreeDiff
from answerable.builders.executor import ReadOnlyDatabase
from answerable.builders.schema import DatabaseSchema
from answerable.builders.sources.spider import load_spider
from answerable.kernel.records import read_jsonl
from tests.conftest import REPO, shared_data
from tests.test_error_types import GOLD


def script(edits: list) -> list[tuple]:
    """An edit script as the edits' kinds and the very nodes they name."""
    return [(type(e).__name__, *(id(node) for node in vars(e).values())) for e in edits]


def assert_same_diff(source: exp.Expr, target: exp.Expr) -> None:
    """TreeDiff's edits are sqlglot's (the same kinds naming the same nodes, in order),
    and its SQL of each named node is the node's own."""
    expected = script(diff(source, target, delta_only=True))
    found = TreeDiff(source, target)
    assert script(found.edits) == expected, (source.sql(), target.sql())
    for edit in found.edits:
        for node in vars(edit).values():
            assert found.sql(node) == node.sql()


def demo_pairs(demo_dir) -> list[tuple[exp.Expr, exp.Expr]]:
    """(gold, perturbed) for every perturbation of every demo seed and template query,
    under two seeds each."""
    pairs = []
    for db_id in ("clinic", "league"):
        path = demo_dir / f"{db_id}.sqlite"
        with ReadOnlyDatabase(path) as database:
            context = load_context(db_id, DatabaseSchema.from_sqlite(path, db_id), database)
            golds = [pair["sql"] for pair in read_jsonl(REPO / f"raw/demo/seeds/{db_id}.jsonl")]
            for sql in golds:
                tree = sqlkit.parse(sql)
                for _name, (_intent, perturb) in sorted(PERTURBATIONS.items()):
                    for seed in range(2):
                        changed = perturb(tree, context, random.Random(f"{sql} {seed}"))
                        if changed is not None:
                            pairs.append((tree, changed))
    return pairs


@pytest.fixture(scope="module")
def pairs(demo_dir) -> list[tuple[exp.Expr, exp.Expr]]:
    return demo_pairs(demo_dir)


def test_the_demo_perturbations_get_sqlglots_edits(pairs):
    assert len(pairs) > 250
    for gold, changed in pairs:
        assert_same_diff(gold, changed)
    # the other way, with every content known from the first
    for gold, changed in pairs:
        assert_same_diff(changed, gold)


def test_model_like_candidates_get_sqlglots_edits():
    """Candidates unlike their gold, as a model writes them: the next gold query of the
    same database in Spider dev (another question), both ways, for every other query."""
    folder = shared_data("spider")
    data = load_spider(folder / "tables.json", folder / "dev.json", "spider", None)
    trees = [(e["db_id"], sqlkit.parse(e["sql"])) for e in data.examples]
    pairs = [(a, b) for (db_a, a), (db_b, b) in pairwise(trees[::2]) if db_a == db_b]
    assert len(pairs) > 450
    for gold, candidate in pairs:
        assert_same_diff(gold, candidate)
        assert_same_diff(candidate, gold)


@pytest.mark.parametrize(
    "candidate",
    [
        GOLD.replace("SELECT t.name", "SELECT t.city"),
        GOLD.replace("p.team_id = t.team_id", "p.player_id = t.team_id"),
        GOLD.replace("'Forward'", "'Goalkeeper'"),
        GOLD.replace("COUNT(*)", "SUM(p.height_cm)"),
        GOLD.split(" WHERE ")[0] + " GROUP BY t.name",
        "SELECT name FROM teams WHERE team_id IN (SELECT team_id FROM players)",
        "SELECT grade FROM Highschooler WHERE name = 'Kyle'",
        GOLD.replace("'Forward'", "'Forward' /* a comment */"),
        GOLD.replace("p.position", '"p"."position"'),
        GOLD,
    ],
)
def test_hand_written_pairs_get_sqlglots_edits(candidate):
    assert_same_diff(sqlkit.parse(GOLD), sqlkit.parse(candidate))


def test_a_tree_sqlglot_names_aliases_in_is_diffed_by_sqlglot():
    """sqlglot names an unnamed table alias (``_t0``, ``_t1``...) in the order it writes:
    such a tree's text depends on what was written before, so sqlglot diffs it."""
    gold = sqlkit.parse("SELECT a FROM (SELECT 1 AS a) AS x(a) WHERE a = 1")
    changed = gold.copy()
    changed.find(exp.TableAlias).set("this", None)
    assert "_t0" in changed.sql()
    assert_same_diff(gold, changed)
    assert_same_diff(changed, gold)


def test_shared_nodes_are_copied_as_sqlglot_does():
    """Trees sharing a node are diffed as copies (so the edits name nodes of the copies:
    compared by kind and SQL)."""
    gold = sqlkit.parse("SELECT a, b FROM t WHERE c = 1")
    other = sqlkit.parse("SELECT a FROM t WHERE c = 2")
    other.args["where"] = gold.args["where"]  # one node in both trees
    texts = lambda edits: [(type(e).__name__, *(n.sql() for n in vars(e).values())) for e in edits]  # noqa: E731
    expected = texts(diff(gold, other, delta_only=True))
    assert texts(TreeDiff(gold, other).edits) == expected == [("Remove", "b")]


def test_content_ids_follow_what_the_sql_is_written_from():
    known = Contents()

    def content(sql: str, path=lambda tree: tree) -> int | None:
        return known.of(path(sqlkit.parse(sql)), {})

    where = lambda tree: tree.args["where"]  # noqa: E731
    # the same text parsed at another position: one content
    assert content("SELECT a FROM t WHERE b = 1", where) == content(
        "SELECT aa FROM t WHERE b = 1", where
    )
    assert content("SELECT a FROM t") == content("SELECT a FROM t")
    # anything the SQL is written from tells them apart
    assert content("SELECT a FROM t") != content('SELECT "a" FROM t')  # quoted
    assert content("SELECT a FROM t") != content("SELECT A FROM t")  # case
    assert content("SELECT 1 FROM t") != content("SELECT '1' FROM t")  # string or number
    assert content("SELECT a FROM t") != content("SELECT a /* x */ FROM t")  # a comment
    assert content("SELECT a FROM t") != content("SELECT DISTINCT a FROM t")
    # a part that is not a plain value has no content id, nor has what holds it
    odd = sqlkit.parse("SELECT a FROM t")
    odd.find(exp.Identifier).args["quoted"] = 1.5
    assert known.of(odd, {}) is None


def test_the_memo_starts_again_past_its_limit(pairs, monkeypatch):
    monkeypatch.setattr(tree_diff, "LIMIT", 50)
    first = tree_diff.contents()
    for gold, changed in pairs[:40]:
        assert_same_diff(gold, changed)
    assert tree_diff.contents() is not first  # started again, and the edits stayed sqlglot's


def test_classify_reads_the_same_edits(pairs):
    """The error type from TreeDiff is the one from sqlglot's diff and ``node.sql()``."""

    class Plain:  # the diff and the SQL as sqlglot gives them, nothing kept
        def __init__(self, source, target):
            self.edits = diff(source, target, delta_only=True)

        @staticmethod
        def sql(node):
            return node.sql()

    found = [classify(gold, changed) for gold, changed in pairs]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(error_types, "TreeDiff", Plain)
        expected = [classify(gold, changed) for gold, changed in pairs]
    assert found == expected
    assert set(found) == {"T/C", "J/G", "PV", "OL", "OG"}
