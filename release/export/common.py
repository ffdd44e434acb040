"""What every export format shares: its result, and grouping items by split."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from answerable.builders.executor import Limits
from answerable.builders.schema import DatabaseSchema


@dataclass
class Export:
    """The files of one export (relative path -> text) and the items it leaves out, as
    ``(item id, reason)`` pairs."""

    files: dict[str, str] = field(default_factory=dict)
    left_out: list[tuple[str, str]] = field(default_factory=list)

    def leave_out(self, item: dict, reason: str) -> None:
        """Record that ``item`` is not in this export, and why."""
        self.left_out.append((item["id"], reason))

    def reasons(self) -> dict[str, int]:
        """How many items were left out for each reason."""
        return dict(sorted(Counter(reason for _, reason in self.left_out).items()))


ExportFunction = Callable[[list[dict], Mapping[str, DatabaseSchema]], Export]
PrepareFunction = Callable[[Path, list[dict], Limits], list[dict]]


def by_split(items: Iterable[dict]) -> dict[str, list[dict]]:
    """Items grouped by their ``split`` (``test`` when they have none), sorted by id."""
    groups: dict[str, list[dict]] = {}
    for item in sorted(items, key=lambda i: i["id"]):
        groups.setdefault(item.get("split") or "test", []).append(item)
    return dict(sorted(groups.items()))


def json_text(value: Any) -> str:
    """Indented JSON, keys in the order given (each format fixes its own field order)."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def csv_text(header: list[str], rows: Iterable[list], delimiter: str = ",") -> str:
    """CSV (or TSV) text with a header row and ``\\n`` line ends."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def result_rows(item: dict) -> list:
    """The gold result's stored rows of an item (empty when it has none)."""
    return (item.get("result") or {}).get("rows") or []
