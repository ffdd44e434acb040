"""seed_v1: turn source examples into verified items.

An answerable example is kept only when its SQL parses, binds to the database's schema
and, when the database file is there, executes within the limits to a non-empty
result, and that result is not one of numbers compared as text
(:mod:`answerable.builders.numeric_text`); its gold result and SQL metadata are stored
on the item. Unanswerable and
ambiguous examples from a source carry no SQL and pass through with their label.
"""

from __future__ import annotations

from answerable.builders import sqlkit
from answerable.builders.drafting.text import normalize
from answerable.builders.items import plain_item
from answerable.builders.numeric_text import text_number_failure
from answerable.kernel.errors import SQLError
from answerable.pipeline import BuildContext, StepOutput, reject

GENERATOR = "seed_v1"


def verify_examples(examples: list[dict], ctx: BuildContext) -> StepOutput:
    """Items for every example that passes its checks; a reject for every other.

    Examples that ask the same question of the same database (:func:`question_key`) but
    disagree on the label or on the result are all rejected as ``contradiction``, each
    naming the others: which one is right cannot be told from the data.
    """
    output, seen = StepOutput(), {}
    verdicts = iter(verified_many([e for e in examples if e["sql"] is not None], ctx))
    for example in examples:
        made = verify_example(example, next(verdicts) if example["sql"] is not None else None)
        if "reason" in made:
            output.rejects.append(made)
        elif made["id"] in seen:
            output.rejects.append(_duplicate(example, seen[made["id"]]))
        else:
            seen[made["id"]] = example
            output.items.append(made)
    contradicted = _contradictions(output.items)
    output.items = [item for item in output.items if item["id"] not in contradicted]
    for item_id, others in sorted(contradicted.items()):
        named = ", ".join(f"{seen[o]['id']} (#{seen[o].get('external_id')})" for o in others)
        detail = f"same database and question as {named}, with another label or result"
        output.rejects.append(_reject(seen[item_id], "contradiction", detail))
    return output


def question_key(db_id: str, question: str) -> tuple[str, str]:
    """What makes two questions the same: the database, and the question's words in lower
    case (:func:`~answerable.builders.drafting.text.normalize`, the form the release's
    guards and splits compare too).

    >>> question_key("shop", "How many customers live in  Paris? ")
    ('shop', 'how many customers live in paris')
    """
    return db_id, normalize(question)


def _verdict(item: dict) -> tuple:
    return item["label"], (item.get("result") or {}).get("hash")


def _contradictions(items: list[dict]) -> dict[str, list[str]]:
    """Item id -> the ids of the items that contradict it."""
    groups: dict[tuple, list[dict]] = {}
    for item in items:
        groups.setdefault(question_key(item["db_id"], item["question"]), []).append(item)
    found = {}
    for group in groups.values():
        if len({_verdict(item) for item in group}) > 1:
            for item in group:
                found[item["id"]] = sorted(o["id"] for o in group if o is not item)
    return found


def verify_example(example: dict, verdict: tuple | Unverified | None) -> dict:
    """The item made from one source example given its SQL's verdict (see
    :func:`verified_many`; None for an example without SQL), or a reject."""
    if example["sql"] is None:
        return _item(example, result=None, sql_meta=None)
    if isinstance(verdict, Unverified):
        return _reject(verdict.example or example, verdict.reason, verdict.detail)
    return _item(*verdict)


class Unverified(Exception):
    """An answerable example's SQL failed a check: ``reason`` (a reject reason),
    ``detail`` and the example as checked (in the engine's dialect), when it got that far."""

    def __init__(self, reason: str, detail: str, example: dict | None = None):
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail, self.example = reason, detail, example


def verified_sql(example: dict, ctx: BuildContext) -> tuple[dict, dict | None, dict]:
    """The checks every answerable item's SQL passes (see the module's docstring):
    ``(example in the engine's dialect, result record or None without a database file,
    sql_meta)``; raises :class:`Unverified` with the reason of the first that fails."""
    verdict = verified_many([example], ctx)[0]
    if isinstance(verdict, Unverified):
        raise verdict
    return verdict


class SqlChecks:
    """What checking many SQL texts remembers between them: each database's analyses,
    once per shape of query (:class:`~answerable.builders.sqlkit.ShapeAnalyses`)."""

    def __init__(self):
        self._shapes: dict[tuple[str, str], sqlkit.ShapeAnalyses] = {}

    def shapes(self, example: dict, ctx: BuildContext) -> sqlkit.ShapeAnalyses:
        """The analyses of the example's database in the example's dialect."""
        key = (example["db_id"], example.get("dialect", "sqlite"))
        if key not in self._shapes:
            self._shapes[key] = sqlkit.ShapeAnalyses(ctx.schema(key[0]), key[1])
        return self._shapes[key]

    def forget_written(self) -> None:
        """Drop the parsed trees no check took (see
        :meth:`~answerable.builders.sqlkit.ShapeAnalyses.written`): a batch is over."""
        for shapes in self._shapes.values():
            shapes.forget_written()


