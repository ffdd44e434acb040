"""Counterfactual variants of a PostgreSQL source: the edited tables in a scratch schema.

A variant's edited tables are copied into the scratch schema the source names
(``scratch_schema``; never the source schema) as ``v<hash of the variant id>_<table>``,
in one transaction under an advisory lock of the variant (a worker racing another for
the same variant waits for it and reuses its copies), each marked by a comment
(:data:`VARIANT_COMMENT`). A variant is read through a connection whose session holds
``CREATE TEMP VIEW <table> AS SELECT * FROM <scratch>.<copy>`` for each edited table
(:func:`shadowing_views`): PostgreSQL looks names up in the session's temporary schema
before the search path (the source schema), so the edited tables hide the source's and
the others are the source's, as a SQLite delta's TEMP views do. So the role needs CREATE
on the scratch schema only (a schema per variant would need CREATE on the database) and
TEMP (PostgreSQL grants it to everyone by default). The copies are dropped when the
build ends (:func:`drop_marked`) unless the source says ``keep_variants: true``. The
source schema is only read.

Rows are read in physical (``ctid``) order (:func:`.postgres_tables.row_order`), the
order the SQLite twin and a release's exported file hold them in, so fills and seeded
row choices give the twin's values.
"""

from __future__ import annotations

from answerable.builders.engines.edited_tables import describe_ops, edit_rows, ops_by_table
from answerable.builders.engines.postgres_tables import row_order
from answerable.builders.schema import DatabaseSchema, Table
from answerable.kernel.errors import SQLError
from answerable.kernel.ids import content_hash

VARIANT_COMMENT = "answerable counterfactual variant"  # marks the tables we may drop


def variant_prefix(name: str) -> str:
    """The prefix of variant ``name``'s tables in the scratch schema: a hash of the
    variant id (PostgreSQL names are at most 63 bytes)."""
    return f"v{content_hash(name)[:15]}_"


def materialize_postgres(con, spec, schema: DatabaseSchema, ops: list[dict], name: str) -> dict:
    """Create the edited tables of variant ``name`` in ``spec.scratch`` on ``con`` (a
    writable psycopg connection), in one transaction; return ``{table: its copy's
    name}``. Copies made earlier (by this build, a worker, a kept run) are reused."""
    import psycopg
    from psycopg import sql

    edits = ops_by_table(ops)
    found = {t.name.lower(): t for t in schema.tables}
    missing = sorted(set(edits) - set(found))
    if missing:
        raise SQLError("materialize-failed", f"no such table: {', '.join(missing)}")
    copies = {found[t].name: variant_prefix(name) + t for t in sorted(edits)}
    if _tables_exist(con, spec.scratch, list(copies.values())):
        return copies
    try:
        with con.transaction():
            con.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(name),))
            if _tables_exist(con, spec.scratch, list(copies.values())):
                return copies  # another worker made them while this one waited
            for table, copy in copies.items():
                target = sql.SQL("{}.{}").format(sql.Identifier(spec.scratch), sql.Identifier(copy))
                source = spec.namespace or "public"
                _write_postgres_table(
                    con, source, target, found[table.lower()], edits[table.lower()]
                )
                con.execute(
                    sql.SQL("COMMENT ON TABLE {} IS {}").format(
                        target, sql.Literal(f"{VARIANT_COMMENT} {name}")
                    )
                )
    except psycopg.Error as error:
        raise SQLError("materialize-failed", f"{describe_ops(ops)}: {error}") from None
    return copies


def _lock_key(name: str) -> int:
    """The advisory lock that makes the workers building variant ``name`` take turns
    (two CREATE TABLEs of one name racing fail on the catalog's unique index, not with
    a DuplicateTable the loser could take as "already made")."""
    return int(content_hash(name)[:15], 16)


def _tables_exist(con, scratch: str, names: list[str]) -> bool:
    row = con.execute(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = ANY(%s)",
        (scratch, names),
    ).fetchone()
    return row[0] == len(names)


def _write_postgres_table(con, source: str, target, table: Table, ops: list[dict]) -> None:
    from psycopg import sql

    query = sql.SQL("SELECT {} FROM {}.{} ORDER BY {}").format(
        sql.SQL(", ").join(sql.Identifier(c.name) for c in table.columns),
        sql.Identifier(source),
        sql.Identifier(table.name),
        row_order(con, source, table),
    )
    rows = con.execute(query).fetchall()
    edited = edit_rows(table, rows, ops)
    parts = [sql.SQL("{} {}").format(sql.Identifier(n), sql.SQL(k)) for n, k in edited.columns]
    if edited.primary_key():
        keys = sql.SQL(", ").join(map(sql.Identifier, edited.primary_key()))
        parts.append(sql.SQL("PRIMARY KEY ({})").format(keys))
    con.execute(sql.SQL("CREATE TABLE {} ({})").format(target, sql.SQL(", ").join(parts)))
    columns = sql.SQL(", ").join(sql.Identifier(n) for n, _ in edited.columns)
    copy_sql = sql.SQL("COPY {} ({}) FROM STDIN").format(target, columns)
    with con.cursor() as cur, cur.copy(copy_sql) as copy:
        for row in edited.rows:
            copy.write_row(row)


def shadowing_views(scratch: str, copies: dict) -> list:
    """``CREATE TEMP VIEW <table> AS SELECT * FROM <scratch>.<copy>`` for each edited
    table: PostgreSQL looks a name up in the session's temporary schema before the
    search path, so the view hides the source's table, as a SQLite delta's TEMP view
    does (and goes with the session)."""
    from psycopg import sql

    return [
        sql.SQL("CREATE TEMP VIEW {} AS SELECT * FROM {}.{}").format(
            sql.Identifier(table), sql.Identifier(scratch), sql.Identifier(copy)
        )
        for table, copy in sorted(copies.items())
    ]


def drop_marked(con, scratch: str) -> list[str]:
    from psycopg import sql

    with con:
        names = [
            name
            for (name,) in con.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind = 'r' "
                "AND obj_description(c.oid, 'pg_class') LIKE %s ORDER BY c.relname",
                (scratch, VARIANT_COMMENT + "%"),
            )
        ]
        # CASCADE: the TEMP views that read a variant (see shadowing_views) live in the
        # sessions that opened it, and a forked worker's session may outlive the build's
        # end for a moment (the pool is terminated; the server notices the closed socket
        # later); nothing but those views depends on our marked tables.
        for name in names:
            con.execute(
                sql.SQL("DROP TABLE {}.{} CASCADE").format(
                    sql.Identifier(scratch), sql.Identifier(name)
                )
            )
    return names
