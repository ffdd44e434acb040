"""Run the real ``argilla-server`` application for the contract tests, on 127.0.0.1.

TEST ONLY. Run with the Python of the separate virtual environment that holds
``argilla-server`` (its pins clash with the project's, see README "Argilla"):

    python serve.py --port 6900 --home /tmp/argilla --api-key KEY

What is real: the FastAPI application, its SQLite database (migrated with its own alembic
scripts), its request validation, record upserts, responses, users and workspaces.
What is stood in: Redis by ``fakeredis`` (in memory), and the search engine by
:class:`MemorySearchEngine` below, registered under the name ``memory`` by this script
only; Elasticsearch/OpenSearch cannot be installed here. The stand-in keeps the ids of
indexed records so the few server paths that ask it (search, progress) get a plain
answer; the project's pull does not use search.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path


def configure(home: Path) -> None:
    """Settings the server reads from the environment at import time."""
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        {
            "ARGILLA_HOME_PATH": str(home),
            "ARGILLA_DATABASE_URL": f"sqlite+aiosqlite:///{home / 'argilla.db'}",
            "ARGILLA_SEARCH_ENGINE": "memory",
            "ARGILLA_REDIS_URL": "redis://fakeredis.invalid:6379/0",
            "ARGILLA_ENABLE_TELEMETRY": "0",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_OFFLINE": "1",
        }
    )
    import fakeredis
    import redis

    server = fakeredis.FakeServer()
    redis.from_url = lambda *_args, **_kwargs: fakeredis.FakeStrictRedis(server=server)


def register_memory_engine() -> None:
    """Register the in-memory stand-in for Elasticsearch/OpenSearch as ``memory``."""
    from argilla_server.search_engine import SearchEngine, SearchResponseItem, SearchResponses

    indexed: dict = {}  # dataset id -> {record id: record status}

    @SearchEngine.register(engine_name="memory")
    class MemorySearchEngine(SearchEngine):
        @classmethod
        async def new_instance(cls):
            return cls()

        async def close(self):
            pass

        async def ping(self):
            return True

        async def info(self):
            return {"distribution": "memory", "version": "test"}

        async def create_index(self, dataset):
            indexed.setdefault(dataset.id, {})

        async def delete_index(self, dataset):
            indexed.pop(dataset.id, None)

        async def configure_metadata_property(self, dataset, metadata_property):
            pass

        async def index_records(self, dataset, records):
            for record in records:
                indexed.setdefault(dataset.id, {})[record.id] = str(record.status)

        async def partial_record_update(self, record, **update):
            if "status" in update:
                indexed.setdefault(record.dataset_id, {})[record.id] = str(update["status"])

        async def delete_records(self, dataset, records):
            for record in records:
                indexed.get(dataset.id, {}).pop(record.id, None)

        async def update_record_response(self, response):
            pass

        async def delete_record_response(self, response):
            pass

        async def update_record_suggestion(self, suggestion):
            pass

        async def delete_record_suggestion(self, suggestion):
            pass

        async def get_dataset_progress(self, dataset):
            statuses = list(indexed.get(dataset.id, {}).values())
            counts = {s: statuses.count(s) for s in set(statuses)}
            return {"total": len(statuses), **counts}

        async def get_dataset_user_progress(self, dataset, user):
            return {"total": 0}

        async def search(
            self, dataset, query=None, filter=None, sort=None, offset=0, limit=100, user_id=None
        ):
            ids = sorted(indexed.get(dataset.id, {}), key=str)
            items = [SearchResponseItem(record_id=i, score=1.0) for i in ids[offset:][:limit]]
            return SearchResponses(items=items, total=len(ids))

        async def compute_metrics_for(self, metadata_property):
            raise NotImplementedError("metadata metrics are not part of the stand-in")

        async def similarity_search(self, *args, **kwargs):
            raise NotImplementedError("vector search is not part of the stand-in")


def migrate_and_create_owner(api_key: str) -> None:
    """Create the schema with the server's own migrations and an owner holding ``api_key``."""
    import alembic.config
    from argilla_server.contexts import accounts
    from argilla_server.database import ALEMBIC_CONFIG_FILE, AsyncSessionLocal
    from argilla_server.models import User, UserRole

    alembic.config.main(argv=["-c", ALEMBIC_CONFIG_FILE, "-q", "upgrade", "head"])

    async def create() -> None:
        async with AsyncSessionLocal() as session:
            if await accounts.get_user_by_username(session, "owner"):
                return
            await User.create(
                session,
                first_name="Owner",
                username="owner",
                role=UserRole.owner,
                password_hash=accounts.hash_password("owner-password"),
                api_key=api_key,
            )

    asyncio.run(create())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--api-key", required=True)
    args = parser.parse_args()
    configure(args.home)
    register_memory_engine()
    migrate_and_create_owner(args.api_key)
    import uvicorn
    from argilla_server._app import app

    print("argilla-server ready to start", file=sys.stderr, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
