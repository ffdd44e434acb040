"""offline_drafter_v1: deterministic rules that draft every category from an answerable
item and its database's schema, with no model.

One rule per category, each ``(job, context, rng) -> Draft | None`` (None when the
rule finds nothing to work on, e.g. no table noun to qualify). Each rule is its
category's ``offline_rule``, in the category's module (:mod:`.categories`) with the
helpers only it uses; this module holds what the rules share. The rules:

- ``vague-question``: the question cut to the attribute it asks ("Population?"), else
  to a value it names ("Sodium?");
- ``vague-word``: a vague adjective put before the main table's noun ("recent admissions");
- ``ambiguous-reference``: a value the question names replaced by "that <thing>", or
  else a reference to a related entity appended ("... for that patient?");
- ``missing-column``: a question about a column the main table lacks, of one of
  TrustSQL's three kinds (``subtype``): ``surface``, a column name of another table of
  the same database; ``related``, a plausible absent attribute from the lexicon;
  ``unrelated``, a column name sampled from another database;
- ``out-of-scope``: a prediction, chart, clustering or explanation request about the
  parent's table and column;
- ``out-of-domain``: a general-knowledge question from templates filled by Faker;
- ``small-talk``: conversation with the assistant from templates filled by Faker.

The random choices come from ``rng``, private to (recipe seed, step, job).
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

from sqlglot import exp

from answerable.builders import sqlkit
from answerable.builders.counterfactual import query_shapes
from answerable.builders.counterfactual.grounding import ground
from answerable.builders.counterfactual.values import english_faker
from answerable.builders.drafting import lexicon
from answerable.builders.drafting.checks import near_synonym, schema_links
from answerable.builders.drafting.context import (
    DatabaseContext,
    ForeignQuestion,
    is_key,
    is_numeric,
    is_temporal,
    table_kind,
)
from answerable.builders.drafting.drafts import OFFLINE_DRAFTER, Draft, Job
from answerable.builders.drafting.text import (
    find_phrase,
    humanize,
    name_words,
    words,
)
from answerable.builders.lexical.inflection import plural, singular
from answerable.builders.lexical.lexicon import GENERIC_WORDS, QUESTION_STOPWORDS
from answerable.builders.schema import Column, DatabaseSchema, Table
from answerable.kernel.errors import SQLError

GENERATOR = OFFLINE_DRAFTER
NUMBER_WORDS = frozenset(
    ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
)


# ---- what the parent reads --------------------------------------------------------------


def parent_table(job: Job, context: DatabaseContext) -> Table | None:
    """The schema table the parent's SQL reads first."""
    name = job.main_table
    return context.schema.table(name) if name else None


def table_noun(table: Table, plural: bool = True) -> str:
    """A table's name as a noun phrase: ``d_lab_items`` -> ``lab items``."""
    kept = [w for w in name_words(table.name) if len(w) > 1] or name_words(table.name)
    if not plural:
        kept[-1] = singular(kept[-1])
    return " ".join(kept)


def named_values(job: Job, context: DatabaseContext) -> list[tuple[str, str, tuple[int, int]]]:
    """String values of the parent's SQL that its question names: ``(value, column, span)``,
    the column as ``table.column``."""
    found = []
    for value, column in _string_literals(job.parent["sql"], context):
        span = find_phrase(job.parent["question"], value)
        if span:
            found.append((value, column, span))
    return found


def pattern_parts(sql: str, context: DatabaseContext) -> frozenset[tuple[str, str]]:
    """``(value, table.column)`` of the strings ``sql`` matches as a pattern (LIKE):
    a part of a value, not a thing a reference could point at."""
    refs = parent_refs(sql, context)
    if refs is None:
        return frozenset()
    return frozenset(
        (str(literal.value).strip("%"), literal.column)
        for literal in refs.literals
        if literal.is_string and literal.operator in ("like", "ilike")
    )


@lru_cache(maxsize=64)
def parent_refs(sql: str, context: DatabaseContext) -> sqlkit.Refs | None:
    """The references of a parent's SQL qualified against its database's schema (see
    :mod:`answerable.builders.counterfactual.query_shapes`), or None when it does not
    qualify: read once for every rule and twin of the parent's jobs, which come in a row."""
    try:
        return query_shapes.shared().query(sql, context.schema).refs
    except SQLError:
        return None


@lru_cache(maxsize=4096)
def _string_literals(sql: str, context: DatabaseContext) -> tuple[tuple[str, str], ...]:
    """``(value, table.column)`` of every string compared with a column in ``sql``."""
    refs = parent_refs(sql, context)
    if refs is None:
        return ()
    return tuple(
        (str(literal.value).strip("%"), literal.column)
        for literal in refs.literals
        if literal.is_string
        and literal.column
        and "." in literal.column
        and len(str(literal.value).strip("%")) > 1
    )


def read_columns(job: Job, table: Table) -> list[str]:
    """Columns of ``table`` worth naming in a question, humanized: those the parent's SQL
    reads, else all; no keys, no yes/no flags (``is_penalty``), no bare ``name``."""
    meta = job.parent.get("sql_meta") or {}
    prefix = table.name.lower() + "."
    used = [c.split(".", 1)[1] for c in meta.get("columns", []) if c.lower().startswith(prefix)]
    return describable_names(used) or describable_names([c.name for c in table.columns])


def describable_names(columns: list[str]) -> list[str]:
    """The names among ``columns`` that a question can say as an attribute, humanized:
    no keys, no yes/no flags ("is_active"), no names made only of generic words."""
    kept = []
    for column in columns:
        words_ = name_words(column)
        if is_key(column) or words_[0] in ("is", "has") or set(words_) <= GENERIC_WORDS:
            continue
        kept.append(humanize(column))
    return kept


# ---- the rules --------------------------------------------------------------------------


def names_its_rows(job: Job, context: DatabaseContext, at: int) -> bool:
    """Whether the noun group at ``at`` is about rows the question names: a value of the
    parent's SQL within its first three words ("mississippi river", "city flint", "city
    named austin"), or a parent that gives one row at most."""
    question = job.parent["question"]
    words = list(re.finditer(r"\S+", question[at:]))[:3]
    end = at + words[-1].end() if words else at
    if any(at <= span[0] < end for _value, _column, span in named_values(job, context)):
        return True
    result = job.parent.get("result") or {}
    return isinstance(result, dict) and result.get("row_count", 2) <= 1


def parent_tree(job: Job) -> exp.Expr | None:
    """The parent's SQL parsed (a tree of the caller's own), or None when it does not
    parse."""
    tree = shared_parent_tree(job)
    return None if tree is None else tree.copy()


def shared_parent_tree(job: Job) -> exp.Expr | None:
    """The parent's SQL parsed, one tree shared by every rule and twin of the parent's
    jobs (no copy: a copy costs a third of a parse), or None when it does not parse.
    Read it, never change it; a caller that edits takes :func:`parent_tree`."""
    return _parsed(job.parent["sql"], job.parent.get("dialect", "sqlite"))


