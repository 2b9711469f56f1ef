"""The closing-note table of issue 10, item 7, from the corpus's decided outcomes:
``PYTHONPATH=src:tests python -m robustness.table``. The counts are what ``test_corpus``
enforces (an ``error`` variant that is not a clear one-line error fails it; a known gap is an
expected failure until it is closed)."""

from __future__ import annotations

from collections import Counter

from robustness.corpus import ACCEPTED, ERROR, GAP, variants
from robustness.inputs import inputs


def rows() -> list[tuple[str, int, int, int, int]]:
    """(input kind, variants, clear one-line error, accepted by design, known gaps)."""
    counts: dict[str, Counter[str]] = {}
    for v in variants(inputs()):
        counts.setdefault(v.kind, Counter())[v.expect] += 1
    return [(kind, sum(c.values()), c[ERROR], c[ACCEPTED], c[GAP]) for kind, c in counts.items()]


def main() -> None:
    print("| input | variants | clear one-line error | accepted by design "
          "| failures (known gaps) |")
    print("|---|---:|---:|---:|---:|")
    total = [0, 0, 0, 0]
    for kind, *numbers in rows():
        print(f"| {kind} | " + " | ".join(map(str, numbers)) + " |")
        total = [a + b for a, b in zip(total, numbers, strict=True)]
    print("| **all** | " + " | ".join(f"**{n}**" for n in total) + " |")


if __name__ == "__main__":
    main()
