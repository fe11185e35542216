"""Answer a query: BM25 over FTS5, KNN over vectors, fused per note (docs/ranking.md)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from ...core.calibration import (
    ANSWER_DEPTH,
    RARE_CHUNKS,
    calibration_features,
    head_features,
    non_increasing,
    query_facts,
    rarity,
    word_shares,
)
from ...core.file_kinds import document_kind
from ...core.fusion import DEFAULT_RRF_K, convex_fusion, reciprocal_rank_fusion
from ...core.query import (
    file_keys,
    folder_keys,
    identifiers,
    name_key,
    search_terms,
    tag_key,
)
from ...embedding.embedder import Embedder, knows_word, query_vector
from ...errors import ModelLoadError
from ...settings import ENV_DEEP, FALSE_VALUES
from ...storage.queries import FileFilter, KeywordQuery
from .calibration import Calibration
from .hits import Explanation, Hit, hit_from_row
from .known_words import content_words, nothing_known
from .note_lists import (
    NoteList,
    SectionMatches,
    best_chunks,
    group,
    own_match,
    pick_section,
    tied_ranks,
    untied_head,
)
from .query_plan import CommonTerms
from .request import MODES, Mode, SearchRequest
from .rerank import Reranker
from .vectors import VectorIndex, VectorMatch

if TYPE_CHECKING:
    from ...core.time_range import TimeRange
    from ...storage.protocol import Storage
    from .deep_lane import DeepLane

__all__ = ["MODES", "Explanation", "Fusion", "Hit", "Mode", "SearchSettings", "Searcher", "browses"]

log = logging.getLogger("noteseek.search")

EXACT_NAME_LIMIT = 5
# Sections of a shown note compared for the one it is shown by (engine/note_lists.pick_section).
SECTION_CANDIDATES = 3
# The query's identifiers whose holders the calibration looks up (`Searcher._rarity`), weightiest
# first: each is one BM25 lookup of it as a phrase, a few rows.
_RARE_WORDS = 4


Fusion = Literal["convex", "rrf"]


@dataclass(frozen=True)
class SearchSettings:
    """Ranking parameters. The defaults were chosen on the development query sets (docs/ranking.md)."""

    fusion: Fusion = "convex"
    # Share of the BM25 list in the convex combination; the vector list gets the rest.
    alpha: float = 0.7
    # Notes taken from each list, and chunks fetched per list to find them.
    candidates: int = 30
    chunk_depth: int = 100
    # Used by fusion="rrf" (the reference design: k = 60, equal weights).
    rrf_k: float = DEFAULT_RRF_K
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    # FTS5 bm25() column weights: chunk text, section heading, title/aliases/file name, type/tags.
    column_weights: tuple[float, float, float, float] = (1.0, 2.0, 4.0, 2.0)
    # In hybrid mode, notes whose title, alias or file name equals the query come first.
    exact_names: bool = True
    # Query words whose stem is in more than this share of all chunks are left out of the BM25
    # query (unless nothing else is left): low IDF, longest posting lists (docs/ranking.md).
    max_term_share: float = 0.5
    # A query none of whose words the vault's index or the model knows gets no hits rather than
    # the vector list's guesses (engine/search/known_words.py, docs/ranking.md).
    known_words: bool = True
    # In hybrid mode with convex fusion, the first `rerank_depth` fused notes are reordered by the
    # bundled linear model (engine/search/rerank.py, docs/ranking.md).
    rerank: bool = True
    rerank_depth: int = 30
    # Where a deep lane exists (`noteseek index --deep`, or a watcher filling it), every hybrid
    # query fuses its e5 list as a third list (engine/search/deep_lane.py, docs/deep-lane.md).
    deep: bool = True
    # (BM25, bundled model, e5) shares in the convex fusion with the lane: for queries in the
    # vault's language, and for queries across languages (German words, or a vault with
    # non-English notes), where potion adds nothing beside e5 (docs/deep-lane.md).
    deep_weights: tuple[float, float, float] = (0.4, 0.1, 0.5)
    cross_weights: tuple[float, float, float] = (0.3, 0.0, 0.7)
    # The learned rerank (trained without the lane) reorders the fused head while the lane covers
    # less than this share of the chunks: measured, it helps a partial lane (Help en at 26 %:
    # +0.011) and costs a complete one (XQuAD: -0.002 to -0.095), docs/deep-lane.md.
    deep_rerank_below: float = 1.0


class Searcher:
    """Runs queries against one Store; keeps the vector matrix warm between queries."""

    def __init__(
        self,
        store: Storage,
        embedder: Embedder | None,
        settings: SearchSettings | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings or SearchSettings(deep=deep_setting())
        self.vectors = VectorIndex(store)
        self._common_terms = CommonTerms(store)
        self.reranker = Reranker(store)
        self._deep: DeepLane | None = None
        self.calibration = Calibration()
        self.vector_problem: str | None = None
        if not store.vectors_available:
            self.vector_problem = store.vector_error or "vectors are unavailable"
        elif embedder is None:
            self.vector_problem = "no embedding model"
        self._warned = False

    def _degrade(self, why: str) -> None:
        self.vector_problem = why
        if not self._warned:
            log.warning("vector search unavailable, using BM25 only: %s", why)
            self._warned = True

    def _bm25(
        self,
        query: str,
        limit: int,
        allowed: set[int] | None = None,
        term_share: float | None = None,
    ) -> list[tuple[int, float, int]]:
        """(chunk id, BM25 score, file id), best first; only notes in `allowed` when given."""
        share = self.settings.max_term_share if term_share is None else term_share
        terms = search_terms(query, drop=self._common_terms.test(share))
        if not terms or limit <= 0:
            return []
        return self.store.keyword_search(
            KeywordQuery(
                terms, limit=limit, column_weights=self.settings.column_weights, allowed=allowed
            )
        )

    def _query_vector(self, query: str) -> bytes | None:
        if self.vector_problem or self.embedder is None or not query.strip():
            if self.vector_problem:
                self._degrade(self.vector_problem)
            return None
        try:
            return query_vector(self.embedder, query)
        except ModelLoadError as exc:
            self._degrade(str(exc))
            return None

    def _knn(self, query: str, limit: int, allowed: set[int] | None = None) -> list[VectorMatch]:
        vector = self._query_vector(query)
        if vector is None:
            return []
        return self.vectors.search(vector, limit, allowed=allowed)

    def search(
        self, request: SearchRequest, timed: tuple[str, TimeRange | None] | None = None
    ) -> tuple[list[Hit], float]:
        """The best `request.limit` notes for a query, each with its best section and its
        calibrated score, whatever that score; never raises on the query text (the request has
        checked its options). `SearchResult.of` applies the request's threshold and budget.
        `timed` is the request's `time_filter()` when the caller has it already."""
        global _searched_at
        _searched_at = time.monotonic()
        text, window = timed if timed is not None else request.time_filter()
        if window is not None and window.empty:
            return [], 0.0
        since = window.since.isoformat() if window is not None and window.since else None
        until = window.until.isoformat() if window is not None and window.until else None
        # One read transaction for every statement below: a note rewritten by a concurrent
        # indexer between the BM25 query and the chunk lookup would otherwise vanish from the hits.
        # An empty sequence is no filter, like None (an adapter's unset repeatable option).
        tag_keys = [k for k in (tag_key(t) for t in request.tags or ()) if k] or None
        if request.files and not any(file_keys(f) for f in request.files):
            return [], 0.0  # only the vault root or empty names: no file
        with self.store.snapshot():
            folders = self._spelled(request.folders, folder_keys, "folders")
            file_names = self._spelled(request.files, file_keys, "files")
            allowed = None
            dated = since is not None or until is not None
            if folders is not None or tag_keys or file_names or dated:
                allowed = self.store.files_matching(
                    FileFilter(
                        folders=folders,
                        tags=tag_keys,
                        files=file_names or None,
                        since=since,
                        until=until,
                    )
                )
                if not allowed:
                    return [], 0.0
            if browses(request, (text, window)):
                return self._browse(allowed, request.limit), 1.0
            hits, answered = self._search(
                text,
                limit=request.limit,
                mode=request.mode,
                explain=request.explain,
                allowed=allowed,
                term_share=request.max_term_share,
                deep=request.multilingual and self.settings.deep,
            )
        if request.sort == "date":  # newest first; equal dates keep their relevance order
            hits.sort(key=lambda hit: hit.date or "", reverse=True)
        return hits, answered

    def _browse(self, allowed: set[int] | None, limit: int) -> list[Hit]:
        """A period's notes newest first, for a query that was only a time phrase (no ranking:
        score 0, no list ranks, no threshold: `browses`), each shown by its first section."""
        chunk_ids = [
            self.store.first_chunk(fid) for fid in self.store.files_by_date(allowed, limit)
        ]
        rows = self.store.chunk_rows([c for c in chunk_ids if c is not None])
        return [hit_from_row(rows[c], 0.0) for c in chunk_ids if c is not None and c in rows]

    def _spelled(
        self,
        entries: Sequence[str] | None,
        keys: Callable[[str], tuple[str, ...]],
        kind: Literal["folders", "files"],
    ) -> list[str] | None:
        """The keys of folder or file filter entries (None: no filter). An entry spelled with a
        '\\' names the folder or file as written when the index has one (a '\\' is part of a
        name on Linux and macOS), else reads the '\\' as '/' (a Windows spelling)."""
        if not entries:
            return None
        out: list[str] = []
        for entry in entries:
            spellings = keys(entry)
            if kind == "folders" and len(spellings) == 2:
                literal, windows = [spellings[0]], [spellings[1]]
            else:  # files: each spelling with and without '.md'
                half = [k for k in spellings if "\\" in k]
                literal, windows = half, [k for k in spellings if k not in half]
            if literal and windows:
                if kind == "folders":
                    found = self.store.files_matching(FileFilter(folders=literal))
                else:
                    found = self.store.files_matching(FileFilter(files=literal))
                spellings = tuple(literal if found else windows)
            out += spellings
        return sorted(set(out))

    def _search(
        self,
        query: str,
        *,
        limit: int,
        mode: Mode,
        explain: bool,
        allowed: set[int] | None,
        term_share: float | None,
        deep: bool = False,
    ) -> tuple[list[Hit], float]:
        s = self.settings
        # The ranking is decided by the head of each list: `candidates` notes from the first
        # `chunk_depth` chunks. A larger `limit` reads the lists further, but what lies past the
        # head only fills the places after it, so the first hits never depend on `limit`.
        head_depth = max(s.chunk_depth, s.candidates * 3)
        notes = max(s.candidates, limit)
        depth = max(head_depth, notes * 3)
        keyword_list = mode in ("hybrid", "bm25")
        kw_rows = self._bm25(query, depth, allowed, term_share) if keyword_list else []
        if mode == "vector" and self.vector_problem:
            # Degrade to BM25 rather than answer nothing.
            kw_rows = self._bm25(query, depth, allowed, term_share)
        unknown = not kw_rows and mode != "bm25" and s.known_words and self._nothing_known(query)
        lane = self._lane() if deep and mode == "hybrid" and s.fusion == "convex" else None
        # The query words' chunk counts: the rerank's coverage features, the calibration's IDF
        # mass and the lane's language call (one fts5vocab statement for all of them).
        query_words = content_words(query)
        counts = self.store.query_term_counts(query_words)
        cross = lane is not None and lane.across_languages(
            query, unknown=unknown, some_unknown=any(c == 0 for _, c in counts)
        )
        if unknown and not cross:
            return [], 0.0
        alpha = s.alpha
        deep_rows = lane.search(query, depth, allowed) if lane is not None else []
        coverage = lane.coverage() if lane is not None and deep_rows else 0.0
        weights = _lane_weights(s, cross, coverage) if lane and deep_rows else None
        apply_rerank = s.rerank
        if weights is not None:
            apply_rerank = apply_rerank and coverage < s.deep_rerank_below
        if weights is not None and weights[1] == 0.0:
            # The bundled model has no share (across languages, lane complete): e5 takes the
            # vector list's place, its ranks and cosines are the hits'.
            vec_rows, deep_rows = deep_rows, []
            alpha, weights = weights[0] / (weights[0] + weights[2]), None
            # The rerank and the calibration were trained on BM25 and the bundled model's lists,
            # so they read that list still (a few ms): e5's cosines are on another scale.
            bundled_rows = self._knn(query, depth, allowed)
        else:
            vec_rows = self._knn(query, depth, allowed) if mode in ("hybrid", "vector") else []
            bundled_rows = vec_rows
        file_of = {cid: fid for cid, _, fid in kw_rows}
        for m in (*vec_rows, *deep_rows, *bundled_rows):
            if m.file_id is not None:
                file_of[m.chunk_id] = m.file_id
        missing = [m.chunk_id for m in (*vec_rows, *deep_rows, *bundled_rows) if m.file_id is None]
        if missing:  # vec0 fallback: look the notes up
            file_of.update(self.store.file_ids(missing))
        keyword = [(cid, score) for cid, score, _ in kw_rows]
        semantic = [(m.chunk_id, m.cosine) for m in vec_rows]
        kw = group(keyword, file_of, notes)
        vec = group(semantic, file_of, notes)
        # The lists' heads the rerank and the calibration read: BM25's and the bundled model's.
        bundled = (
            semantic if bundled_rows is vec_rows else [(m.chunk_id, m.cosine) for m in bundled_rows]
        )
        chunk_heads = (keyword[:head_depth], bundled[:head_depth])
        list_heads = (
            group(chunk_heads[0], file_of, s.candidates),
            group(chunk_heads[1], file_of, s.candidates),
        )
        fused_vector_head = (
            list_heads[1]
            if bundled is semantic
            else group(semantic[:head_depth], file_of, s.candidates)
        )
        heads = (len(list_heads[0].scores), len(fused_vector_head.scores))
        exact_wanted = mode == "hybrid" and s.exact_names
        exact = self._exact_names(query) if exact_wanted else []
        if allowed is not None:
            exact = [fid for fid in exact if fid in allowed]
        if weights is not None:
            deep_semantic = [(m.chunk_id, m.cosine) for m in deep_rows]
            deep_list = group(deep_semantic, file_of, notes)
            deep_head = len(group(deep_semantic[:head_depth], file_of, s.candidates).scores)
            fused = _fuse_deep(kw, vec, deep_list, (*heads, deep_head), weights)
            alpha = weights[0]
        else:
            fused = self._fuse(kw, vec, heads, alpha)
        # Read once for the rerank's term weights and the calibration's facts (each read asks
        # the storage for its data version: a round trip on PostgreSQL).
        total = self.reranker.chunk_total()
        if mode == "hybrid" and s.fusion == "convex":
            # A full head may end inside a run of equal scores that goes on past it: leave that
            # run out of the matched-chunk counts (which of its chunks made it is up to ids).
            cuts = tuple(
                rows[head_depth - 1][1] if len(rows) >= head_depth else None
                for rows in (keyword, bundled)
            )
            # Scored whether or not it reorders (rerank off, or a complete deep lane): the
            # calibration reads the model's output of every hybrid list.
            fused = self.reranker.rerank(
                query,
                fused,
                s.rerank_depth,
                list_heads,
                chunk_heads,
                file_of,
                set(exact),
                cuts=(cuts[0], cuts[1]),
                head_size=s.candidates,
                apply=apply_rerank,
                counts=counts,
                chunk_total=total,
            )
        promoted = _promote(fused, exact, s.fusion)
        ranked = promoted[:limit]
        share = {"bm25": 1.0, "vector": 0.0}.get(mode, alpha)
        sections = best_chunks(keyword, semantic, file_of, share, head_depth, SECTION_CANDIDATES)
        options = [sections.get(fid, []) for fid, *_ in ranked]
        rows = self.store.chunk_rows([cid for found in options for _, cid in found])
        words = [w for w in content_words(query) if len(w) >= 3]
        texts = {cid: (row.section, row.text) for cid, row in rows.items()}
        match = SectionMatches(words, texts)
        chunk_ids = [
            pick_section(found, match)
            if len(found) > 1
            else (found[0][1] if found else self.store.first_chunk(fid))
            for (fid, *_), found in zip(ranked, options)
        ]
        if words:
            # A section that holds none of the query's words was found through the title field
            # alone (boilerplate, a footer): the note's opening says more, if it names the query.
            for i, ((fid, *_), cid) in enumerate(zip(ranked, chunk_ids)):
                if cid is not None and not match(cid):
                    first = self.store.first_chunk(fid)
                    if first is not None and first != cid:
                        row = self.store.chunk_rows([first]).get(first)
                        if row is not None and own_match(words, row.section, row.text):
                            rows[first], chunk_ids[i] = row, first
        missing = [c for c in chunk_ids if c is not None and c not in rows]
        if missing:  # notes found by exact name only: their first chunk
            rows.update(self.store.chunk_rows(missing))
        kw_rank, vec_rank = kw.rank, vec.rank
        kw_best = {fid: score for fid, score in kw.scores}
        vec_best = {fid: score for fid, score in vec.scores}
        found = [
            (fid, explanation, row)
            for (fid, _, explanation), chunk_id in zip(ranked, chunk_ids)
            if chunk_id is not None and (row := rows.get(chunk_id)) is not None
        ]
        facts = query_facts([c for _, c in counts], total)
        # The lists' heads only, as for the ranking: a deeper list (a larger `limit`) reaches
        # notes the head did not hold, and a note's features must not change with it.
        # A full head's last run of equal scores is left out, as the rerank leaves it out: which of
        # several equal scores made the head is up to chunk ids, and must not change a score.
        kw_untied, vec_untied = (untied_head(h.scores, s.candidates) for h in list_heads)
        kw_tied, vec_tied = tied_ranks(kw_untied), tied_ranks(vec_untied)
        kw_top, vec_top = dict(kw_untied), dict(vec_untied)
        # Scored to a fixed depth whatever `limit`: the query-level model reads the first
        # ANSWER_DEPTH notes, and a hit's score is capped by the ones above it only.
        scored = promoted[: max(limit, ANSWER_DEPTH)]
        # Notes tied on the fused score share a rank: which of them comes first is up to chunk ids
        # (the order files were written in), and a score must not depend on that.
        ranks: list[int] = []
        for i, (_, fused_score, _) in enumerate(scored):
            ranks.append(ranks[-1] if i and fused_score == scored[i - 1][1] else i + 1)
        tagged = self._tagged(query, [fid for fid, *_ in scored]) if exact_wanted else set()
        # Only the hybrid model weighs rarity (the bm25 and vector ones are older fits without it).
        rarity = self._rarity(query, query_words, counts, total) if mode == "hybrid" else {}
        features = [
            calibration_features(
                facts,
                rank,
                (kw_tied.get(fid), kw_top.get(fid)),
                (vec_tied.get(fid), vec_top.get(fid)),
                explanation.rerank,
                explanation.exact_name or fid in tagged,
                rarity.get(fid, 0.0),
            )
            for rank, (fid, _, explanation) in zip(ranks, scored)
        ]
        calibrated = self.calibration.model
        raw = [calibrated.probability(mode, row) for row in features]
        capped = non_increasing(raw)
        kw_scores, cosines = [x for _, x in kw_untied], [x for _, x in vec_untied]
        lists = head_features(kw_scores, cosines, facts[0], facts[2])
        answered = calibrated.answered(mode, features, raw, lists)
        position = {fid: i for i, (fid, *_) in enumerate(scored)}
        if self.calibration.capture:
            self.calibration.last = (mode, [r.path for _, _, r in found], features[: len(ranked)])
            self.calibration.heads = (kw_scores, cosines, facts[0], facts[2], total)
        hits = []
        for fid, explanation, row in found:
            p, score = raw[position[fid]], capped[position[fid]]
            hits.append(
                hit_from_row(
                    row,
                    score,
                    bm25_rank=kw_rank.get(fid),
                    vec_rank=vec_rank.get(fid),
                    bm25_score=kw_best.get(fid),
                    cosine=vec_best.get(fid),
                    explanation=replace(explanation, probability=p) if explain else None,
                    kind=document_kind(row.path),
                )
            )
        return hits, answered

    def _exact_names(self, query: str) -> list[int]:
        key = name_key(query)
        return self.store.files_named(key)[:EXACT_NAME_LIMIT] if key else []

    def _tagged(self, query: str, fids: list[int]) -> set[int]:
        """The notes among the first `ANSWER_DEPTH` of `fids` that carry the query as a tag (or
        a tag nested under it, as `--tag` matches): a tag is the vault's own name for the notes
        that carry it, so the calibration reads it as an exact name (the ranking does not
        promote it). Only a query without spaces can be a tag."""
        text = query.strip()
        key = tag_key(text)
        if not key or key.strip("#/") != key or any(ch.isspace() for ch in text):
            return set()
        tags = self.store.note_tags(fids[:ANSWER_DEPTH])
        nested = key + "/"
        return {
            fid for fid, own in tags.items() if any(t == key or t.startswith(nested) for t in own)
        }

    def _rarity(
        self,
        query: str,
        words: list[str],
        counts: Sequence[tuple[tuple[str, ...], int]],
        total: int,
    ) -> dict[int, float]:
        """file id -> its rarity (`core.calibration.rarity`): the query's identifiers its note
        holds, each looked up whole (one BM25 lookup of it as a phrase, at most `RARE_CHUNKS`
        + 1 chunks), the `_RARE_WORDS` weightiest; a query without identifiers costs nothing."""
        found = identifiers(query)
        if not found:
            return {}
        share_of = dict(zip(words, word_shares([c for _, c in counts], total)))
        chunks_of = {w: c for w, (_, c) in zip(words, counts)}
        wanted: list[tuple[float, tuple[str, ...]]] = []
        for terms in found:
            parts = [t for t in terms if t in share_of]
            # An unknown part: no chunk holds the whole; one word in too many chunks: no pointer.
            if not parts or any(chunks_of[t] == 0 for t in parts):
                continue
            if len(terms) == 1 and chunks_of[terms[0]] > RARE_CHUNKS:
                continue
            wanted.append((sum(share_of[t] for t in parts), terms))
        out: dict[int, float] = {}
        for share, terms in sorted(wanted, reverse=True)[:_RARE_WORDS]:
            rows = self.store.keyword_search(
                KeywordQuery(
                    [" ".join(terms)],
                    limit=RARE_CHUNKS + 1,
                    column_weights=self.settings.column_weights,
                )
            )
            holders = {fid for _, _, fid in rows}
            value = rarity(share, len(holders), len(rows))
            for fid in holders:
                out[fid] = out.get(fid, 0.0) + value
        return out

    def _nothing_known(self, query: str) -> bool:
        embedder = self.embedder
        knows = (lambda w: knows_word(embedder, w)) if embedder is not None else (lambda w: False)
        try:
            return nothing_known(query, self.store, knows)
        except ModelLoadError:
            return nothing_known(query, self.store, lambda w: False)

    def warm_deep_lane(self) -> None:
        """Load the deep lane's model and vectors now, when the index has a lane (a daemon's
        first search then costs what every later one does)."""
        if self.settings.deep:
            lane = self._lane()
            if lane is not None:
                lane.search("warm up", 1, None)

    def _lane(self) -> DeepLane | None:
        """The deep lane when it has vectors to search (its module is imported only then: a
        vault without a lane never loads it)."""
        fingerprint, _ = self.store.multilingual_state()
        if not fingerprint:
            return None
        if self._deep is None:
            from .deep_lane import DeepLane  # deferred: only a vault with a lane loads it

            self._deep = DeepLane(self.store)
        return self._deep if self._deep.ready() else None

    def _fuse(
        self, kw: NoteList, vec: NoteList, heads: tuple[int, int], alpha: float
    ) -> list[tuple[int, float, Explanation]]:
        """(file id, score, explanation), best first."""
        s = self.settings
        out: list[tuple[int, float, Explanation]] = []
        if s.fusion == "rrf":
            weights = (s.bm25_weight, s.vector_weight)
            for item in reciprocal_rank_fusion(
                [[f for f, _ in kw.scores], [f for f, _ in vec.scores]],
                weights=weights,
                k=s.rrf_k,
                heads=heads,
            ):
                b, v = (
                    w / (s.rrf_k + r) if r and r <= h else 0.0
                    for w, r, h in zip(weights, item.ranks, heads)
                )
                why = Explanation("rrf", b, v, None, None, False, fused=item.score)
                out.append((item.key, item.score, why))
        else:
            fused = convex_fusion([kw.scores, vec.scores], weights=(alpha, 1 - alpha), heads=heads)
            for scored in fused:
                b, v = scored.normalised
                explanation = Explanation(
                    "convex",
                    alpha * b,
                    (1 - alpha) * v,
                    b if scored.ranks[0] else None,
                    v if scored.ranks[1] else None,
                    False,
                    fused=scored.score,
                )
                out.append((scored.key, scored.score, explanation))
        return out


