"""The Argilla backend (argilla SDK 2.x): the review queue as an Argilla dataset.

The only module of the project that imports ``argilla``. Records and decisions are
mapped by the pure functions of :mod:`argilla_mapping`; this module does the I/O:

- ``push``: creates the workspace and the dataset (settings from
  :func:`settings_spec`) when missing, then upserts records in batches of at most 500
  with the item id as record id, so pushing twice creates no duplicates. A record the
  mapping finds wrong is reported and not sent; when the server refuses a batch, the
  batch is split until the refused record is alone, so one bad record is reported and
  the rest of its batch still goes in.
- ``pull``: reads the plain records listing with responses (no search query, so no
  search engine involved) and turns submitted responses into decisions; the status of
  an item is decided by :mod:`policy`, never taken from Argilla's record status.

Credentials come from ``ARGILLA_API_URL`` and ``ARGILLA_API_KEY``; the key is passed to
the SDK and never printed, logged or put in an error message.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from answerable.annotation.argilla_mapping import (
    decisions_from_record,
    item_from_record,
    record_for,
    record_problem,
    settings_spec,
)
from answerable.annotation.decisions import DecisionError, check_decision
from answerable.annotation.queue import (
    Progress,
    PushReport,
    count_progress,
    latest_decisions,
    queue_problem,
    queue_reject,
)
from answerable.kernel.errors import AnswerableError, ConfigError
from answerable.pipeline import reject

BATCH = 500
PAGE = 500


class ArgillaUnavailable(AnswerableError):
    """Argilla cannot be reached or refuses the credentials; the message names the URL only."""


def public_url(url: str) -> str:
    """The URL without any user or password in it, fit to print.

    >>> public_url("https://user:secret@argilla.example.org/")
    'https://argilla.example.org/'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def connect(recipe_file: str = "recipe", api_url: str | None = None, api_key: str | None = None):
    """An ``argilla.Argilla`` client from the arguments or ``ARGILLA_API_URL`` / ``_KEY``."""
    api_url = api_url or os.environ.get("ARGILLA_API_URL")
    api_key = api_key or os.environ.get("ARGILLA_API_KEY")
    if not api_url or not api_key:
        raise ConfigError(
            recipe_file,
            "review.backend",
            "the Argilla backend needs ARGILLA_API_URL and ARGILLA_API_KEY in the environment",
            fix="export both (the key of an owner or admin user), or use backend: local",
        )
    import argilla as rg

    try:
        return rg.Argilla(api_url=api_url, api_key=api_key, timeout=60, retries=2)
    except Exception as error:  # the SDK raises httpx and its own errors alike
        raise ArgillaUnavailable(
            f"cannot use Argilla at {public_url(api_url)}: {type(error).__name__} "
            "(fix: check that the server runs and that ARGILLA_API_KEY is valid)"
        ) from None


