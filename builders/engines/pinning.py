"""What pins a server source's data: a checksum of its tables, read through its engine.

A file source is pinned in a build's inputs (and a release's ``manifest.json``) by the
file's sha256. A source on a server has no file, so its entry holds a checksum of every
table and view the build's role can read in its schema: each one's rows read in full
(``SELECT *``, streamed, no row kept) and hashed by the engine-independent result hash
(:mod:`.base`), as a multiset, since a table's rows have no order. The same data gives
the same checksum on every engine (a SQLite copy of the tables gives the server's), and
any changed, added or removed row, table or column changes it. The inputs are part of
every cached step's signature, so a build reruns its steps when the server's data
changed. Reading every row costs one scan of each table per build.
"""

from __future__ import annotations

from sqlglot import exp

from answerable.builders.executor import Limits
from answerable.kernel.ids import content_hash

PIN_LIMITS = Limits(timeout_s=600.0, row_cap=0)  # a full scan may take a while


def table_checksums(database, schema) -> dict[str, dict]:
    """``{table: {"rows": n, "hash": h}}`` of every table and view of ``schema`` read
    through ``database`` (an engine's Database)."""
    found = {}
    for table in sorted(schema.tables, key=lambda t: t.name):
        name = exp.Table(this=exp.to_identifier(table.name, quoted=True))
        sql = exp.select(exp.Star()).from_(name).sql(dialect=database.dialect)
        result = database.execute(sql, ordered=False, row_cap=0)
        found[table.name] = {"rows": result.row_count, "hash": result.hash}
    return found


def server_inputs(databases: dict) -> list[dict]:
    """The inputs entries of the server sources among ``databases`` ({db_id:
    DatabaseRef}), sorted: ``{"path": "<engine>:<db_id>", "sha256", "tables"}``."""
    entries = []
    for db_id, ref in sorted(databases.items()):
        if ref.server is None:
            continue
        with ref.open(PIN_LIMITS) as database:
            tables = table_checksums(database, ref.schema)
        digest = content_hash(tables, length=64)
        entries.append({"path": f"{ref.engine}:{db_id}", "sha256": digest, "tables": tables})
    return entries
