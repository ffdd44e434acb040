"""What every source loader shares: the result shape, file reading, database lookup.

A loader reads one raw input into :class:`SourceData`: source examples (records valid
under ``source_example``), the databases they refer to, and rejects. A file that cannot
be read at all raises :class:`ConfigError`; one entry that cannot become a record is
rejected with a reason and the build goes on.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from answerable.builders.engines import SourceSpec, open_source, reads_sqlite_files
from answerable.builders.schema import DatabaseSchema
from answerable.builders.source_files import source_problem
from answerable.kernel.errors import ConfigError, RecordError, SQLError
from answerable.kernel.ids import content_hash
from answerable.kernel.names import name_problem
from answerable.kernel.untrusted_text import control_character
from answerable.schemas import validate

SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass
class DatabaseRef:
    """One database a source refers to; ``path`` is None for schema-only sources.

    ``engine`` is the key of the engine that reads it (``builders.engines.ENGINES``).
    """

    db_id: str
    path: Path | None
    schema: DatabaseSchema
    engine: str = "sqlite"
    server: Any = None  # a server source's SourceSpec (DSN, schema); ``path`` is None then

    @property
    def runs(self) -> bool:
        """Whether queries can run on it (a file or a server, not a schema alone)."""
        return self.path is not None or self.server is not None

    @property
    def key(self) -> str:
        """Where it lives, for caches and messages (a file path, or the server spec's
        printable name: never a DSN)."""
        return str(self.path) if self.server is None else self.server.describe()

    def spec(self):
        """The :class:`~answerable.builders.engines.base.SourceSpec` that opens it."""
        return self.server or SourceSpec(self.db_id, self.engine, path=self.path)

    def open(self, limits):
        """This database opened read-only by its engine (None for schema-only sources)."""
        return open_source(self.spec(), limits) if self.runs else None


@dataclass
class SourceData:
    """What a loader read: examples in file order, their databases, and rejects."""

    examples: list[dict] = field(default_factory=list)
    databases: dict[str, DatabaseRef] = field(default_factory=dict)
    rejects: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was normalized on the way in


# The recipe's ``limits`` section and its defaults: past them an example is rejected.
LIMITS = {"max_question_chars": 2000, "max_sql_chars": 20_000, "max_line_bytes": 1_000_000}


def within_limits(data: SourceData, limits: dict) -> SourceData:
    """``data`` with every example whose question or SQL is past its limit rejected."""
    kept = []
    for record in data.examples:
        problem = _past_limit(record, limits)
        if problem is None:
            kept.append(record)
            continue
        data.rejects.append(
            load_reject(record["source"], record.get("external_id"), "too-long", problem)
        )
    data.examples = kept
    return data


def _past_limit(record: dict, limits: dict) -> str | None:
    for field_name, key in (("question", "max_question_chars"), ("sql", "max_sql_chars")):
        size = len(record.get(field_name) or "")
        if size > limits[key]:
            return f"{field_name} of {size} characters is over limits.{key} ({limits[key]})"
    return None


def load_reject(source: str, external_id: str | None, reason: str, detail: str) -> dict:
    """The rejects-report line of a source entry that could not become an example."""
    return {
        "id": None,
        "step": "load",
        "source": source,
        "external_id": external_id,
        "reason": reason,
        "detail": detail,
    }


def example_id(source: str, db_id: str, question: str, sql: str | None) -> str:
    """The id of a source example: a hash of its source, database, question and SQL."""
    return content_hash({"source": source, "db_id": db_id, "question": question, "sql": sql})


def new_example(source: str, db_id: str, question: str, sql: str | None, **fields: Any) -> dict:
    """A source example record; ``label`` defaults from whether there is SQL.

    >>> new_example("s", "db", "how many?", None)["label"]
    'unanswerable'
    """
    label = fields.pop("label", None) or ("answerable" if sql is not None else "unanswerable")
    record = {
        "id": example_id(source, db_id, question, sql),
        "source": source,
        "db_id": db_id,
        "question": question,
        "sql": sql,
        "label": label,
        "category": None,
        "dialect": "sqlite",
        "external_id": None,
        "split": None,
        "variables": None,
    }
    record.update(fields)
    return record


class ExampleCollector:
    """Gathers examples of one source: validates each, drops duplicates, counts rejects.

    Two entries that give the same id (same source, database, question and SQL) would
    be one item downstream, so the second is rejected as a duplicate.
    """

    def __init__(self, source: str, limit: int | None = None):
        self.source, self.limit = source, limit
        self.examples: list[dict] = []
        self.rejects: list[dict] = []
        self._seen: dict[str, str | None] = {}

    @property
    def full(self) -> bool:
        """True once ``limit`` examples have been kept."""
        return self.limit is not None and len(self.examples) >= self.limit

    def reject(self, external_id: str | None, reason: str, detail: str) -> None:
        """Record one entry that could not become an example."""
        self.rejects.append(load_reject(self.source, external_id, reason, detail))

    def add(self, record: dict) -> None:
        """Keep ``record`` if it is valid and new, else reject it with the reason."""
        problem = self.problem(record)
        if problem is not None:
            self.reject(record.get("external_id"), *problem)
            return
        self._seen[record["id"]] = record.get("external_id")
        self.examples.append(record)

    def problem(self, record: dict) -> tuple[str, str] | None:
        """``(reason, detail)`` when ``record`` cannot be kept, else None."""
        if not str(record.get("question") or "").strip():
            return "empty-question", "the question is empty"
        control = control_character(str(record["question"]))
        if control is not None:
            return "control-character", f"the question holds {control} (not text a reader sees)"
        rule = name_problem(record.get("db_id"))
        if rule is not None:
            detail = f"db_id {record.get('db_id')!r} {rule} (a db_id names a database file)"
            return "unsafe-name", detail
        try:
            validate("source_example", record)
        except RecordError as error:
            return "invalid-record", str(error)
        if record["id"] in self._seen:
            return "duplicate", f"same question and SQL as {self._seen[record['id']]}"
        return None

    def finish(self, resolve) -> SourceData:
        """The collected data, with ``resolve(db_id)`` called once per database used."""
        db_ids = dict.fromkeys(record["db_id"] for record in self.examples)
        databases = {db_id: resolve(db_id) for db_id in db_ids}
        return SourceData(self.examples, databases, self.rejects)


def read_text(path: Path) -> str:
    """The text of an input file, or a ConfigError saying why it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, None, "file not found", fix="check the path in the recipe")
    try:
        return path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors) is not text
    except UnicodeDecodeError as error:
        raise ConfigError(path, None, f"not UTF-8 text (byte {error.start})") from None