@lru_cache(maxsize=16)
def _parsed(sql: str, dialect: str) -> exp.Expr | None:
    """:func:`sqlkit.parse` of a parent's SQL, or None: the rules and twins of a
    parent's jobs, which come in a row, each read it, and a copy costs a third of a
    parse. Callers copy the tree before they change it."""
    try:
        return sqlkit.parse(sql, dialect)
    except SQLError:
        return None


def ranks_nothing(job: Job) -> bool:
    """Whether the parent's SQL neither orders, limits nor takes a MAX or MIN: its rows
    are all that meet its conditions, so a size word would choose among them."""
    tree = shared_parent_tree(job)
    if tree is None:
        return False
    if any(node.args.get("order") or node.args.get("limit") for node in tree.find_all(exp.Query)):
        return False
    return tree.find(exp.Max, exp.Min) is None


def asks_bare(job: Job, column: str) -> bool:
    """Whether the parent's outer SELECT returns ``column`` itself (not inside an
    aggregate): the question asks that figure of its rows."""
    tree = shared_parent_tree(job)
    if tree is None:
        return False
    if not isinstance(tree, exp.Select):
        return False
    return any(
        isinstance(e.unalias(), exp.Column) and e.unalias().name.lower() == column.lower()
        for e in tree.expressions
    )


CREATION_WORDS = frozenset(["opened", "founded", "built", "established", "created", "open"])
"""Words of a column that dates a thing's making, not an event the row is."""


def described_phrases(kind: str, table: Table, concept: str | None) -> list[str]:
    """The noun phrases a vague word of ``kind`` may qualify, longest first (none: it
    fits no noun of this table). An amount is a column a noun names: not a flag
    (``is_``/``has_``, or ``started``, a word with no noun form: "who high started")."""
    if kind == "amount":
        column = table.column(concept.split(".", 1)[1]) if concept else None
        if column is None or name_words(column.name)[0] in ("is", "has"):
            return []
        if _no_noun_form(name_words(column.name)[0]):
            return []
        noun = humanize(column.name)  # "minutes played": the head noun comes first
        return list(dict.fromkeys([noun, noun.split()[0]]))
    if kind == "event" and concept and set(name_words(concept)) & CREATION_WORDS:
        return []
    noun = table_noun(table)
    return list(dict.fromkeys([noun, table_noun(table, plural=False), noun.split()[-1]]))


def vague_kind(table: Table) -> tuple[str, str | None]:
    """Which vague words suit a table, and the column they would be about."""
    columns = [c for c in table.columns if not is_key(c.name)]
    if table_kind(table) == "person":
        birth = next((c for c in columns if "birth" in c.name.lower()), None)
        if birth is not None:
            return "person", f"{table.name}.{birth.name}"
    temporal = next((c for c in columns if is_temporal(c.name, c.type)), None)
    if temporal is not None:
        return "event", f"{table.name}.{temporal.name}"
    numeric = next((c for c in columns if is_numeric(c.type)), None)
    if numeric is not None:
        return "amount", f"{table.name}.{numeric.name}"
    return "other", None


def noun_group_start(question: str, phrases: list[str], inside: list[str] = ()) -> int | None:
    """Where the noun group of the first of ``phrases`` the question says starts (before
    its adjectives; after articles, numbers and superlatives); None when it says none of
    them as a noun: a phrase followed by a number is a label (``minute 12``), and one
    within a column's name in ``inside`` is part of that name (``length of stay``)."""
    names = [found for name in inside if (found := find_phrase(question, name))]
    span = None
    for phrase in phrases:
        for form in dict.fromkeys([phrase, singular(phrase)]):
            found = find_phrase(question, form)
            if not found or re.match(r"\s*\d", question[found[1] :]):
                continue
            if any(a <= found[0] and found[1] <= b for a, b in names):
                continue
            span = span or found
    if span is None:
        return None
    start = span[0]
    before = list(re.finditer(r"[A-Za-z'-]+", question[: span[0]]))
    for k in range(len(before) - 1, -1, -1):
        match, word = before[k], before[k].group().lower()
        if question[match.end() : start].strip():  # punctuation in between
            break
        if word in COMPARING or question[match.start() - 1 : match.start()].isdigit():
            return None  # "most frequent diagnoses", "the 47th minute": no word fits
        if word in DETERMINING or word.endswith(("'s", "s'")):
            break  # "different elderly patients", "County's recent home matches"
        if word in ("or", "and") and start < span[0] and k and _modifier(before[k - 1]):
            start = match.start()  # "Brazilian or Portuguese players": the whole group
            continue
        if word.endswith("est") and word not in QUESTION_STOPWORDS:
            return None  # "the largest high population": a superlative settles the noun
        if word in QUESTION_STOPWORDS or word in NUMBER_WORDS:
            break
        start = match.start()
    return start


COMPARING = frozenset(["most", "least", "more", "less"])
DETERMINING = frozenset(["different", "distinct", "other", "same", "unique", "separate"])
"""Words that come before any adjective of the noun (``how many different young ...``)."""


def _modifier(match: re.Match) -> bool:
    """A word that can qualify a noun in a coordinated group (not a function word)."""
    word = match.group().lower()
    return word not in QUESTION_STOPWORDS and word not in NUMBER_WORDS


def appendable(job: Job, context: DatabaseContext, other: Table, noun: str) -> bool:
    """Whether "... for that <noun>?" (a row of ``other``) would leave its referent
    open: not when the question says the noun ("... of which team for that team?"),
    names one of ``other``'s values ("Which Gloverland Borough players ... for that
    team?"), or ends in "there" or "when"."""
    question = job.parent["question"]
    if find_phrase(question, noun) or find_phrase(question, table_noun(other)):
        return False
    owner = other.name.lower()
    if any(
        column.split(".", 1)[0].lower() == owner for _v, column, _s in named_values(job, context)
    ):
        return False
    return not re.search(r"\b(there|when)\W*$", question, flags=re.IGNORECASE)


POSSESSIVES = frozenset(["their", "his", "her", "its", "my", "our", "your", "whose"])


def reference_noun(column: str, context: DatabaseContext) -> str | None:
    """What "that ..." calls a value of ``table.column``: ``date`` for a date or time,
    else the column's last word; when that word says nothing (``label``, ``name``), the
    word before it when it is a noun (a lake's ``state_name`` is a state), else the
    table's noun (a diagnosis's ``long_title``: "that diagnosis", not "that long"). None
    when the word is no noun (``traverse``): "that ..." cannot call the value anything."""
    table_name, column_name = column.split(".", 1)
    table = context.schema.table(table_name)
    found = table.column(column_name) if table else None
    if found is not None and is_temporal(found.name, found.type):
        return "date"  # "born after that date", never "after that player"
    parts = name_words(column_name)
    noun = parts[-1]
    if noun in GENERIC_WORDS:
        owner = [w for w in parts[:-1] if w not in GENERIC_WORDS]
        if owner and not _never_a_noun(owner[-1]):
            return singular(owner[-1])
        noun = table_noun(table, plural=False).split()[-1] if table else "one"
    return None if _never_a_noun(noun) else noun


