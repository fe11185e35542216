"""Dump, per development set, what a reranker over the fused head would see (issue 16, part 1).

Usage (after ``bench/quality.py`` has built the cached indexes)::

    nice -n 10 python bench/rerank_pool.py --data-dir ../shared/data [--sets 'xquad-*'] [--head 50]

For every judged query it records the default hybrid ranking (`Index.search(limit=HEAD)`), the raw
BM25 and vector chunk lists (`Searcher.bm25` / `Searcher.knn`, 100 chunks each, the depth search
uses), the query's index tokens (the `noteseek` FTS5 tokenizer in query mode) and their chunk
document frequencies (fts5vocab). Per index it records, for every note that appears in a pool, what
the feature extractor needs from storage: title field, tags field, sections, chunk texts and
languages, mtime, and the wikilink / Markdown-link in-degree counted over the raw vault files.
Everything goes to ``bench/.cache/pools/<set>.pkl``; ``rerank_lab.py`` reads it.
"""

from __future__ import annotations

import argparse
import pickle
import re
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import apsw

import noteseek
from datasets import (
    CACHE_DIR,
    CORPORA,
    DATA_DIR,
    DataSet,
    NoteMatcher,
    ensure_corpus,
    load_qrels,
    read_queries,
    select_datasets,
)

POOLS = CACHE_DIR / "pools"
DEPTH = 100

_WIKILINK = re.compile(r"!?\[\[([^\]|#^]+)")
_MDLINK = re.compile(r"\]\(([^)\s#?]+)")


def _key(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in folded if not unicodedata.combining(ch)).strip()


def in_degrees(vault: Path, paths: dict[str, int]) -> dict[int, int]:
    """file id -> number of other notes linking to it (wikilinks by name, Markdown links by path)."""
    by_stem: dict[str, int] = {}
    by_path: dict[str, int] = {}
    for path, fid in paths.items():
        stem = path.rsplit("/", 1)[-1][:-3]
        by_stem.setdefault(_key(stem), fid)
        by_path[_key(path[:-3])] = fid
        if path.endswith("/index.md"):  # MDN: /en-US/docs/Web/API/X -> web/api/x/index.md
            by_path[_key(path[: -len("/index.md")])] = fid
    degree: Counter[int] = Counter()
    for path, fid in paths.items():
        try:
            text = (vault / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        targets: set[int] = set()
        for m in _WIKILINK.finditer(text):
            name = _key(m.group(1).strip().rsplit("/", 1)[-1])
            if name.endswith(".md"):
                name = name[:-3]
            if name in by_stem:
                targets.add(by_stem[name])
        for m in _MDLINK.finditer(text):
            link = _key(m.group(1))
            link = re.sub(r"^/?en-us/docs/", "", link).strip("/")
            link = link[:-3] if link.endswith(".md") else link
            base = path.rsplit("/", 1)[0] if "/" in path else ""
            for cand in (link, f"{base}/{link}".strip("/")):
                if cand in by_path:
                    targets.add(by_path[cand])
                    break
        targets.discard(fid)
        degree.update(targets)
    return dict(degree)


def query_tokens(db: apsw.Connection, text: str) -> list[list[str]]:
    """The query's index tokens, one list of colocated forms per position, as FTS5 sees them."""
    tok = db.fts5_tokenizer("noteseek", [])
    out: list[list[str]] = []
    for t in tok(text.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None):
        forms = [str(f) for f in t[2:]]
        if forms and forms not in out:
            out.append(forms)
    return out


def pool_entry(idx: noteseek.Index, paths: dict[str, int], text: str, head: int) -> dict[str, Any]:
    """What one query gives the reranker: the fused head, both raw lists, tokens and their df."""
    db = idx._store.db
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.pool_vocab USING fts5vocab(main, chunks_fts, 'row')"
    )
    hits = idx.search(text, limit=head, mode="hybrid", explain=True)
    toks = query_tokens(db, text)
    df: dict[str, int] = {}
    for forms in toks:
        for f in forms:
            row = db.execute("SELECT doc FROM temp.pool_vocab WHERE term = ?", (f,)).fetchone()
            df[f] = int(row[0]) if row else 0
    return {
        "text": text,
        "fused": [(paths[h.path], h.score, h.bm25_rank, h.vec_rank) for h in hits],
        "exact": [paths[h.path] for h in hits if h.explanation and h.explanation.exact_name],
        "kw": idx._searcher.bm25(text, DEPTH),
        "vec": idx._searcher.knn(text, DEPTH),
        "tokens": toks,
        "df": df,
    }