def read_json(path: Path, repeated: list[str] | None = None) -> Any:
    """Parse a JSON file; malformed JSON names the line and column. With ``repeated``,
    every key written twice in one object is appended to it (JSON keeps only the last
    value, silently)."""
    text = read_text(path)
    hook = None if repeated is None else _noting_repeats(repeated)
    try:
        return json.loads(text, object_pairs_hook=hook)
    except json.JSONDecodeError as error:
        problem = f"malformed JSON at line {error.lineno} column {error.colno}: {error.msg}"
        raise ConfigError(path, None, problem) from None


def _noting_repeats(repeated: list[str]):
    """An ``object_pairs_hook`` that builds each object and notes its repeated keys."""

    def build(pairs: list[tuple[str, Any]]) -> dict:
        made: dict = {}
        for key, value in pairs:
            if key in made:
                repeated.append(key)
            made[key] = value
        return made

    return build


@dataclass(frozen=True)
class LineTooLong:
    """A JSONL line past ``limits.max_line_bytes``: not parsed, rejected by its loader."""

    size: int
    limit: int

    def detail(self) -> str:
        """The reject's detail, naming the limit."""
        return f"line of {self.size} bytes is over limits.max_line_bytes ({self.limit})"


def read_jsonl(path: Path, max_line_bytes: int | None = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, value)`` for each non-blank line of a JSONL file; a line
    longer than ``max_line_bytes`` is yielded as :class:`LineTooLong`, unparsed."""
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        size = len(line.encode("utf-8", "surrogatepass"))
        if max_line_bytes is not None and size > max_line_bytes:
            yield number, LineTooLong(size, max_line_bytes)
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            problem = f"malformed JSON at column {error.colno}: {error.msg}"
            raise ConfigError(path, f"line {number}", problem) from None


JSON_NAMES = {
    str: "a string",
    dict: "an object",
    list: "a list",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def json_kind(kind: type | tuple) -> str:
    """How a Python type reads in JSON terms: ``(str, NoneType)`` is 'a string or null'."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(JSON_NAMES.get(k, k.__name__) for k in kinds)


def expect(
    value: Any, kind: type | tuple, file: Path, where: str | None, what: str | None = None
) -> Any:
    """Return ``value`` if it is a ``kind``, else raise a ConfigError about its shape."""
    if not isinstance(value, kind):
        found = JSON_NAMES.get(type(value), type(value).__name__)
        raise ConfigError(file, where, f"expected {what or json_kind(kind)}, found {found}")
    return value


def field_of(entry: dict, key: str, kind: type | tuple, file: Path, where: str) -> Any:
    """``entry[key]``, which must exist and be a ``kind``."""
    if key not in entry:
        known = ", ".join(sorted(entry)) or "none"
        raise ConfigError(file, where, f"missing key {key!r} (keys present: {known})")
    return expect(entry[key], kind, file, f"{where}.{key}")