@lru_cache(maxsize=4096)
def _never_a_noun(word: str) -> bool:
    """Whether WordNet's sense counts know ``word`` as a verb or an adjective and never
    as a noun: "that traverse" (a river's ``traverse``) and "that long" (a diagnosis's
    ``long_title``) name nothing. Without WordNet, no. Worked out once per word: a
    table's few column words come back for every parent of the table, and a word's
    sense counts cost milliseconds (and finding WordNet's files, a look at each)."""
    from answerable.builders.lexical import wordnet

    if not wordnet.available():
        return False
    reader = wordnet.wordnet()
    said = {pos: sum(lemma.count() for lemma in reader.lemmas(word, pos)) for pos in "nvas"}
    return said.pop("n") == 0 and any(said.values())


def _no_noun_form(word: str) -> bool:
    """Whether WordNet knows ``word`` in no noun form at all (``started``, a verb's past;
    ``minutes`` and ``yellow`` are nouns). Without WordNet, no."""
    from answerable.builders.lexical import wordnet

    return wordnet.available() and wordnet.is_word(word) and not wordnet.is_noun(word)


def replaceable(question: str, start: int, end: int, noun: str) -> bool:
    """A value that stands alone as a noun: not after a possessive, "how many" or its
    own noun (``admission location Clinic Referral``, ``a diagnosis of Sepsis``: "that
    location" there has no referent), and not in front of another noun (``abnormal
    creatinine results``) unless that noun is its column's."""
    before = words(question[:start])[-1:]
    if before and before[0] in POSSESSIVES:
        return False
    near = words(question[:start])[-3:]
    if near[-2:] == ["how", "many"] or {noun, noun + "s"} & set(near):
        return False
    if not _names_a_thing(question[start:end]):
        return False  # "tests came back abnormal": "came back that event" is no sentence
    rest = question[end:].lstrip("'\"")
    if not rest or rest[0] in ",.?!;:":
        return True
    following = words(rest)[:1] if rest[0].isspace() else []  # "Spanish-speaking": no
    return bool(following) and following[0] in QUESTION_STOPWORDS | {noun, noun + "s"}


def _names_a_thing(value: str) -> bool:
    """Whether a value can stand where a noun phrase goes: a name, a number, several
    words, or a word WordNet knows as a noun (``abnormal`` and ``shipped`` are not; a
    phrase "that ..." cannot take their place). Without WordNet, every value can."""
    from answerable.builders.lexical import wordnet

    word = value.strip().strip("'\"")
    if " " in word or not word.isalpha() or not word.islower() or not wordnet.available():
        return True
    return bool(wordnet.noun_synsets(word))


def widen(question: str, start: int, end: int, noun: str) -> tuple[int, int]:
    """Take in the quotes around a value, a noun repeated after it and an article before."""
    quote = question[start - 1] if start > 0 else ""
    if quote in ("'", '"') and question[end : end + 1] == quote:
        start, end = start - 1, end + 1
    after = re.match(rf"\s+{re.escape(noun)}s?\b", question[end:], flags=re.IGNORECASE)
    if after:
        end += after.end()
    before = re.search(r"\b(the|a|an)\s+$", question[:start], flags=re.IGNORECASE)
    if before:
        start = before.start()
    return start, end


def related_table(table: Table, context: DatabaseContext) -> Table | None:
    """A table ``table`` points at by a foreign key: what its rows belong to (an ICU
    stay's admission, a player's team). Not one that points at it: a stadium has many
    matches, so "stadiums ... for that match" asks nothing a reader could resolve."""
    for _column, other, _other_column in table.foreign_keys:
        found = context.schema.table(other)
        if found is not None and found.name != table.name:
            return found
    return None


COLUMN_SUBTYPES = ("surface", "related", "unrelated")
"""TrustSQL's kinds of hypothetical column, in the order a parent's drafts rotate through."""


def asked_column_phrase(
    job: Job, context: DatabaseContext
) -> tuple[tuple[int, int], Table, str, bool] | None:
    """Where the question says, as the attribute it asks, a column its SQL returns: the
    span, the column's table and name, and whether the SQL aggregates it. The question is
    grounded on the SQL's columns (stems, synonyms, glued compounds: "dose" for
    ``dose_val_rx``, "total amount" for ``totalamount``); a mention counts only in an
    attribute's slot (:func:`attribute_slot`: "the dose of glucagon", "patient 10005866's
    gender"), not as the noun of the rows listed ("which drugs", "the drug that ..."),
    the noun of a value or the object of another noun ("the name of the drug"). Asked
    of a value of another table ("the cost of the drug named lactulose"), the table is
    the value's, whose attribute the draft asks ("the refill count of the drug named
    lactulose", not a cost's billing clerk); an aggregate over such rows is left alone.

    It reads the parent's SQL and question alone, so the last :data:`ASKED_KEPT` answers
    are kept: a job drawn for a missing-column twin that has none drafts next, and asks
    again."""
    parent = job.parent
    key = (parent["sql"], parent.get("dialect", "sqlite"), parent["question"], context)
    if key not in _ASKED:
        if len(_ASKED) >= ASKED_KEPT:
            _ASKED.clear()
        _ASKED[key] = _asked_column_phrase(job, context)
    return _ASKED[key]


ASKED_KEPT = 256  # a shard's jobs are 64 by default
_ASKED: dict[tuple, tuple | None] = {}  # (sql, dialect, question, context) -> the answer


def _asked_column_phrase(
    job: Job, context: DatabaseContext
) -> tuple[tuple[int, int], Table, str, bool] | None:
    """:func:`asked_column_phrase`, worked out."""
    tree = shared_parent_tree(job)
    if tree is None:
        return None
    refs = parent_refs(job.parent["sql"], context)
    if refs is None:
        return None
    returned = returned_columns(tree)
    question = job.parent["question"]
    values = named_values(job, context)
    for mention in ground(question, refs).mentions():
        table_name, _, column = mention.concept.rpartition(".")
        table = context.schema.table(table_name)
        if mention.kind != "column" or table is None or column.lower() not in returned:
            continue
        span = (mention.start, mention.end)
        if not attribute_slot(question, span) or beside_a_value(span, values, question):
            continue
        aggregated = returned[column.lower()]
        owners = [v[1] for v in values if v[2][0] >= span[1] and not _owned_by(v[1], table)]
        if owners and aggregated:
            continue  # "the minimum total cost of the visits that involve a drug ...": no pair
        if owners:  # "the price of the drug vitamin e": an attribute of the drug is asked
            table = context.schema.table(owners[0].split(".", 1)[0]) or table
        return span, table, column, aggregated
    return None


