"""The checks on drafts (issue 5, point 4): each rejection has its reason; near-duplicates."""

from __future__ import annotations

import csv

import pytest

from answerable.builders.drafting.categories import CATEGORIES
from answerable.builders.drafting.checks import (
    NearDuplicates,
    near_synonym,
    out_of_scope_tasks,
    reference_words,
)
from answerable.builders.drafting.context import DatabaseContext
from answerable.builders.drafting.drafts import LLM_DRAFTER, Draft, Job
from answerable.builders.drafting.per_category import check_draft, database_examples
from answerable.builders.schema import DatabaseSchema
from tests.conftest import shared_data

PARENT = {"id": "p" * 16, "db_id": "clinic", "question": "How many female patients are there?"}


@pytest.fixture(scope="module")
def clinic(demo_dir) -> DatabaseContext:
    return DatabaseContext(
        "clinic", DatabaseSchema.from_sqlite(demo_dir / "clinic.sqlite", "clinic")
    )


def draft(category: str, question: str, trigger: str, derived: bool = True) -> Draft:
    return Draft(Job(PARENT, category, 0), question, trigger, "test_v1", derived=derived)


# ---- missing-column ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trigger", "reason"),
    [
        ("blood_type", None),
        ("shoe size", None),
        ("email_address", None),
        ("insurance", "column-in-schema"),
        ("Date_Of_Birth", "column-in-schema"),
        ("sex", "column-near-synonym"),  # gender
        ("birthday", "column-near-synonym"),  # date_of_birth
        ("age", "column-near-synonym"),  # derivable from date_of_birth
        ("medication", "column-near-synonym"),  # prescriptions.drug
        ("ethnicty", "column-near-synonym"),  # a misspelling
        ("length_of_stay_days", "column-near-synonym"),
        ("admission_date", "column-near-synonym"),  # admission_* columns (admit_time is it)
    ],
)
def test_missing_column_must_be_absent_and_no_synonym(clinic, trigger, reason):
    failure = check_draft(
        draft("missing-column", f"What is the {trigger} of each patient?", trigger), clinic
    )
    assert (failure[0] if failure else None) == reason, failure


def test_near_synonym_names_the_column(clinic):
    assert near_synonym("sex", clinic.schema) == "patients.gender"
    assert near_synonym("home address", clinic.schema) is None
    assert near_synonym("team budget", clinic.schema) is None


# ---- out-of-domain ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "shared"),
    [
        ("Hi, how was your weekend?", None),
        ("Can you recommend a good book about volcanoes?", None),
        ("What is your name?", None),  # 'name' is too generic to be a schema term
        ("How many patients like jazz?", "patient"),
        ("Tell me a joke about drugs.", "drug"),
        ("Which diagnosis did my cat get?", "diagnosis"),
        # a word of a column name alone is not the column: 'long' is not long_title
        ("How long do goldfish usually live?", None),
        ("What is the first rule of chess?", None),  # first_careunit
        ("What is the long title of the code 401?", "long_title"),
    ],
)
def test_out_of_domain_shares_no_schema_term(clinic, question, shared):
    failure = check_draft(draft("out-of-domain", question, "topic", derived=False), clinic)
    if shared is None:
        assert failure is None
    else:
        assert failure[0] == "shares-schema-term" and shared in failure[1]


# ---- vague-word, vague-question -------------------------------------------------------------


def test_vague_word_must_be_in_the_question(clinic):
    good = draft("vague-word", "How many recent female patients are there?", "recent")
    assert check_draft(good, clinic) is None
    bad = draft("vague-word", "How many female patients are there lately?", "recent")
    assert check_draft(bad, clinic)[0] == "trigger-not-in-question"
    partial = draft("vague-word", "How many recently admitted patients?", "recent")
    assert check_draft(partial, clinic)[0] == "trigger-not-in-question"


COUNTED = {**PARENT, "sql": "SELECT COUNT(*) FROM patients WHERE gender = 'F'"}


