"""Shared loaders for the judged data sets in ``../shared/data`` (see its README.md).

What lives here: which archive each set is unpacked from, where its vault root is after unpacking,
how a qrels corpus id is matched to a note, and small readers for BEIR-style ``queries.jsonl`` and
``qrels.tsv`` files. Nothing here imports noteseek, so other bench scripts can use it too.

Unpacked vaults go to ``bench/.cache/<corpus>/`` (gitignored). They are written once and re-used
while the source file keeps its size and mtime; the archive's own mtimes are kept, so an index
built from a cache folder stays valid when the folder is re-extracted.

``NOTESEEK_BENCH_DATA`` and ``NOTESEEK_BENCH_CACHE`` point the data folder and the cache
elsewhere. `bench/smoke.py` points them at a stand-in (`stand_in`): every corpus and query set of
the tables below, in the same layout, made from the sample vault and its judged queries, so a
script that reads the development sets runs end to end on them in seconds.
"""

from __future__ import annotations

import fnmatch
import io
import json
import os
import re
import shutil
import tarfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CACHE_DIR",
    "CORPORA",
    "DATASETS",
    "DATA_DIR",
    "REPO",
    "SAMPLE_QUERIES",
    "SAMPLE_VAULT",
    "Corpus",
    "DataSet",
    "NoteMatcher",
    "StandIn",
    "ensure_corpus",
    "load_qrels",
    "read_qrels",
    "read_queries",
    "sample_index",
    "select_datasets",
    "stand_in",
]

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("NOTESEEK_BENCH_DATA") or REPO.parent / "shared" / "data")
CACHE_DIR = Path(os.environ.get("NOTESEEK_BENCH_CACHE") or REPO / "bench" / ".cache")
# The benchmarks' `--smoke` input: the repository's sample vault and its judged queries.
SAMPLE_VAULT = REPO / "examples" / "sample-vault"
SAMPLE_QUERIES = REPO / "examples" / "golden" / "queries.jsonl"
_STAMP = ".noteseek-bench-source"


@dataclass(frozen=True)
class Corpus:
    """One unpacked folder in the cache: from a Markdown tarball, or rendered from BEIR jsonl."""

    name: str
    source: str  # relative to the data dir
    kind: str = "tar"  # "tar" | "beir-jsonl" (one note <_id>.md per corpus line, text only)


@dataclass(frozen=True)
class DataSet:
    """One judged query set over one vault."""

    name: str
    corpus: str  # key of CORPORA
    vault: str  # vault root, relative to the unpacked corpus folder
    id_prefix: str  # prepended to a note's vault-relative path to get its id as the qrels spell it
    queries: str  # relative to the data dir
    qrels: str
    index: str  # index file name (without .db) in the cache: sets over one vault share it
    min_score: int = 1  # judgments below this score are dropped
    notes: str = ""
    # Cross-lingual sets whose qrels name notes of the other language's vault: "permalink:SRC"
    # maps each judged `SRC/...md` to the note of this vault with the same frontmatter `permalink`.
    qrels_via: str = ""


CORPORA: dict[str, Corpus] = {
    c.name: c
    for c in (
        Corpus("beir-scifact", "beir-scifact/scifact-vault-md.tar.gz"),
        Corpus("mdn-content-en", "mdn-content-en/mdn-en-us-md.tar.gz"),
        Corpus("obsidian-hub", "obsidian-hub/obsidian-hub-md.tar.gz"),
        Corpus("obsidian-help", "obsidian-help/obsidian-help-en-de-md.tar.gz"),
        Corpus("tldr-pages-en", "tldr-nl2bash/tldr-pages-en-md.tar.gz"),
        Corpus("xquad-de", "xquad-retrieval/de/corpus.jsonl", kind="beir-jsonl"),
        Corpus("xquad-en", "xquad-retrieval/en/corpus.jsonl", kind="beir-jsonl"),
    )
}

