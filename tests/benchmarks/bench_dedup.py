"""The drafting near-duplicate check at 1k, 2k, 4k and 8k questions: growth must be linear.

Two streams of questions, both from the demo build's candidate questions, each drawn
again with words swapped for values:

- ``varied``: three words become made-up seven-letter words, as a large database's values
  vary questions: the number of questions close to one stays about the same as the
  build grows, and the check's time should grow linearly;
- ``dense``: one word becomes a person's name (Faker): the ~1,050 demo questions are
  repeated ever more often, so every question has more and more siblings sharing all
  but one word; the work the check must do per question grows with the build there.

Each size runs the check as the drafting stage does (check each question, then
remember it when it passes), timed three times, the fastest
run counting (the machine is shared). At 1k the scan it replaced
(``tests/test_drafting_dedup.py``'s ``Scan``) must decide the same.

Run with ``python tests/benchmarks/bench_dedup.py``. The last line is exactly
``questions=<n1>/<n2>/<n3>/<n4> seconds=<s1>/<s2>/<s3>/<s4> growth=<g> dense_seconds=<...>
dense_growth=<g2>`` with growth = (s4 / s1) / (n4 / n1) (1.0 is linear) of the varied
stream, and the same for the dense one.
"""

from __future__ import annotations

import random
import string
import sys
import time
from pathlib import Path

from faker import Faker

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from answerable.builders.drafting.checks import NearDuplicates
from tests.benchmarks.demo_build import demo_candidates
from tests.test_drafting_dedup import Scan, decisions

SIZES = (1000, 2000, 4000, 8000)
SCAN_UP_TO = 1000
RUNS = 3
THRESHOLD = 0.8


def demo_questions() -> list[tuple[str, str]]:
    """(db_id, question) of every candidate of a demo build."""
    return [(item["db_id"], item["question"]) for item in demo_candidates()]


def stream(pool: list[tuple[str, str]], size: int, dense: bool) -> list[tuple]:
    """``size`` questions drawn from the pool, each with words swapped for values."""
    rng, fake = random.Random(size), Faker()
    fake.seed_instance(size)
    made = []
    for index in range(size):
        db_id, question = rng.choice(pool)
        words = question.split()
        for _ in range(1 if dense else 3):
            value = fake.name() if dense else "".join(rng.choices(string.ascii_lowercase, k=7))
            words[rng.randrange(len(words))] = value
        made.append((db_id, f"q{index}", " ".join(words), frozenset()))
    return made


def timed(checker, questions) -> tuple[float, list]:
    started = time.perf_counter()
    answers = decisions(checker, questions)
    return time.perf_counter() - started, answers


def growth_of(pool: list[tuple[str, str]], dense: bool) -> tuple[list[float], float]:
    """Seconds per size and the growth of one stream."""
    print("dense" if dense else "varied")
    seconds = []
    for size in SIZES:
        questions = stream(pool, size, dense)
        runs = [timed(NearDuplicates(THRESHOLD), questions) for _ in range(RUNS)]
        took, answers = min(runs, key=lambda run: run[0])
        kept = sum(answer is None for answer in answers)
        line = f"  {size} questions: index {took:.2f} s ({kept} kept)"
        if size <= SCAN_UP_TO:
            scan_took, scan_answers = timed(Scan(THRESHOLD), questions)
            assert scan_answers == answers, "the index and the scan disagree"
            line += f", the old scan {scan_took:.2f} s (same decisions)"
        print(line)
        seconds.append(took)
    return seconds, (seconds[-1] / seconds[0]) / (SIZES[-1] / SIZES[0])


def main() -> None:
    pool = demo_questions()
    seconds, growth = growth_of(pool, dense=False)
    dense_seconds, dense_growth = growth_of(pool, dense=True)
    print(
        f"questions={'/'.join(map(str, SIZES))} seconds={'/'.join(f'{s:.2f}' for s in seconds)} "
        f"growth={growth:.2f} dense_seconds={'/'.join(f'{s:.2f}' for s in dense_seconds)} "
        f"dense_growth={dense_growth:.2f}"
    )


if __name__ == "__main__":
    main()
