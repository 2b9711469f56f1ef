"""BM25+ ranking (Lv and Zhai, 2011), as BFCL's key-value memory ranks its keys.

BFCL ranks with the ``rank_bm25`` package's ``BM25Plus`` at its defaults (k1 = 1.5, b = 0.75,
delta = 1; idf = ln((N + 1) / df)). This is the same formula computed in the same order of
floating-point operations, so the scores a model reads in a search result are the same numbers
to the last digit; with no document at all the average length divides by zero, as there.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

K1 = 1.5
B = 0.75
DELTA = 1.0


class BM25Plus:
    """Scores of a query against a fixed corpus of tokenised documents."""

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = K1, b: float = B,
                 delta: float = DELTA) -> None:
        self.k1, self.b, self.delta = k1, b, delta
        self._counts = [Counter(doc) for doc in corpus]
        self._lengths = [len(doc) for doc in corpus]
        self._average = sum(self._lengths) / len(self._lengths)  # ZeroDivisionError when empty
        n = len(self._counts)
        documents: Counter[str] = Counter()
        for counts in self._counts:
            documents.update(counts.keys())
        self._idf = {word: math.log((n + 1) / df) for word, df in documents.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        """One score per document, in the corpus's order."""
        out = [0.0] * len(self._counts)
        k1, b, delta = self.k1, self.b, self.delta
        for word in query:
            idf = self._idf.get(word) or 0
            for i, (counts, length) in enumerate(zip(self._counts, self._lengths, strict=True)):
                tf = counts.get(word) or 0
                norm = k1 * (1 - b + b * length / self._average) + tf
                out[i] += idf * (delta + (tf * (k1 + 1)) / norm)
        return out