DATASETS: dict[str, DataSet] = {
    d.name: d
    for d in (
        DataSet(
            "beir-scifact",
            corpus="beir-scifact",
            vault="scifact-vault",
            id_prefix="",
            queries="beir-scifact/queries.jsonl",
            qrels="beir-scifact/qrels/train.tsv",
            index="beir-scifact",
            notes="BEIR SciFact train split; qrels use the bare doc id = note file stem",
        ),
        DataSet(
            "mdn",
            corpus="mdn-content-en",
            vault="files/en-us",
            id_prefix="files/en-us/",
            queries="mdn-content-en/knownitem-anchor/queries.jsonl",
            qrels="mdn-content-en/knownitem-anchor/qrels.tsv",
            index="mdn",
            notes="anchor-text known-item; every note is index.md, so ids are full tar paths",
        ),
        DataSet(
            "obsidian-hub",
            corpus="obsidian-hub",
            vault="obsidian-hub",
            id_prefix="",
            queries="obsidian-hub/knownitem-alias/queries.jsonl",
            qrels="obsidian-hub/knownitem-alias/qrels.tsv",
            index="obsidian-hub",
            notes="alias known-item; ids are paths inside obsidian-hub/",
        ),
        DataSet(
            "obsidian-help-en",
            corpus="obsidian-help",
            vault="en",
            id_prefix="en/",
            queries="obsidian-help/knownitem-alias-en/queries.jsonl",
            qrels="obsidian-help/knownitem-alias-en/qrels.tsv",
            index="obsidian-help-en",
            notes="English half of the tarball indexed as its own vault",
        ),
        DataSet(
            "obsidian-help-de",
            corpus="obsidian-help",
            vault="de",
            id_prefix="de/",
            queries="obsidian-help/knownitem-alias-de/queries.jsonl",
            qrels="obsidian-help/knownitem-alias-de/qrels.tsv",
            index="obsidian-help-de",
            notes="German half of the tarball indexed as its own vault",
        ),
        DataSet(
            "tldr",
            corpus="tldr-pages-en",
            vault="pages",
            id_prefix="pages/",
            queries="tldr-nl2bash/knownitem-nl2bash/queries_balanced.jsonl",
            qrels="tldr-nl2bash/knownitem-nl2bash/qrels_balanced.tsv",
            index="tldr-en",
            notes="NL2Bash balanced subset (<=20 queries per head utility); graded qrels: head "
            "utility 2, other utilities of the pipeline 1",
        ),
        DataSet(
            "tldr-head",
            corpus="tldr-pages-en",
            vault="pages",
            id_prefix="pages/",
            queries="tldr-nl2bash/knownitem-nl2bash/queries_balanced.jsonl",
            qrels="tldr-nl2bash/knownitem-nl2bash/qrels_balanced.tsv",
            index="tldr-en",
            min_score=2,
            notes="same runs as tldr, judged on the head-utility page only (score 2; the score-1 "
            "judgments are parsing heuristics); comparable to SOURCE.md's BM25 sanity check",
        ),
        DataSet(
            "xquad-de",
            corpus="xquad-de",
            vault="",
            id_prefix="",
            queries="xquad-retrieval/de/queries.jsonl",
            qrels="xquad-retrieval/de/qrels/test.tsv",
            index="xquad-de",
            notes="240 German paragraphs rendered as <id>.md, paragraph text only (the English "
            "article title is left out)",
        ),
        DataSet(
            "xquad-de-en",
            corpus="xquad-en",
            vault="",
            id_prefix="",
            queries="xquad-retrieval/de/queries.jsonl",
            qrels="xquad-retrieval/de/qrels/test.tsv",
            index="xquad-en",
            notes="cross-lingual: German questions over the English paragraphs (ids are shared)",
        ),
        DataSet(
            "xquad-en-de",
            corpus="xquad-de",
            vault="",
            id_prefix="",
            queries="xquad-retrieval/en/queries.jsonl",
            qrels="xquad-retrieval/en/qrels/test.tsv",
            index="xquad-de",
            notes="cross-lingual: English questions over the German paragraphs (ids are shared)",
        ),
        DataSet(
            "obsidian-help-de-en",
            corpus="obsidian-help",
            vault="en",
            id_prefix="en/",
            queries="obsidian-help/knownitem-alias-de/queries.jsonl",
            qrels="obsidian-help/knownitem-alias-de/qrels.tsv",
            index="obsidian-help-en",
            qrels_via="permalink:de",
            notes="cross-lingual: German alias queries over the English vault; a judged de/ note "
            "is mapped to the en/ note with the same frontmatter permalink",
        ),
        DataSet(
            "xquad-en",
            corpus="xquad-en",
            vault="",
            id_prefix="",
            queries="xquad-retrieval/en/queries.jsonl",
            qrels="xquad-retrieval/en/qrels/test.tsv",
            index="xquad-en",
            notes="240 English paragraphs rendered as <id>.md, paragraph text only",
        ),
    )
}