class ArgillaQueue:
    """The review queue kept in one Argilla dataset."""

    def __init__(self, client, dataset: str, workspace: str = "answerable", min_submitted=1):
        self.client, self.name, self.workspace_name = client, dataset, workspace
        self.min_submitted = min_submitted
        self.problems: list[str] = []  # what the last pull could not count
        self._dataset = None

    def __enter__(self) -> ArgillaQueue:
        return self

    def __exit__(self, *_) -> None:
        pass

    # ---- dataset -------------------------------------------------------------------

    def dataset(self, create: bool = False):
        """The Argilla dataset, created with its settings when ``create`` and missing."""
        if self._dataset is not None:
            return self._dataset
        import argilla as rg

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK warns when a lookup finds nothing
            workspace = self.client.workspaces(self.workspace_name)
            if workspace is None and create:
                workspace = rg.Workspace(name=self.workspace_name, client=self.client).create()
            found = workspace and self.client.datasets(self.name, workspace=workspace)
        if found is None and create:
            settings = sdk_settings(settings_spec(self.min_submitted), self.client)
            found = rg.Dataset(
                name=self.name, workspace=workspace, settings=settings, client=self.client
            ).create()
        self._dataset = found
        return found

    # ---- push ----------------------------------------------------------------------

    def push(
        self,
        items: Iterable[dict],
        excerpts: Mapping[str, list] | None = None,
        contexts: Mapping[str, dict] | None = None,
    ) -> PushReport:
        """Upsert items as records in batches of at most 500; bad records are reported.
        ``contexts`` (a draft's parent) go into the record's explanation field."""
        excerpts, contexts = excerpts or {}, contexts or {}
        report, records = PushReport(), []
        for item in items:
            problem = queue_problem(item)
            record = (
                None
                if problem
                else record_for(item, excerpts.get(item["id"]), contexts.get(item["id"]))
            )
            problem = problem or record_problem(record)
            if problem:
                report.rejects.append(queue_reject(item, problem))
            else:
                records.append(record)
        if not records:
            return report
        known = self._known_ids(self.dataset(create=True))
        sent, refused = self.upsert(records)
        report.rejects += refused
        report.updated = sum(record["id"] in known for record in sent)
        report.added = len(sent) - report.updated
        return report

    def upsert(self, records: list[dict]) -> tuple[list[dict], list[dict]]:
        """Send plain records in batches of at most 500: ``(sent, rejects)``."""
        dataset, sent, rejects = self.dataset(create=True), [], []
        for start in range(0, len(records), BATCH):
            sent += self._send(dataset, records[start : start + BATCH], rejects)
        return sent, rejects

    def _send(self, dataset, batch: list[dict], rejects: list[dict]) -> list[dict]:
        """Send one batch; on refusal split it in halves until the bad record is alone."""
        try:
            dataset.records.log(sdk_records(batch), batch_size=len(batch))
            return batch
        except Exception as error:
            if not _refused(error):
                raise
            if len(batch) == 1:
                rejects.append(reject(batch[0]["id"], "review", "argilla-refused", _why(error)))
                return []
        middle = len(batch) // 2
        return self._send(dataset, batch[:middle], rejects) + self._send(
            dataset, batch[middle:], rejects
        )

    def _known_ids(self, dataset) -> set[str]:
        return {record.get("external_id") for record in self._listing(dataset, responses=False)}

    # ---- pull ----------------------------------------------------------------------

    def _listing(self, dataset, responses: bool = True) -> Iterable[dict]:
        """Every record of the plain listing (``GET .../records``), page by page, as JSON."""
        http = self.client.api.http_client
        params = {"include": ["responses"] if responses else [], "limit": PAGE, "offset": 0}
        while True:
            reply = http.get(f"/api/v1/datasets/{dataset.id}/records", params=params)
            reply.raise_for_status()
            page = reply.json()["items"]
            yield from page
            if len(page) < PAGE:
                return
            params["offset"] += PAGE

    def pull(self) -> list[dict]:
        """The decisions that count, from submitted responses; the rest goes to ``problems``."""
        self.problems = []
        dataset = self.dataset()
        if dataset is None:
            return []
        usernames = {str(user.id): user.username for user in self.client.users.list()}
        decisions = []
        for record in self._listing(dataset):
            found, problems = decisions_from_record(record, usernames)
            self.problems += problems
            item = item_from_record(record)
            for decision in found:
                where = f"record {item['id']}, response of {decision['annotator']}"
                try:
                    decisions.append(check_decision(decision, item, where))
                except DecisionError as error:
                    self.problems.append(f"{error}; not counted")
        return latest_decisions(decisions)

    def items(self) -> list[dict]:
        """The queued items as far as their records tell (id, question, label, database)."""
        dataset = self.dataset()
        if dataset is None:
            return []
        return [item_from_record(r) for r in self._listing(dataset, responses=False)]

    def progress(self) -> Progress:
        """Items (records), items with a decision, decisions per annotator."""
        dataset = self.dataset()
        if dataset is None:
            return Progress(0, 0, 0)
        ids = [r.get("external_id") for r in self._listing(dataset, responses=False)]
        return count_progress(ids, self.pull())


def _refused(error: Exception) -> bool:
    """True when the server (400, 422) or the SDK's own checks refused the records."""
    from argilla._exceptions import ArgillaAPIError, RecordsIngestionError

    if isinstance(error, ArgillaAPIError):
        return error.status_code in (400, 422)
    return isinstance(error, RecordsIngestionError | ValueError)


def _why(error: Exception) -> str:
    text = str(error)
    return text.split("Details: ", 1)[-1][:500]


def sdk_settings(spec: dict, client):
    """``argilla.Settings`` from :func:`settings_spec`'s plain data."""
    import argilla as rg

    fields = [
        rg.TextField(
            f["name"],
            title=f["title"],
            required=f["required"],
            use_markdown=f["markdown"],
            client=client,
        )
        for f in spec["fields"]
    ]
    questions = [_question(q, client) for q in spec["questions"]]
    metadata = [rg.TermsMetadataProperty(n, client=client) for n in spec["metadata"]["terms"]]
    metadata += [
        rg.IntegerMetadataProperty(n, min=0, client=client) for n in spec["metadata"]["integers"]
    ]
    return rg.Settings(
        fields=fields,
        questions=questions,
        metadata=metadata,
        guidelines=spec["guidelines"],
        distribution=rg.TaskDistribution(min_submitted=spec["min_submitted"]),
    )


def _question(spec: dict, client):
    import argilla as rg

    common = {"title": spec["title"], "required": spec["required"], "client": client}
    if spec["kind"] == "label":
        described = {"description": spec["description"]} if spec.get("description") else {}
        question = rg.LabelQuestion(spec["name"], labels=spec["labels"], **common, **described)
        if spec.get("label_descriptions"):
            # The server takes a description per option; the SDK's constructor has no
            # parameter for it, so the options it rendered get theirs here.
            for option in question._model.settings.options:
                option["description"] = spec["label_descriptions"].get(option["value"])
        return question
    if spec["kind"] == "text":
        return rg.TextQuestion(spec["name"], **common)
    return rg.SpanQuestion(
        spec["name"], field=spec["field"], labels=spec["labels"], allow_overlapping=True, **common
    )


def sdk_records(records: list[dict]) -> list:
    """``argilla.Record`` objects from :func:`record_for`'s plain data."""
    import argilla as rg

    return [
        rg.Record(
            id=r["id"],
            fields=r["fields"],
            metadata=r["metadata"],
            suggestions=[rg.Suggestion(**s) for s in r["suggestions"]],
        )
        for r in records
    ]