def verified_many(
    examples: list[dict], ctx: BuildContext, checks: SqlChecks | None = None
) -> list[tuple[dict, dict | None, dict] | Unverified]:
    """:func:`verified_sql` of each example, in order: its verified triple or its
    :class:`Unverified`. Each database's queries run in one exchange with its engine
    (``execute_many``), and ``checks`` remembers analyses between calls."""
    checks = checks or SqlChecks()
    analyzed = [_analyzed(example, ctx, checks) for example in examples]
    results = _executed(analyzed, ctx, checks)
    verdicts = [
        verdict if isinstance(verdict, Unverified) else _checked(*verdict, result, ctx, checks)
        for verdict, result in zip(analyzed, results, strict=True)
    ]
    checks.forget_written()
    return verdicts


def _analyzed(example: dict, ctx: BuildContext, checks: SqlChecks) -> tuple | Unverified:
    """``(example in the engine's dialect, sql_meta)``, or why its SQL has none."""
    checked = None
    try:
        example = checked = in_engine_dialect(example, ctx.database(example["db_id"]))
        return example, checks.shapes(example, ctx).analyze(example["sql"])
    except SQLError as error:
        return Unverified(error.reason, str(error), checked)


def _executed(analyzed: list[tuple | Unverified], ctx: BuildContext, checks: SqlChecks) -> list:
    """The result (or :class:`SQLError`) of each analyzed example's SQL, None for one
    without a database file or that failed its analysis; each database's at once, each
    text with whether it orders its rows, as its analysis found (``checks``)."""
    results: list = [None] * len(analyzed)
    by_database: dict[str, list[int]] = {}
    for index, verdict in enumerate(analyzed):
        if not isinstance(verdict, Unverified):
            by_database.setdefault(verdict[0]["db_id"], []).append(index)
    for db_id, indexes in by_database.items():
        database = ctx.database(db_id)
        if database is None:
            continue
        examples = [analyzed[i][0] for i in indexes]
        answers = database.execute_many(
            [(e["sql"], checks.shapes(e, ctx).ordered(e["sql"])) for e in examples]
        )
        for index, answer in zip(indexes, answers, strict=True):
            results[index] = answer
    return results


def _checked(example: dict, sql_meta: dict, result, ctx: BuildContext, checks: SqlChecks):
    """The verified triple of an analyzed example given its result, or its
    :class:`Unverified`: the result's checks, in :func:`verified_sql`'s order."""
    if isinstance(result, SQLError):
        return Unverified(result.reason, str(result), example)
    if result is not None and result.row_count == 0:
        return Unverified("empty-result", "the gold SQL returns no rows", example)
    if example["label"] == "unanswerable" and result is not None:
        return Unverified(
            "mislabel",
            f"labelled unanswerable, but its SQL runs and returns {result.row_count} rows "
            "(fix: label it answerable, or leave the SQL out)",
            example,
        )
    wrong = text_number_failure(
        example["sql"],
        ctx.schema(example["db_id"]),
        ctx.database(example["db_id"]),
        result,
        example.get("dialect", "sqlite"),
        checks.shapes(example, ctx),
    )
    if wrong:
        return Unverified(*wrong, example)
    return example, result.to_record() if result else None, sql_meta


def in_engine_dialect(example: dict, database) -> dict:
    """``example`` with its SQL transpiled (sqlglot) into the dialect of the engine that
    runs it, when that differs from the dialect it was written in: the item carries the
    SQL and the dialect it was verified in (so its id differs from SQLite's, whose SQL
    differs), and the SQL as written under ``provenance.params.as_written``. Raises
    :class:`SQLError` when the target cannot express the SQL."""
    written = example.get("dialect", "sqlite")
    if database is None or database.dialect == written:
        return example
    sql = sqlkit.transpile(example["sql"], written, database.dialect)
    as_written = {"dialect": written, "sql": example["sql"]}
    return {**example, "sql": sql, "dialect": database.dialect, "as_written": as_written}


def _item(example: dict, result: dict | None, sql_meta: dict | None) -> dict:
    verified_by = "execution" if result else ("binding" if example["sql"] else "none")
    item = plain_item(
        example["db_id"],
        example["question"],
        example["sql"],
        result=result,
        sql_meta=sql_meta,
        label=example["label"],
        category=example.get("category"),
        subtype=example.get("subtype"),
        dialect=example.get("dialect", "sqlite"),
        provenance={
            "generator": GENERATOR,
            "source": example["source"],
            "external_id": example.get("external_id"),
            "params": {"verified_by": verified_by, **_as_written(example)},
            "parent": example["id"],
            **_source_category(example),
        },
    )
    if example.get("split"):  # the source's own split, kept unless the release re-splits
        item["split"] = example["split"]
    return item


def _as_written(example: dict) -> dict:
    """``as_written``: the SQL as the source wrote it, for an item verified in another
    dialect (the counterfactual step edits such an item on its SQLite twin with it)."""
    return {"as_written": example["as_written"]} if example.get("as_written") else {}


def _source_category(example: dict) -> dict:
    """The source's own category name for the provenance, when it gave one."""
    name = example.get("source_category")
    return {"source_category": name} if name else {}


def _reject(example: dict, reason: str, detail: str) -> dict:
    return reject(
        example["id"],
        GENERATOR,
        reason,
        detail,
        source=example["source"],
        external_id=example.get("external_id"),
        db_id=example["db_id"],
        question=example["question"],
        sql=example["sql"],
    )


def _duplicate(example: dict, first: dict) -> dict:
    return _reject(
        example,
        "duplicate",
        f"same database, question and SQL as {first['source']} #{first.get('external_id')}",
    )
