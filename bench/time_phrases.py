"""False time parses and the cost of reading time phrases, on every development query set.

    python bench/time_phrases.py            # all query sets in ../shared/data, hub + help titles
    python bench/time_phrases.py --smoke    # 200 queries per set, writes nothing (CI)

None of the development queries asks for notes of a period, so every query the reader turns into
a date filter is a false parse; the same holds for real note titles (the Obsidian hub vault and
the Obsidian help vault, English and German: file names, frontmatter titles and aliases), which
are what a known-item query repeats. Each false parse is printed with the range it got.

Cost per query is `SearchRequest(query).time_filter()`, what every search pays before it touches
the index: the gate (a word split and set lookups) for every query, the phrase shapes and
dateparser only for a query that passes the gate. Timed warm (after one parse has loaded
everything), one query at a time; the first parse in a process (import of the shapes and of
dateparser, its language data) is timed apart in a fresh child process.

Results: bench/results/time_phrases.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from datetime import date

from datasets import CORPORA, DATA_DIR, REPO, ensure_corpus, read_queries
from noteseek import SearchRequest
from noteseek.core.frontmatter import FrontmatterError, parse_frontmatter
from noteseek.core.time_words import may_hold_time_phrase

RESULTS = REPO / "bench" / "results" / "time_phrases.json"
TODAY = date(2026, 12, 1)  # fixed, so the printed ranges repeat


def query_sets(limit: int | None) -> dict[str, list[str]]:
    """Every development query file (the balanced NL2Bash file is a subset of the full one)."""
    sets: dict[str, list[str]] = {}
    for path in sorted(DATA_DIR.rglob("queries.jsonl")):
        name = str(path.parent.relative_to(DATA_DIR))
        texts = list(read_queries(path).values())
        sets[name] = texts[:limit] if limit else texts
    return sets


def titles(corpus: str) -> list[str]:
    """File names, frontmatter titles and aliases of every note of an unpacked corpus."""
    root = ensure_corpus(CORPORA[corpus])
    found: list[str] = []
    for path in sorted(root.rglob("*.md")):
        found.append(path.stem)
        try:
            meta, _ = parse_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        except FrontmatterError:
            continue
        found += [t for t in (meta.title, *meta.aliases) if t]
    return list(dict.fromkeys(found))


def measure(texts: list[str]) -> dict[str, object]:
    """False parses and warm per-query cost over `texts`."""
    parsed: list[dict[str, object]] = []
    gate_passed = 0
    costs_ns: list[int] = []
    passed_costs_ns: list[int] = []
    other_costs_ns: list[int] = []
    for text in texts:
        request = SearchRequest(text, today=TODAY)
        started = time.perf_counter_ns()
        searched, window = request.time_filter()
        spent = time.perf_counter_ns() - started
        costs_ns.append(spent)
        if may_hold_time_phrase(text):
            gate_passed += 1
            passed_costs_ns.append(spent)
        else:
            other_costs_ns.append(spent)
        if window is not None:
            parsed.append({"query": text, "range": window.to_json(), "searched": searched})
    ms = [c / 1e6 for c in costs_ns]
    passed_ms = [c / 1e6 for c in passed_costs_ns]
    other_ms = [c / 1e6 for c in other_costs_ns]
    return {
        "queries": len(texts),
        "false_parses": len(parsed),
        "false_parse_rate": len(parsed) / len(texts) if texts else 0.0,
        "gate_passed": gate_passed,
        "ms_per_query_mean": statistics.fmean(ms) if ms else 0.0,
        "ms_per_query_median": statistics.median(ms) if ms else 0.0,
        "ms_per_query_p99": _quantile(ms, 0.99),
        "ms_per_query_max": max(ms, default=0.0),
        "ms_no_time_word_mean": statistics.fmean(other_ms) if other_ms else 0.0,
        "ms_no_time_word_p99": _quantile(other_ms, 0.99),
        "ms_gate_passed_median": statistics.median(passed_ms) if passed_ms else 0.0,
        "ms_gate_passed_max": max(passed_ms, default=0.0),
        "parsed": parsed,
    }


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cold_first_parse() -> dict[str, float]:
    """One fresh process: the first query without a time word, then the first with one (ms)."""
    code = (
        "import time\nfrom datetime import date\nfrom noteseek import SearchRequest\n"
        "t = time.perf_counter(); SearchRequest('how do I undo a rebase').time_filter()\n"
        "a = time.perf_counter() - t\n"
        "t = time.perf_counter(); SearchRequest('boiler last week').time_filter()\n"
        "b = time.perf_counter() - t\n"
        "t = time.perf_counter(); SearchRequest('gestern Boiler').time_filter()\n"
        "c = time.perf_counter() - t\n"
        "t = time.perf_counter(); SearchRequest('Boiler im März').time_filter()\n"
        "d = time.perf_counter() - t\nprint(a * 1000, b * 1000, c * 1000, d * 1000)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    no_word, first, second, month = (float(x) for x in out)
    return {
        "first_query_without_time_word_ms": no_word,
        "first_query_with_phrase_ms": first,  # "last week": the shapes compiled, no dateparser
        "second_query_with_phrase_ms": second,  # "gestern": arithmetic
        "first_month_phrase_ms": month,  # "im März": dateparser imported, its language data read
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="200 queries a set, no results file")
    args = parser.parse_args()
    if not DATA_DIR.is_dir():
        if args.smoke:  # a checkout without the data (CI) has nothing to smoke-test here
            print(f"time_phrases: skipped (no shared data at {DATA_DIR})")
            return
        sys.exit(f"needs the shared data at {DATA_DIR}")
    for warm in ("warm up from March", "warm up im März"):  # shapes, dateparser, its en + de
        SearchRequest(warm, today=TODAY).time_filter()
    report: dict[str, object] = {"today": TODAY.isoformat(), "sets": {}, "titles": {}}
    sets: dict[str, object] = {}
    print(f"{'set':<42} {'queries':>8} {'false':>6} {'rate':>8} {'gate':>6} "
          f"{'mean ms':>8} {'p99 ms':>8} {'max ms':>8} {'no-word mean':>12}")  # fmt: skip
    total = false = 0
    for name, texts in query_sets(200 if args.smoke else None).items():
        found = measure(texts)
        sets[name] = found
        total += len(texts)
        false += int(found["false_parses"])  # type: ignore[call-overload]
        _row(name, found)
    report["sets"] = sets
    report["all_queries"] = {
        "queries": total,
        "false_parses": false,
        "false_parse_rate": false / total if total else 0.0,
    }
    print(f"{'all query sets':<42} {total:>8} {false:>6} {false / max(total, 1):>8.3%}")
    found_titles: dict[str, object] = {}
    for corpus in ("obsidian-hub", "obsidian-help"):
        found = measure(titles(corpus))
        found_titles[corpus] = found
        _row(f"titles: {corpus}", found)
    report["titles"] = found_titles
    report["cold"] = cold = cold_first_parse()
    print(
        "cold process: first query without a time word "
        f"{cold['first_query_without_time_word_ms']:.2f} ms, first with a phrase "
        f"{cold['first_query_with_phrase_ms']:.0f} ms, second {cold['second_query_with_phrase_ms']:.2f} ms, "
        f"first month name (dateparser) {cold['first_month_phrase_ms']:.0f} ms"
    )
    print("\nfalse parses:")
    for group in ("sets", "titles"):
        for name, found in report[group].items():  # type: ignore[attr-defined]
            for item in found["parsed"]:
                r = item["range"]
                print(
                    f"  {name}: {item['query']!r} -> {r['since']} … {r['until']} ({r['phrase']!r})"
                )
    if not args.smoke:
        RESULTS.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
        print(f"\nwrote {RESULTS.relative_to(REPO)}")


def _row(name: str, found: dict[str, object]) -> None:
    print(
        f"{name:<42} {found['queries']:>8} {found['false_parses']:>6} "
        f"{found['false_parse_rate']:>8.3%} {found['gate_passed']:>6} "
        f"{found['ms_per_query_mean']:>8.4f} {found['ms_per_query_p99']:>8.4f} "
        f"{found['ms_per_query_max']:>8.3f} {found['ms_no_time_word_mean']:>12.4f}"
    )


if __name__ == "__main__":
    main()