def select_datasets(spec: str | None) -> list[DataSet]:
    """Data sets named by a comma-separated list of names or shell patterns (None: all)."""
    if not spec:
        return list(DATASETS.values())
    chosen: list[DataSet] = []
    for pattern in (p.strip() for p in spec.split(",")):
        if not pattern:
            continue
        names = [n for n in DATASETS if fnmatch.fnmatchcase(n, pattern)]
        if not names:
            known = ", ".join(DATASETS)
            raise ValueError(f"no data set matches {pattern!r} (known: {known})")
        chosen.extend(DATASETS[n] for n in names if DATASETS[n] not in chosen)
    return chosen


# --- reading queries and qrels ---------------------------------------------------------------


def read_queries(path: Path) -> dict[str, str]:
    """``_id`` -> ``text`` of a BEIR ``queries.jsonl``, in file order."""
    queries: dict[str, str] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                queries[str(row["_id"])] = str(row["text"])
    return queries


def read_qrels(path: Path, min_score: int = 1) -> dict[str, dict[str, int]]:
    """``query-id -> corpus-id -> score`` of a tab-separated qrels file with a header line."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header[:2] != ["query-id", "corpus-id"]:
            raise ValueError(f"{path}: unexpected header {header!r}")
        for n, line in enumerate(f, start=2):
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                raise ValueError(f"{path}:{n}: expected 3 tab-separated fields, got {line!r}")
            qid, doc, score = parts[0], parts[1], int(parts[2])
            if score >= min_score:
                qrels.setdefault(qid, {})[doc] = score
    return qrels


_PERMALINK = re.compile(r"^permalink:[ \t]*[\"']?(.*?)[\"']?[ \t]*$", re.MULTILINE)


def _permalinks(root: Path) -> dict[str, str]:
    """Vault-relative path -> the `permalink` of its YAML frontmatter, for notes that have one."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.startswith("---"):
            continue
        end = text.find("\n---", 3)
        found = _PERMALINK.search(text[: end if end > 0 else 2000])
        if found and found.group(1):
            out[path.relative_to(root).as_posix()] = found.group(1)
    return out


def load_qrels(
    ds: DataSet, data_dir: Path = DATA_DIR, cache_dir: Path = CACHE_DIR
) -> dict[str, dict[str, int]]:
    """A set's qrels as its vault's notes are named (cross-lingual sets translated by permalink)."""
    qrels = read_qrels(data_dir / ds.qrels, ds.min_score)
    if not ds.qrels_via:
        return qrels
    how, _, source = ds.qrels_via.partition(":")
    if how != "permalink" or not source:
        raise ValueError(f"{ds.name}: unknown qrels_via {ds.qrels_via!r}")
    corpus_dir = ensure_corpus(CORPORA[ds.corpus], data_dir, cache_dir)
    target = {link: path for path, link in _permalinks(corpus_dir / ds.vault).items()}
    src = _permalinks(corpus_dir / source)
    prefix = source.rstrip("/") + "/"
    out: dict[str, dict[str, int]] = {}
    for qid, docs in qrels.items():
        for doc, score in docs.items():
            rel = doc[len(prefix) :] if doc.startswith(prefix) else doc
            link = src.get(rel)
            # A note with no counterpart keeps its own id: it counts as relevant-but-missed.
            mapped = ds.id_prefix + target[link] if link in target else doc
            out.setdefault(qid, {})[mapped] = max(score, out.get(qid, {}).get(mapped, score))
    return out


# --- unpacking -------------------------------------------------------------------------------


def _source_stamp(src: Path) -> str:
    st = src.stat()
    return json.dumps({"source": src.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns})


def ensure_corpus(corpus: Corpus, data_dir: Path = DATA_DIR, cache_dir: Path = CACHE_DIR) -> Path:
    """The unpacked folder of a corpus in the cache, unpacking it first when missing or stale."""
    src = data_dir / corpus.source
    if not src.is_file():
        raise FileNotFoundError(f"missing data file {src}")
    dest = cache_dir / corpus.name
    stamp = _source_stamp(src)
    stamp_file = dest / _STAMP
    if stamp_file.is_file() and stamp_file.read_text(encoding="utf-8") == stamp:
        return dest
    tmp = cache_dir / f".{corpus.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if corpus.kind == "tar":
        _extract_tar(src, tmp)
    elif corpus.kind == "beir-jsonl":
        _render_beir_corpus(src, tmp)
    else:
        raise ValueError(f"unknown corpus kind {corpus.kind!r}")
    (tmp / _STAMP).write_text(stamp, encoding="utf-8")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def _extract_tar(src: Path, dest: Path) -> None:
    with tarfile.open(src, "r:*") as tar:
        members = [m for m in tar.getmembers() if m.isdir() or m.isfile()]
        for m in members:  # never write outside dest, whatever the archive says
            target = (dest / m.name).resolve()
            if not target.is_relative_to(dest.resolve()):
                raise ValueError(f"{src}: member {m.name!r} points outside the folder")
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, members=members, filter="data")
        else:  # Python < 3.10.12 / 3.11.4
            tar.extractall(dest, members=members)  # members checked above


