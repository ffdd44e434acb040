"""The indexed near-duplicate check decides as a scan of every earlier question would."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from answerable.builders.drafting import checks, stage
from answerable.builders.drafting.checks import (
    NearDuplicates,
    _popcount,
    family,
    ngrams,
    similarity,
)
from answerable.builders.drafting.stage import unrepeated_questions, without_repeats
from answerable.builders.drafting.text import normalize
from answerable.pipeline import Rejects, StepOutput
from answerable.pipeline.shards import ShardItems, ShardRejects, store_shard
from tests.conftest import shared_data
from tests.test_drafting_offline import demo, draft_all  # noqa: F401 (demo is a fixture)
from tests.test_shards import context


class Scan:
    """Today's check before the index: every earlier question of the database, in order."""

    def __init__(self, threshold: float, built: list[dict] = ()):
        self.threshold, self.seen = threshold, {}
        for item in built:
            self.add(item["db_id"], item["id"], item["question"], family(item))

    def add(self, db_id, record_id, question, kin):
        entry = (record_id, kin, normalize(question), ngrams(question))
        self.seen.setdefault(db_id, []).append(entry)

    def check(self, db_id, question, kin):
        text, a = normalize(question), ngrams(question)
        for other_id, other_kin, other, b in self.seen.get(db_id, ()):
            if text == other:
                return "duplicate", f"same question as {other_id}"
            small, large = sorted((len(a), len(b)))
            if kin & other_kin or small / large < self.threshold:
                continue
            score = similarity(a, b)
            if score >= self.threshold:
                return "near-duplicate", f"{score:.2f} similar to {other_id}: {other!r}"
        return None


def real_questions(data: Path) -> list[tuple[str, str]]:
    """``(database, question)`` of Spider's dev set, EHRSQL 2024's validation set and
    GeoQuery's sentences (its variables as they are written), from the shared data."""
    spider = json.loads((data / "spider" / "dev.json").read_text(encoding="utf-8"))
    ehrsql = json.loads((data / "ehrsql2024" / "valid_data.json").read_text(encoding="utf-8"))
    geo = json.loads((data / "geoquery" / "geography.json").read_text(encoding="utf-8"))
    return (
        [(row["db_id"], row["question"]) for row in spider]
        + [("mimic_iv", row["question"]) for row in ehrsql["data"]]
        + [("geography", s["text"]) for entry in geo for s in entry["sentences"]]
    )


def decisions(checker, stream) -> list:
    """The check's answer on each (db, id, question, kin), remembering the ones kept."""
    answers = []
    for db_id, record_id, question, kin in stream:
        answer = checker.check(db_id, question, kin)
        if answer is None:
            checker.add(db_id, record_id, question, kin)
        answers.append(answer)
    return answers


@pytest.mark.parametrize("threshold", [0.5, 0.8])
def test_same_decisions_as_the_scan_on_the_demo_drafts(demo, threshold):  # noqa: F811
    parents, contexts = demo
    made = [(job, d) for job, d in draft_all(parents, contexts, per_item=3) if d is not None]
    stream = [
        (job.db_id, d.id, d.question, frozenset({d.parent_id} if d.parent_id else ()))
        for job, d in made
    ]
    # the parents' questions again, as drafts that repeat them exactly
    stream += [(p["db_id"], f"again-{p['id']}", p["question"], frozenset()) for p in parents]
    expected = decisions(Scan(threshold, parents), stream)
    assert decisions(NearDuplicates(threshold, parents), stream) == expected
    reasons = {answer[0] for answer in expected if answer}
    assert reasons == {"duplicate", "near-duplicate"}, "the drafts should exercise both"


def test_same_decisions_as_the_scan_on_real_questions():
    """Spider's, EHRSQL's and GeoQuery's questions (paraphrases of one SQL, questions of
    one template with other values) and a copy of each with a word changed, every third
    of kin to the question before it: the index decides each as the scan does."""
    questions = real_questions(shared_data())
    stream = [
        (db_id, f"r{i}", question, frozenset({f"r{i - 1}"}) if i % 3 == 0 else frozenset())
        for i, (db_id, question) in enumerate(questions)
    ]
    stream += [  # the last word changed: close to the question, not the same
        (db_id, f"c{i}", question.rsplit(" ", 1)[0] + " again?", frozenset())
        for i, (db_id, question) in enumerate(questions)
    ]
    expected = decisions(Scan(0.8), stream)
    assert decisions(NearDuplicates(0.8), stream) == expected
    reasons = Counter(answer[0] for answer in expected if answer)
    assert reasons["duplicate"] > 50 and reasons["near-duplicate"] > 500, reasons


