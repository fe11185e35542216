"""Plain-text replies of the MCP server, each within a token budget. Pure: values in, text out."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from ..core.budget import estimate_tokens, fit_to_budget, truncate_at_word
from ..core.display import one_line
from ..core.document_location import breadcrumb, location_label
from ..core.markup import readable

if TYPE_CHECKING:
    from .. import Coverage, Hit, IndexStatus, NoteText, TimeRange

__all__ = ["RefreshState", "format_hits", "format_note", "format_status", "search_scope"]


@dataclass(frozen=True)
class RefreshState:
    """The background refresh: off, running, done, skipped or failed, with a one-line message."""

    state: Literal["off", "running", "done", "skipped", "failed"] = "off"
    message: str = ""
    started_at: float | None = None
    finished_at: float | None = None


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return truncate_at_word(flat, width) or flat[:width]


def _note_line(hit: Hit) -> str:
    """The note's title, aliases and tags in a few words (not the stored BM25 field)."""
    parts = []
    if hit.title and hit.title != hit.section.split(" › ")[0]:
        parts.append(hit.title)
    if hit.aliases:
        parts.append("aka " + ", ".join(hit.aliases[:3]))
    if hit.tags:
        parts.append(" ".join(f"#{t.lstrip('#')}" for t in hit.tags[:5]))
    return "; ".join(parts)


def _hit_header(rank: int, hit: Hit) -> str:
    note = _note_line(hit)
    context = f"  [{_one_line(note, 100)}]" if note else ""
    # The page's number beside its label (`p. xii (12)`): get_note asks for pages by number.
    where = location_label(
        page=hit.page,
        page_label=hit.page_label,
        slide=hit.slide,
        sheet=hit.sheet,
        rows=hit.rows,
        numbered=True,
    )
    dated = f" ({hit.date[:10]})" if hit.date else ""
    # One line: a file name holding a newline would otherwise add a hit header of its own.
    name = one_line(breadcrumb(hit.path, hit.section, where, sheet=hit.sheet))
    return f"{rank}. {name}{dated} (score {hit.score:.2f}){context}"


def search_scope(
    folders: list[str], tags: list[str], files: list[str], time_range: TimeRange | None
) -> str:
    """`; in projects; tagged work; dates 2026-11-23 to 2026-11-29 ("last week" left out of the
    search)`: the filters a search ran with, for its reply; '' without any."""
    scope = "".join(
        f"; {label} {', '.join(values)}"
        for label, values in (("in", folders), ("tagged", tags), ("files", files))
        if values
    )
    if time_range is None:
        return scope
    since = time_range.since.isoformat() if time_range.since else "any time"
    until = time_range.until.isoformat() if time_range.until else "now"
    phrase = f' ("{time_range.phrase}" left out of the search)' if time_range.phrase else ""
    return f"{scope}; dates {since} to {until}{phrase}"


def _hidden_line(hidden: int) -> str:
    noun = "match" if hidden == 1 else "matches"
    return f"{hidden} weaker {noun} hidden (all=true shows them)."


