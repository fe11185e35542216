"""Context for an agent's prompt: search, the relevance gate, then the budgeted block.

The one library call behind `noteseek context`, the prompt hook and the warm daemon, so all three
give the same block for the same index state and prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..core.context_block import format_context
from ..core.relevance import HOOK_MIN_SCORE, GateSettings, judge
from ..engine.search.request import SearchRequest
from ..settings import DEFAULT_CONTEXT_TOKENS

if TYPE_CHECKING:
    from ..engine.index import Index
    from ..engine.search.hits import Hit

__all__ = ["HOOK_MIN_SCORE", "MAX_PROMPT_CHARS", "PromptContext", "prompt_context"]

# Hits considered for a block: a 500-token block holds two to four sections.
CONTEXT_CANDIDATES = 6
# Query words in more than this share of chunks would be left out of the prompt's BM25 query (it
# cut BM25 time by about a third). None: every word is searched, because the query-level model
# (SearchResult.answered) judges the lists a search makes: with 0.2, a five-note vault lost most of
# a prompt's words and P(answered) for a plainly on-topic prompt fell from 0.97 to 0.27.
CONTEXT_TERM_SHARE: float | None = None
# Long prompts (pasted logs, files) are cut before searching: the first part states the task, and
# embedding or matching 100 KB of paste would cost more than the whole hook may take.
MAX_PROMPT_CHARS = 2000


@dataclass(frozen=True)
class PromptContext:
    """The block for a prompt ('' when nothing relevant) and how it was decided."""

    text: str
    hits: tuple[Hit, ...]  # the hits that passed the gate, best first
    considered: int  # hits the search returned
    reason: str  # why hits were kept or why the block is empty

    def to_json(self) -> dict[str, Any]:
        """The block and the gate's decision, as `noteseek context --json` and the daemon print it."""
        return {
            "text": self.text,
            "reason": self.reason,
            "considered": self.considered,
            "hits": [hit.to_json() for hit in self.hits],
        }


def prompt_context(
    index: Index,
    prompt: str,
    *,
    max_tokens: int = DEFAULT_CONTEXT_TOKENS,
    gate: GateSettings | None = None,
    gated: bool = True,
) -> PromptContext:
    """The context block for `prompt`: the hits scored at least the gate's `min_score` (stricter
    than a search's default); `gated=False` skips the gate (`noteseek context --no-gate`), so the
    best hits are shown whatever their scores."""
    query = prompt[:MAX_PROMPT_CHARS]
    # A time phrase in the prompt ("what did I decide last week about …") keeps sections of that
    # period, as in a search (docs/time.md); the gate then judges the words that were searched.
    request = SearchRequest(
        query,
        limit=CONTEXT_CANDIDATES,
        explain=True,
        max_term_share=CONTEXT_TERM_SHARE,
        # The calibration was measured on the bundled model's lists, as the hook runs them.
        multilingual=False,
        min_score=0.0,  # the gate below decides, and says why
        min_answer=0.0,
    )
    result = index.run_search(request)
    hits = list(result.hits)
    if gated:
        judged = result.searched if result.searched else query
        settings = gate or GateSettings()
        if result.time_range is not None:
            # The period already narrowed the notes to a few: the query-level model (trained on
            # whole vaults) does not judge that list, as in a search; each hit still needs its score.
            settings = replace(settings, min_answer=0.0)
        decision = judge(judged, hits, settings=settings, answered=result.answered)
        kept = tuple(hits[i] for i in decision.kept)
        reason = decision.reason
    else:
        kept, reason = tuple(hits), "gate off"
    text = format_context(kept, max_tokens=max_tokens) if kept else ""
    if kept and not text:
        reason = f"no section fits in {max_tokens} tokens"
    return PromptContext(text=text, hits=kept, considered=len(hits), reason=reason)