@pytest.mark.parametrize(
    ("question", "trigger", "reason"),
    [
        ("Female patients?", "female", None),  # a topic: what to find is open
        ("What about insurance?", "insurance", None),
        # ordinary questions that name the parent's count and table: answerable as asked
        ("How many female patients are in the clinic?", "female", "still-answerable"),
        ("How many patients are there?", "patients", "still-answerable"),
        ("What is the number of patients by gender?", "gender", "still-answerable"),
    ],
)
def test_a_vague_question_lacks_what_makes_its_parent_answerable(clinic, question, trigger, reason):
    made = Draft(Job(COUNTED, "vague-question", 0), question, trigger, "test_v1", derived=False)
    failure = check_draft(made, clinic)
    assert (failure[0] if failure else None) == reason, failure


def test_names_said_by_the_same_words_are_one_thing(clinic):
    """A bare column or value is a topic even when several of the parent's names share
    its words (``score`` of home_score and away_score, ``stadium`` of a table and a value)."""
    sql = "SELECT home_score, away_score FROM matches JOIN stadiums USING (stadium_id)"
    parent = {**PARENT, "sql": sql + " WHERE stadiums.name = 'Alexshire Stadium'"}
    for question, trigger in [("Away score?", "Away score"), ("Alexshire Stadium?", "Alexshire")]:
        made = Draft(Job(parent, "vague-question", 0), question, trigger, "t", derived=False)
        assert check_draft(made, clinic) is None, question


def test_vague_question_keyword_must_be_in_the_question(clinic):
    assert check_draft(draft("vague-question", "Insurance?", "insurance"), clinic) is None
    assert check_draft(draft("vague-question", "Insurance?", "sodium"), clinic)[0] == (
        "trigger-not-in-question"
    )


# ---- ambiguous-reference ----------------------------------------------------------------


def test_ambiguous_reference_needs_its_word_and_a_parent(clinic):
    question = "How many admissions did that patient have?"
    assert check_draft(draft("ambiguous-reference", question, "that patient"), clinic) is None
    assert check_draft(draft("ambiguous-reference", question, "this patient"), clinic)[0] == (
        "trigger-not-in-question"
    )
    assert (
        check_draft(
            draft("ambiguous-reference", "How many admissions did Bob have?", "Bob"), clinic
        )[0]
        == "no-reference-word"
    )
    orphan = draft("ambiguous-reference", question, "that patient", derived=False)
    assert check_draft(orphan, clinic)[0] == "no-parent"


# ---- out-of-scope -----------------------------------------------------------------------


def test_a_clustering_that_only_groups_by_a_column_is_a_group_by(clinic):
    grouped = draft("out-of-scope", "Cluster the admissions into groups by their language.", "x")
    assert check_draft(grouped, clinic)[0] == "groupable"
    learned = "Cluster the admissions with k-means on their language and their other attributes."
    assert check_draft(draft("out-of-scope", learned, "Cluster"), clinic) is None


@pytest.mark.parametrize(
    ("question", "task"),
    [
        ("Predict how many admissions there will be next year.", "prediction"),
        ("Plot the number of admissions per month.", "chart"),
        ("Draw a histogram of patient ages.", "chart"),
        ("Cluster the patients by their lab values.", "clustering"),
        ("Explain why some ICU stays are longer.", "explanation"),
        ("Why do the prescriptions differ in dose?", "explanation"),
        ("How many admissions are there?", None),
        ("List the drugs given by mouth.", None),
    ],
)
def test_out_of_scope_asks_for_what_sql_cannot_do(clinic, question, task):
    failure = check_draft(draft("out-of-scope", question, question.split()[0]), clinic)
    if task is None:
        assert failure[0] == "not-out-of-scope"
    else:
        assert failure is None and task in out_of_scope_tasks(question)


@pytest.mark.parametrize(
    ("category", "question", "trigger"),
    [  # what real models drafted from the prompts' bookshop examples
        ("vague-question", "Hardcovers?", "Hardcovers"),
        ("vague-question", "What about Tolkien?", "Tolkien"),
        ("missing-column", "What is the average page count of the books?", "page count"),
        ("missing-column", "What is the average page count of the patients?", "page count"),
        ("out-of-domain", "How many moons does Jupiter have?", "Jupiter"),
    ],
)
def test_a_draft_that_repeats_a_prompt_example_is_rejected(clinic, category, question, trigger):
    failure = check_draft(modelled(category, question, trigger), clinic)
    assert failure is not None and failure[0] == "copied-example", failure


def modelled(category: str, question: str, trigger: str) -> Draft:
    return Draft(Job(PARENT, category, 0), question, trigger, LLM_DRAFTER, derived=False)