def note_data(db: apsw.Connection, wanted: set[int]) -> dict[int, dict[str, Any]]:
    """Per note id: path, mtime, size, title and tags fields, language and chunks."""
    notes: dict[int, dict[str, Any]] = {}
    for fid, path, mtime, size in db.execute("SELECT id, path, mtime_ns, size FROM files"):
        if fid in wanted:
            notes[int(fid)] = {"path": path, "mtime": int(mtime), "size": int(size), "chunks": []}
    for cid, fid, _seq, section, text, title, tags, lang in db.execute(
        "SELECT id, file_id, seq, section, chunk_text, title, tags, lang FROM chunks ORDER BY file_id, seq"
    ):
        if fid in notes:
            n = notes[fid]
            n["title"], n["tags"], n["lang"] = title, tags, lang
            n["chunks"].append((int(cid), section, text))
    return notes


def dump(ds: DataSet, args: argparse.Namespace) -> Path:
    corpus_dir = ensure_corpus(CORPORA[ds.corpus], args.data_dir, args.cache_dir)
    vault = corpus_dir / ds.vault if ds.vault else corpus_dir
    db_path = args.cache_dir / f"{ds.index}.db"
    if not db_path.exists():
        sys.exit(f"error: {db_path} missing; run bench/quality.py first")
    qrels_raw = load_qrels(ds, args.data_dir, args.cache_dir)
    texts = read_queries(args.data_dir / ds.queries)
    with noteseek.Index(db_path, create=False) as idx:
        store = idx._store
        db = store.db
        paths = {str(p): int(f) for p, f in db.execute("SELECT path, id FROM files")}
        matcher = NoteMatcher(paths, ds.id_prefix)
        qrels, _ = matcher.map_qrels(qrels_raw)
        fid_of_note = {matcher.note_id(p): f for p, f in paths.items()}
        total_chunks = int(store.scalar("SELECT count(*) FROM chunks"))
        idx.search("warm up", limit=1)
        queries: dict[str, dict[str, Any]] = {}
        started = time.perf_counter()
        for qid, text in texts.items():
            if qid not in qrels:
                continue
            queries[qid] = pool_entry(idx, paths, text, args.head)
            queries[qid]["qrels"] = {
                fid_of_note[n]: s for n, s in qrels[qid].items() if n in fid_of_note
            }
        seconds = time.perf_counter() - started
        chunk_ids = {c for q in queries.values() for c, _ in q["kw"] + q["vec"]}
        chunk_file = store.file_ids(sorted(chunk_ids))
        wanted = {f for q in queries.values() for f, *_ in q["fused"]} | set(chunk_file.values())
        notes = note_data(db, wanted)
    degree = in_degrees(vault, paths)
    for fid, n in notes.items():
        n["indegree"] = degree.get(fid, 0)
    out = args.cache_dir / "pools" / f"{ds.name}.pkl"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "set": ds.name,
        "index": ds.index,
        "total_chunks": total_chunks,
        "total_notes": len(paths),
        "queries": queries,
        "notes": notes,
        "chunk_file": chunk_file,
        "seconds": seconds,
    }
    out.write_bytes(pickle.dumps(payload))
    print(
        f"[{ds.name}] {len(queries)} queries, {len(notes)} notes -> {out} ({seconds:.1f} s)",
        file=sys.stderr,
    )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets")
    parser.add_argument("--head", type=int, default=50)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    args = parser.parse_args()
    for ds in select_datasets(args.sets):
        dump(ds, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