def _render_beir_corpus(src: Path, dest: Path) -> None:
    """One note per BEIR corpus line: ``<_id>.md`` holding the text (the title is left out)."""
    mtime = src.stat().st_mtime_ns
    with src.open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            doc_id = str(row["_id"])
            if "/" in doc_id or doc_id.startswith("."):
                raise ValueError(f"{src}: corpus id {doc_id!r} is not a safe file name")
            note = dest / f"{doc_id}.md"
            note.write_text(str(row["text"]).strip() + "\n", encoding="utf-8")
            os.utime(note, ns=(mtime, mtime))  # stable mtimes: re-rendering keeps the index valid


# --- matching qrels ids to notes -------------------------------------------------------------


class NoteMatcher:
    """Maps note paths and qrels corpus ids to one id per note.

    A corpus id matches a note when it equals, in this order of precedence, the note's id
    (``id_prefix`` + its vault-relative path), that id without ``.md``, the vault-relative path
    with or without ``.md``, or the note's file stem. Within one level a key shared by several
    notes (MDN: every stem is ``index``) matches nothing.
    """

    def __init__(self, note_paths: Iterable[str], id_prefix: str = "") -> None:
        self.id_prefix = id_prefix
        levels: list[dict[str, set[str]]] = [{} for _ in range(4)]
        for path in note_paths:
            note_id = id_prefix + path
            stem = path.rsplit("/", 1)[-1]
            for level, key in enumerate((note_id, _strip_md(note_id), path, _strip_md(path))):
                levels[min(level, 2)].setdefault(key, set()).add(note_id)
            levels[3].setdefault(_strip_md(stem), set()).add(note_id)
        self._levels = [{k: next(iter(v)) for k, v in lv.items() if len(v) == 1} for lv in levels]
        self.ambiguous_stems = sum(1 for v in levels[3].values() if len(v) > 1)

    def note_id(self, path: str) -> str:
        """The id of the note at a vault-relative path (as ``Hit.path`` gives it)."""
        return self.id_prefix + path

    def match(self, corpus_id: str) -> str | None:
        """The note id a qrels corpus id refers to, or None when no indexed note matches."""
        for level in self._levels:
            note = level.get(corpus_id)
            if note is not None:
                return note
        return None

    def map_qrels(
        self, qrels: Mapping[str, Mapping[str, int]]
    ) -> tuple[dict[str, dict[str, int]], Counter[str]]:
        """Qrels re-keyed by note id, and the corpus ids (with counts) that matched no note.

        Unmatched ids are kept under their own name, so they still count as relevant-but-missed.
        """
        mapped: dict[str, dict[str, int]] = {}
        unmatched: Counter[str] = Counter()
        for qid, docs in qrels.items():
            out = mapped.setdefault(qid, {})
            for doc, score in docs.items():
                note = self.match(doc)
                if note is None:
                    unmatched[doc] += 1
                    note = doc
                out[note] = max(score, out.get(note, score))
        return mapped, unmatched


def _strip_md(key: str) -> str:
    return key[:-3] if key.lower().endswith(".md") else key


def sample_index(folder: Path) -> Path:
    """The sample vault indexed into `folder` (a `--smoke` run's index): its path."""
    import noteseek  # here: the data-set helpers above run without the package's imports

    db = folder / "sample.db"
    with noteseek.Index(db) as idx:
        idx.update(SAMPLE_VAULT)
    return db


# --- the stand-in data sets of the smoke runs -------------------------------------------------

# Which half of the sample vault each stand-in corpus holds: two halves, so the scripts that
# compare a set with the other vaults (off-topic pairs, leave-one-corpus-out) meet notes that
# are not the answer. Both XQuAD corpora hold the same notes, as the real ones share their ids.
_HALF = {
    "beir-scifact": 0,
    "mdn-content-en": 0,
    "obsidian-hub": 1,
    "tldr-pages-en": 1,
    "xquad-de": 1,
    "xquad-en": 1,
}
_HELP_HALVES = {"en": 0, "de": 1}  # obsidian-help: one tarball, a vault per language


