"""What the calibrated score and its thresholds do: on-topic kept, off-topic hidden, the hook silent.

Usage (from bench/, the indexes of bench/quality.py in bench/.cache)::

    git archive <before> src | tar -x -C /tmp/old          # optional: the ranking before, compared
    nice -n 10 python relevance_eval.py --old-src /tmp/old/src --json results/relevance_eval.json

Printed, per development set and per off-topic pair (queries of one corpus asked of another's
vault; coding-agent prompts of data/agent_prompts.txt, odd lines, which training never saw; the
chit-chat prompts below):

- search, default thresholds (``DEFAULT_MIN_ANSWER``, ``DEFAULT_MIN_SCORE``), limit 10: off-topic queries with no hit
  shown and hits shown on average; on-topic queries whose top 10 (``min_score=0, min_answer=0``, today's list)
  held a relevant note and that still show one; nDCG@10 of the ranking (every hit) against
  the checkout in ``--old-src`` (paired t-test) and of what is shown by default;
- the prompt hook (``prompt_context``, its own threshold): off-topic prompts it stays silent for,
  and on-topic questions (the Obsidian Help alias queries stand in for the golden questions) whose
  block names a relevant note; and the same for a sweep of hook thresholds.

The model was trained on a sample of the same development queries (relevance_train.py prints the
leave-one-corpus-out figures, the honest estimate for a new vault); the agent prompts here are the
odd lines only, which training never saw.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

import noteseek
from datasets import CACHE_DIR, DATASETS, load_qrels
from noteseek.agents.prompt_context import (
    CONTEXT_CANDIDATES,
    CONTEXT_TERM_SHARE,
    MAX_PROMPT_CHARS,
    prompt_context,
)
from noteseek.core.context_block import select_sections
from noteseek.core.relevance import HOOK_MIN_ANSWER, HOOK_MIN_SCORE, content_terms
from quality import evaluate
from relevance_train import (
    IDS,
    OFF_TOPIC,
    ON_TOPIC,
    PER_IDS,
    SEED,
    identifier_queries,
    index_of,
    queries_of,
)

LIMIT = 10
# Chit-chat and one-line agent instructions no notes vault should answer.
GENERIC = (
    "hi", "hello", "thanks!", "ok", "yes", "continue", "go on", "do it", "looks good, commit it",
    "what's up", "good morning", "no, the other one", "try again", "stop", "undo that",
    "run the tests", "fix the failing test", "why did that fail?", "rename foo to bar",
    "add a docstring to this function", "format the file", "make it faster",
    "fix the type error on line 42", "write a unit test for parse_args",
    "refactor this into two functions", "explain this stack trace",
    "update the changelog", "bump the version to 1.2.3", "delete the unused imports",
    "can you review my last commit", "hallo", "danke", "mach weiter", "passt so",
    "schreib einen Test dafür", "warum schlägt der Build fehl?",
)
EXTRA_OFF_TOPIC = (
    ("agent-eval", "obsidian-help-en"),
    ("agent-eval", "obsidian-hub"),
    ("agent-eval", "beir-scifact"),
    ("generic", "obsidian-help-en"),
    ("generic", "obsidian-hub"),
)
HOOK_ON_TOPIC = ("obsidian-help-en", "obsidian-hub", "mdn", "beir-scifact", "tldr")
HOOK_SWEEP = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4)

# The ranking of another revision: its whole list, as min_score=0, min_answer=0 gives here; a
# revision from before the thresholds has no such arguments and always returns the whole list.
OLD_CHILD = """
import inspect, json, sys
sys.path.insert(0, sys.argv[1])
import noteseek
queries = json.loads(sys.stdin.read())
with noteseek.Index(sys.argv[2], create=False) as idx:
    every = "min_answer" in inspect.signature(idx.search).parameters
    kwargs = {"min_score": 0, "min_answer": 0} if every else {}
    print(json.dumps([[h.path for h in idx.search(q, limit=10, **kwargs)] for q in queries]))
