"""acs-verify against the human labels of the ACS dev set: agreement, coverage and speed.

Prints coverage, accuracy on decided rows, accuracy counting abstentions as wrong, balanced
accuracy, accuracy on satisfied / unsatisfied rows, predicted-satisfied rate and Cohen's kappa,
overall, per domain and per constraint kind, then the mean time per row. Two reference points
from the spec are printed alongside: always "satisfied", and the majority label per constraint
kind (computed here on the same rows, so it is an optimistic baseline).

Then the unseen-format proxy (``perf/acs_formats.py``): every dev workout response rewritten
into formats the dev set does not use, with per format the rows, how many labels had to be
derived (the rewrite changed a checked quantity), abstentions, accuracy on decided rows and
accuracy counting abstentions as wrong. Leaving requests out cannot measure rules written by
reading every request; these rewrites are the proxy for requests written differently.

    .venv/bin/python perf/acs.py [--data DIR_OR_CSV] [--errors] [--rewrites]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

try:  # run as a script (perf/ on the path) or imported as perf.acs
    from acs_formats import FORMATS, rewrite
except ImportError:  # pragma: no cover
    from perf.acs_formats import FORMATS, rewrite
from toolscore.benchmarks.acs.data import AcsRow, DataError, load_rows
from toolscore.benchmarks.acs.verify import Verdict, verify
from toolscore.benchmarks.acs.verify.checks import clear_caches


@dataclass
class Scored:
    row: AcsRow
    verdict: Verdict
    seconds: float


def cohen_kappa(gold: list[bool], pred: list[bool]) -> float:
    """Agreement beyond chance between two binary raters (1.0 when chance agreement is 1)."""
    n = len(gold)
    if n == 0:
        return float("nan")
    observed = sum(g == p for g, p in zip(gold, pred, strict=True)) / n
    pg, pp = sum(gold) / n, sum(pred) / n
    chance = pg * pp + (1 - pg) * (1 - pp)
    return 1.0 if chance == 1 else (observed - chance) / (1 - chance)


def metrics(items: list[Scored]) -> dict[str, float]:
    """Abstentions count as wrong everywhere except 'acc_decided' and 'kappa_decided'."""
    n = len(items)
    decided = [s for s in items if s.verdict.label is not None]
    right = [s for s in decided if s.verdict.label == s.row.label]
    sat = [s for s in items if s.row.label]
    unsat = [s for s in items if not s.row.label]
    acc_sat = sum(s.verdict.label is True for s in sat) / len(sat) if sat else float("nan")
    acc_unsat = (sum(s.verdict.label is False for s in unsat) / len(unsat) if unsat
                 else float("nan"))
    parts = [a for a in (acc_sat, acc_unsat) if a == a]
    # For kappa over all rows an abstention is scored as the label the human did not give.
    pred_all = [s.verdict.label if s.verdict.label is not None else not s.row.label
                for s in items]
    return {
        "n": n,
        "coverage": len(decided) / n if n else float("nan"),
        "acc_decided": len(right) / len(decided) if decided else float("nan"),
        "acc": len(right) / n if n else float("nan"),
        "balanced_acc": sum(parts) / len(parts) if parts else float("nan"),
        "acc_satisfied": acc_sat,
        "acc_unsatisfied": acc_unsat,
        "pred_satisfied": (sum(s.verdict.label is True for s in decided) / len(decided)
                           if decided else float("nan")),
        "kappa": cohen_kappa([s.row.label for s in items], [bool(p) for p in pred_all]),
        "kappa_decided": cohen_kappa([s.row.label for s in decided],
                                     [bool(s.verdict.label) for s in decided]),
    }


COLUMNS = [("n", "d"), ("coverage", "%"), ("acc_decided", "%"), ("acc", "%"),
           ("balanced_acc", "%"), ("acc_satisfied", "%"), ("acc_unsatisfied", "%"),
           ("pred_satisfied", "%"), ("kappa", "k")]


def _cell(value: float, kind: str, width: int) -> str:
    if value != value:  # nan: no rows of that label in the group
        text = "-"
    elif kind == "d":
        text = str(int(value))
    elif kind == "%":
        text = f"{value:.1%}"
    else:
        text = f"{value:.3f}"
    return f"{text:>{width}}"


def table(title: str, groups: dict[str, list[Scored]]) -> None:
    width = max([len(title), *(len(k) for k in groups)]) + 2
    widths = [max(len(name), 6) for name, _ in COLUMNS]
    print(f"{title:<{width}}" + " ".join(f"{name:>{w}}" for (name, _), w in
                                          zip(COLUMNS, widths, strict=True)))
    for key, items in groups.items():
        m = metrics(items)
        cells = [_cell(m[name], kind, w) for (name, kind), w in zip(COLUMNS, widths, strict=True)]
        print(f"{key:<{width}}" + " ".join(cells))
    print()


def baselines(items: list[Scored]) -> tuple[float, float]:
    """(always 'satisfied', majority label per constraint kind) accuracy on these rows."""
    n = len(items)
    always = sum(s.row.label for s in items) / n
    by_kind: dict[str, Counter[bool]] = defaultdict(Counter)
    for s in items:
        by_kind[s.verdict.kind or "unparsed"][s.row.label] += 1
    majority = sum(c.most_common(1)[0][1] for c in by_kind.values()) / n
    return always, majority


# Format rewrites that must not change any verdict: the verifier should read the plan, not
# depend on one model's markdown habits. Each maps a response to an equivalent response.
REWRITES: dict[str, Callable[[str], str]] = {
    "'###' headings": lambda t: re.sub(r"^\*\*((?:Day|Session) [^*]+)\*\*", r"### \1", t,
                                       flags=re.M),
    "'-' bullets": lambda t: re.sub(r"^(\s*)\* ", r"\1- ", t, flags=re.M),
    "no bold": lambda t: t.replace("**", ""),
    "no blank lines": lambda t: re.sub(r"\n\s*\n", "\n", t),
    "CRLF": lambda t: t.replace("\n", "\r\n"),
    "am/pm lower case": lambda t: t.replace(" AM", " am").replace(" PM", " pm"),
    "'9 AM' for '9:00 AM'": lambda t: re.sub(r"(\d{1,2}):00 ?([AP]M)", r"\1 \2", t),
    "'kcal' for 'cal'": lambda t: re.sub(r"\b(\d+) (cal|calories)\b", r"\1 kcal", t),
    "'min' for 'minutes'": lambda t: re.sub(r"\bminutes\b", "min", t),
    "en dash ranges": lambda t: re.sub(r"(\d) - (\d)", r"\1 – \2", t),
    "false claims appended": lambda t: t + "\n\nThis plan meets every requirement: 2000 "
                                           "calories and 150g protein per day, 60 minutes and "
                                           "500 calories per session, 9000 kg per session.",
}


def rewrites(rows: list[AcsRow], base: list[Scored]) -> None:
    print("format rewrites (verdicts that change vs. the original response):")
    for name, fn in REWRITES.items():
        changed = sum(verify(r.request, fn(r.response), r.constraint, r.domain).label
                      != s.verdict.label for r, s in zip(rows, base, strict=True))
        print(f"  {name:<24} {changed} of {len(rows)}")


def formats(rows: list[AcsRow], errors: bool = False) -> None:
    """Per unseen format: rows, derived labels, abstentions and accuracy (see module doc)."""
    print("unseen-format proxy: dev workout responses rewritten (perf/acs_formats.py)")
    head = (f"{'format':<42}{'rows':>5}{'derived':>8}{'left out':>9}{'abstain':>8}"
            f"{'acc_decided':>12}{'acc':>8}")
    print(head)
    for name, fmt in FORMATS.items():
        done, skipped = rewrite(rows, fmt)
        verdicts = [(w, verify(w.row.request, w.row.response, w.row.constraint, w.row.domain))
                    for w in done]
        decided = [(w, v) for w, v in verdicts if v.label is not None]
        right = sum(v.label == w.row.label for w, v in decided)
        n = len(done)
        acc_d = f"{right / len(decided):.1%}" if decided else "-"
        acc = f"{right / n:.1%}" if n else "-"
        print(f"{name:<42}{n:>5}{sum(w.derived for w in done):>8}{skipped:>9}"
              f"{n - len(decided):>8}{acc_d:>12}{acc:>8}")
        if errors:
            for w, v in verdicts:
                if v.label != w.row.label:
                    print(f"    [{w.row.row_id}] want={int(w.row.label)} got={v.label} "
                          f"{w.row.constraint} | {v.reason}")
    print()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="csv or folder (default $TOOLSCORE_DATA/acs)")
    ap.add_argument("--errors", action="store_true", help="list every wrong or abstained row")
    ap.add_argument("--rewrites", action="store_true",
                    help="also re-verify every row under equivalent format rewrites")
    args = ap.parse_args(argv)
    try:
        rows = load_rows(args.data)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    scored: list[Scored] = []
    for r in rows:  # cold: the response is parsed afresh for every row
        clear_caches()
        t0 = time.perf_counter()
        v = verify(r.request, r.response, r.constraint, r.domain)
        scored.append(Scored(r, v, time.perf_counter() - t0))
    clear_caches()
    t0 = time.perf_counter()
    for r in rows:  # warm: rows of one response follow each other, its parse is reused
        verify(r.request, r.response, r.constraint, r.domain)
    warm_ms = (time.perf_counter() - t0) * 1000 / len(rows)

    print(f"acs-verify on {len(rows)} rows, "
          f"{len({(r.request, r.response) for r in rows})} requests "
          f"(abstentions count as wrong except in acc_decided)\n")
    table("overall", {"all": scored})
    by_domain: dict[str, list[Scored]] = defaultdict(list)
    by_kind: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        by_domain[s.row.domain].append(s)
        by_kind[s.verdict.kind or "unparsed"].append(s)
    table("domain", dict(sorted(by_domain.items())))
    table("constraint kind", dict(sorted(by_kind.items())))

    m = metrics(scored)
    always, majority = baselines(scored)
    times = [s.seconds * 1000 for s in scored]
    no_domain = sum(verify(r.request, r.response, r.constraint).label == r.label
                    for r in rows) / len(rows)
    print(f"Cohen's kappa, decided rows only: {m['kappa_decided']:.3f}")
    print(f"accuracy without the csv's domain column (domain inferred): {no_domain:.1%}")
    print(f"baselines: always 'satisfied' {always:.1%}; majority label per constraint kind "
          f"{majority:.1%}")
    print(f"time per row, cold (response parsed for every row): mean "
          f"{statistics.mean(times):.2f} ms, median {statistics.median(times):.2f} ms, "
          f"max {max(times):.2f} ms")
    print(f"time per row, warm (a response parsed once for its 3-6 constraints): mean "
          f"{warm_ms:.2f} ms")
    print()
    formats(rows, args.errors)
    if args.rewrites:
        rewrites(rows, scored)
    if args.errors:
        print("\nrows not decided correctly:")
        for s in scored:
            if s.verdict.label != s.row.label:
                print(f"  [{s.row.row_id}] human={int(s.row.label)} verifier={s.verdict.label} "
                      f"{s.row.domain} | {s.row.constraint}\n      {s.verdict.reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