WORDS = ["how", "many", "patients", "players", "are", "there", "old", "which", "team", "a"]


@settings(max_examples=200, deadline=None)
@given(
    threshold=st.sampled_from([0.3, 0.5, 0.7, 0.8, 0.85, 1.0]),
    built=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), max_size=8),
    drafts=st.lists(
        st.tuples(st.sampled_from(["x", "y"]), st.lists(st.sampled_from(WORDS), max_size=6)),
        max_size=25,
    ),
)
def test_same_decisions_as_the_scan_on_random_questions(threshold, built, drafts):
    items = [
        {"id": f"b{i}", "db_id": "x", "question": " ".join(q), "provenance": {}}
        for i, q in enumerate(built)
    ]
    stream = [
        (db, f"d{i}", " ".join(words), frozenset({f"b{i % 3}"}) if i % 4 == 0 else frozenset())
        for i, (db, words) in enumerate(drafts)
    ]
    expected = decisions(Scan(threshold, items), stream)
    assert decisions(NearDuplicates(threshold, items), stream) == expected


def test_the_popcount_without_numpy_2_counts_as_with_it(monkeypatch):
    words = np.array([[0, 1, 2**63, 2**64 - 1], [5, 0, 0, 3]], dtype=np.uint64)
    assert _popcount(words).tolist() == [1 + 1 + 64, 2 + 2]
    monkeypatch.delattr(np, "bitwise_count", raising=False)  # NumPy 1: a table lookup
    assert _popcount(words).tolist() == [1 + 1 + 64, 2 + 2]


def test_a_signature_rules_out_only_what_cannot_reach_the_threshold():
    """The bound the index applies before the exact similarity: a pair at or above the
    threshold is always proposed, and most pairs far below it are not."""
    seen = NearDuplicates(0.8)
    seen.add("x", "a", "How many patients were admitted in 2019?", frozenset())
    seen.add("x", "b", "List the drugs prescribed to patient 2019.", frozenset())
    remembered = seen._seen["x"]

    def ngrams(text: str) -> frozenset[int]:  # as the index numbers them
        return checks._numbered(normalize(text))

    close = ngrams("How many patients were admitted in 2018?")
    assert remembered.similarity(close, 0) >= 0.8
    assert remembered.proposed(close, 2, 0.8) == [0]
    other = ngrams("List the drugs prescribed to patient 2018.")
    assert remembered.proposed(other, 2, 0.8) == [1]
    assert remembered.proposed(other, 1, 0.8) == []  # only before 1
    unlike = ngrams("Which doctor saw patient 2019 in March?")
    assert remembered.proposed(unlike, 2, 0.8) == []


TEMPLATES = [
    "How many players of the {team} were born in {year}?",
    "Which {team} players born after {year} are taller than their team's average height?",
    "List the {team} games played in {year} with their home score.",
    "What was the average attendance of {team} home games in {year}?",
    "Name the coach of the {team} in {year}.",
    "Which stadium did the {team} use in {year}?",
]
TEAMS = ["West Ritaberg Rangers", "North Anna Falcons", "Lake Oscar United", "Port Lee Comets"]
TEAMS += ["Glen Ivy Owls", "Mount Kai Bears", "Bay Rosa Sharks", "Fort Wu Kings"]


def templated_stream(seed: int, built: int, drafts: int) -> tuple[list[dict], list[tuple]]:
    """Built questions and drafts from a few templates and values, as a large templated
    build makes them: exact repeats, near-duplicates (another year or team) and drafts
    whose parent is one of the built questions (kin)."""
    import random

    rng = random.Random(seed)

    def question() -> str:
        text = rng.choice(TEMPLATES).format(team=rng.choice(TEAMS), year=rng.randint(1900, 2020))
        return text if rng.random() < 0.8 else text.replace("?", ", please?")

    items = [
        {"id": f"b{i}", "db_id": "league", "question": question(), "provenance": {}}
        for i in range(built)
    ]
    stream = []
    for i in range(drafts):
        parent = rng.choice(items)
        kin = frozenset({parent["id"]}) if rng.random() < 0.5 else frozenset()
        chance = rng.random()
        text = parent["question"] if chance < 0.1 else question()
        if chance > 0.6 and stream:  # an earlier draft's text, with another parent
            text = rng.choice(stream)[2]
        stream.append((rng.choice(["league", "league", "clinic"]), f"d{i}", text, kin))
    return items, stream