def swapped_phrase(
    job: Job, context: DatabaseContext, table: Table
) -> tuple[tuple[int, int], Table, Column | None, bool] | None:
    """Where the question says the column a missing-column draft swaps, and its twin
    too: the span, the table whose attribute is asked there, the column (None when the
    phrase names none of that table's), and whether the SQL aggregates it. First the
    phrase the question asks as an attribute of a column its SQL returns
    (:func:`asked_column_phrase`: "the dose of glucagon"), else the longest name of a
    column of ``table`` the parent reads that its question says (:func:`said_column`);
    None when it says neither. The span takes in a "name of the" before the column
    (:func:`_with_its_name`)."""
    question = job.parent["question"]
    found = asked_column_phrase(job, context)
    if found is not None:
        span, owner, name, aggregated = found
        return _with_its_name(question, span), owner, owner.column(name), aggregated
    said = said_column(question, read_columns(job, table))
    if said is None:
        return None
    by_name = {humanize(c.name): c for c in table.columns}
    column = by_name.get(question[said[0] : said[1]].lower())
    return _with_its_name(question, said), table, column, False


def _with_its_name(question: str, span: tuple[int, int]) -> tuple[int, int]:
    """``span`` widened over a "name of the" before it: "the name of the insurance of
    patient 1" asks the insurance column's value, and another attribute takes the
    whole phrase's place ("the eye colour of patient 1", not "the name of the eye
    colour of patient 1", which names nothing)."""
    before = re.search(r"\bnames? of (the )?$", question[: span[0]], flags=re.IGNORECASE)
    return (before.start(), span[1]) if before else span


def _owned_by(column: str, table: Table) -> bool:
    """Whether ``table.column`` (qualified) is a column of ``table``."""
    return column.split(".", 1)[0].lower() == table.name.lower()


def returned_columns(tree: exp.Expr) -> dict[str, bool]:
    """The names (lower case) of the columns any SELECT of ``tree`` returns, each with
    whether it is returned inside an aggregate (``SUM(dose_val_rx)``)."""
    found: dict[str, bool] = {}
    for select in tree.find_all(exp.Select):
        for expression in select.expressions:
            for column in expression.find_all(exp.Column):
                folded = column.find_ancestor(exp.AggFunc, exp.Select)
                name = column.name.lower()
                found[name] = found.get(name, False) or isinstance(folded, exp.AggFunc)
    return found


ATTRIBUTE_OPENERS = frozenset(["the", "its", "their", "his", "her"])
"""Words an attribute asked of something follows ("the dose of ...", "their age")."""
FIGURE_WORDS = frozenset(
    ["average", "mean", "total", "sum", "maximum", "minimum", "highest", "lowest", "overall"]
)
"""Words that make a figure of the attribute after them ("the total amount")."""
ATTRIBUTE_FOLLOWERS = r"\s*($|[?.!]|(of|for|during|in|on|at|when|since)\b)"
"""What may follow an attribute's phrase: its owner ("of patient ...") or the end."""


REFERENCE_WORDS = frozenset(["that", "this", "those", "these"])
"""Words that point back to something the question named ("that drug")."""


def attribute_slot(question: str, span: tuple[int, int]) -> bool:
    """Whether the phrase at ``span`` stands where a question names the attribute it
    asks: right after "the" (or a possessive: "patient 10005866's gender", "their age"),
    the words between only figures' words ("the total", "the maximum"), and before
    "of ...", "for ...", "during ..." or the end; not the object of another noun ("the
    name of the drug"), not before a relative clause ("the drug that was
    prescribed"), where the phrase names the rows, not an attribute of them, and not of
    a referent ("above that drug's average dose": a figure compared with)."""
    start, end = span
    if not re.match(ATTRIBUTE_FOLLOWERS, question[end:], flags=re.IGNORECASE):
        return False
    before = list(re.finditer(r"[\w']+", question[:start]))
    at = start
    for k in range(len(before) - 1, -1, -1):
        match, word = before[k], before[k].group().lower()
        if question[match.end() : at].strip():
            return False  # punctuation in between
        if word.endswith("'s") or word in ATTRIBUTE_OPENERS:  # "the name of patient 1's"
            if word.endswith("'s") and k and before[k - 1].group().lower() in REFERENCE_WORDS:
                return False  # "above that drug's average dose": a referent's figure
            reach = 3 if word.endswith("'s") else 1
            return "of" not in [w.group().lower() for w in before[max(k - reach, 0) : k]]
        if word not in FIGURE_WORDS:
            return False
        at = match.start()
    return False


def returned_table(job: Job, context: DatabaseContext) -> Table | None:
    """The table of the first column the parent's outer SELECT returns (through its
    alias): the rows the answer lists ("What medication was prescribed ... after the
    diagnosis of ...?" lists prescriptions' drugs, though the question says a diagnosis
    first). None when no returned column resolves to one table of the schema."""
    tree = shared_parent_tree(job)
    while isinstance(tree, exp.SetOperation):
        tree = tree.this
    if not isinstance(tree, exp.Select):
        return None
    for column in _returned(tree):
        table = _table_of(column, tree, context)
        if table is not None:
            return table
    return None


def _returned(select: exp.Select) -> list[exp.Column]:
    """The bare columns a SELECT returns."""
    return [e.unalias() for e in select.expressions if isinstance(e.unalias(), exp.Column)]


def _table_of(column: exp.Column, select: exp.Select, context: DatabaseContext):
    """The schema table of a column ``select`` returns: through a table's alias, or
    through a derived table's (EHRSQL's ``SELECT T2.drug FROM (...) AS T2``) to the
    column its own SELECT returns; None when it resolves to no schema table."""
    own = [t for t in select.find_all(exp.Table) if t.find_ancestor(exp.Select) is select]
    names = {t.alias_or_name.lower(): t.name for t in own}
    if column.table.lower() in names or (not column.table and len(own) == 1):
        name = names.get(column.table.lower()) if column.table else own[0].name
        table = context.schema.table(name)
        return table if table is not None and table.column(column.name) is not None else None
    for derived in select.find_all(exp.Subquery):
        if derived.alias.lower() == column.table.lower() and derived.alias:
            inner = derived.this
            if isinstance(inner, exp.Select):
                same = [c for c in _returned(inner) if c.name.lower() == column.name.lower()]
                return _table_of(same[0], inner, context) if same else None
    return None


def asked_table(job: Job, context: DatabaseContext) -> Table | None:
    """Of the tables the parent's SQL reads, the one whose noun its question says first
    ("Which team scored the most goals ...": the teams, though the SQL reads the matches
    first), so that ", with their ..." asks an attribute of what the question is about."""
    found = []
    for name in (job.parent.get("sql_meta") or {}).get("tables", []):
        table = context.schema.table(name)
        if table is None:
            continue
        for noun in {table_noun(table), table_noun(table, plural=False)}:
            at = find_phrase(job.parent["question"], noun)
            if at:
                found.append((at[0], table.name))
    return context.schema.table(min(found)[1]) if found else None