"""


def sources(name: str, per: int) -> list[tuple[str, str]]:
    if name == "agent-eval":
        return queries_of("agent", judged=False, n=0, seed=0, part="eval")
    if name == "generic":
        return [(f"generic-{i}", t) for i, t in enumerate(GENERIC)]
    return queries_of(name, judged=False, n=per, seed=101)


def old_lists(old_src: Path, db: Path, texts: list[str]) -> list[list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", OLD_CHILD, str(old_src), str(db)],
        input=json.dumps(texts), capture_output=True, text=True, check=True,
    )
    return [list(x) for x in json.loads(out.stdout)]


def ndcg(qrels: dict[str, dict[str, int]], runs: dict[str, list[str]]) -> dict[str, float]:
    return dict(evaluate(qrels, runs)["nDCG@10"])


def on_topic(name: str, per: int, old_src: Path | None) -> dict[str, Any]:
    db, matcher = index_of(name)
    qrels, _ = matcher.map_qrels(load_qrels(DATASETS[name]))
    queries = [(q, t) for q, t in queries_of(name, judged=True, n=per, seed=101)]
    full: dict[str, list[str]] = {}
    shown: dict[str, list[str]] = {}
    with noteseek.Index(db, create=False) as idx:
        for qid, text in queries:
            hits = idx.search(text, limit=LIMIT, min_score=0, min_answer=0)
            scores = [h.score for h in hits]
            assert all(0 <= s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
            full[qid] = [matcher.note_id(h.path) for h in hits]
            shown[qid] = [matcher.note_id(h.path) for h in idx.search(text, limit=LIMIT)]
    held = [q for q, _ in queries if set(full[q]) & set(qrels[q])]
    kept = [q for q in held if set(shown[q]) & set(qrels[q])]
    sub = {q: qrels[q] for q, _ in queries}
    n_full, n_shown = ndcg(sub, full), ndcg(sub, shown)
    row: dict[str, Any] = {
        "set": name,
        "queries": len(queries),
        "top10_held": len(held),
        "still_shown": len(kept),
        "kept_share": len(kept) / max(1, len(held)),
        "mean_shown": float(np.mean([len(shown[q]) for q, _ in queries])),
        "ndcg_ranking": float(np.mean([n_full[q] for q, _ in queries])),
        "ndcg_shown": float(np.mean([n_shown[q] for q, _ in queries])),
    }
    if old_src is not None:
        lists = old_lists(old_src, db, [t for _, t in queries])
        old = {q: [matcher.note_id(p) for p in paths] for (q, _), paths in zip(queries, lists)}
        n_old = ndcg(sub, old)
        a = [n_full[q] for q, _ in queries]
        b = [n_old[q] for q, _ in queries]
        row["ndcg_before"] = float(np.mean(b))
        row["ndcg_delta"] = float(np.mean(a) - np.mean(b))
        row["ndcg_p"] = float(sps.ttest_rel(a, b).pvalue) if a != b else 1.0
        row["same_top10"] = sum(full[q] == old[q] for q, _ in queries) / len(queries)
    return row


def identifier_lookups(name: str, per: int) -> dict[str, Any]:
    """A set's identifier lookups (relevance_train.identifier_queries with another seed than
    training's, and none of training's sample): the note that holds the identifier, still shown
    by default."""
    db, _ = index_of(name)
    trained = set(identifier_queries(f"{name}{IDS}", PER_IDS, seed=SEED))
    pool = identifier_queries(f"{name}{IDS}", sys.maxsize, seed=101)
    queries = [q for q in pool if q not in trained][:per]
    held = kept = shown = 0
    with noteseek.Index(db, create=False) as idx:
        for path, text in queries:
            full = [h.path for h in idx.search(text, limit=LIMIT, min_score=0, min_answer=0)]
            default = [h.path for h in idx.search(text, limit=LIMIT)]
            shown += len(default)
            if path in full:
                held += 1
                kept += path in default
    return {"set": name, "queries": len(queries), "top10_held": held, "still_shown": kept,
            "kept_share": kept / max(1, held), "mean_shown": shown / max(1, len(queries))}


def off_topic(source: str, vault: str, per: int) -> dict[str, Any]:
    db, _ = index_of(vault)
    queries = sources(source, per)
    counts = []
    with noteseek.Index(db, create=False) as idx:
        for _, text in queries:
            counts.append(len(idx.search(text, limit=LIMIT)))
    return {
        "pair": f"{source} → {vault}",
        "queries": len(queries),
        "no_hit": sum(c == 0 for c in counts) / max(1, len(counts)),
        "mean_shown": float(np.mean(counts)) if counts else 0.0,
    }


def hook_rows(idx: noteseek.Index, text: str) -> tuple[bool, list[Any]]:
    """(prompt has enough content words, the hook's candidate hits with their scores)."""
    query = text[:MAX_PROMPT_CHARS]
    hits = idx.search(query, limit=CONTEXT_CANDIDATES, explain=True,
                      max_term_share=CONTEXT_TERM_SHARE, multilingual=False, min_score=0, min_answer=0)
    return len(content_terms(query)) >= 2, hits


def block_paths(hits: list[Any], threshold: float) -> list[str]:
    kept = [h for h in hits if h.score >= threshold]
    return [s.path for s in select_sections(kept, max_tokens=500)] if kept else []


def hook(per: int) -> dict[str, Any]:
    out: dict[str, Any] = {"on_topic": {}, "off_topic": {}}
    for name in HOOK_ON_TOPIC:
        db, matcher = index_of(name)
        qrels, _ = matcher.map_qrels(load_qrels(DATASETS[name]))
        queries = queries_of(name, judged=True, n=per, seed=101)
        real = sweep = None
        with noteseek.Index(db, create=False) as idx:
            named = 0
            sweep = {t: 0 for t in HOOK_SWEEP}
            for qid, text in queries:
                ctx = prompt_context(idx, text)
                named += any(matcher.note_id(h.path) in qrels[qid] for h in ctx.hits
                             if f"({h.path[:-3] if h.path.endswith('.md') else h.path}" in ctx.text)
                enough, hits = hook_rows(idx, text)
                for t in HOOK_SWEEP:
                    sweep[t] += enough and any(matcher.note_id(p) in qrels[qid] for p in block_paths(hits, t))
            real = named
        out["on_topic"][name] = {"prompts": len(queries), "names_relevant": real / len(queries),
                                 "sweep": {t: v / len(queries) for t, v in sweep.items()}}
    # The chat prompts are training's only (the generic ones below are the evaluation's).
    pairs = [p for p in OFF_TOPIC if p[1] == "obsidian-help-en" and p[0] != "chat"] + list(EXTRA_OFF_TOPIC)
    pairs += [("beir-scifact", "obsidian-hub"), ("mdn", "beir-scifact")]
    for source, vault in dict.fromkeys(pairs):
        db, _ = index_of(vault)
        queries = sources(source if source != "agent" else "agent-eval", per)
        with noteseek.Index(db, create=False) as idx:
            silent = 0
            sweep = {t: 0 for t in HOOK_SWEEP}
            for _, text in queries:
                silent += not prompt_context(idx, text).text
                enough, hits = hook_rows(idx, text)
                for t in HOOK_SWEEP:
                    sweep[t] += not (enough and block_paths(hits, t))
        out["off_topic"][f"{source} → {vault}"] = {"prompts": len(queries), "silent": silent / len(queries),
                                                   "sweep": {t: v / len(queries) for t, v in sweep.items()}}
    return out


def golden() -> dict[str, Any]:
    """The public golden set (examples/golden) over the sample vault: search kept, hook names."""
    import shutil

    from noteseek.evaluation import load_qrels as golden_qrels
    from noteseek.evaluation import load_queries

    repo = Path(__file__).resolve().parent.parent
    vault = CACHE_DIR / "sample-vault"
    if not vault.is_dir():
        shutil.copytree(repo / "examples" / "sample-vault", vault, symlinks=True)
    queries = load_queries(repo / "examples" / "golden" / "queries.jsonl")
    qrels = golden_qrels(repo / "examples" / "golden" / "qrels.tsv")
    shown = held = named = silent_words = 0
    with noteseek.Index(CACHE_DIR / "sample-vault.db") as idx:
        idx.update(vault)
        for q in queries:
            rel = set(qrels.get(q.id, {}))
            full = [h.path for h in idx.search(q.text, limit=LIMIT, min_score=0, min_answer=0)]
            default = [h.path for h in idx.search(q.text, limit=LIMIT)]
            if rel & set(full):
                held += 1
                shown += bool(rel & set(default))
            ctx = prompt_context(idx, q.text)
            named += any(h.path in rel and f"({h.path[:-3]}" in ctx.text for h in ctx.hits)
            silent_words += "content words" in ctx.reason
    return {"queries": len(queries), "top10_held": held, "still_shown": shown,
            "hook_names_relevant": named / len(queries), "hook_too_short": silent_words}


def kept(rows: list[dict[str, Any]]) -> str:
    """"shown/held = share" over the sets' rows (queries whose top 10 held the note)."""
    held = sum(r["top10_held"] for r in rows)
    shown = sum(r["still_shown"] for r in rows)
    return f"{shown}/{held} = {shown / max(1, held):.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-set", type=int, default=1000, help="on-topic queries per set (sample)")
    ap.add_argument("--per-pair", type=int, default=200, help="off-topic queries per pair (sample)")
    ap.add_argument("--hook-per", type=int, default=120, help="prompts per hook row")
    ap.add_argument("--old-src", type=Path, help="a checkout's src/ to compare the ranking with")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: on,ids,off,golden,hook")
    args = ap.parse_args()
    skip = set(args.skip.split(","))
    report: dict[str, Any] = {"default_min_score": noteseek.DEFAULT_MIN_SCORE, "default_min_answer": noteseek.DEFAULT_MIN_ANSWER, "hook_min_score": HOOK_MIN_SCORE, "hook_min_answer": HOOK_MIN_ANSWER}
    if "on" not in skip:
        rows = [on_topic(name, args.per_set, args.old_src) for name in ON_TOPIC]
        report["on_topic"] = rows
        print(f"\nOn-topic, default threshold {noteseek.DEFAULT_MIN_SCORE} (limit 10):\n")
        print("| set | queries | top 10 held a relevant note | still shown | hits shown | nDCG@10 ranking | before | Δ (p) | same top 10 | nDCG@10 shown |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            before = f"{r['ndcg_before']:.4f} | {r['ndcg_delta']:+.4f} ({r['ndcg_p']:.2f}) | {r['same_top10']:.3f}" if "ndcg_before" in r else "- | - | -"
            print(f"| {r['set']} | {r['queries']} | {r['top10_held']} | {r['kept_share']:.3f} | {r['mean_shown']:.2f} | {r['ndcg_ranking']:.4f} | {before} | {r['ndcg_shown']:.4f} |")
        print(f"\nAll sets: relevant note still shown for {kept(rows)}")
    if "ids" not in skip:
        rows = [identifier_lookups(name, args.per_set) for name in ON_TOPIC]
        report["identifiers"] = rows
        print("\nIdentifier lookups (one identifier written in exactly one note, asked alone), default thresholds:\n")
        print("| set | queries | top 10 held the note | still shown | hits shown |")
        print("|---|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['set']} | {r['queries']} | {r['top10_held']} | {r['kept_share']:.3f} | {r['mean_shown']:.2f} |")
        print(f"\nAll sets: the note still shown for {kept(rows)}")
    if "off" not in skip:
        rows = [off_topic(s, v, args.per_pair) for s, v in list(OFF_TOPIC) + list(EXTRA_OFF_TOPIC) if s not in ("agent", "chat")]
        report["off_topic"] = rows
        print(f"\nOff-topic, default threshold {noteseek.DEFAULT_MIN_SCORE} (limit 10):\n")
        print("| queries → vault | queries | no hit shown | hits shown (mean) |")
        print("|---|---:|---:|---:|")
        for r in rows:
            print(f"| {r['pair']} | {r['queries']} | {r['no_hit']:.3f} | {r['mean_shown']:.2f} |")
        n = sum(r["queries"] for r in rows)
        print(f"\nAll pairs: no hit shown {sum(r['no_hit'] * r['queries'] for r in rows) / n:.3f}, "
              f"hits shown {sum(r['mean_shown'] * r['queries'] for r in rows) / n:.2f} on average")
    if "golden" not in skip:
        g = golden()
        report["golden"] = g
        print(f"\nGolden set (examples/golden, sample vault, {g['queries']} queries): relevant note "
              f"still shown by default {g['still_shown']}/{g['top10_held']}; the hook's block names "
              f"a relevant note for {g['hook_names_relevant']:.3f} ({g['hook_too_short']} prompts "
              "are too short for the hook: fewer than 2 content words)")
    if "hook" not in skip:
        h = hook(args.hook_per)
        report["hook"] = h
        print(f"\nPrompt hook (its thresholds: answered {HOOK_MIN_ANSWER}, score {HOOK_MIN_SCORE}; sweep columns: other thresholds):\n")
        head = " | ".join(f"{t}" for t in HOOK_SWEEP)
        print(f"| on-topic set | prompts | block names a relevant note | {head} |")
        print("|---|---:|---:|" + "---:|" * len(HOOK_SWEEP))
        for name, r in h["on_topic"].items():
            print(f"| {name} | {r['prompts']} | {r['names_relevant']:.3f} | " + " | ".join(f"{r['sweep'][t]:.3f}" for t in HOOK_SWEEP) + " |")
        print(f"\n| off-topic prompts → vault | prompts | hook silent | {head} |")
        print("|---|---:|---:|" + "---:|" * len(HOOK_SWEEP))
        for name, r in h["off_topic"].items():
            print(f"| {name} | {r['prompts']} | {r['silent']:.3f} | " + " | ".join(f"{r['sweep'][t]:.3f}" for t in HOOK_SWEEP) + " |")
        n = sum(r["prompts"] for r in h["off_topic"].values())
        print(f"\nAll off-topic prompts: silent {sum(r['silent'] * r['prompts'] for r in h['off_topic'].values()) / n:.3f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