@pytest.mark.parametrize("threshold", [0.8, 0.9])
def test_same_decisions_as_the_scan_on_templated_questions_that_repeat(threshold):
    """Most drafts of a templated build repeat an earlier text, with another parent; the
    index keeps each text's close questions and looks again only at those remembered
    since. Its decisions are still the scan's."""
    built, stream = templated_stream(7, 60, 700)
    expected = decisions(Scan(threshold, built), stream)
    assert decisions(NearDuplicates(threshold, built), stream) == expected
    reasons = [answer[0] for answer in expected if answer]
    assert reasons.count("duplicate") > 50 and reasons.count("near-duplicate") > 100
    assert expected.count(None) > 50, "some drafts should be kept (and remembered)"
    texts = [normalize(question) for _db, _id, question, _kin in stream]
    assert len(set(texts)) < 0.6 * len(texts), "the drafts should repeat texts"


@pytest.mark.parametrize(("built", "drafts"), [(40, 400), (160, 1600)])
def test_the_grouped_index_decides_as_the_scan_at_two_sizes(built, drafts):
    """Templated questions with repeats, at two sizes: each group (one template, other
    values) grows with the build, and the decisions stay the scan's."""
    items, stream = templated_stream(11, built, drafts)
    expected = decisions(Scan(0.8, items), stream)
    assert decisions(NearDuplicates(0.8, items), stream) == expected
    reasons = [answer and answer[0] for answer in expected]
    assert reasons.count("near-duplicate") > drafts / 2 and reasons.count("duplicate") > 50
    assert reasons.count(None) > 50, "some drafts should be kept (and remembered)"


def counted(seen: NearDuplicates, stream: list[tuple], monkeypatch) -> tuple:
    """The answers to ``stream`` (nothing remembered), the groups the index looked into,
    the postings entries it read and the exact similarities it computed."""
    looked, read, exact = [], [], []
    between, reaches, reaching = checks._between, NearDuplicates._reaches, checks._Groups._reaching
    monkeypatch.setattr(
        checks._Groups, "_reaching", lambda *a: looked.append(len(got := reaching(*a))) or got
    )
    monkeypatch.setattr(checks, "_between", lambda *a: read.append(len(got := between(*a))) or got)
    monkeypatch.setattr(
        NearDuplicates, "_reaches", lambda *a: exact.append(1) or reaches(*a), raising=True
    )
    answers = [seen.check(db_id, question, kin) for db_id, _id, question, kin in stream]
    monkeypatch.undo()
    return answers, sum(looked), sum(read), len(exact)


def test_a_check_reads_nothing_of_the_other_templates_sharing_its_values(monkeypatch):
    """What keeps the cost of a check flat as a templated build grows: the questions of
    other templates, however many share the checked question's values (a team, a year:
    the rare n-grams a prefix index would look up), are ruled out a group at once. The
    same checks look into as many groups, read the same postings entries and compute the
    same similarities with 1,000 questions of other templates remembered as without them
    (counted)."""
    import random

    rng = random.Random(5)
    one, others = TEMPLATES[0], TEMPLATES[1:]

    def made(template: str, count: int, prefix: str) -> list[dict]:
        return [
            {
                "id": f"{prefix}{i}",
                "db_id": "league",
                "question": template.format(team=rng.choice(TEAMS), year=rng.randint(1990, 2020)),
                "provenance": {},
            }
            for i in range(count)
        ]

    mine = made(one, 100, "a")
    theirs = [item for template in others for item in made(template, 200, f"o{template[:4]}")]
    probes = [
        ("league", f"p{i}", one.format(team=team, year=year).replace("born", "born or raised"), ())
        for i, (team, year) in enumerate(zip(TEAMS * 3, range(1995, 2019), strict=True))
    ]
    probes = [(db, i, q, frozenset(kin)) for db, i, q, kin in probes]
    alone = counted(NearDuplicates(0.8, mine), probes, monkeypatch)
    among = counted(NearDuplicates(0.8, mine + theirs), probes, monkeypatch)
    assert among == alone
    answers, looked, read, exact = alone
    assert looked and read and exact and any(answers), "the checks should meet their template"
    # not vacuous: each probe's team is in many of the other templates' questions
    for _db, _id, question, _kin in probes:
        team = next(team for team in TEAMS if team in question)
        assert sum(team in item["question"] for item in theirs) > 80


