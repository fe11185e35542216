"""Train the relevance calibration (P(relevant | query, hit)) on the development sets; LOCO, export.

Usage (bench extra + scikit-learn: ``pip install -e '.[ranking-lab]'``)::

    nice -n 10 python bench/relevance_train.py                  # LOCO calibration + threshold table
    nice -n 10 python bench/relevance_train.py --export src/noteseek/engine/search/relevance-model.json

Rows are the engine's own: every query runs through ``Index.search`` (limit 10, ``min_score=0``)
with the calibration's capture on, so each hit's features are exactly what the engine computes
(``core/calibration.py``). Labels: on-topic queries (a development set against its own vault)
mark a hit relevant when the qrels judge its note; off-topic queries (one corpus's queries
against another corpus's vault, and the coding-agent prompts of ``bench/data/agent_prompts.txt``,
even lines only) mark every hit irrelevant. One logistic model per search mode
(``LogisticRegression`` on standardised features, folded into raw-feature weights); an isotonic
table on top is measured (``--isotonic``) and kept only when it lowers the LOCO calibration error.

Leave-one-corpus-out: holding out a corpus drops every row whose queries or vault come from it;
the model trained on the rest scores those rows. Reliability (10 equal-width bins of the score
shown, i.e. after capping at the hit above), expected calibration error (ECE, count-weighted mean
|predicted − observed| over the bins) and a threshold sweep are printed from the LOCO scores.
Development halves only: nothing here reads a held-out set.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import pickle
import random
import re
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

import _internals
import noteseek
from datasets import (
    CACHE_DIR,
    CORPORA,
    DATA_DIR,
    DATASETS,
    NoteMatcher,
    ensure_corpus,
    load_qrels,
    read_queries,
)
from noteseek.core.calibration import CALIBRATION_FEATURES, Calibrator, non_increasing
from noteseek.core.query import looks_like_identifier
from quality import open_index

LIMIT = 10
MODES = ("hybrid", "bm25", "vector")
ROWS = CACHE_DIR / "relevance-train"
ROWS_VERSION = 5  # bumped when a block gains a field: rows cached before lack it
# The training sample's defaults (relevance_gate.py reads the same; relevance_eval.py leaves the
# identifiers of this sample out of its own).
SEED = 13
PER_IDS = 100
AGENT_PROMPTS = Path(__file__).resolve().parent / "data" / "agent_prompts.txt"
CHAT_PROMPTS = Path(__file__).resolve().parent / "data" / "chat_prompts.txt"
# Data set -> the corpus its queries come from (LOCO groups; the Help vault is one corpus).
CORPUS_OF = {
    "beir-scifact": "scifact",
    "mdn": "mdn",
    "obsidian-hub": "hub",
    "obsidian-help-en": "help",
    "tldr": "tldr",
    "agent": "agent",
    "chat": "agent",
}
ON_TOPIC = ("beir-scifact", "mdn", "obsidian-hub", "obsidian-help-en", "tldr")
# A set's identifier lookups (`identifier_queries`): "<set>#ids", its corpus's.
IDS = "#ids"
CORPUS_OF |= {f"{name}{IDS}": CORPUS_OF[name] for name in ON_TOPIC}
# (queries of, asked of the vault of): pairs that share no subject.
OFF_TOPIC = (
    ("beir-scifact", "obsidian-hub"),
    ("beir-scifact", "obsidian-help-en"),
    ("beir-scifact", "tldr"),
    ("mdn", "beir-scifact"),
    ("tldr", "obsidian-help-en"),
    ("tldr", "beir-scifact"),
    ("obsidian-help-en", "beir-scifact"),
    ("obsidian-help-en", "tldr"),
    ("obsidian-hub", "beir-scifact"),
    ("agent", "obsidian-help-en"),
    ("agent", "obsidian-hub"),
    ("agent", "beir-scifact"),
    ("chat", "obsidian-help-en"),
    ("chat", "obsidian-hub"),
    ("chat", "beir-scifact"),
)


# (queries of, asked of the vault of): the identifier lookups, on-topic and off-topic as the
# sets' own queries are. Asked of another vault, most identifiers are unknown there (no list:
# the known-words gate); those that come back matched words the vault also has, by chance
# ("SAA-1", a protein, is the words "saa" and "1" to the tokenizer) or as a fair lookup
# ("DigitalOcean" in tldr). Both count as off-topic, as every query of another corpus does.
ID_PAIRS = tuple((f"{name}{IDS}", name) for name in ON_TOPIC) + tuple(
    (f"{source}{IDS}", vault) for source, vault in OFF_TOPIC if source in ON_TOPIC
)


def base(name: str) -> str:
    """The set a query source comes from ("mdn#ids" -> "mdn")."""
    return name.removesuffix(IDS)


# A word as a person copies it out of a note: not inside a URL, a path or a longer word.
_TOKEN = re.compile(r"(?<![\w./=?#&%:-])[A-Za-z][A-Za-z0-9_]*(?:-[0-9]+)?(?![\w/-])")
_HEX = re.compile(r"[0-9a-fA-F]+")


def _identifier(token: str) -> bool:
    """An identifier as the engine reads one (`looks_like_identifier`: a digit, an inner
    underscore or a camelCase hump with letters), 5-40 characters with two letters or more, and
    not a hex string (colours, hashes): what a person would copy out of a note to find it again."""
    if not 5 <= len(token) <= 40 or sum(c.isalpha() for c in token) < 2 or _HEX.fullmatch(token):
        return False
    return looks_like_identifier(token)


def identifier_queries(name: str, n: int, seed: int) -> list[tuple[str, str]]:
    """Up to `n` (note path, identifier) of a set's vault: identifiers written in exactly one
    note (case-folded), each asked alone; the note that holds it is the one relevant. The
    known-item lookup the judged sets lack (an error code, a ticket id, a setting's name), from
    the development corpora's own text; a fixed random sample."""
    db, _ = index_of(base(name))
    notes: dict[str, set[str]] = {}
    spelled: dict[str, str] = {}
    with noteseek.Index(db, create=False) as idx:
        for path in idx.note_paths():
            for token in set(_TOKEN.findall(idx.note_text(path))):
                if _identifier(token):
                    key = token.casefold()
                    notes.setdefault(key, set()).add(path)
                    spelled.setdefault(key, token)
    unique = sorted((next(iter(paths)), spelled[key]) for key, paths in notes.items() if len(paths) == 1)
    random.Random(f"{seed}-{name}").shuffle(unique)
    return unique[:n]


def agent_prompts(part: str) -> list[tuple[str, str]]:
    """The written coding-agent prompts: "train" (even lines), "eval" (odd lines) or "all"."""
    lines = [
        line.strip()
        for line in AGENT_PROMPTS.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    keep = {"train": 0, "eval": 1}.get(part)
    return [(f"agent-{i}", t) for i, t in enumerate(lines) if keep is None or i % 2 == keep]


def chat_prompts() -> list[tuple[str, str]]:
    """The written short chat prompts ("thx", "keep going"), every line: a family of off-topic
    input the hook and an agent's searches meet all day, and the identifier lookups' opposite
    (one or two words, a strong match by chance)."""
    lines = [
        line.strip()
        for line in CHAT_PROMPTS.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return [(f"chat-{i}", t) for i, t in enumerate(lines)]


def _split(qid: str) -> int:
    return int(hashlib.sha256(qid.encode()).hexdigest()[:8], 16)


def queries_of(name: str, *, judged: bool, n: int, seed: int, part: str = "train") -> list[tuple[str, str]]:
    """Up to `n` (id, text) of a set (only judged ones when `judged`), a fixed random sample."""
    if name == "agent":
        return agent_prompts(part)
    if name == "chat":
        return chat_prompts()
    if name.endswith(IDS):
        return identifier_queries(name, n, seed)
    ds = DATASETS[name]
    texts = read_queries(DATA_DIR / ds.queries)
    if judged:
        qrels = load_qrels(ds)
        texts = {q: t for q, t in texts.items() if q in qrels}
    items = sorted((q, t) for q, t in texts.items() if t.strip())
    random.Random(f"{seed}-{name}").shuffle(items)
    return items[:n]


def index_of(name: str) -> tuple[Path, NoteMatcher]:
    """The set's cached index (built if missing) and its note matcher."""
    ds = DATASETS[name]
    corpus = ensure_corpus(CORPORA[ds.corpus])
    info = open_index(ds, corpus / ds.vault if ds.vault else corpus, CACHE_DIR, reindex=False)
    with noteseek.Index(Path(info.db), create=False) as idx:
        return Path(info.db), NoteMatcher(idx.note_paths(), ds.id_prefix)


def run_pair(source: str, vault: str, mode: str, queries: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """One row block per query: feature rows of its hits and their labels."""
    db, matcher = index_of(vault)
    qrels: dict[str, dict[str, int]] = {}
    on_topic = base(source) == vault
    if source == vault:
        qrels, _ = matcher.map_qrels(load_qrels(DATASETS[vault]))
    elif on_topic:  # identifier lookups: the query's id is the note that holds it
        qrels = {path: {matcher.note_id(path): 1} for path, _ in queries}
    out = []
    with noteseek.Index(db, create=False) as idx:
        calibration = _internals.searcher(idx).calibration
        calibration.capture = True
        for qid, text in queries:
            calibration.last = calibration.heads = None
            idx.search(text, limit=LIMIT, mode=mode, min_score=0)  # type: ignore[arg-type]
            last = calibration.last
            paths: list[str] = list(last[1]) if last is not None else []
            rows: list[Any] = list(last[2]) if last is not None else []
            judged = qrels.get(qid, {})
            out.append(
                {
                    "qid": qid,
                    "text": text,
                    "source": source,
                    "vault": vault,
                    "on_topic": on_topic,
                    "X": np.array(rows, dtype=np.float64).reshape(len(rows), len(CALIBRATION_FEATURES)),
                    "y": np.array([judged.get(matcher.note_id(p), 0) > 0 for p in paths], dtype=np.bool_),
                    "judged": len(judged),
                    # The lists' heads the query-level model reads (core.calibration.head_features).
                    "heads": calibration.heads,
                }
            )
    return out


def collect(
    mode: str, per_set: int, per_pair: int, seed: int, fresh: bool, per_ids: int = 0
) -> list[dict[str, Any]]:
    """The row blocks of every pair (cached per pair and sample size), with `per_ids`
    identifier lookups per set and off-topic pair when it is not 0."""
    ROWS.mkdir(parents=True, exist_ok=True)
    blocks: list[dict[str, Any]] = []
    pairs = [(s, s) for s in ON_TOPIC] + list(OFF_TOPIC) + (list(ID_PAIRS) if per_ids else [])
    for source, vault in pairs:
        ids = source.endswith(IDS)
        sizes = f"{per_ids}-{seed}" if ids else f"{per_set}-{per_pair}-{seed}"
        cache = ROWS / f"{mode}-{source}-{vault}-{sizes}-{ROWS_VERSION}.pkl"
        if cache.exists() and not fresh:
            blocks.extend(pickle.loads(cache.read_bytes()))
            continue
        n = per_ids if ids else per_set if source == vault else per_pair
        queries = queries_of(source, judged=source == vault, n=n, seed=seed)
        started = time.perf_counter()
        rows = run_pair(source, vault, mode, queries)
        cache.write_bytes(pickle.dumps(rows))
        blocks.extend(rows)
        print(f"[{mode}] {source} → {vault}: {len(rows)} queries in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return blocks


def corpora(block: dict[str, Any]) -> set[str]:
    return {CORPUS_OF[block["source"]], CORPUS_OF[block["vault"]]}


def fit(blocks: Iterable[dict[str, Any]]) -> tuple[np.ndarray, float]:
    """Raw-feature weights and bias of a standardised logistic regression."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    chosen = [b for b in blocks if len(b["y"])]
    X = np.vstack([b["X"] for b in chosen])
    y = np.concatenate([b["y"] for b in chosen]).astype(int)
    scaler = StandardScaler().fit(X)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    lr = LogisticRegression(C=1.0, max_iter=5000).fit((X - scaler.mean_) / scale, y)
    w = lr.coef_[0] / scale
    b = float(lr.intercept_[0] - np.sum(lr.coef_[0] * scaler.mean_ / scale))
    return w, b


def isotonic_table(blocks: list[dict[str, Any]], w: np.ndarray, b: float) -> tuple[list[float], list[float]]:
    """An isotonic map from the logistic probability to the observed rate (on `blocks`)."""
    from sklearn.isotonic import IsotonicRegression

    chosen = [x for x in blocks if len(x["y"])]
    p = 1 / (1 + np.exp(-(np.vstack([x["X"] for x in chosen]) @ w + b)))
    y = np.concatenate([x["y"] for x in chosen]).astype(float)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, y)
    xs, ys = iso.X_thresholds_, iso.y_thresholds_
    # Keep the table small: at most ~40 knots, evenly spaced in rank.
    keep = sorted(set(np.linspace(0, len(xs) - 1, min(len(xs), 40)).astype(int)))
    return [float(xs[i]) for i in keep], [float(ys[i]) for i in keep]


def calibrator(models: dict[str, tuple[np.ndarray, float]], tables: dict[str, tuple[list[float], list[float]]]) -> Calibrator:
    return Calibrator({m: (list(w), b) for m, (w, b) in models.items()}, tables)


def shown_scores(cal: Calibrator, mode: str, block: dict[str, Any]) -> np.ndarray:
    return np.array(non_increasing([cal.probability(mode, list(r)) for r in block["X"]]))


def loco(blocks: list[dict[str, Any]], mode: str, isotonic: bool) -> list[np.ndarray]:
    """Each block's shown scores from the model trained without its corpora."""
    scores: list[np.ndarray | None] = [None] * len(blocks)
    # A block is scored by the model that left out one of its corpora (its vault's first, so an
    # off-topic block is judged as a vault the model never saw).
    for held in sorted({c for b in blocks for c in corpora(b)} - {"agent"}):
        train = [b for b in blocks if held not in corpora(b)]
        w, bias = fit(train)
        tables = {mode: isotonic_table(train, w, bias)} if isotonic else {}
        cal = calibrator({mode: (w, bias)}, tables)
        for i, block in enumerate(blocks):
            if scores[i] is None and CORPUS_OF[block["vault"]] == held:
                scores[i] = shown_scores(cal, mode, block)
    return [s if s is not None else np.zeros(0) for s in scores]


def reliability(scores: list[np.ndarray], labels: list[np.ndarray], bins: int = 10) -> tuple[float, list[tuple[float, float, float, int]]]:
    """ECE and (low, mean predicted, observed, count) per non-empty bin."""
    p = np.concatenate(scores) if scores else np.zeros(0)
    y = np.concatenate(labels).astype(float) if labels else np.zeros(0)
    rows = []
    ece = 0.0
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        sel = (p >= lo) & ((p < hi) if k < bins - 1 else (p <= hi))
        n = int(sel.sum())
        if n:
            rows.append((lo, float(p[sel].mean()), float(y[sel].mean()), n))
            ece += n / len(p) * abs(float(p[sel].mean()) - float(y[sel].mean()))
    return ece, rows


def sweep(blocks: list[dict[str, Any]], scores: list[np.ndarray], thresholds: Iterable[float]) -> list[dict[str, float]]:
    out = []
    for t in thresholds:
        off = [s for b, s in zip(blocks, scores) if not b["on_topic"]]
        held = [(b, s) for b, s in zip(blocks, scores) if b["on_topic"] and b["y"].any()]
        out.append(
            {
                "threshold": t,
                "off_topic_no_hit": float(np.mean([not (s >= t).any() for s in off])),
                "off_topic_mean_hits": float(np.mean([(s >= t).sum() for s in off])),
                "on_topic_kept": float(np.mean([(s[b["y"]] >= t).any() for b, s in held])),
                "on_topic_mean_hits": float(np.mean([(s >= t).sum() for b, s in held])),
            }
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--per-set", type=int, default=400, help="on-topic queries per set")
    ap.add_argument("--per-pair", type=int, default=150, help="off-topic queries per pair")
    ap.add_argument("--per-ids", type=int, default=PER_IDS, help="identifier lookups per set and pair (0: none)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--isotonic", action="store_true", help="also fit an isotonic table (measured)")
    ap.add_argument("--export", type=Path)
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--json", type=Path, help="write the LOCO figures here")
    args = ap.parse_args()
    if importlib.util.find_spec("sklearn") is None:  # the ranking-lab extra
        print("relevance_train skipped: scikit-learn is not installed (pip install -e '.[ranking-lab]')")
        return 0
    models: dict[str, tuple[np.ndarray, float]] = {}
    tables: dict[str, tuple[list[float], list[float]]] = {}
    report: dict[str, Any] = {}
    for mode in args.modes.split(","):
        blocks = collect(mode, args.per_set, args.per_pair, args.seed, args.fresh, args.per_ids)
        print(f"\n## {mode}: {len(blocks)} queries, {sum(len(b['y']) for b in blocks)} hits, "
              f"{sum(int(b['y'].sum()) for b in blocks)} relevant\n")
        variants = {"logistic": loco(blocks, mode, False)}
        if args.isotonic:
            variants["logistic + isotonic"] = loco(blocks, mode, True)
        report[mode] = {}
        for name, scores in variants.items():
            print(f"### LOCO {name}: ECE per vault corpus (on-topic and off-topic rows)\n")
            print("| vault | hits | ECE | reliability (mean predicted → observed, count) |")
            print("|---|---:|---:|---|")
            per = {}
            for corpus in sorted({CORPUS_OF[b["vault"]] for b in blocks}):
                sel = [i for i, b in enumerate(blocks) if CORPUS_OF[b["vault"]] == corpus]
                ece, rows = reliability([scores[i] for i in sel], [blocks[i]["y"] for i in sel])
                per[corpus] = {"ece": ece, "bins": rows}
                curve = " · ".join(f"{m:.2f}→{o:.2f} ({n})" for _, m, o, n in rows)
                print(f"| {corpus} | {sum(len(blocks[i]['y']) for i in sel)} | {ece:.3f} | {curve} |")
            ece, rows = reliability(scores, [b["y"] for b in blocks])
            per["all"] = {"ece": ece, "bins": rows}
            print(f"| all | {sum(len(b['y']) for b in blocks)} | {ece:.3f} | " + " · ".join(f"{m:.2f}→{o:.2f} ({n})" for _, m, o, n in rows) + " |")
            table = sweep(blocks, scores, (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7))
            print(f"\n### LOCO {name}: threshold sweep\n")
            print("| threshold | off-topic: no hit | off-topic: hits shown | on-topic: relevant kept | on-topic: hits shown |")
            print("|---:|---:|---:|---:|---:|")
            for r in table:
                print(f"| {r['threshold']:.2f} | {r['off_topic_no_hit']:.3f} | {r['off_topic_mean_hits']:.2f} | {r['on_topic_kept']:.3f} | {r['on_topic_mean_hits']:.2f} |")
            print()
            report[mode][name] = {"per_corpus": per, "sweep": table}
        w, b = fit(blocks)
        models[mode] = (w, b)
        if args.isotonic and args.export:
            tables[mode] = isotonic_table(blocks, w, b)
        print("weights: " + ", ".join(f"{n} {x:+.3f}" for n, x in zip(CALIBRATION_FEATURES, w)) + f", bias {b:+.3f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if args.export:
        doc = calibrator(models, tables).to_json() | {
            "note": "bench/relevance_train.py: scikit-learn LogisticRegression(C=1) per mode on "
            "standardised features, folded into raw-feature weights; development sets with "
            "off-topic pairs only",
            "on_topic": list(ON_TOPIC),
            "off_topic": [f"{a}→{b}" for a, b in OFF_TOPIC],
        }
        args.export.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.export} ({args.export.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