YES_NO_OPENERS = frozenset(
    ["is", "are", "was", "were", "has", "have", "had", "does", "do", "did", "will"]
)


def yes_or_no(question: str) -> bool:
    """Whether ``question`` asks yes or no ("Is the value ... greater than ...?", "Has
    patient 1 been tested ...?"): there are no rows to add an attribute to."""
    first = re.match(r"\s*(\w+)", question)
    return bool(first) and first.group(1).lower() in YES_NO_OPENERS


def names_another_entity(job: Job, context: DatabaseContext, table: Table) -> bool:
    """Whether the first table noun the question says is of a table its SQL does not
    read and ``table`` cannot join: its rows are that entity's, held in a column of
    ``table`` ("states that the potomac runs through" reads only the rivers' traverse
    column, and a river's mouth is no attribute of a state)."""
    read = _read_tables(job)
    found = []
    for other in context.schema.tables:
        for noun in _nouns(other):
            at = find_phrase(job.parent["question"], noun)
            if at:
                found.append((at[0], other.name))
    if not found:
        return False
    first = context.schema.table(min(found)[1])
    return first.name.lower() not in read and not linked(table, first)


def _read_tables(job: Job) -> set[str]:
    """The names (lower case) of the tables the parent's SQL reads."""
    return {t.lower() for t in (job.parent.get("sql_meta") or {}).get("tables", [])}


def _nouns(table: Table) -> set[str]:
    """The nouns a question may call a table's rows by: its name as a noun, singular
    and plural ("rivers", "river")."""
    one = table_noun(table, plural=False)
    return {table_noun(table), one, " ".join([*one.split()[:-1], plural(one.split()[-1])])}


LISTING_OPENER = r"\s*(?:(?:what|which|list|name|show|give|me|find|are|were|all|the)\s+)*"
"""The words before the noun of the rows a question lists ("what are the states ...")."""


def listed_entity(job: Job, context: DatabaseContext) -> Table | None:
    """The table whose rows the parent's question lists, when it opens by naming them
    ("what are the states that the potomac run through", "which states border the
    missouri river") and its SQL does not read that table: the answer's rows are that
    entity's, held in another table's column (``river.traverse``), and an attribute
    added beside them is the entity's (a state's), not the column's table's (a river's
    mouth). None when the question opens otherwise or the SQL reads the table."""
    question = job.parent["question"]
    start = re.match(LISTING_OPENER, question, flags=re.IGNORECASE).end()
    read = _read_tables(job)
    for other in context.schema.tables:
        if other.name.lower() in read:
            continue
        for noun in _nouns(other):
            at = find_phrase(question[start:], noun)
            if at and at[0] == 0:
                return other
    return None


AGGREGATE_WORDS = r"\b(average|mean|total|sum|maximum|minimum|max|min|highest|lowest)\W+(\w+\W+)?$"
"""Words just before a column's name that make it a figure (``average age``)."""


def said_column(question: str, columns: list[str]) -> tuple[int, int] | None:
    """Where the question says the longest of ``columns`` (humanized names), if it does
    as the thing asked about: not as the noun of a value before it (``the IV route``,
    ``the Blood Gas category``), nor as the label of a number after it (``matchday
    26``), nor as what "how many" counts (``how many yellow cards``), nor after "what"
    or "which" (``what drug was prescribed``), where another attribute would make no
    sentence."""
    for column in sorted(columns, key=lambda c: (-len(c), c)):
        found = find_phrase(question, column)
        if not found or _after_a_value(question, found[0]) or _labels(question, found):
            continue
        if not _after_which(question, found[0]):
            return found
    return None


def _after_which(question: str, start: int) -> bool:
    """Whether the phrase at ``start`` follows "what" or "which" ("What drug was first
    prescribed ...?"): it names the rows asked for, and "What prescribing doctor was
    first prescribed ...?" is no question."""
    before = words(question[:start])
    return bool(before) and before[-1] in ("what", "which")


def beside_a_value(span: tuple[int, int], values: list, question: str) -> bool:
    """Whether the phrase at ``span`` stands next to a value the parent's SQL names
    (``values``: :func:`named_values`), only spaces between, is used as a verb ("what
    does it cost") or follows a reference word ("above that drug's average dose"): it
    names the value's kind, not an attribute asked for, and another attribute there
    makes no sentence ("via neb prescribing doctor", "that cost's average dose")."""
    start, end = span
    for _value, _column, (v_start, v_end) in values:
        if v_end <= start and not question[v_end:start].strip():
            return True
        if v_start >= end and not question[end:v_start].strip():
            return True
    before = re.findall(r"[\w'-]+", question[:start])
    return bool(before) and before[-1].lower() in KIND_NOT_ATTRIBUTE_AFTER


KIND_NOT_ATTRIBUTE_AFTER = frozenset(["it", "they", "does", "do", "did", "will"]) | REFERENCE_WORDS
"""Words after which a column's name is a verb or the kind of a referent, not an
attribute asked for (:func:`beside_a_value`)."""


def _labels(question: str, span: tuple[int, int]) -> bool:
    """Whether the phrase at ``span`` labels a number after it or before it ("matchday
    26", "the 47th minute") or is counted by "how many" before it."""
    start, end = span
    after = re.match(r"\s*(\w+)", question[end:])
    if after and after.group(1)[:1].isdigit():
        return True
    before = re.search(r"(\w+)\s+$", question[:start])
    if before and before.group(1)[:1].isdigit():
        return True
    return bool(re.search(r"\bhow many\s+$", question[:start], flags=re.IGNORECASE))


def appended_question(job: Job, context: DatabaseContext, table: Table) -> str | None:
    """How an attribute is asked after the parent's question: ", with their " beside
    the rows it lists; ", and what was its " (or "is", "their", as the question's tense
    and the table's rows say) after one row (:func:`one_result`: "When did patient 1
    first get a chloride test, and what was its turnaround time?"); None after a figure
    worked out of rows, a calculation or a figure per group, none of which has the
    attribute ("What number of hours have elapsed since ..., with their long title?",
    "... the mean Potassium per ethnicity ..., with their body weight?"), nor beside the
    distinct figures of one thing ("What is the selling rate of the drug ..., with their
    long title?")."""
    tree = shared_parent_tree(job)
    while isinstance(tree, exp.SetOperation):  # "... EXCEPT ...": the first query's rows
        tree = tree.this
    if not isinstance(tree, exp.Select) or counted(job):
        return None
    if not any(isinstance(e.unalias(), exp.Column) for e in tree.expressions):
        return None  # "how many hours have passed since ...": a calculation
    if groups_by_attribute(tree):
        return None  # "the mean Potassium per ethnicity": a group has no body weight
    if distinct_figures(tree, context):
        return None  # "What is the selling rate of the drug ...": the prices of one drug
    if not one_result(job, context):
        return ", with their "
    owner = "their" if table_kind(table) == "person" else "its"
    return f", and what {question_tense(job.parent['question'])} {owner} "


