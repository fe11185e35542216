"""What a user would otherwise reach for, written the straightforward way, for bench/benchmark.py.

Three alternatives to noteseek, each with the same small interface: a timed ``build`` and
``query(text) -> Answer`` (chunk paths best first, or for ripgrep the files it lists):

* ``Ripgrep``: ``rg -i -l -F -e term1 -e term2 ... -- .`` in the vault, one process per query, the
  way an agent greps. Terms are the query's whitespace-separated words, lower-cased, with
  surrounding punctuation stripped and noteseek's stopwords dropped (kept when the query has
  nothing else), so rg looks for about the words noteseek's BM25 does; with stopwords kept nearly
  every file would match ``a`` or ``the``. ``Ripgrep(phrase=True)`` greps the whole query as one
  fixed string instead. Unranked: it lists files in no useful order.
* ``WriteUp2``: the second write-up's design (FAISS + rank_bm25 + RRF): ``rank_bm25.BM25Okapi``
  over ``text.lower().split()`` tokens, an exact inner product ``X @ q`` over unit vectors (what
  FAISS ``IndexFlatIP`` computes), RRF with k = 60 over the top 30 of each. Both indexes live in
  memory; on disk it keeps the vectors and the chunk texts (``vectors.npy`` + ``chunks.json``, like
  the write-up's ``vector_store.faiss`` + ``vector_store.json``) and rebuilds BM25 when it loads.
* ``ReferenceDesign``: the reference design as the spec describes it, built plainly: one fresh
  SQLite file (apsw + sqlite-vec) with a ``chunks`` table, an external-content FTS5 table over
  ``chunk_text, section, heading_context`` queried with ``bm25(chunks_fts, 1.0, 0.5, 0.3)``, and a
  ``vec0(embedding float[256] distance_metric=cosine)`` table queried by sqlite-vec's brute-force
  KNN (``embedding MATCH ? AND k = 30``); RRF with k = 60 over the top 30 of each.

Both ranked alternatives answer with the whole fused list (up to 60 chunks, best first); a caller
maps chunks to notes and cuts where it likes (the reference design shows the top 10).

Both ranked alternatives start from noteseek's own chunks (read from a noteseek index file), so all
three ranked systems see the same units, and embed them with noteseek's embedder (the bundled
potion-base-8M, 512 chunks per call as noteseek's indexer does) into the same float32 vectors
noteseek stores as int8. The embedded text is noteseek's (note title › section, blank line, chunk
text); ``WriteUp2``'s BM25 tokenises that same text, as the write-up prepends the heading
breadcrumb to each chunk (``bm25_on="text"``: the chunk text alone, an ablation).

A small CLI builds an alternative and runs one query in a fresh process (what a hook would pay)::

    python bench/alternatives.py build writeup2 --index noteseek.db --out DIR
    python bench/alternatives.py build reference --index noteseek.db --out ref.db
    python bench/alternatives.py search writeup2 --state DIR -- "query text"
    python bench/alternatives.py search reference --state ref.db -- "query text"
"""

from __future__ import annotations

import argparse
import json
import os
import string
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "CANDIDATES",
    "RRF_K",
    "Answer",
    "BuildStats",
    "Chunk",
    "ReferenceDesign",
    "Ripgrep",
    "WriteUp2",
    "read_chunks",
    "rrf",
]

CANDIDATES = 30  # per list, as in both write-ups
RRF_K = 60
COLUMN_WEIGHTS = (1.0, 0.5, 0.3)  # chunk text, section, heading context (reference design)
# noteseek's indexer embeds 512 chunks per call; one call for all of them is ~25% slower.
EMBED_BATCH = 512

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Chunk:
    """One of noteseek's chunks, as the alternatives index it."""

    id: int
    path: str  # vault-relative note path
    title: str
    section: str
    text: str
    heading_context: str

    @property
    def embed_text(self) -> str:
        """The text noteseek embeds for this chunk (title › section, blank line, text)."""
        from noteseek.core.chunker import embedding_text

        return embedding_text(self.title, self.section, self.text)