def _sample_notes() -> list[str]:
    """The sample vault's Markdown notes (vault-relative, dot-folders left out, as noteseek does)."""
    return sorted(
        p.relative_to(SAMPLE_VAULT).as_posix()
        for p in SAMPLE_VAULT.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(SAMPLE_VAULT).parts)
    )


def _flat_id(path: str) -> str:
    """A BEIR corpus id (a safe file name) for a vault path: ``howto/x.md`` -> ``howto--x``."""
    return _strip_md(path).replace("/", "--")


@dataclass(frozen=True)
class StandIn:
    """A stand-in for the data folder and the cache (see `stand_in`)."""

    data_dir: Path
    cache_dir: Path


def stand_in(folder: Path) -> StandIn:
    """A data folder in `folder` laid out as ``../shared/data`` for every entry of `CORPORA`
    and `DATASETS`, made from the sample vault (each corpus one half of its notes) and its
    judged queries (those judged on that half, the qrels ids spelled as the real set spells
    them), and a cache beside it with every corpus unpacked and every set's index built, as
    `quality.py` leaves them. Figures measured on it mean nothing: it is for the smoke runs."""
    data = _stand_in_data(folder / "data")
    cache = folder / "cache"
    import noteseek  # here: the data-set helpers above run without the package's imports

    for name in dict.fromkeys(ds.index for ds in DATASETS.values()):
        ds = next(d for d in DATASETS.values() if d.index == name)
        corpus_dir = ensure_corpus(CORPORA[ds.corpus], data, cache)
        with noteseek.Index(cache / f"{name}.db") as idx:
            idx.update(corpus_dir / ds.vault if ds.vault else corpus_dir)
    return StandIn(data, cache)


def _stand_in_data(data: Path) -> Path:
    notes = _sample_notes()
    halves = [notes[0::2], notes[1::2]]
    # Vault-relative path inside each corpus folder -> the sample note it holds.
    members: dict[str, dict[str, str]] = {}
    for corpus in CORPORA.values():
        if corpus.name == "obsidian-help":
            members[corpus.name] = {
                f"{lang}/{n}": n for lang, half in _HELP_HALVES.items() for n in halves[half]
            }
            continue
        half = halves[_HALF[corpus.name]]
        if corpus.kind == "beir-jsonl":
            members[corpus.name] = {f"{_flat_id(n)}.md": n for n in half}
            continue
        vault = next(d.vault for d in DATASETS.values() if d.corpus == corpus.name)
        root = f"{vault}/" if vault else ""
        members[corpus.name] = {root + n: n for n in half}
    for corpus in CORPORA.values():
        src = data / corpus.source
        src.parent.mkdir(parents=True, exist_ok=True)
        if corpus.kind == "beir-jsonl":
            with src.open("w", encoding="utf-8") as f:
                for path, note in members[corpus.name].items():
                    text = (SAMPLE_VAULT / note).read_text(encoding="utf-8")
                    f.write(json.dumps({"_id": path.removesuffix(".md"), "text": text}) + "\n")
            continue
        with tarfile.open(src, "w:gz") as tar:
            for path, note in members[corpus.name].items():
                body = (SAMPLE_VAULT / note).read_bytes()
                info = tarfile.TarInfo(path)
                info.size, info.mtime = len(body), int((SAMPLE_VAULT / note).stat().st_mtime)
                tar.addfile(info, io.BytesIO(body))
    texts = read_queries(SAMPLE_QUERIES)
    golden = read_qrels(SAMPLE_QUERIES.parent / "qrels.tsv")
    for ds in DATASETS.values():
        if (data / ds.qrels).exists():  # a file two sets share (tldr, tldr-head): written once
            continue
        root = f"{ds.vault}/" if ds.vault else ""
        held = {
            note: path[len(root) :]
            for path, note in members[ds.corpus].items()
            if path.startswith(root)
        }
        judged = {
            qid: {ds.id_prefix + held[n]: grade for n, grade in docs.items() if n in held}
            for qid, docs in golden.items()
        }
        judged = {qid: docs for qid, docs in judged.items() if docs}
        (data / ds.queries).parent.mkdir(parents=True, exist_ok=True)
        (data / ds.qrels).parent.mkdir(parents=True, exist_ok=True)
        with (data / ds.queries).open("w", encoding="utf-8") as f:
            for qid in judged:
                f.write(json.dumps({"_id": qid, "text": texts[qid]}) + "\n")
        with (data / ds.qrels).open("w", encoding="utf-8") as f:
            f.write("query-id\tcorpus-id\tscore\n")
            for qid, docs in judged.items():
                f.writelines(f"{qid}\t{doc}\t{grade}\n" for doc, grade in docs.items())
    return data