def distinct_figures(select: exp.Select, context: DatabaseContext) -> bool:
    """Whether a DISTINCT SELECT returns only figures (no key): the price or the value
    of one thing ("What is the price of diagnosis of ...?"), however many rows hold it."""
    returned = _returned(select)
    return bool(select.args.get("distinct") and returned) and all(
        _a_figure(c, select, context) for c in returned
    )


def _a_figure(column: exp.Column, select: exp.Select, context: DatabaseContext) -> bool:
    """Whether a returned column holds numbers (a price, a value), not a key that
    names its row (a patient's id)."""
    table = _table_of(column, select, context)
    found = table.column(column.name) if table is not None else None
    return found is not None and is_numeric(found.type) and not key_like(found.name)


def groups_by_attribute(select: exp.Select) -> bool:
    """Whether ``select`` groups its rows by an attribute (``ethnicity``,
    ``first_careunit``), not by what names a thing (a key, a name): its rows are then
    groups, which have no attribute of the table's entity."""
    group = select.args.get("group")
    if group is None:
        return False
    columns = [c.name for e in group.expressions for c in e.find_all(exp.Column)]
    naming = {"name", "title", "label"}
    return not any(key_like(c) or naming & set(name_words(c)) for c in columns)


def agreeing(asking: str, attribute: str) -> str:
    """``asking`` (:func:`appended_question`) with its verb in the attribute's number:
    ", and what were its red cards", not "was its red cards"."""
    last = attribute.split()[-1]
    if singular(last) == last:
        return asking
    return asking.replace(" was ", " were ").replace(" is ", " are ")


PAST_WORDS = frozenset(["was", "were", "did", "had"])
PRESENT_WORDS = frozenset(["is", "are", "does", "do", "has", "have", "s"])


def question_tense(question: str) -> str:
    """``was`` when the first verb of the question's first five words is a past one
    ("When did ...", "What was ..."), else ``is``."""
    for word in words(question)[:5]:
        if word in PAST_WORDS:
            return "was"
        if word in PRESENT_WORDS:
            return "is"
    return "was" if re.search(r"\b\w+ed\b", question) else "is"


def counted(job: Job) -> bool:
    """Whether the parent's question is answered by one count or total (its SQL's outer
    SELECT aggregates without a GROUP BY, works one figure out of subqueries without a
    FROM of its own, or reads only a derived table: "What is the percentile of 2.71 in
    ...?"), so that no row has an attribute to add."""
    tree = shared_parent_tree(job)
    if tree is None:
        return False
    if not isinstance(tree, exp.Select) or tree.args.get("group"):
        return False
    source = tree.args.get("from_")
    if source is None or (isinstance(source.this, exp.Subquery) and not tree.args.get("joins")):
        return True  # a figure worked out of subqueries, or a value read off a derived table
    return sqlkit.folds_rows(tree)


def numeric_result(job: Job, context: DatabaseContext | None = None) -> bool:
    """Whether the parent's verified answer is figures only (its first row's values are
    all numbers, none of them a key): only a figure can be forecast ("what state is
    dallas in And tell me what it will be next year." asks to forecast a name, "Which
    patients ...? And forecast it for next year." a list of ids). A parent with no run
    result (EHRSQL ships no data) is judged by what its SQL returns, with ``context``
    (:func:`returns_figures`); without either, it counts as figures."""
    result = job.parent.get("result") or {}
    rows = result.get("rows")
    if not rows:
        tree = shared_parent_tree(job)
        if context is None or result.get("row_count") or not isinstance(tree, exp.Select):
            return True
        return returns_figures(tree, context)
    if any(_a_key_label(name) for name in result.get("columns") or []):
        return False
    return all(_a_number(value) for value in rows[0])


def _a_key_label(name) -> bool:
    """Whether a result column's label names a key column (``subject_id``,
    ``p.hadm_id``), not an expression over one (``COUNT(DISTINCT p.subject_id)`` is a
    figure)."""
    label = str(name)
    return re.fullmatch(r"[\w.]+", label) is not None and key_like(label.split(".")[-1])


def _a_number(value) -> bool:
    """Whether a result's value is a number (a bool is a yes or a no)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def holds_a_figure(job: Job, context: DatabaseContext) -> bool:
    """Whether the parent's answer holds at least one figure to draw: a number in its
    verified first row under a column that is no key, or, with no run result, a figure
    among what its SQL returns (:func:`returns_figures`'s kinds). "Which teams have a
    name ending in United? Draw it as a bar chart." has none."""
    result = job.parent.get("result") or {}
    rows, columns = result.get("rows"), result.get("columns") or []
    if rows:
        return any(
            _a_number(value) and not _a_key_label(name)
            for name, value in zip(columns, rows[0], strict=False)
        )
    tree = shared_parent_tree(job)
    if not isinstance(tree, exp.Select):
        return True
    return any(_a_figure_expression(e, tree, context) for e in tree.expressions)


def has_a_cause(job: Job, context: DatabaseContext) -> bool:
    """Whether the parent's answer has a cause to explain: it holds a figure
    (:func:`holds_a_figure`), or it ranks or picks its rows by a figure (an ORDER BY, a
    window's order, a MIN or MAX of a count, a total or a numeric column: "what is the
    biggest city in georgia" can be asked why). One place, one name or one date looked
    up has none ("where is new orleans And tell me why.", "What was patient 10029484's
    last hospital discharge time? And explain the reasons.")."""
    if holds_a_figure(job, context):
        return True
    tree = shared_parent_tree(job)
    return tree is not None and any(
        _ranks_by_a_figure(node, context) for node in tree.find_all(exp.Ordered, exp.Min, exp.Max)
    )


def _ranks_by_a_figure(node: exp.Ordered | exp.Min | exp.Max, context: DatabaseContext) -> bool:
    """Whether an ORDER BY key (``node``), or a MIN or MAX, is a figure of the SELECT
    that holds it: that SELECT ranks its rows, or takes the lowest or highest, by it."""
    select = node.find_ancestor(exp.Select)
    key = node.this if isinstance(node, exp.Ordered) else node
    return select is not None and _a_figure_expression(key, select, context)


ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)


def returns_figures(select: exp.Select, context: DatabaseContext) -> bool:
    """Whether every value ``select`` returns is a figure: a count, sum or average,
    arithmetic, a number, or a numeric column that is no key (the lowest or highest of
    one too); not a yes/no (``COUNT(*) > 0``), a name or a date."""
    return bool(select.expressions) and all(
        _a_figure_expression(e, select, context) for e in select.expressions
    )