@dataclass
class Answer:
    """A query's result: note paths of the fused chunks, best first, and of each input list."""

    paths: list[str]
    parts: dict[str, list[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # time per step


@dataclass
class BuildStats:
    """How long a build took, per step, and how much it left on disk."""

    seconds: float
    steps: dict[str, float]
    chunks: int
    disk_bytes: int


def read_chunks(noteseek_db: str | os.PathLike[str]) -> list[Chunk]:
    """Every chunk of a noteseek index, in id order."""
    import _internals  # noteseek only when this is called (benchmark.py imports the module)
    import noteseek

    with noteseek.Index(noteseek_db, create=False) as idx:
        # White-box (a benchmark may): the alternatives are built from noteseek's own chunk rows.
        rows = _internals.sqlite_db(idx).execute(
            "SELECT c.id, f.path, COALESCE(f.title, ''), c.section, c.chunk_text, "
            "f.heading_context FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"
        )
        return [Chunk(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows]


def default_embedder() -> Any:
    """noteseek's embedder: the bundled potion-base-8M, unit float32 vectors."""
    from noteseek.embedding.embedder import default_embedder as bundled

    return bundled()


def rrf(lists: Sequence[Sequence[int]], k: int = RRF_K) -> list[int]:
    """Reciprocal Rank Fusion as both write-ups print it: score(d) = Σ 1 / (k + rank)."""
    scores: dict[int, float] = {}
    for ranked in lists:
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda key: -scores[key])  # stable: ties keep first-seen order


def top_k(scores: npt.NDArray[Any], k: int) -> list[int]:
    """Indices of the k highest scores, best first (what FAISS search returns)."""
    k = min(k, len(scores))
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    best: list[int] = top[np.argsort(-scores[top], kind="stable")].tolist()
    return best


def embed_all(embedder: Any, chunks: Sequence[Chunk]) -> Vectors:
    """Unit float32 vectors of every chunk's embedding text, in batches of 512 as noteseek's indexer."""
    texts = [c.embed_text for c in chunks]
    parts = [embedder.embed(texts[i : i + EMBED_BATCH]) for i in range(0, len(texts), EMBED_BATCH)]
    return np.vstack(parts) if parts else np.zeros((0, 256), dtype=np.float32)


def _dir_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- ripgrep -------------------------------------------------------------------------------------


def rg_terms(text: str) -> list[str]:
    """The words rg searches for: lower-cased, outer punctuation stripped, stopwords dropped."""
    from noteseek.core.query import STOPWORDS

    words: list[str] = []
    for raw in text.lower().split():
        word = raw.strip(string.punctuation)
        if word and word not in words:
            words.append(word)
    content = [w for w in words if w not in STOPWORDS]
    return content or words


class Ripgrep:
    """``rg -i -l -F`` over the vault: files containing any query word (or the whole phrase)."""

    def __init__(self, vault: str | os.PathLike[str], *, phrase: bool = False, rg: str = "rg"):
        self.vault = Path(vault)
        self.phrase = phrase
        self.rg = rg
        self.name = "rg-phrase" if phrase else "rg-terms"

    def build(self) -> BuildStats:
        """Nothing to build."""
        return BuildStats(0.0, {}, 0, 0)

    def command(self, text: str) -> list[str]:
        """The rg command line for a query."""
        patterns = [text.strip()] if self.phrase else rg_terms(text)
        args = [self.rg, "-i", "-l", "-F"]
        for p in patterns or [text]:
            args += ["-e", p]
        return [*args, "--", "."]

    def query(self, text: str) -> Answer:
        """Files rg lists (vault-relative), sorted by path: rg gives no ranking."""
        proc = subprocess.run(
            self.command(text),
            cwd=self.vault,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode not in (0, 1):  # 1 = no match
            raise RuntimeError(f"rg failed ({proc.returncode}): {proc.stderr.strip()}")
        files = sorted(line.removeprefix("./") for line in proc.stdout.splitlines() if line)
        return Answer(files)


# --- the second write-up: rank_bm25 + exact inner product + RRF ---------------------------------


class WriteUp2:
    """rank_bm25 BM25Okapi over ``str.split()`` tokens + numpy ``X @ q`` + RRF (k = 60, top 30)."""

    name = "writeup2"

    def __init__(
        self, chunks: Sequence[Chunk], vectors: Vectors, embedder: Any, *, bm25_on: str = "embed"
    ) -> None:
        """``bm25_on="embed"``: title › section + text (as the write-up); ``"text"``: text only."""
        from rank_bm25 import BM25Okapi

        self.chunks = list(chunks)
        self.paths = [c.path for c in self.chunks]
        self.vectors = vectors
        self.embedder = embedder
        docs = (c.embed_text if bm25_on == "embed" else c.text for c in self.chunks)
        self.bm25 = BM25Okapi([self.tokens(d) for d in docs])

    @staticmethod
    def tokens(text: str) -> list[str]:
        """The write-up's tokenizer: lower-case, split on whitespace."""
        return text.lower().split()

    @classmethod
    def build(
        cls, chunks: Sequence[Chunk], embedder: Any, out: str | os.PathLike[str] | None = None
    ) -> tuple[WriteUp2, BuildStats]:
        """Embed every chunk, build BM25, and (with ``out``) persist vectors and chunk texts."""
        steps: dict[str, float] = {}
        t0 = time.perf_counter()
        vectors = embed_all(embedder, chunks)
        steps["embed"] = time.perf_counter() - t0
        t = time.perf_counter()
        engine = cls(chunks, vectors, embedder)
        steps["bm25"] = time.perf_counter() - t
        disk = 0
        if out is not None:
            t = time.perf_counter()
            folder = Path(out)
            folder.mkdir(parents=True, exist_ok=True)
            np.save(folder / "vectors.npy", vectors)
            with (folder / "chunks.json").open("w", encoding="utf-8") as fh:
                json.dump([c.__dict__ for c in chunks], fh, ensure_ascii=False)
            steps["save"] = time.perf_counter() - t
            disk = _dir_bytes(folder)
        return engine, BuildStats(time.perf_counter() - t0, steps, len(chunks), disk)

    @classmethod
    def load(cls, state: str | os.PathLike[str], embedder: Any) -> WriteUp2:
        """Read vectors and chunks back and rebuild BM25, as the write-up does at app start."""
        folder = Path(state)
        vectors = np.load(folder / "vectors.npy")
        with (folder / "chunks.json").open(encoding="utf-8") as fh:
            chunks = [Chunk(**row) for row in json.load(fh)]
        return cls(chunks, vectors, embedder)

    def query(self, text: str, *, candidates: int = CANDIDATES) -> Answer:
        """Top ``candidates`` chunks of each list fused by RRF, the whole fused list."""
        t0 = time.perf_counter()
        scores = self.bm25.get_scores(self.tokens(text))
        # A chunk sharing no term with the query scores 0: not a keyword hit.
        keyword = [i for i in top_k(scores, candidates) if scores[i] > 0]
        t1 = time.perf_counter()
        q = self.embedder.embed([text])[0]
        t2 = time.perf_counter()
        semantic = top_k(self.vectors @ q, candidates)
        t3 = time.perf_counter()
        fused = rrf([keyword, semantic])
        paths = [self.paths[i] for i in fused]
        t4 = time.perf_counter()
        return Answer(
            paths,
            {"bm25": [self.paths[i] for i in keyword], "vector": [self.paths[i] for i in semantic]},
            {"bm25": t1 - t0, "embed": t2 - t1, "knn": t3 - t2, "fuse": t4 - t3},
        )


# --- the reference design, straightforwardly: FTS5 + sqlite-vec float32 brute force --------------


REFERENCE_SCHEMA = """
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY,
    file_path TEXT NOT NULL,
    section TEXT NOT NULL,
    chunk_text TEXT NOT NULL,
    heading_context TEXT NOT NULL,
    mtime_ns INTEGER,
    embedded_at REAL
);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    chunk_text, section, heading_context, content='chunks', content_rowid='id'
);
CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[256] distance_metric=cosine);
"""


def _connect(path: str | os.PathLike[str], *, create: bool) -> Any:
    import apsw
    import sqlite_vec

    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    db = apsw.Connection(str(path), flags=flags)
    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    db.enable_load_extension(False)
    db.execute("PRAGMA journal_mode=WAL")
    return db


class ReferenceDesign:
    """One SQLite file: chunks + FTS5 (bm25 weights 1.0/0.5/0.3) + vec0 float[256] cosine KNN."""

    name = "reference"

    def __init__(self, path: str | os.PathLike[str], embedder: Any) -> None:
        self.path = Path(path)
        self.db = _connect(self.path, create=False)
        self.embedder = embedder

    @classmethod
    def build(
        cls, chunks: Sequence[Chunk], embedder: Any, out: str | os.PathLike[str]
    ) -> tuple[ReferenceDesign, BuildStats]:
        """Embed every chunk and write a fresh file in one transaction."""
        path = Path(out)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        steps: dict[str, float] = {}
        t0 = time.perf_counter()
        vectors = embed_all(embedder, chunks)
        steps["embed"] = time.perf_counter() - t0
        t = time.perf_counter()
        db = _connect(path, create=True)
        db.execute(REFERENCE_SCHEMA)
        now = time.time()
        with db:
            db.executemany(
                "INSERT INTO chunks(id, file_path, section, chunk_text, heading_context, "
                "mtime_ns, embedded_at) VALUES (?, ?, ?, ?, ?, 0, ?)",
                [(c.id, c.path, c.section, c.text, c.heading_context, now) for c in chunks],
            )
            # External content: FTS5 gets its rows explicitly (the reference issues them itself).
            db.executemany(
                "INSERT INTO chunks_fts(rowid, chunk_text, section, heading_context) "
                "VALUES (?, ?, ?, ?)",
                [(c.id, c.text, c.section, c.heading_context) for c in chunks],
            )
            db.executemany(
                "INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)",
                [(c.id, vectors[i].tobytes()) for i, c in enumerate(chunks)],
            )
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        steps["sqlite"] = time.perf_counter() - t
        disk = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
        return cls(path, embedder), BuildStats(time.perf_counter() - t0, steps, len(chunks), disk)

    def close(self) -> None:
        """Close the file."""
        self.db.close()

    def query(self, text: str, *, candidates: int = CANDIDATES) -> Answer:
        """FTS5 MATCH + vec0 KNN, top ``candidates`` chunks of each, the whole RRF-fused list."""
        from noteseek.core.query import fts_query

        t0 = time.perf_counter()
        match = fts_query(text)
        keyword: list[int] = []
        if match is not None:
            keyword = [
                int(r[0])
                for r in self.db.execute(
                    "SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts "
                    "WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
                    (*COLUMN_WEIGHTS, match, candidates),
                )
            ]
        t1 = time.perf_counter()
        q = self.embedder.embed([text])[0]
        t2 = time.perf_counter()
        semantic = [
            int(r[0])
            for r in self.db.execute(
                "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ? "
                "ORDER BY distance",
                (q.astype(np.float32).tobytes(), candidates),
            )
        ]
        t3 = time.perf_counter()
        fused = rrf([keyword, semantic])
        wanted = sorted(fused)
        marks = ",".join("?" * len(wanted))
        rows = {
            int(r[0]): (r[1], r[2], r[3])
            for r in self.db.execute(
                f"SELECT id, file_path, section, chunk_text FROM chunks WHERE id IN ({marks})",
                wanted,
            )
        }
        t4 = time.perf_counter()
        path = {i: rows[i][0] for i in rows}
        return Answer(
            [path[i] for i in fused],
            {"bm25": [path[i] for i in keyword], "vector": [path[i] for i in semantic]},
            {"bm25": t1 - t0, "embed": t2 - t1, "knn": t3 - t2, "fuse": t4 - t3},
        )


# --- CLI: build in a fresh process, or answer one query in a fresh process -----------------------


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build an alternative from a noteseek index; prints JSON")
    b.add_argument("system", choices=("writeup2", "reference"))
    b.add_argument("--index", required=True, help="noteseek index file to take the chunks from")
    b.add_argument(
        "--out", required=True, help="state folder (writeup2) or SQLite file (reference)"
    )
    s = sub.add_parser("search", help="answer one query in this process; prints JSON")
    s.add_argument("system", choices=("writeup2", "reference"))
    s.add_argument("--state", required=True, help="what `build --out` wrote")
    s.add_argument("-n", "--limit", type=int, default=10)
    s.add_argument("query")
    args = parser.parse_args(argv)

    embedder = default_embedder()
    if args.command == "build":
        t = time.perf_counter()
        chunks = read_chunks(args.index)
        read = time.perf_counter() - t
        if args.system == "writeup2":
            _, stats = WriteUp2.build(chunks, embedder, args.out)
        else:
            engine, stats = ReferenceDesign.build(chunks, embedder, args.out)
            engine.close()
        out = {**stats.__dict__, "read_chunks_seconds": read}
        print(json.dumps(out))
        return 0
    if args.system == "writeup2":
        engine2 = WriteUp2.load(args.state, embedder)
        answer = engine2.query(args.query)
    else:
        engine3 = ReferenceDesign(args.state, embedder)
        answer = engine3.query(args.query)
    print(json.dumps({"paths": answer.paths[: args.limit]}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
