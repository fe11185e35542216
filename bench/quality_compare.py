"""Paired comparison of two or more `quality.py --json` runs, per set and mode (nDCG@10, R@10, MRR@10).

Usage::

    python bench/quality_compare.py base.json new.json [newer.json ...] [--mode hybrid] [--measure MRR@10]

Each later run is compared with the first on the queries both judged: the mean of the measure
(nDCG@10 by default; R@10, R@100 and MRR@10 need runs whose JSON has `per_query`), the
difference and a two-sided paired t-test p (scipy.stats.ttest_rel), as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scipy import stats as sps


def _load(path: Path, measure: str) -> dict[str, dict[str, dict[str, float]]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if measure == "nDCG@10":
        return {name: s["per_query_ndcg10"] for name, s in doc["sets"].items()}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, s in doc["sets"].items():
        if "per_query" not in s:
            sys.exit(f"error: {path} has no per-query {measure} (re-run quality.py --json)")
        out[name] = {mode: by[measure] for mode, by in s["per_query"].items()}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--mode", default="hybrid")
    ap.add_argument("--measure", default="nDCG@10", choices=["nDCG@10", "R@10", "R@100", "MRR@10"])
    ap.add_argument("--base-mode", help="mode of the first run to compare against (default: --mode)")
    args = ap.parse_args()
    runs = [_load(p, args.measure) for p in args.runs]
    base_mode = args.base_mode or args.mode
    head = ["set", f"{args.runs[0].stem} ({base_mode})"] + [f"{p.stem} ({args.mode})" for p in args.runs[1:]]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, modes in runs[0].items():
        if base_mode not in modes:
            continue
        base = modes[base_mode]
        cells = [name, f"{sum(base.values()) / len(base):.3f}"]
        for run in runs[1:]:
            other = run.get(name, {}).get(args.mode)
            if not other:
                cells.append("–")
                continue
            qids = [q for q in base if q in other]
            a = [other[q] for q in qids]
            b = [base[q] for q in qids]
            d = (sum(a) - sum(b)) / len(qids)
            p = float(sps.ttest_rel(a, b).pvalue) if any(x != y for x, y in zip(a, b)) else 1.0
            cells.append(f"{sum(a) / len(a):.3f} ({d:+.3f}, p {p:.3f})")
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