def _a_figure_expression(node: exp.Expr, select: exp.Select, context: DatabaseContext) -> bool:
    """Whether one returned expression of ``select`` holds a figure."""
    node = node.unalias()
    if isinstance(node, exp.Paren):
        return _a_figure_expression(node.this, select, context)
    if isinstance(node, (exp.Count, exp.Sum, exp.Avg, *ARITHMETIC)):
        return True
    if isinstance(node, (exp.Min, exp.Max)):
        return _a_figure_expression(node.this, select, context)
    if isinstance(node, exp.Literal):
        return node.is_number
    return isinstance(node, exp.Column) and _a_figure(node, select, context)


def one_result(job: Job, context: DatabaseContext | None = None) -> bool:
    """Whether the parent's answer is one figure (:func:`counted`) or one row (its
    outer SELECT is cut to ``LIMIT 1``: "When was the first time ...?", or keeps the
    rows whose column equals one value a subquery picks: "What drug was first
    prescribed ...?" is EHRSQL's ``starttime = (SELECT ... LIMIT 1)``, "the match with
    the highest attendance" ``attendance = (SELECT MAX(attendance) ...)``; with
    ``context``, also a key taken from a subquery that keeps one row: :func:`_one_row`),
    or its verified result has one row: "how big is alaska")."""
    if counted(job) or (job.parent.get("result") or {}).get("row_count") == 1:
        return True
    tree = shared_parent_tree(job)
    if not isinstance(tree, exp.Select):
        return False
    return _one_row(tree, context)


def _one_row(select: exp.Select, context: DatabaseContext | None) -> bool:
    """Whether a SELECT keeps one row: cut to ``LIMIT 1``, its column equal to the one
    value of a subquery, or (with ``context``) a key other tables point to taken from
    a subquery that keeps one row ("the name of the lab test patient 1 first
    received": EHRSQL's ``d_labitems.itemid IN (SELECT labevents.itemid ... WHERE
    labevents.charttime = (SELECT ... LIMIT 1))``, one test's name), or a key of the
    one table it reads equal to a value (:func:`_picked_by_key`: "the date of birth for
    patient 10004457" is ``patients.subject_id = 10004457``)."""
    if _limited_to_one(select):
        return True
    where = select.args.get("where")
    if where is None:
        return False
    mine = [c for c in where.find_all(exp.EQ, exp.In) if c.find_ancestor(exp.Select) is select]
    for condition in mine:
        if isinstance(condition, exp.EQ):
            picked = condition.expression
            if isinstance(picked, exp.Subquery) and _one_value(picked.this):
                return True
            if context is not None and _picked_by_key(condition, select, context):
                return True
            continue
        query = condition.args.get("query")
        inner = query.this if isinstance(query, exp.Subquery) else query
        if (
            context is not None
            and isinstance(inner, exp.Select)
            and isinstance(condition.this, exp.Column)
            and _referenced_key(condition.this, select, context)
            and _one_row(inner, None)
        ):
            return True
    return False


def _picked_by_key(condition: exp.EQ, select: exp.Select, context: DatabaseContext) -> bool:
    """Whether ``condition`` sets a key of the one table ``select`` reads (no join) to
    a value: its single-column primary key, or a column another table's foreign key
    points to (which SQL requires to be unique). Such a SELECT keeps at most one row."""
    if select.args.get("joins") or not isinstance(select.args.get("from_"), exp.From):
        return False
    sides = (condition.this, condition.expression)
    column = next((side for side in sides if isinstance(side, exp.Column)), None)
    if column is None or not any(isinstance(side, exp.Literal) for side in sides):
        return False
    table = _table_of(column, select, context)
    if table is None:
        return False
    only_key = [k.lower() for k in table.primary_key] == [column.name.lower()]
    return only_key or _pointed_to(table, column.name, context)


def _referenced_key(column: exp.Column, select: exp.Select, context: DatabaseContext) -> bool:
    """Whether ``column`` (of a table ``select`` reads) is one that another table's
    foreign key points to: the key that names its table's rows (``d_labitems.itemid``)."""
    table = _table_of(column, select, context)
    return table is not None and _pointed_to(table, column.name, context)


def _pointed_to(table: Table, column: str, context: DatabaseContext) -> bool:
    """Whether another table's foreign key points to ``table.column``."""
    name, column_name = table.name.lower(), column.lower()
    return any(
        target.lower() == name and other.lower() == column_name
        for t in context.schema.tables
        for _own, target, other in t.foreign_keys
    )


def _limited_to_one(query: exp.Expr) -> bool:
    """Whether a SELECT is cut to ``LIMIT 1``."""
    limit = query.args.get("limit") if isinstance(query, exp.Select) else None
    return limit is not None and limit.expression.sql() == "1"


def _one_value(query: exp.Expr) -> bool:
    """Whether a subquery gives one value: cut to ``LIMIT 1``, or one aggregate of its
    rows (``SELECT MAX(attendance) ...``: "the match with the highest attendance")."""
    if _limited_to_one(query):
        return True
    return (
        isinstance(query, exp.Select) and sqlkit.folds_rows(query) and not query.args.get("group")
    )


def _after_a_value(question: str, start: int) -> bool:
    """Whether the word before ``start`` is a capitalised name or code inside the
    sentence (a value the phrase after it names the kind of)."""
    before = re.findall(r"[\w'-]+", question[:start])
    if len(before) < 2:
        return False
    word = before[-1]
    return word[:1].isupper() and word.lower() not in QUESTION_STOPWORDS


def absent_columns(subtype: str, table: Table, context: DatabaseContext) -> list[str]:
    """The attributes (humanized) a question of ``subtype`` may ask of ``table``.

    They depend on the table and the schema alone, so a table of the context's schema
    gets them worked out once per process (every parent reading it asks again)."""
    index = next((i for i, t in enumerate(context.schema.tables) if t is table), None)
    if index is None:  # a table from elsewhere: nothing to key it by
        return _absent_columns(subtype, table, context)
    return list(_absent_columns_of(subtype, index, context))


@lru_cache(maxsize=4096)
def _absent_columns_of(subtype: str, index: int, context: DatabaseContext) -> tuple[str, ...]:
    """:func:`_absent_columns` of the context's ``index``-th table (the context is
    hashed by identity and its schema is not changed once loaded)."""
    return tuple(_absent_columns(subtype, context.schema.tables[index], context))


def _absent_columns(subtype: str, table: Table, context: DatabaseContext) -> list[str]:
    """The attributes of :func:`absent_columns`; an unrelated one is no noun of a table of
    the schema (Spider's column "patient" asked of a lab test, "and what was its
    patient?", is the patient the schema holds)."""
    if subtype == "surface":
        found = surface_columns(table, context.schema, context.surface_any_kind)
        return readable_names([a for a in found if not _near_in(a, table)])
    if subtype == "unrelated":  # already without this schema's near-synonyms
        tables = {noun for t in context.schema.tables for noun in _nouns(t)}
        return [a for a in readable_names(context.other_columns) if a not in tables]
    return [a for a in entity_attributes(table) if near_synonym(a, context.schema) is None]