def test_a_repeated_text_is_compared_with_the_questions_remembered_since():
    """A text's close questions are kept from its first check; the same text checked
    again later (here by a draft of another family) must also meet the question
    remembered in between, which is close to it but not to the built one."""
    question = "How many players of the Bay Rosa Sharks were born in Lisbon?"
    parent = {"id": "p", "db_id": "x", "question": question, "provenance": {}}
    between = "How many players of the Bay Rosa Sharks were born in Lisbon in 1921?"
    later = "How many players of the Bay Rosa Sharks were born in Lisbon in 1921 or later?"
    stream = [
        ("x", "d1", between, frozenset()),  # close to the parent: dropped
        ("x", "d2", later, frozenset({"q"})),  # close to d1's text, not to the parent: kept
        ("x", "d3", between, frozenset({"p"})),  # the parent is kin; d2 is not
    ]
    expected = decisions(Scan(0.85, [parent]), stream)
    reasons = [answer and answer[0] for answer in expected]
    assert reasons == ["near-duplicate", None, "near-duplicate"]
    assert "similar to d2" in expected[2][1]
    assert decisions(NearDuplicates(0.85, [parent]), stream) == expected


def drafted(stream: list[tuple]) -> list[dict]:
    """The stream's drafts as the drafting step's items (what its pass reads)."""
    return [
        {
            "id": record_id,
            "db_id": db_id,
            "question": question,
            "category": "vague-question",
            "trigger": {"text": "t"},
            "provenance": {
                "generator": "g",
                "parent": min(kin, default=None),
                "params": {"anchor": min(kin, default=None)},
            },
        }
        for db_id, record_id, question, kin in stream
    ]


def failing(item: dict):
    """A draft check that fails every fifth draft (by its id), for the pass's tests."""
    if int(item["id"][1:]) % 5 == 0:
        return "check", f"{item['id']} fails"
    return None


def checked_first(built: list[dict], stream: list[tuple], check) -> tuple[dict, set]:
    """What checking every draft first and then scanning the passing ones in order
    decides, by draft id; and the ids of the drafts that repeat a remembered question at
    their turn (they are dropped whatever their check says, so it may be left out)."""
    scan, answers, repeats = Scan(0.8, built), {}, set()
    for (db_id, record_id, question, kin), item in zip(stream, drafted(stream), strict=True):
        repeat = scan.check(db_id, question, kin)
        if repeat is not None:
            repeats.add(record_id)
        answers[record_id] = check(item) or repeat
        if answers[record_id] is None:
            scan.add(db_id, record_id, question, kin)
    return answers, repeats


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("stored", [True, False])
def test_the_pass_split_by_database_decides_as_one_scan_over_all(
    tmp_path, workers, stored, monkeypatch
):
    """Each database is checked in its own shard (on any number of workers), from the
    drafting shards' files or from a list; the kept drafts are those a scan over every
    database at once keeps of the drafts that pass their check, and every reject is the
    scan's or the check's: a draft that fails its check and repeats a question is a
    repeat (it is not checked), any other failing draft is the check's."""
    built, stream = templated_stream(11, 90, 600)
    for n, item in enumerate(built):  # three databases, each with built questions
        item["db_id"] = ["league", "clinic", "shop"][n % 3]
    stream = [(db if n % 7 else "shop", i, q, kin) for n, (db, i, q, kin) in enumerate(stream)]
    answers, repeats = checked_first(built, stream, failing)
    drafts = drafted(stream)
    if stored:  # as the offline drafter leaves them: shards of jobs, with their rejects
        chunks = [drafts[start : start + 64] for start in range(0, len(drafts), 64)]
        files = [tmp_path / f"in{n}.jsonl" for n in range(len(chunks))]
        for chunk, file in zip(chunks, files, strict=True):
            store_shard(StepOutput(chunk, [{"id": f"r-{file.stem}", "reason": "x"}]), file)
        items = StepOutput(ShardItems(files), Rejects(ShardRejects(files)))
    else:
        items = StepOutput(drafts, [{"id": "r", "reason": "x"}])
    weights = Counter(db for db, *_ in stream)
    ctx = context(tmp_path, workers, 64)
    output = without_repeats(ctx, items, 0.8, built, tmp_path / "step", weights, failing)

    kept = sorted(item["id"] for item in output.items)
    assert kept == sorted(record_id for record_id, answer in answers.items() if answer is None)
    found = {r["id"]: (r["reason"], r["detail"]) for r in output.rejects if r["id"][0] == "d"}
    assert found.keys() == {record_id for record_id, answer in answers.items() if answer}
    changed = {i for i, answer in found.items() if answer != answers[i]}
    assert changed == {i for i in repeats if answers[i][0] == "check"}
    assert {found[i][0] for i in changed} == {"duplicate", "near-duplicate"}
    assert sum(1 for answer in found.values() if answer[0] == "check") > 20
    assert sum(1 for r in output.rejects if r["reason"] == "x") == (10 if stored else 1)
    by_database = Counter(stream[int(r["id"][1:])][0] for r in output.rejects if r["id"][0] == "d")
    assert min(by_database[db] for db in ("league", "clinic", "shop")) > 20
    # every database is a shard of its own, done once: a rerun finds them all
    monkeypatch.setattr(stage, "write_unrepeated", None)  # not called again
    again = without_repeats(ctx, items, 0.8, built, tmp_path / "step", weights, failing)
    assert sorted(item["id"] for item in again.items) == kept


