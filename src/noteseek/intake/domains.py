"""What the vault is about, read from the index's own vectors: domains, neighbours, calibration.

Nothing in the vault is re-embedded. A note's vector is the mean of its chunk vectors (the matrix
search already keeps in memory); a domain is a folder, and its notes are those below it.

Domain choice blends two views that fail differently (docs/intake.md has the measurements): a
vote of the item's nearest notes, which follows the fine structure of large, varied folders, and
the cosine to each domain's centroid, which keeps small folders from being outvoted by big ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..engine.index import Index
from .errors import IntakeError
from .features import shingles
from .scoring import Duplicate

__all__ = ["DomainGuess", "VaultModel", "domain_of"]

Vector = npt.NDArray[np.float32]

# Softmax temperatures of the neighbour vote and of the centroid cosines, and the blend.
VOTE_TEMPERATURE = 0.05
CENTROID_TEMPERATURE = 0.02
VOTE_SHARE = 0.5
# Calibration: notes sampled per domain, and the fewest for a domain to get its own curve.
CALIBRATION_PER_DOMAIN = 200
MIN_DOMAIN_CALIBRATION = 20
# Near-duplicates: candidates by cosine, confirmed by shared word 5-grams.
DUPLICATE_CANDIDATE_COSINE = 0.8
DUPLICATE_CONTAINMENT = 0.7
# Sibling notes (one API's many pages) can all sit at nearly the same cosine: look at several.
DUPLICATE_CANDIDATES = 10
MIN_SHINGLES = 10


@dataclass(frozen=True)
class DomainGuess:
    """Where an item belongs and how close the vault comes to it."""

    domain: str | None
    runner_up: str | None
    margin: float  # blended probability of the domain minus that of the runner-up
    similarity: float  # mean cosine of the item's nearest notes
    percentile: float  # share of the domain's own notes whose nearest notes are no closer
    neighbours: tuple[tuple[str, float], ...]  # nearest notes (path, cosine), best first
    calibrated_on: str | None = None  # the domain whose notes set the percentile; None: all


def domain_of(path: str, domains: Sequence[str]) -> str | None:
    """The deepest configured domain folder that holds `path`, or None."""
    best: str | None = None
    for domain in domains:
        if path.startswith(domain + "/") and (best is None or len(domain) > len(best)):
            best = domain
    return best


def _under(path: str, folders: Iterable[str]) -> bool:
    return any(f and (path == f or path.startswith(f.rstrip("/") + "/")) for f in folders)


class VaultModel:
    """Note vectors, domain centroids and the relevance calibration of one index."""

    def __init__(
        self,
        paths: Sequence[str],
        vectors: Vector,
        chunk_rows: Vector,
        chunk_notes: npt.NDArray[np.int64],
        *,
        domains: Sequence[str],
        neighbours: int,
        index: Index | None = None,
    ) -> None:
        self.paths = list(paths)
        self.vectors = vectors
        self.chunk_rows = chunk_rows
        self.chunk_notes = chunk_notes  # note position of each chunk row
        self.k = neighbours
        self._index = index
        labels = [domain_of(p, domains) for p in self.paths]
        self.domains = [d for d in domains if d in set(labels)]
        self.empty_domains = [d for d in domains if d not in set(labels)]
        position = {d: i for i, d in enumerate(self.domains)}
        self.labels = np.array([position.get(lab, -1) if lab else -1 for lab in labels])
        dim = vectors.shape[1] if vectors.ndim == 2 else 0
        centroids = np.zeros((len(self.domains), dim), dtype=np.float32)
        for i in range(len(self.domains)):
            centroids[i] = vectors[self.labels == i].sum(axis=0)
        norms = np.linalg.norm(centroids, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        self.centroids = centroids / norms
        self._calibrate()

    @classmethod
    def from_index(
        cls,
        index: Index,
        *,
        domains: Sequence[str],
        ignore: Sequence[str] = (),
        neighbours: int = 10,
    ) -> VaultModel:
        """Build from the index's stored vectors; notes under `ignore` folders are left out."""
        matrix = index.chunk_vectors()
        if matrix is None:
            problem = index.vector_problem or "the index holds no readable vectors"
            raise IntakeError(
                f"intake needs the index's vectors ({problem}); run 'noteseek index VAULT' with "
                "sqlite-vec available"
            )
        ordered = sorted(p for p in index.note_paths() if not _under(p, ignore))
        slot = {path: i for i, path in enumerate(ordered)}
        rows_slot = np.array(
            [-1 if p is None else slot.get(p, -1) for p in matrix.paths], dtype=np.int64
        )
        mask = rows_slot >= 0
        rows = matrix.rows[mask]
        rows_slot = rows_slot[mask]
        sums = np.zeros((len(ordered), rows.shape[1] if rows.ndim == 2 else 0), dtype=np.float32)
        np.add.at(sums, rows_slot, rows)
        present = np.linalg.norm(sums, axis=1) > 0  # notes without a vector cannot be compared
        positions = np.cumsum(present) - 1
        vectors = sums[present] / np.linalg.norm(sums[present], axis=1, keepdims=True)
        paths = [path for path, ok in zip(ordered, present) if ok]
        return cls(
            paths,
            vectors.astype(np.float32),
            rows.astype(np.float32),
            positions[rows_slot].astype(np.int64),
            domains=domains,
            neighbours=neighbours,
            index=index,
        )

    # -- calibration ------------------------------------------------------------------------

    def _neighbour_similarity(self, sims: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Mean cosine of the k most similar notes, per row of a similarity matrix."""
        k = min(self.k, sims.shape[1])
        if k == 0:
            return np.zeros(sims.shape[0], dtype=np.float32)
        top = np.partition(sims, sims.shape[1] - k, axis=1)[:, -k:]
        return np.asarray(top.mean(axis=1), dtype=np.float32)

    def _calibrate(self) -> None:
        """How close each sampled vault note's nearest other notes are, per domain."""
        n = len(self.paths)
        sample: list[int] = []
        groups: dict[int, list[int]] = {}
        for label in sorted(set(self.labels.tolist())):
            members = np.flatnonzero(self.labels == label)
            # Evenly spaced in path order: deterministic, and it spans the folder's subfolders.
            take = np.linspace(0, len(members) - 1, min(len(members), CALIBRATION_PER_DOMAIN))
            chosen = members[np.unique(take.round().astype(int))] if len(members) else members
            groups[label] = list(range(len(sample), len(sample) + len(chosen)))
            sample.extend(int(c) for c in chosen)
        values = np.zeros(len(sample), dtype=np.float32)
        for start in range(0, len(sample), 512):
            batch = np.array(sample[start : start + 512], dtype=np.int64)
            sims = self.vectors[batch] @ self.vectors.T
            sims[np.arange(len(batch)), batch] = -np.inf  # leave the note itself out
            if n > 1:
                values[start : start + len(batch)] = self._neighbour_similarity(
                    np.where(np.isfinite(sims), sims, -1.0).astype(np.float32)
                )
        self._global_curve = np.sort(values)
        self._curves = {
            label: np.sort(values[idx])
            for label, idx in groups.items()
            if label >= 0 and len(idx) >= MIN_DOMAIN_CALIBRATION
        }

    def percentile(self, similarity: float, domain_index: int | None) -> float:
        """Share of the domain's (else the vault's) sampled notes whose neighbours are no closer."""
        curve = self._curves.get(-2 if domain_index is None else domain_index, self._global_curve)
        if not len(curve):
            return 0.0
        return float(np.searchsorted(curve, similarity, side="right")) / len(curve)

    def calibrated_on(self, domain_index: int) -> str | None:
        """The domain whose own notes calibrate relevance, or None when the whole vault does."""
        return self.domains[domain_index] if domain_index in self._curves else None

    # -- one item ---------------------------------------------------------------------------

    def guess(self, vector: Vector) -> DomainGuess:
        """The item's domain, runner-up, margin and calibrated closeness to the vault."""
        if not len(self.paths):
            return DomainGuess(None, None, 0.0, 0.0, 0.0, ())
        sims = self.vectors @ vector.astype(np.float32)
        k = min(self.k, len(sims))
        nearest = np.argsort(-sims, kind="stable")[: max(k, 5)]
        similarity = float(sims[nearest[:k]].mean())
        neighbours = tuple((self.paths[i], float(sims[i])) for i in nearest[:5])
        if not self.domains:
            return DomainGuess(
                None, None, 0.0, similarity, self.percentile(similarity, None), neighbours
            )
        in_domain = np.flatnonzero(self.labels >= 0)
        dsims = sims[in_domain]
        kk = min(self.k, len(dsims))
        top = np.argpartition(-dsims, kk - 1)[:kk]
        weights = np.exp((dsims[top] - dsims[top].max()) / VOTE_TEMPERATURE)
        votes = np.zeros(len(self.domains))
        np.add.at(votes, self.labels[in_domain[top]], weights)
        votes /= votes.sum()
        csims = self.centroids @ vector.astype(np.float32)
        central = np.exp((csims - csims.max()) / CENTROID_TEMPERATURE)
        central /= central.sum()
        blended = VOTE_SHARE * votes + (1 - VOTE_SHARE) * central
        order = np.argsort(-blended, kind="stable")
        best = int(order[0])
        runner = int(order[1]) if len(order) > 1 else None
        margin = float(blended[best] - (blended[runner] if runner is not None else 0.0))
        return DomainGuess(
            self.domains[best],
            self.domains[runner] if runner is not None else None,
            margin,
            similarity,
            self.percentile(similarity, best),
            neighbours,
            self.calibrated_on(best),
        )

    def note_text(self, path: str) -> str:
        """The stored (scrubbed) chunk text of a note, for the near-duplicate test."""
        if self._index is None:
            return ""
        return self._index.note_text(path)

    def duplicate(self, vector: Vector, chunk_vectors: Vector, text: str) -> Duplicate | None:
        """The existing note holding most of the item's text, if that is 70% or more of it."""
        mine = shingles(text)
        if len(mine) < MIN_SHINGLES or not len(self.paths):
            return None
        candidates: dict[int, float] = {}
        note_sims = self.vectors @ vector.astype(np.float32)
        for i in np.argsort(-note_sims, kind="stable")[:DUPLICATE_CANDIDATES]:
            if note_sims[i] >= DUPLICATE_CANDIDATE_COSINE:
                candidates[int(i)] = float(note_sims[i])
        # An excerpt of a long note is close to one of its chunks, not to the note as a whole.
        if len(self.chunk_rows) and len(chunk_vectors):
            chunk_sims = chunk_vectors.astype(np.float32) @ self.chunk_rows.T
            for row in chunk_sims:
                for j in np.argsort(-row, kind="stable")[:DUPLICATE_CANDIDATES]:
                    if row[j] >= DUPLICATE_CANDIDATE_COSINE:
                        candidates.setdefault(int(self.chunk_notes[j]), float(row[j]))
        texts = {i: shingles(self.note_text(self.paths[i])) for i in candidates}
        # Notes made from one template (a people page, an API property page) share most of their
        # 5-grams with each other. What most candidates share is template, not content: leave it
        # out, so an item only counts as a duplicate of the note its own words come from.
        if len(texts) >= 3:
            seen = Counter(s for grams in texts.values() for s in grams)
            floor = max(2, -(-len(texts) // 2))
            mine = frozenset(s for s in mine if seen[s] < floor)
            if len(mine) < MIN_SHINGLES:
                return None
        best: Duplicate | None = None
        for i in sorted(candidates, key=lambda c: -candidates[c]):
            overlap = len(mine & texts[i]) / len(mine)
            if overlap >= DUPLICATE_CONTAINMENT and (best is None or overlap > best.overlap):
                best = Duplicate(self.paths[i], overlap)
        return best
