"""Few-shot examples for the ACS LLM judge, drawn so that no row sees its own response.

The rows of one request share one response, so an example taken from the judged row's request
would show the judge the answer's evidence. :func:`few_shot_plan` therefore splits the requests
into two folds (seeded) and gives each fold examples from the other: every row can be judged
and none shares a request with its examples. :func:`check_shots` refuses a row whose request
is among its examples, whoever drew them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from toolscore.benchmarks.acs.data import AcsRow


def requests_of(rows: Sequence[AcsRow]) -> list[str]:
    """Distinct requests (request + response text), in order of first appearance."""
    return list(dict.fromkeys(r.request_key for r in rows))


def pick_shots(pool: Sequence[AcsRow], k: int, seed: int = 0) -> list[AcsRow]:
    """``k`` examples from ``pool``, alternating satisfied / unsatisfied, seeded, each from a
    different request where possible (so the examples show varied responses)."""
    if k <= 0:
        return []
    rng = random.Random(seed)
    by_label = {lab: [r for r in pool if r.label == lab] for lab in (False, True)}
    for rows in by_label.values():
        rng.shuffle(rows)
    chosen: list[AcsRow] = []
    used: set[str] = set()
    want = True
    while len(chosen) < k and (by_label[True] or by_label[False]):
        side = by_label[want] or by_label[not want]
        fresh = [r for r in side if r.request_key not in used]
        r = (fresh or side)[0]
        side.remove(r)
        chosen.append(r)
        used.add(r.request_key)
        want = not want
    return chosen


def few_shot_plan(rows: Sequence[AcsRow], k: int, seed: int = 0
                  ) -> list[tuple[AcsRow, list[AcsRow]]]:
    """Each row with its ``k`` examples, drawn from the other half of the requests.

    Requests are split in two folds (seeded); fold A is judged with examples from fold B and
    vice versa, so every row is judged and no row shares a request with its examples.
    """
    if k <= 0:
        return [(r, []) for r in rows]
    keys = requests_of(rows)
    random.Random(seed).shuffle(keys)
    fold = {key: i % 2 for i, key in enumerate(keys)}
    shots = [pick_shots([r for r in rows if fold[r.request_key] != f], k, seed + f)
             for f in (0, 1)]
    if len(keys) < 2 or any(len(s) < k for s in shots):
        raise ValueError(f"too few rows for {k} few-shot examples from the other half of "
                         f"{len(keys)} request(s)")
    return [(r, shots[fold[r.request_key]]) for r in rows]


def check_shots(row: AcsRow, shots: Sequence[AcsRow]) -> None:
    """Refuse examples that share the judged row's request (a ValueError naming the row)."""
    if any(s.request_key == row.request_key for s in shots):
        raise ValueError(f"row {row.row_id}: a few-shot example shares its request")


def explanations(shots: Sequence[AcsRow]) -> dict[str, str]:
    """acs-verify's figures for each example it labels as the human did (``--shot-reasons``):
    shown with the example's label, never a reason that contradicts it."""
    from toolscore.benchmarks.acs.verify import verify

    out = {}
    for s in shots:
        v = verify(s.request, s.response, s.constraint, s.domain)
        if v.label == s.label:
            out[s.row_id] = v.reason
    return out
