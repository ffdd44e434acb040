"""How many text2sql-data templates (GeoQuery, Restaurants) make a verified pair.

Imports every entry of ../shared/data/{geoquery,restaurants} as a template_v1 template,
expands it on its real SQLite database (one verified pair wanted, up to 50 value sets
tried) and prints, as written (strict) and with the honest fixes (repair: the entry's
alternative SQL, the column the data renamed, ``> ALL`` rewritten), the share of
templates with at least one verified pair and the reason for each one without.

    python tests/benchmarks/text2sql_templates.py [../shared/data]
"""

from __future__ import annotations

import sys
from pathlib import Path

from answerable.builders.templates.text2sql import KNOWN_RENAMES, coverage

DATASETS = (("geoquery", "geography"), ("restaurants", "restaurants"))


def main(data: Path) -> None:
    for repair in (False, True):
        label = "repaired" if repair else "strict"
        verified = total = 0
        for folder, name in DATASETS:
            found = coverage(
                data / folder / f"{name}.json",
                data / folder / f"{name}.sqlite",
                repair=repair,
                renames=KNOWN_RENAMES.get(folder),
            )
            verified, total = verified + found.verified, total + found.total
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(found.reasons().items())) or "none"
            print(f"{label} {name}: {found.verified}/{found.total} = {found.share:.1%} ({reasons})")
            for template_id, (_, detail) in found.failures.items():
                print(f"  {template_id}: {detail}")
        print(f"{label} total: {verified}/{total} = {verified / total:.1%}")


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[2]
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "data")