def check_sqlite(path: Path) -> Path:
    """Return ``path`` if it is a sound SQLite file (header, no pending log, passes
    ``integrity_check``: see :func:`source_problem`), else raise a ConfigError."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, None, "SQLite file not found", fix="check the path in the recipe")
    with path.open("rb") as fh:
        header = fh.read(len(SQLITE_HEADER))
    if header != SQLITE_HEADER:
        raise ConfigError(
            path,
            None,
            "not a SQLite database (wrong file header)",
            fix="point the recipe at a .sqlite file",
        )
    problem = source_problem(path)
    if problem is not None:
        raise ConfigError(path, None, problem[0], fix=problem[1])
    return path


def sqlite_schema(path: Path, db_id: str) -> DatabaseSchema:
    """The schema of a SQLite file, read read-only; an unreadable file is a ConfigError."""
    try:
        return DatabaseSchema.from_sqlite(check_sqlite(path), db_id)
    except sqlite3.DatabaseError as error:
        raise ConfigError(path, None, f"cannot read the SQLite database: {error}") from None


def engine_database(path: Path, db_id: str, engine: str) -> DatabaseRef:
    """The database of ``db_id`` in the file ``path`` read by ``engine``, its schema read
    from the engine's catalog; an unreadable file is a ConfigError."""
    if reads_sqlite_files(engine):
        return DatabaseRef(db_id, path, sqlite_schema(path, db_id), engine)
    ref = DatabaseRef(db_id, path, DatabaseSchema(db_id), engine)
    try:
        with ref.open(None) as database:
            ref.schema = database.schema(db_id)
    except SQLError as error:
        raise ConfigError(path, None, f"cannot read the {engine} database: {error}") from None
    return ref


def server_database(source: dict, db_id: str, where: str) -> DatabaseRef:
    """The database ``db_id`` of a server source: the schema ``schemas[db_id]`` (the
    db_id itself when not mapped) on the server its ``dsn`` or ``dsn_env`` names, its
    schema read from the server's catalog; a server that cannot be read is a ConfigError
    naming the source (never the DSN)."""
    namespace = (source.get("schemas") or {}).get(db_id, db_id)
    spec = SourceSpec(
        db_id,
        source["engine"],
        dsn=source.get("dsn"),
        dsn_env=source.get("dsn_env"),
        namespace=namespace,
        scratch=source.get("scratch_schema"),
        keep_variants=bool(source.get("keep_variants", False)),
    )
    ref = DatabaseRef(db_id, None, DatabaseSchema(db_id), spec.engine, spec)
    try:
        with ref.open(None) as database:
            ref.schema = database.schema(db_id)
    except SQLError as error:
        key = "dsn_env" if spec.dsn_env else "dsn"
        raise ConfigError(where, key, str(error)) from None
    if not ref.schema.tables:
        raise ConfigError(
            where,
            "schemas",
            f"the server's schema {namespace!r} holds no table this role can read",
            fix=f"map db_id {db_id!r} to its schema (schemas: {{{db_id}: <schema>}}) or grant "
            "SELECT on its tables",
        )
    return ref


def check_folder(folder: Path) -> Path:
    """Return ``folder`` if it is a directory, else raise a ConfigError."""
    if not Path(folder).is_dir():
        raise ConfigError(
            folder,
            "databases",
            "folder not found",
            fix="point databases at a folder of <db_id>.sqlite files",
        )
    return Path(folder)


def find_database(folder: Path | None, db_id: str, suffix: str = ".sqlite") -> Path | None:
    """``<folder>/<db_id>.sqlite`` or ``<folder>/<db_id>/<db_id>.sqlite``, or None (another
    engine's files: another ``suffix``, such as ``.duckdb``).

    A db_id that is not a plain name (see :func:`name_problem`) is never looked up.
    """
    if name_problem(db_id) is not None:
        return None
    if folder is None:
        return None
    for candidate in (folder / f"{db_id}{suffix}", folder / db_id / f"{db_id}{suffix}"):
        if candidate.is_file():
            return candidate
    return None


def spider_tables(path: Path) -> dict[str, dict]:
    """The entries of a Spider-style ``tables.json``, keyed by ``db_id``."""
    entries = expect(read_json(path), list, path, None, "a list of database entries")
    tables = {}
    for index, entry in enumerate(entries):
        expect(entry, dict, path, f"[{index}]", "a database entry (object)")
        tables[field_of(entry, "db_id", str, path, f"[{index}]")] = entry
    return tables


def spider_schema(tables: dict[str, dict], db_id: str, path: Path) -> DatabaseSchema:
    """Build the schema of ``db_id`` from ``tables.json`` entries read from ``path``."""
    try:
        return DatabaseSchema.from_spider(tables[db_id])
    except (KeyError, IndexError, TypeError, ValueError) as error:
        problem = f"entry {db_id!r} is not a Spider schema ({type(error).__name__}: {error})"
        raise ConfigError(path, "db_id", problem) from None


def schema_database(
    db_id: str, folder: Path | None, tables: dict[str, dict], tables_path: Path
) -> DatabaseRef:
    """A database with a SQLite file when ``folder`` has one, else schema-only."""
    path = find_database(folder, db_id)
    if path is not None:
        return DatabaseRef(db_id, path, sqlite_schema(path, db_id))
    if db_id not in tables:
        where = f" or under {folder}" if folder is not None else ""
        raise ConfigError(
            tables_path,
            "db_id",
            f"no schema for db_id {db_id!r} here{where}",
            fix="add the database to tables.json or its SQLite file",
        )
    return DatabaseRef(db_id, None, spider_schema(tables, db_id, tables_path))
