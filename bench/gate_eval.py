"""How well does the prompt hook's relevance gate separate real questions from noise?

Real prompts: each development query set run against its own vault; a hit is *relevant* when the
qrels judge its note. Noise: prompts that have nothing to do with a vault — each set's queries run
against an unrelated vault (biomedical claims against web docs, shell tasks against a note-taking
manual, …), plus chit-chat and coding-agent prompts written for this script (GENERIC below).

Printed: the cosine distributions of the top hit (real-relevant vs noise), and for the default
gate and a sweep of thresholds: how often noise gets a block (false fires), and what share of the
relevant hits an ungated block would show survive the gate (kept).

    python bench/gate_eval.py [--per-set 150] [--json bench/results/gate_eval.json]

Needs ../shared/data and the indexes bench/quality.py builds in bench/.cache (built if missing).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import noteseek
from datasets import (
    CACHE_DIR,
    CORPORA,
    DATA_DIR,
    DATASETS,
    NoteMatcher,
    ensure_corpus,
    read_qrels,
    read_queries,
)
from noteseek.agents.prompt_context import CONTEXT_CANDIDATES, CONTEXT_TERM_SHARE, MAX_PROMPT_CHARS
from noteseek.core.relevance import GateSettings, judge

SETTINGS: noteseek.SearchSettings | None = None  # --max-term-share changes it

SETS = ("mdn", "obsidian-hub", "obsidian-help-en", "obsidian-help-de", "tldr", "beir-scifact")
# Query set -> vaults that know nothing about it.
UNRELATED = {
    "beir-scifact": ("mdn", "obsidian-help-en", "tldr"),
    "tldr": ("obsidian-help-en", "beir-scifact", "obsidian-hub"),
    "mdn": ("beir-scifact", "obsidian-help-de"),
    "obsidian-help-en": ("beir-scifact", "tldr"),
    "obsidian-hub": ("beir-scifact", "tldr"),
    "obsidian-help-de": ("beir-scifact", "mdn"),
}
# Prompts a coding agent's user types that no notes vault should answer.
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

def dataset_index(name: str) -> tuple[Path, NoteMatcher]:
    ds = DATASETS[name]
    corpus_dir = ensure_corpus(CORPORA[ds.corpus])
    vault = corpus_dir / ds.vault if ds.vault else corpus_dir
    db = CACHE_DIR / f"{ds.index}.db"
    with noteseek.Index(db) as idx:
        if not db.exists() or idx.status().files == 0:
            idx.update(vault)
        paths = idx.note_paths()
    return db, NoteMatcher(paths, ds.id_prefix)


def sample_queries(name: str, n: int, seed: int) -> list[tuple[str, str]]:
    queries = read_queries(DATA_DIR / DATASETS[name].queries)
    qrels = read_qrels(DATA_DIR / DATASETS[name].qrels, DATASETS[name].min_score)
    items = sorted((q, t) for q, t in queries.items() if q in qrels and t.strip())
    random.Random(seed).shuffle(items)
    return items[:n]


def features(idx: noteseek.Index, prompt: str) -> list[dict[str, Any]]:
    query = prompt[:MAX_PROMPT_CHARS]
    share = SETTINGS.max_term_share if SETTINGS is not None else CONTEXT_TERM_SHARE
    hits = idx.search(query, limit=CONTEXT_CANDIDATES, explain=True, max_term_share=share)
    return [
        {
            "path": h.path,
            "bm25_rank": h.bm25_rank,
            "vec_rank": h.vec_rank,
            "cosine": h.cosine,
            "exact": bool(h.explanation and h.explanation.exact_name),
        }
        for h in hits
    ]


class _H:
    def __init__(self, f: dict[str, Any]) -> None:
        self.bm25_rank, self.vec_rank, self.cosine = f["bm25_rank"], f["vec_rank"], f["cosine"]


def gate_kept(prompt: str, feats: list[dict[str, Any]], s: GateSettings) -> list[int]:
    decision = judge(prompt, [_H(f) for f in feats], exact=[f["exact"] for f in feats], settings=s)
    return list(decision.kept)


def collect(per_set: int, seed: int) -> dict[str, Any]:
    real: list[dict[str, Any]] = []
    noise: list[dict[str, Any]] = []
    indexes = {name: dataset_index(name) for name in SETS}
    for name in SETS:
        db, matcher = indexes[name]
        qrels, _ = matcher.map_qrels(read_qrels(DATA_DIR / DATASETS[name].qrels))
        queries = sample_queries(name, per_set, seed)
        with noteseek.Index(db, create=False, settings=SETTINGS) as idx:
            for qid, text in queries:
                feats = features(idx, text)
                for f in feats:
                    f["relevant"] = matcher.note_id(f["path"]) in qrels.get(qid, {})
                real.append({"set": name, "prompt": text, "hits": feats})
            for prompt in GENERIC:
                noise.append({"set": f"generic→{name}", "prompt": prompt, "hits": features(idx, prompt)})
        print(f"[{name}] {len(queries)} real prompts", file=sys.stderr, flush=True)
    for name, others in UNRELATED.items():
        queries = sample_queries(name, per_set // 2, seed + 1)
        for other in others:
            with noteseek.Index(indexes[other][0], create=False, settings=SETTINGS) as idx:
                for _, text in queries:
                    noise.append({"set": f"{name}→{other}", "prompt": text, "hits": features(idx, text)})
        print(f"[{name}] noise against {', '.join(others)}", file=sys.stderr, flush=True)
    return {"real": real, "noise": noise}


def rates(data: dict[str, Any], s: GateSettings) -> dict[str, float]:
    fired = sum(1 for item in data["noise"] if gate_kept(item["prompt"], item["hits"], s))
    # Relevant hits among the top 3 an ungated block would show, and how many survive the gate.
    shown = kept = 0
    queries_with = queries_kept = 0
    for item in data["real"]:
        top = [i for i, f in enumerate(item["hits"][:3]) if f["relevant"]]
        if not top:
            continue
        passed = set(gate_kept(item["prompt"], item["hits"], s))
        shown += len(top)
        kept += sum(1 for i in top if i in passed)
        queries_with += 1
        queries_kept += any(i in passed for i in top)
    return {
        "noise_fire_rate": fired / max(1, len(data["noise"])),
        "relevant_hits_kept": kept / max(1, shown),
        "queries_with_relevant_kept": queries_kept / max(1, queries_with),
    }


def quantiles(values: Sequence[float]) -> str:
    if not values:
        return "-"
    q = statistics.quantiles(values, n=20)
    return f"p5 {q[0]:.2f} · p25 {q[4]:.2f} · p50 {q[9]:.2f} · p75 {q[14]:.2f} · p95 {q[18]:.2f}"


def report(data: dict[str, Any]) -> dict[str, Any]:
    top_real = [i["hits"][0]["cosine"] for i in data["real"] if i["hits"] and i["hits"][0]["relevant"] and i["hits"][0]["cosine"] is not None]
    top_noise = [i["hits"][0]["cosine"] for i in data["noise"] if i["hits"] and i["hits"][0]["cosine"] is not None]
    print("\nTop-hit cosine, relevant top hits of real prompts:", quantiles(top_real))
    print("Top-hit cosine, noise prompts:                     ", quantiles(top_noise))
    default = GateSettings()
    base = rates(data, default)
    print(f"\nDefault gate {default}:")
    print(f"  noise fire rate {base['noise_fire_rate']:.3f}, relevant hits kept {base['relevant_hits_kept']:.3f}, "
          f"queries keeping a relevant hit {base['queries_with_relevant_kept']:.3f}")
    print("\n| agree_cosine | alone_cosine | noise fire rate | relevant hits kept | queries keeping one |")
    print("|---|---|---|---|---|")
    sweep = []
    for agree in (0.25, 0.30, 0.35, 0.40, 0.45):
        for alone in (0.40, 0.45, 0.50, 0.55, 0.60):
            if alone < agree:
                continue
            r = rates(data, replace(default, agree_cosine=agree, alone_cosine=alone))
            sweep.append({"agree_cosine": agree, "alone_cosine": alone, **r})
            print(f"| {agree:.2f} | {alone:.2f} | {r['noise_fire_rate']:.3f} | {r['relevant_hits_kept']:.3f} | {r['queries_with_relevant_kept']:.3f} |")
    print("\nReal prompts per set (default gate):")
    print("| set | prompts | block shown | with a relevant hit in the ungated top 3 | of those, kept |")
    print("|---|---|---|---|---|")
    per_set: dict[str, list[int]] = {}
    for item in data["real"]:
        top = [i for i, f in enumerate(item["hits"][:3]) if f["relevant"]]
        passed = set(gate_kept(item["prompt"], item["hits"], default))
        row = per_set.setdefault(item["set"], [0, 0, 0, 0])
        row[0] += 1
        row[1] += bool(passed)
        row[2] += bool(top)
        row[3] += any(i in passed for i in top)
    for name, (n, shown, with_rel, kept_rel) in per_set.items():
        print(f"| {name} | {n} | {shown / n:.2f} | {with_rel} | {kept_rel / max(1, with_rel):.2f} |")
    per_noise: dict[str, list[int]] = {}
    for item in data["noise"]:
        per_noise.setdefault(item["set"].split("→")[0] if item["set"].startswith("generic") else item["set"], []).append(
            1 if gate_kept(item["prompt"], item["hits"], default) else 0
        )
    print("\nNoise fire rate per source (default gate):")
    for key, vals in sorted(per_noise.items()):
        print(f"  {key:<36} {sum(vals)}/{len(vals)}")
    return {"default": base, "sweep": sweep, "top_cosine_real": top_real, "top_cosine_noise": top_noise}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-set", type=int, default=150)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cache", type=Path, help="reuse collected features from this JSON file")
    parser.add_argument("--max-term-share", type=float, help="SearchSettings.max_term_share")
    args = parser.parse_args(argv)
    if not DATA_DIR.is_dir():
        print(f"needs the shared data at {DATA_DIR}", file=sys.stderr)
        return 2
    global SETTINGS
    if args.max_term_share is not None:
        SETTINGS = noteseek.SearchSettings(max_term_share=args.max_term_share)
    if args.cache and args.cache.is_file():
        data = json.loads(args.cache.read_text())
    else:
        data = collect(args.per_set, args.seed)
        if args.cache:
            args.cache.write_text(json.dumps(data))
    summary = report(data)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
