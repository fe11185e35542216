"""Before → after table of two `quality.py --json` files, with paired tests per set and mode.

    python bench/ranking_delta.py BEFORE.json AFTER.json [--modes hybrid,bm25,vector]

p is the two-sided paired t-test on per-query nDCG@10 (scipy.stats.ttest_rel), over the queries
both runs judged.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from scipy import stats


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--modes", default="bm25,vector,hybrid")
    args = parser.parse_args()
    before = json.loads(args.before.read_text())["sets"]
    after = json.loads(args.after.read_text())["sets"]
    print("| set | mode | before | after | Δ | p | better / worse / same |")
    print("|---|---|---|---|---|---|---|")
    for name, new in after.items():
        old = before.get(name)
        if old is None:
            continue
        for mode in args.modes.split(","):
            a = old["per_query_ndcg10"].get(mode, {})
            b = new["per_query_ndcg10"].get(mode, {})
            ids = sorted(set(a) & set(b))
            if not ids:
                continue
            xs, ys = [a[i] for i in ids], [b[i] for i in ids]
            diff = [y - x for x, y in zip(xs, ys)]
            p = 1.0 if all(d == 0 for d in diff) else float(stats.ttest_rel(ys, xs).pvalue)
            p = 1.0 if math.isnan(p) else p
            up, down = sum(d > 0 for d in diff), sum(d < 0 for d in diff)
            p_text = "< 0.001" if p < 0.001 else f"{p:.3f}"
            print(
                f"| {name} | {mode} | {sum(xs) / len(xs):.3f} | {sum(ys) / len(ys):.3f} | "
                f"{sum(diff) / len(diff):+.3f} | {p_text} | {up} / {down} / {len(ids) - up - down} |"
            )


if __name__ == "__main__":
    main()
