"""The calibrated relevance of a hit: P(relevant | query, hit) from features no query normalises. Pure.

The fused and reranked scores only order one query's list (min-max normalisation makes the best
hit 1.0 whatever it is), so a score that means the same on any index needs features whose scale
does not depend on the other hits: the best chunk's cosine (a property of the model), BM25 divided
by the query's IDF mass (how much of the query's information the note matches, in the units of a
single fully matched word), the share of the query's IDF mass the index knows at all, ranks, the
rerank's raw output, exact names and the query's length. A logistic model over them (per search
mode: each mode sees other lists) gives a probability; a monotone table (isotonic on held-out
scores) may correct it. `non_increasing` then caps each hit at the one above it, so the list's
order and its scores never disagree and a hit's score never depends on hits below it (nor on
`limit`). Trained by bench/relevance_train.py on the development sets with off-topic queries
(queries of one corpus asked of another's index); docs/ranking.md, "Calibrated relevance".

Plain tuples and lists: the per-prompt hook imports this module.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ANSWER_DEPTH",
    "CALIBRATION_FEATURES",
    "HEAD_FEATURES",
    "RARE_CHUNKS",
    "Calibrator",
    "answer_features",
    "calibration_features",
    "head_features",
    "non_increasing",
    "query_facts",
    "rarity",
    "word_shares",
]

CALIBRATION_FEATURES: tuple[str, ...] = (
    "cosine",
    "vec_present",
    "vec_rrank",
    "bm25_present",
    "bm25_rrank",
    "bm25_per_idf",
    "known_share",
    "exact_name",
    "rerank",
    "rerank_present",
    "rank_rrank",
    "query_terms",
    "rare_match",
)


# The first hits the query-level model reads (`answer_features`): a fixed depth, so P(answered)
# does not depend on `limit`.
ANSWER_DEPTH = 10
_F = {name: i for i, name in enumerate(CALIBRATION_FEATURES)}


def head_features(
    bm25: Sequence[float], cosines: Sequence[float], mass: float, words: int
) -> list[float]:
    """What the two lists say about the query as a whole, in `HEAD_FEATURES` order: the best
    note's cosine in the vector list (again on its own for a one-word query, with a one-word
    flag: a single word's static-model cosine is low whatever the note, so the model weighs it
    apart) and the BM25 list's best score relative to the query's IDF `mass` (as
    `calibration_features` weighs a hit's), whichever notes the fused list put first. `bm25` and
    `cosines` are the lists' note scores, best first; `words` the query's content words.

    bench/relevance_gate.py measured a wider set leave-one-corpus-out: the cosines further down
    the vector list (ranks 10 and 30, the head's mean), the BM25 head's length and the query's
    IDF (raw, or in units of the index's largest) separated off-topic queries as well or better
    on the training vaults, but grow with a vault's size or hid one-word searches with a filter
    on the 42-note sample vault; one cosine for every query length hid those too."""
    cosine = cosines[0] if cosines else 0.0
    one_word = float(words == 1)
    return [
        cosine,
        cosine * one_word,
        one_word,
        min(bm25[0] / mass, 3.0) if bm25 and mass > 0 else 0.0,
    ]


HEAD_FEATURES: tuple[str, ...] = (
    "head_cosine",
    "head_cosine_one_word",
    "one_word",
    "head_bm25_per_idf",
)


def answer_features(
    rows: Sequence[Sequence[float]],
    probabilities: Sequence[float],
    head: Sequence[float] = (),
) -> list[float]:
    """The query-level row of a list: from its first `ANSWER_DEPTH` hits' feature rows and their
    per-hit probabilities, what says whether the vault answers the query at all (the first hit's
    cosine, BM25 coverage, known-word share, exact name, rerank and query length; its probability
    as a logit; how the first three hits and the whole head agree), the first three rows
    themselves (zeros where the list is shorter) and the lists' `head_features` (zeros when not
    given). Empty list: all zeros."""
    rows = [list(r) for r in rows[:ANSWER_DEPTH]]
    if not rows:
        return [0.0] * ANSWER_WIDTH
    heads = list(head)[: len(HEAD_FEATURES)]
    heads += [0.0] * (len(HEAD_FEATURES) - len(heads))
    p = non_increasing(probabilities[:ANSWER_DEPTH])
    first, top3 = rows[0], rows[:3]
    width = len(CALIBRATION_FEATURES)
    padded = [x for r in top3 for x in r] + [0.0] * (width * (3 - len(top3)))
    depth = len(rows)
    bm25_share = sum(r[_F["bm25_present"]] for r in rows) / depth
    vec_share = sum(r[_F["vec_present"]] for r in rows) / depth
    p0 = min(max(p[0], 1e-6), 1 - 1e-6)
    return [
        first[_F["cosine"]],
        first[_F["bm25_per_idf"]],
        first[_F["known_share"]],
        first[_F["exact_name"]],
        first[_F["rerank"]],
        first[_F["rerank_present"]],
        first[_F["query_terms"]],
        math.log(p0 / (1 - p0)),
        sum(r[_F["cosine"]] for r in top3) / len(top3),
        max(r[_F["bm25_per_idf"]] for r in rows),
        bm25_share,
        vec_share * bm25_share,
        *padded,
        math.log(max(p[min(2, len(p) - 1)], 1e-6)),
        max(r[_F["known_share"]] for r in rows),
        *heads,
    ]


ANSWER_WIDTH = 12 + 3 * len(CALIBRATION_FEATURES) + 2 + len(HEAD_FEATURES)


def query_facts(counts: Sequence[int], total_chunks: int) -> tuple[float, float, int]:
    """(IDF mass of the query, share of it in words the index holds, words): from each content
    word's chunk count. An unknown word weighs what a word in one chunk would."""
    n = max(total_chunks, 1)
    weights = [_idf(df, n) for df in counts]
    mass = sum(weights)
    known = sum(w for w, df in zip(weights, counts) if df > 0)
    return mass, (known / mass if mass > 0 else 0.0), len(counts)


# Which notes hold an identifier is read from the chunks that hold it, at most this many: one in
# more chunks is no pointer (its rarity is 0), and the lookup stays a few rows.
RARE_CHUNKS = 20


def word_shares(counts: Sequence[int], total_chunks: int) -> list[float]:
    """Each content word's share of the query's IDF mass (as `query_facts` weighs them)."""
    n = max(total_chunks, 1)
    weights = [_idf(df, n) for df in counts]
    mass = sum(weights)
    return [w / mass for w in weights] if mass > 0 else [0.0] * len(counts)


def rarity(share: float, notes: int, chunks: int) -> float:
    """An identifier's rarity for each note that holds it: its words' share of the query's IDF
    mass (`word_shares`, summed) divided by the notes that hold it; 0 when no note does or when
    more than `RARE_CHUNKS` chunks do. A hit's rarity is the sum over the identifiers its note
    holds: 1.0 for a query of one error code written in one note.

    It counts notes, not a share of the index, because an identifier in one note names one
    place in a vault of any size, which IDF cannot say (the same word in one chunk weighs 4.9 in
    a vault of 200 chunks and 10.4 in one of 50,000). Only identifiers count (`core.query.
    identifiers`), each as a whole: "ok" or "hallo" in one note of a vault is chance, not a
    pointer, and neither is a note that holds `session` of `idle_in_transaction_session_timeout`."""
    if notes <= 0 or chunks > RARE_CHUNKS:
        return 0.0
    return share / notes


def _idf(df: int, n: int) -> float:
    # A count above the total (a stale total on a busy PostgreSQL index) weighs as a word in
    # every chunk, not as a math domain error.
    df = min(max(df, 1), n)
    return max(math.log((n - df + 0.5) / (df + 0.5)), 0.0) + 0.1


def calibration_features(
    facts: tuple[float, float, int],
    rank: int,
    bm25: tuple[int | None, float | None],
    vector: tuple[int | None, float | None],
    rerank: float | None,
    exact: bool,
    rare: float = 0.0,
) -> list[float]:
    """One hit's row in `CALIBRATION_FEATURES` order: `facts` from `query_facts`, the hit's
    1-based rank in the list shown, (rank, raw score) in the BM25 and vector lists (None: absent),
    the rerank's raw output (None: not reranked), exact title/alias/file-name (or tag) match,
    and the hit's rarity: the `rarity` of each of the query's identifiers its note holds, summed."""
    mass, known, words = facts
    bm25_rank, bm25_score = bm25
    vec_rank, cosine = vector
    return [
        cosine if cosine is not None else 0.0,
        float(vec_rank is not None),
        1.0 / vec_rank if vec_rank else 0.0,
        float(bm25_rank is not None),
        1.0 / bm25_rank if bm25_rank else 0.0,
        # Capped: a long note repeating a word scores without bound, and the logistic model
        # must not extrapolate from it.
        min((bm25_score or 0.0) / mass, 3.0) if mass > 0 else 0.0,
        known,
        float(exact),
        rerank if rerank is not None else 0.0,
        float(rerank is not None),
        1.0 / rank,
        math.log1p(words),
        min(max(rare, 0.0), 1.0),
    ]


class Calibrator:
    """Logistic model per search mode, then an optional monotone table: a row to a probability."""

    __slots__ = ("_answers", "_models", "_tables")

    def __init__(
        self,
        models: Mapping[str, tuple[Sequence[float], float]],
        tables: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
        answers: Mapping[str, tuple[Sequence[float], float]] | None = None,
    ) -> None:
        for mode, (weights, _) in (answers or {}).items():
            if len(weights) != ANSWER_WIDTH:
                raise ValueError(f"{mode}: {len(weights)} answer weights for {ANSWER_WIDTH}")
        self._answers = {
            m: (tuple(map(float, w)), float(b)) for m, (w, b) in (answers or {}).items()
        }
        for mode, (weights, _) in models.items():
            if len(weights) != len(CALIBRATION_FEATURES):
                raise ValueError(
                    f"{mode}: {len(weights)} weights for {len(CALIBRATION_FEATURES)} features"
                )
        self._models = {m: (tuple(map(float, w)), float(b)) for m, (w, b) in models.items()}
        self._tables = {m: (tuple(x), tuple(y)) for m, (x, y) in (tables or {}).items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Calibrator:
        """The calibrator of a decoded JSON document (see `to_json`)."""
        if tuple(data["features"]) != CALIBRATION_FEATURES:
            raise ValueError("the calibration model was trained on other features")
        models = {m: (d["weights"], d["bias"]) for m, d in data["modes"].items()}
        tables = {
            m: (d["table"]["x"], d["table"]["y"])
            for m, d in data["modes"].items()
            if d.get("table")
        }
        answers = {
            m: (d["answer"]["weights"], d["answer"]["bias"])
            for m, d in data["modes"].items()
            if d.get("answer")
        }
        return cls(models, tables, answers)

    def to_json(self) -> dict[str, Any]:
        """The JSON document of this calibrator."""
        modes: dict[str, Any] = {}
        for mode, (weights, bias) in self._models.items():
            modes[mode] = {"weights": list(weights), "bias": bias}
            if mode in self._tables:
                x, y = self._tables[mode]
                modes[mode]["table"] = {"x": list(x), "y": list(y)}
            if mode in self._answers:
                w, b = self._answers[mode]
                modes[mode]["answer"] = {"weights": list(w), "bias": b}
        return {"kind": "logistic", "features": list(CALIBRATION_FEATURES), "modes": modes}

    def logit(self, mode: str, row: Sequence[float]) -> float:
        """The logistic model's raw output for a row (the hybrid model stands in for a mode
        without its own)."""
        weights, bias = self._models.get(mode) or self._models["hybrid"]
        return bias + sum(w * x for w, x in zip(weights, row))

    def probability(self, mode: str, row: Sequence[float]) -> float:
        """P(relevant) for a row, in [0, 1]."""
        z = self.logit(mode, row)
        p = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
        table = self._tables.get(mode)
        return _interpolate(table, p) if table else p

    def answered(
        self,
        mode: str,
        rows: Sequence[Sequence[float]],
        probabilities: Sequence[float],
        head: Sequence[float] = (),
    ) -> float:
        """P(the first `ANSWER_DEPTH` hits hold a relevant note | the list and the lists'
        `head_features`), in [0, 1]; 1.0 for a mode the model has no query-level part for
        (nothing is held back then), 0.0 for an empty list."""
        if not rows:
            return 0.0
        model = self._answers.get(mode)
        if model is None:
            return 1.0
        weights, bias = model
        z = bias + sum(w * x for w, x in zip(weights, answer_features(rows, probabilities, head)))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def _interpolate(table: tuple[Sequence[float], Sequence[float]], p: float) -> float:
    """Piecewise-linear lookup of a non-decreasing table (x ascending), clamped at its ends."""
    xs, ys = table
    if not xs:
        return p
    i = bisect_right(xs, p)
    if i == 0:
        return float(ys[0])
    if i >= len(xs):
        return float(ys[-1])
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return float(y0 + (y1 - y0) * (p - x0) / (x1 - x0)) if x1 > x0 else float(y1)


def non_increasing(values: Sequence[float]) -> list[float]:
    """Each value capped at the one before it: the scores of a list shown best first."""
    out: list[float] = []
    cap = 1.0
    for v in values:
        cap = min(cap, max(0.0, min(1.0, v)))
        out.append(cap)
    return out