def test_a_draft_only_like_an_example_in_form_is_kept(clinic):
    made = modelled("out-of-domain", "How many moons does Saturn have?", "Saturn")
    assert check_draft(made, clinic) is None


def test_a_copy_of_an_example_written_on_the_database_is_rejected(clinic):
    shown = database_examples(CATEGORIES["missing-column"], clinic, COUNTED)
    assert "patient" not in shown[0]["question"]  # another table than the parent's
    failure = check_draft(modelled("missing-column", shown[0]["question"], "x"), clinic)
    assert failure[0] == "copied-example", failure


@pytest.mark.parametrize("control", ["\x00", "\x1b[2J", "\x7f", "\x9b"])
def test_a_draft_holding_a_control_character_is_rejected(clinic, control):
    """Offline or from a model (a JSON reply may carry \\u001b): never released."""
    question = f"Tell me something fun about chess{control}?"
    for made in (
        modelled("out-of-domain", question, "chess"),
        draft("out-of-domain", question, "chess", derived=False),
    ):
        failure = check_draft(made, clinic)
        assert failure is not None and failure[0] == "control-character", failure
        assert f"U+{ord(control[0]):04X}" in failure[1]


def test_a_draft_must_differ_from_its_parent(clinic):
    same = draft("vague-word", "How many female patients are there?", "female")
    assert check_draft(same, clinic)[0] == "same-as-parent"


# ---- near-duplicates --------------------------------------------------------------------


def built(item_id: str, question: str, parent: str | None = None, db_id: str = "clinic") -> dict:
    return {"id": item_id, "db_id": db_id, "question": question, "provenance": {"parent": parent}}


def test_duplicates_within_a_database_and_against_built_items():
    seen = NearDuplicates(0.8, [built("a1", "How many female patients are there?")])
    assert seen.check("clinic", "how many FEMALE patients are there", frozenset())[0] == "duplicate"
    assert seen.check("league", "How many female patients are there?", frozenset()) is None
    near = seen.check("clinic", "How many female patients are there now?", frozenset())
    assert near[0] == "near-duplicate" and "a1" in near[1]
    assert seen.check("clinic", "Which drugs were given by mouth?", frozenset()) is None
    seen.add("clinic", "d1", "Which drugs were given by mouth?", frozenset())
    assert seen.check("clinic", "Which drugs were given by mouth ?", frozenset())[0] == "duplicate"


def test_a_draft_is_not_a_near_duplicate_of_its_own_family():
    seen = NearDuplicates(0.8, [built("p1", "How many female patients are there?", parent="src")])
    kin = frozenset({"p1"})
    assert seen.check("clinic", "How many recent female patients are there?", kin) is None
    assert seen.check("clinic", "How many recent female patients are there?", frozenset())[0] == (
        "near-duplicate"
    )
    # a sibling made from the same parent is family too
    seen.add("clinic", "c1", "How many recent female patients are there?", kin)
    assert seen.check("clinic", "How many old female patients are there?", kin) is None


def test_the_threshold_is_configurable():
    question, other = "Which players are goalkeepers?", "Which players are the goalkeepers?"
    strict = NearDuplicates(0.8, [built("x", question, db_id="league")])
    loose = NearDuplicates(0.95, [built("x", question, db_id="league")])
    assert strict.check("league", other, frozenset())[0] == "near-duplicate"
    assert loose.check("league", other, frozenset()) is None


# ---- the lexicons against real, human-written questions (OncoMX-NAQ) -----------------------


def naq() -> dict[str, list[str]]:
    path = shared_data("querycarefully", "unanswerable_questions.tsv")
    groups: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            groups.setdefault(row["category"].strip(), []).append(row["question"].strip())
    return groups


def test_out_of_scope_cues_find_naq_non_sql_questions():
    groups = naq()
    found = [q for q in groups["Non-SQL Questions"] if out_of_scope_tasks(q)]
    assert len(found) >= 8, set(groups["Non-SQL Questions"]) - set(found)
    others = [q for name, qs in groups.items() if name != "Non-SQL Questions" for q in qs]
    false_alarms = [q for q in others if out_of_scope_tasks(q)]
    assert len(false_alarms) <= 2, false_alarms


def test_reference_words_find_naq_contextual_questions():
    groups = naq()
    found = [q for q in groups["Contextual Ambiguous"] if reference_words(q)]
    assert len(found) >= 5, found
