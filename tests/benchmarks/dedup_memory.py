"""The memory the drafting near-duplicate index keeps per question it remembers.

Run with ``python tests/benchmarks/dedup_memory.py [SIZE]`` (default 8,000) from the
project's root, beside ``../shared/data``. The questions are real ones (Spider's dev set,
EHRSQL 2024's validation set, GeoQuery's sentences), drawn again with three words
swapped for made-up values as ``bench_dedup.py``'s varied stream (a templated build
varies its questions so). They go through the check as the drafting stage sends them
(check each, remember it when it passes), and ``tracemalloc``
measures what the index holds afterwards: the questions' ids, kin and texts, their
n-grams, the groups and their postings, and the cache of close questions; the n-gram
cache shared by every index (bounded) is emptied first. The last line is exactly
``questions=<n> remembered=<k> bytes_per_question=<b>`` (bytes held over questions
remembered).
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from answerable.builders.drafting import checks
from answerable.builders.drafting.checks import NearDuplicates
from tests.benchmarks.bench_dedup import stream
from tests.test_drafting_dedup import decisions, real_questions

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
THRESHOLD = 0.8


def held_bytes(questions: list[tuple]) -> tuple[int, int]:
    """``(bytes the index holds, questions it remembers)`` after checking ``questions``."""
    checks._numbered.cache_clear()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    index = NearDuplicates(THRESHOLD)
    answers = decisions(index, questions)
    checks._numbered.cache_clear()
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del index
    return held, sum(answer is None for answer in answers)


def main(size: int) -> None:
    if not DATA.is_dir():
        sys.exit(f"{DATA}: not found (the shared real data sits beside the project)")
    questions = stream(real_questions(DATA), size, dense=False)
    held, remembered = held_bytes(questions)
    print(f"questions={size} remembered={remembered} bytes_per_question={held / remembered:.0f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