def test_a_minimal_pair_kept_out_of_its_parents_family_is_no_repeat_of_its_parent():
    """A missing-column draft is its parent's question with one attribute added, and
    its parent stays out of its family (``parent`` is None), yet it is no repeat of the
    parent: its job's anchor is its kin. Another parent's draft of the same words is."""
    parent = "What are the four most common diagnoses of people in their 30s in 2100?"
    built = [{"id": "p1", "db_id": "mimic", "question": parent, "provenance": {}}]
    draft = parent[:-1] + ", with their severity?"
    items = drafted([("mimic", "d1", draft, frozenset())])
    items[0]["provenance"]["params"]["anchor"] = "p1"
    seen = NearDuplicates(0.8, built)
    assert [
        line.get("item", {}).get("id") for line in unrepeated_questions(items, seen, failing)
    ] == ["d1"]
    stranger = drafted([("mimic", "d2", draft, frozenset())])
    stranger[0]["provenance"]["params"]["anchor"] = "p2"
    (line,) = unrepeated_questions(stranger, NearDuplicates(0.8, built), failing)
    assert line["reject"]["reason"] == "near-duplicate"


def test_the_pass_checks_only_the_drafts_that_repeat_no_question(tmp_path):
    """The check is not run for a draft that repeats a remembered question (built or
    kept before it): it is dropped whatever the check says."""
    built, stream = templated_stream(5, 60, 400)
    _answers, repeats = checked_first(built, stream, failing)
    checked = []

    def check(item: dict):
        checked.append(item["id"])
        return failing(item)

    items = StepOutput(drafted(stream), [])
    weights = Counter(db for db, *_ in stream)
    without_repeats(context(tmp_path, 1, 64), items, 0.8, built, tmp_path / "s", weights, check)
    unrepeated = [record_id for _db, record_id, *_ in stream if record_id not in repeats]
    assert sorted(checked) == sorted(unrepeated)
    assert len(repeats) > 100


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abcdefgh 12", min_size=1, max_size=12), min_size=1, max_size=6))
def test_signature_sets_the_bit_of_each_ngram(texts):
    """A question's signature has bit ``b`` of byte ``b // 8`` set for each of its
    n-grams' bits (as their sum written little-endian), for a set or an array of numbers."""
    from array import array

    numbers = frozenset().union(*(checks._numbered(text) for text in texts))
    expected = sum({1 << checks._BITS[n] for n in numbers}).to_bytes(
        checks.SIGNATURE_BYTES, "little"
    )
    assert checks._signature(numbers) == expected
    assert checks._signature(array("i", sorted(numbers))) == expected