def readable_names(names) -> list[str]:
    """The column names (humanized) made of words a person would type, in order: a
    name with a word WordNet does not know as a word of its own (function words pass)
    is left out (``linksto``, ``num of staff``, ``f2``, ``admittime``, and ``sep``, which
    WordNet holds only as an abbreviation of September): no one asks for a patient's
    "linksto" or a drug's "sep". Without WordNet, every name."""
    return [name for name in names if readable_name(name)]


@lru_cache(maxsize=1 << 14)
def readable_name(name: str) -> bool:
    """Whether each word of ``name`` is one WordNet knows as a word of its own
    (:func:`~answerable.builders.lexical.wordnet.is_plain_word`) or a function word,
    and one at least is no function word: a name of function words alone is a code
    (baseball's strikeouts ``so``: "and what was its so?")."""
    from answerable.builders.lexical import wordnet

    if not wordnet.available():
        return True
    said = name.split()
    return not set(said) <= QUESTION_STOPWORDS and all(
        word in QUESTION_STOPWORDS or (len(word) > 2 and wordnet.is_plain_word(word))
        for word in said
    )


def entity_attributes(table: Table) -> tuple[str, ...]:
    """Attributes of the entity ``table`` holds, by the last noun of its name (singular;
    words glued or not: ``icu_stays`` and ``icustays`` are an ICU stay), else by its kind.

    >>> from answerable.builders.schema import Column
    >>> entity_attributes(Table("d_icd_diagnoses", [Column("icd_code")]))[:2]
    ('diagnosing doctor', 'severity')
    """
    nouns = [singular(w) for w in name_words(table.name) if len(w) > 1]
    for start in range(len(nouns)):
        found = _ENTITIES.get("".join(nouns[start:]))
        if found:
            return found
    return lexicon.ABSENT_ATTRIBUTES[table_kind(table)]


_ENTITIES = {noun.replace(" ", ""): pool for noun, pool in lexicon.ENTITY_ATTRIBUTES.items()}


def surface_columns(table: Table, schema, any_kind: bool = False) -> list[str]:
    """Column names of the other tables that ``table`` lacks, from tables it cannot be
    joined to (no foreign key either way, no key column in common) and that no table it
    joins has, nor a table holding facts of a joined table's rows (:func:`_facts_of`:
    a diagnosis's cost), so the question cannot be answered through a join. TrustSQL's
    column-surface. Unless ``any_kind`` (TrustSQL's own definition, which takes any
    such column), a column of a table of another kind (a place's for a person), or of
    any other table when the asked one's kind is not known, is kept only when it names
    what any entity may have (``age``, ``rating``): a coach has no capacity, a team no
    shirt number, an album no city, a diagnosis no lab test's normal high.

    >>> from answerable.builders.schema import Column
    >>> dogs = Table("dogs", [Column("dog_id"), Column("age")])
    >>> pros = Table("professionals", [Column("professional_id"), Column("city")])
    >>> surface_columns(pros, DatabaseSchema("kennel", [dogs, pros]))
    ['age']
    """
    near = [t for t in schema.tables if t.name == table.name or linked(table, t)]
    near += [t for t in schema.tables if t not in near and _facts_of(t, near)]
    mine = {c.name.lower() for t in near for c in t.columns}  # a join away is answerable
    kind = table_kind(table)
    found = []
    for other in schema.tables:
        if other not in near:
            names = [c.name for c in other.columns if c.name.lower() not in mine]
            names = [n for n in names if not key_like(n)]
            if not any_kind and (kind == "other" or table_kind(other) != kind):
                names = [n for n in names if set(name_words(n)) <= lexicon.ANY_ENTITY_WORDS]
            found += describable_names(names)
    return sorted(set(found))


def linked(one: Table, other: Table) -> bool:
    """Whether two tables join: a foreign key either way, or a column in common that
    names something (``state_name``, ``hadm_id``; not a bare ``name``) and is not both
    tables' own primary key (every EHRSQL table has its own ``row_id``)."""
    if any(t.lower() == other.name.lower() for _c, t, _o in one.foreign_keys):
        return True
    if any(t.lower() == one.name.lower() for _c, t, _o in other.foreign_keys):
        return True
    own = {k.lower() for k in one.primary_key} & {k.lower() for k in other.primary_key}
    shared = {c.name.lower() for c in one.columns} & {c.name.lower() for c in other.columns}
    return any(_joins(name) for name in shared - own)


def _facts_of(other: Table, tables: list[Table]) -> bool:
    """Whether ``other`` holds facts of the rows of one of ``tables``: a foreign key of
    its points to that table's primary key (EHRSQL's ``cost.event_id`` to
    ``diagnoses_icd.row_id``: the cost of each diagnosis), so its columns are attributes
    of those rows and of what they record (a diagnosis's cost)."""
    return any(
        t.name.lower() == target.lower() and other_column.lower() in map(str.lower, t.primary_key)
        for _own, target, other_column in other.foreign_keys
        for t in tables
    )


def _joins(name: str) -> bool:
    """A column two tables may join on: a key or a name with a word of its own
    (``state_name``)."""
    return key_like(name) or not set(name_words(name)) <= GENERIC_WORDS


def key_like(name: str) -> bool:
    """A key, also when its words are glued (``itemid``)."""
    return is_key(name) or name.lower().endswith("id")


def _near_in(attribute: str, table: Table) -> bool:
    """Whether ``attribute`` merely renames a column of ``table``."""
    return near_synonym(attribute, DatabaseSchema("_", [table])) is not None


@lru_cache(maxsize=64)
def unlinked_questions(context: DatabaseContext) -> tuple[ForeignQuestion, ...]:
    """The context's foreign questions none of whose words links to its database."""
    return tuple(q for q in context.foreign_questions if not schema_links(q.question, context))


def template_draft(job: Job, rng: random.Random, templates, transform: str) -> Draft:
    fake = english_faker()
    fake.seed_instance(rng.getrandbits(64))
    topic, pattern = rng.choice(templates)
    question = pattern.format(
        first_name=fake.first_name(),
        city=fake.city(),
        word=fake.word(),
        street_name=fake.street_name(),
        country=fake.country(),
        year=rng.randint(1950, 2020),  # Faker's year() draws up to today: not reproducible
        currency=fake.currency_name(),
        choice=rng.choice(lexicon.OUT_OF_DOMAIN_FILLERS.get(topic, ("",))),
        subject=fake.random_element(lexicon.SMALL_TALK_SUBJECTS),  # last: earlier draws stay
    )
    return offline_draft(job, question, topic, transform, derived=False)


def offline_draft(job: Job, question: str, trigger: str, transform: str, **details) -> Draft:
    derived = details.pop("derived", True)
    subtype = details.pop("subtype", None)
    return Draft(
        job=job,
        question=question,
        trigger=trigger,
        generator=GENERATOR,
        rationale=f"{GENERATOR} rule {transform}",
        subtype=subtype,
        details={k: v for k, v in details.items() if v is not None},
        derived=derived,
        transform=transform,
    )
