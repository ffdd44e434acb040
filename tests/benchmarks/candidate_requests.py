"""Text-to-SQL requests per item: the demo recipe built with a model endpoint (the local
test server, or ``--base-url`` and ``--model``), then built again in the same folder with
candidate SQL turned on: the second build finds every draft in the reply cache, so the
requests its report counts are the candidate SQL requests alone.

    python -m tests.benchmarks.candidate_requests
    python -m tests.benchmarks.candidate_requests --base-url URL --model NAME --limit 1

``--limit`` keeps that many seeds per source and drops the templates, ``--categories``
drafts only those (a real small model is slow). The last line is JSON:
``{"items": ..., "sql_requests": ..., "requests_per_item": ...}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

import yaml

from answerable.kernel.records import read_parquet
from tests.conftest import DEMO_RECIPE, REPO, run_in
from tests.llm_server import LLMServer


def recipe(folder: Path, llm: dict, per_item: int, limit: int | None, categories) -> Path:
    """The demo recipe with its sources by absolute path and ``llm`` as its endpoint."""
    data = yaml.safe_load(DEMO_RECIPE.read_text(encoding="utf-8"))
    for source in data["sources"]:
        source["path"] = str(REPO / "raw" / "demo" / source["path"])
        if limit is not None:
            source["limit"] = limit
    data["templates"]["paths"] = [
        str(REPO / "raw" / "demo" / t) for t in data["templates"]["paths"]
    ]
    if limit is not None:
        data.pop("templates")
    if categories:
        data["drafting"]["categories"] = categories
    data["drafting"]["llm"] = llm
    data["drafting"]["candidates"] = {"per_item": per_item}
    path = folder / "recipe.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def build(folder: Path, path: Path) -> dict:
    """Build (no release); the build report."""
    result = run_in(folder, "build", path, "--no-release")
    if result.exit_code != 0:
        raise SystemExit(result.output)
    return json.loads(next(folder.glob(".answerable/*/reports/build.json")).read_text())


def measure(llm: dict, limit: int | None, categories) -> dict:
    """The items with candidates and the requests that asked for their SQL."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build(folder, recipe(folder, llm, 0, limit, categories))
        report = build(folder, recipe(folder, llm, 1, limit, categories))
        items = read_parquet(next(folder.glob(".answerable/*/candidates.parquet")))
    with_candidates = sum(1 for item in items if item["candidates"])
    requests = report["llm"][llm["model"]]["requests"]
    return {
        "items": with_candidates,
        "sql_requests": requests,
        "requests_per_item": round(requests / max(with_candidates, 1), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="a running server (default: the local test server)")
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--limit", type=int, help="seeds per source (default: all)")
    parser.add_argument("--categories", nargs="*", help="drafting categories (default: the demo's)")
    parser.add_argument("--llm", default="{}", help="more drafting.llm keys, as JSON")
    args = parser.parse_args(argv)
    os.environ.pop("OPENAI_BASE_URL", None)
    with nullcontext(None) if args.base_url else LLMServer() as server:
        llm = {"base_url": args.base_url or server.base_url, "model": args.model}
        llm.update(json.loads(args.llm))
        print(json.dumps(measure(llm, args.limit, args.categories)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