def format_hits(
    query: str,
    hits: list[Hit],
    *,
    mode: str,
    max_tokens: int,
    degraded: str | None = None,
    filters: str = "",
    hidden: int = 0,
) -> str:
    """Hits as text within about `max_tokens`: whole sections best first, then paths only; a line
    says how many weaker matches the relevance threshold hid."""
    shown = _one_line(query, 200)
    warning = f"Vector search unavailable ({degraded}); keyword results only.\n" if degraded else ""
    if not hits and hidden:
        return (
            f'{warning}No confident match for "{shown}"{filters}: {_hidden_line(hidden)} Try '
            "other words; the notes may not cover this."
        )
    if not hits:
        extra = ", fewer filters" if filters else ""
        return (
            f'{warning}No notes match "{shown}"{filters}. Try other words, mode="bm25" for exact '
            f"terms{extra}; the status tool shows what is indexed."
        )
    hits = [replace(hit, text=readable(hit.text)) for hit in hits]
    headers = [_hit_header(rank, hit) for rank, hit in enumerate(hits, start=1)]
    weaker = f" {_hidden_line(hidden)}" if hidden else ""
    noun = "note" if len(hits) == 1 else "notes"
    intro = f'{warning}{len(hits)} {noun} for "{shown}" ({mode}{filters}), best first.{weaker}'
    fixed = estimate_tokens(intro) + sum(estimate_tokens(h) + 1 for h in headers) + 40
    full = fit_to_budget(hits, max(max_tokens - fixed, 1))
    parts = [intro]
    cut = False
    for header, hit, kept in zip(headers, hits, full):
        cut = cut or kept.text != hit.text
        parts.append(f"\n{header}\n{kept.text}" + (" [cut]" if kept.text != hit.text else ""))
    rest = headers[len(full) :]
    if rest:
        parts.append(f"\nMore matches (text left out to stay within max_tokens={max_tokens}):")
        parts.extend(rest)
    if rest or cut:
        parts.append(
            '\nRead any of them with get_note(path="…", section="…"), or raise max_tokens.'
        )
    return "\n".join(parts)


def format_note(note: NoteText, *, max_tokens: int) -> str:
    """A note or section as text within about `max_tokens`; says how to get the rest if cut."""
    part = location_label(page=note.page, slide=note.slide, sheet=note.sheet)
    head = one_line(
        note.path + (f" › {part}" if part else "") + (f" › {note.section}" if note.section else "")
    )
    flags = []
    if note.redacted:
        flags.append(f"{note.redacted} secret(s) redacted as [REDACTED:…]")
    if note.changed_since_indexed:
        flags.append("the file changed since it was last indexed")
    if flags:
        head += "\n(" + "; ".join(flags) + ")"
    total = estimate_tokens(note.text)
    if estimate_tokens(head) + total + 1 <= max_tokens:
        return f"{head}\n\n{note.text}"
    names = [_one_line(name, 80) for name in note.sections] if not note.section else []
    if note.locations and not part:
        # A document: its pages, slides or sheets are what can be asked for.
        names = [_one_line(name, 80) for name in note.locations]
    # The section list must not crowd out the text it stands for: at most a quarter of the budget.
    while names and estimate_tokens("; ".join(names)) > max_tokens // 4:
        names.pop()
    everything = note.locations if note.locations and not part else note.sections
    more = " …" if len(names) < len(everything) else ""
    what = "Parts" if note.locations and not part else "Sections"
    listing = f" {what}: {'; '.join(names)}{more}." if names else ""
    ask = _ask_for_part(note) if not part else 'section="…"'
    noun = "part" if note.locations and not part else "section"

    def footer(shown: int) -> str:
        return (
            f"\n\n[cut: about {shown:,} of {total:,} tokens shown. Read one {noun} with "
            f'get_note(path="{note.path}", {ask}), or raise max_tokens.{listing}]'
        )

    budget = max(max_tokens - estimate_tokens(head) - estimate_tokens(footer(total)) - 2, 50)
    text = truncate_at_word(note.text, budget * 4) or note.text[: budget * 4]
    return f"{head}\n\n{text}{footer(estimate_tokens(text))}"


def _ask_for_part(note: NoteText) -> str:
    """How to ask for one part of this note or document: `section="…"`, `page=N`, ..."""
    first = note.locations[0] if note.locations else ""
    if first.startswith("p. "):
        return "page=N"
    if first.startswith("slide "):
        return "slide=N"
    if first.startswith("sheet "):
        return 'sheet="…"'
    return 'section="…"'