_searched_at = float("-inf")


def seconds_since_search() -> float:
    """Seconds since this process last started a search (the deep-lane filler waits on it)."""
    return time.monotonic() - _searched_at


def deep_setting() -> bool:
    """The deep lane is on unless $NOTESEEK_DEEP says off (every surface opens its index here)."""
    return os.environ.get(ENV_DEEP, "").strip().lower() not in FALSE_VALUES


def _lane_weights(s: SearchSettings, cross: bool, coverage: float) -> tuple[float, float, float]:
    """(BM25, bundled model, e5) shares. A partial lane's weights lie between today's two-list
    fusion (nothing covered) and the lane's (everything covered), by the share covered: a note
    whose chunks have no e5 vector yet scores 0 in the e5 list, and that list then counts less."""
    full = s.cross_weights if cross else s.deep_weights
    c = min(max(coverage, 0.0), 1.0)
    none = (s.alpha, 1.0 - s.alpha, 0.0)
    return (
        c * full[0] + (1 - c) * none[0],
        c * full[1] + (1 - c) * none[1],
        c * full[2] + (1 - c) * none[2],
    )


def _fuse_deep(
    kw: NoteList,
    vec: NoteList,
    deep: NoteList,
    heads: tuple[int, int, int],
    weights: tuple[float, float, float],
) -> list[tuple[int, float, Explanation]]:
    """Convex fusion of three lists. The explanation's vector term is both semantic lists' (the
    bundled model's and e5's), its normalised vector score the bundled model's."""
    out: list[tuple[int, float, Explanation]] = []
    for scored in convex_fusion([kw.scores, vec.scores, deep.scores], weights=weights, heads=heads):
        b, v, d = scored.normalised
        explanation = Explanation(
            "convex+deep",
            weights[0] * b,
            weights[1] * v + weights[2] * d,
            b if scored.ranks[0] else None,
            v if scored.ranks[1] else None,
            False,
        )
        out.append((scored.key, scored.score, explanation))
    return out


def browses(request: SearchRequest, timed: tuple[str, TimeRange | None]) -> bool:
    """Whether the request lists a period's notes instead of ranking them (a query that is only
    a time phrase, or empty with a range or a date sort): those hits have no score to cut at."""
    text, window = timed
    return not text.strip() and (window is not None or request.sort == "date")


def _promote(
    out: list[tuple[int, float, Explanation]], exact: list[int], fusion: str
) -> list[tuple[int, float, Explanation]]:
    """An exact title/alias/file-name match outranks everything, in fused order among itself."""
    if not exact:
        return out
    wanted = set(exact)
    first = [(f, sc, replace(e, exact_name=True)) for f, sc, e in out if f in wanted]
    missing = [f for f in exact if f not in {f for f, _, _ in first}]
    first += [(f, 0.0, Explanation(fusion, 0.0, 0.0, None, None, True)) for f in missing]
    return first + [item for item in out if item[0] not in wanted]