def _ago(seconds: float) -> str:
    for unit, size in (("days", 86_400), ("h", 3600), ("min", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.0f} {unit} ago"
    return f"{seconds:.0f} s ago"


# Files listed by the status tool at most; the terminal command lists them all.
STATUS_FILES = 100


def format_status(
    status: IndexStatus,
    refresh: RefreshState,
    *,
    now: float,
    watch: str | None = None,
    coverage: Coverage | None = None,
    problems_only: bool = False,
) -> str:
    """Index status as a few lines, with the next step when something needs doing; `watch` says
    what keeps the index fresh, `coverage` adds the files (`problems_only`: those not indexed)."""
    skipped = sum(1 for _, state, _ in status.problems if state == "skipped")
    vectors = (
        "available"
        if status.vector_support and not status.vector_problem
        else f"unavailable, keyword search only ({status.vector_problem})"
    )
    lines = [
        f"Index: {status.db_path} ({status.db_bytes / 1_048_576:.1f} MB)",
        f"Vault: {status.vault_root or '(none yet)'}",
        f"Notes: {status.files - skipped} indexed, {skipped} skipped; {status.chunks} sections, "
        f"{status.vectors} with vectors",
        f"Model: {status.model}; vector search {vectors}",
    ]
    deep = status.deep_summary()
    if deep:
        lines.append(f"Deep lane: {deep}")
    last = status.last_run or {}
    if last.get("finished_at"):
        finished = float(last["finished_at"])
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(finished))
        lines.append(
            f"Last update: {when} ({_ago(max(now - finished, 0))}), {last.get('files_seen')} notes "
            f"seen"
            + (" (changed paths only)" if last.get("targeted") else "")
            + (", interrupted" if last.get("interrupted") else "")
        )
    else:
        lines.append("Last update: never finished")
    if watch is not None:
        lines.append(f"Watching the vault: {watch}; searches use the last commit")
    if refresh.state == "off":
        if watch is None:
            lines.append(
                "Background refresh: off (the server runs with --no-watch; without it, it "
                "indexes each change of the vault)"
            )
    elif refresh.state == "running":
        since = _ago(max(now - (refresh.started_at or now), 0))
        lines.append(f"Background refresh: running (started {since}); searches use the last commit")
    else:
        lines.append(f"Background refresh: {refresh.state}: {refresh.message}")
    if status.problems:
        lines.append(f"Notes with problems ({len(status.problems)}):")
        lines += [f"  [{s}] {p}: {why}" for p, s, why in status.problems[:5]]
        if len(status.problems) > 5:
            lines.append("  … 'noteseek status' in a terminal lists them all")
    if coverage is not None:
        lines += _coverage_lines(coverage, problems_only=problems_only)
    vault = status.vault_root or "VAULT"
    left_out = status.left_out_summary()  # the same words as `noteseek status`'s row
    if left_out:
        secrets = any(k for _, _, k in status.left_out)
        lines.append(
            f"Left out of search on purpose: {left_out}"
            + (f" (noteseek scan '{vault}' lists them)" if secrets else "")
        )
    lines.append(f"To update the index: noteseek index '{vault}'")
    return "\n".join(lines)


def _coverage_lines(coverage: Coverage, *, problems_only: bool) -> list[str]:
    counts = coverage.counts()
    lines = ["Files: " + ", ".join(f"{counts[state]} {state}" for state in counts)]
    if not coverage.pending_checked:
        lines.append(f"  (pending not checked: {coverage.pending_problem})")
    shown = [f for f in coverage.files if not problems_only or f.state != "indexed" or f.reason]
    for f in shown[:STATUS_FILES]:
        detail = f"{f.chunks} sections" if f.state == "indexed" else ""
        reason = "; ".join(x for x in (detail, f.reason or "") if x)
        lines.append(f"  [{f.state}] {f.path}" + (f": {reason}" if reason else ""))
    if len(shown) > STATUS_FILES:
        lines.append(
            f"  … {len(shown) - STATUS_FILES} more; 'noteseek status --files' lists them all"
        )
    return lines
