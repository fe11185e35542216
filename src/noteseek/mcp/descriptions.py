"""What the MCP server tells the agent: its instructions and each tool's description.

Kept apart from server.py so the wording, which agents read to decide when to call a tool, can be
reviewed on its own (the `mcp-tools` golden records it as the client sees it).
"""

from __future__ import annotations

__all__ = [
    "APPEND_DOC",
    "GET_NOTE_DOC",
    "INSTRUCTIONS",
    "LINKS_DOC",
    "RELATED_DOC",
    "SAVE_NOTE_DOC",
    "SEARCH_DOC",
    "SINCE_DOC",
    "SORT_DOC",
    "STATUS_DOC",
    "TIME_PARSE_DOC",
    "UNTIL_DOC",
]

INSTRUCTIONS = (
    "noteseek searches the user's own Markdown notes (a local vault: how-tos, decisions, meeting "
    "notes, projects, people). Use `search` for questions the user's notes may answer, by meaning "
    "or keywords, then `get_note` to read a note or one section. Use grep for exact strings in code."
)
SEARCH_DOC = (
    "Search the user's Markdown notes by meaning and keywords together (BM25 + embeddings), best "
    "notes first, each with its most relevant section. Prefer this over grep/find when looking for "
    "a concept, an answer to a natural-language question, or a note whose exact wording you do not "
    "know ('how did we fix the cert outage', 'undo a rebase'); use grep for exact strings or "
    "identifiers in code. The reply stays within max_tokens: lower-ranked hits are listed by path "
    "and section only; read them with get_note(path, section)."
)
GET_NOTE_DOC = (
    "Read one note of the indexed vault, or one section of it, by the vault-relative path that "
    "search returned (e.g. 'howto/git-rebase-recipes.md'). Pass section (a heading as search shows "
    "it, e.g. 'Undo a rebase that went wrong') to read just that part. For a document (PDF, "
    "slides, spreadsheet) pass page, slide or sheet, as search shows them ('p. 12', 'slide 3', "
    "'sheet Data'), to read just that part. Secrets are redacted. Only "
    "indexed notes can be read: absolute paths, '..' and symlinks are refused. A long note is cut "
    "at max_tokens and the reply lists its sections so you can ask for one."
)
STATUS_DOC = (
    "Describe the note index: notes and sections indexed, the vault folder, the embedding model, "
    "when it was last updated (how stale it may be), and what keeps it fresh (watching the vault, or "
    "a background refresh). With files='problems' it lists the files that are not searchable and "
    "why (skipped, failed, or changed since the last update). Use it when search misses a note you "
    "expect, or to tell the user how to update the index."
)

# The search tool's date parameters (docs/time.md).
SINCE_DOC = (
    "Only notes dated on or after this: 2026-11-30, 2026-11, 7d, 2w, 3m, 1y, yesterday, "
    "'last week'. A time phrase in the query works too."
)
UNTIL_DOC = "Only notes dated on or before this (as since)."
SORT_DOC = "relevance (default) or date (newest first)."
TIME_PARSE_DOC = (
    "Read a time phrase in the query ('last week', 'gestern', 'from March 2026') as a date "
    "filter (default); false searches it as words."
)
LINKS_DOC = (
    "The links of one note of the indexed vault, by its vault-relative path as search returns it "
    "(or its name as a [[link]] writes it): its backlinks, i.e. every other note that links to it "
    "or embeds it ([[name]], [[name#heading]], ![[name]], [text](name.md)), each with the line "
    "that links; and its outlinks, each with the note it opens, or unresolved. Use it to follow "
    "the user's own connections from a note search found."
)
RELATED_DOC = (
    "The notes most like one note (by meaning, plus the links between them and shared tags), "
    "never the note itself, best first, each with its closest section. Use it to widen from one "
    "good note to its neighbours without guessing more search words."
)
SAVE_NOTE_DOC = (
    "Save a new note into the user's vault through intake: secrets in the text are redacted "
    "before anything is written, the note is scored and filed into the best-matching folder or "
    "queued for review (never set aside: the user asked to keep it), and indexed at once (search "
    "finds it). Returns where it went, why, and the run id that undoes it "
    "(`noteseek intake --undo RUN`). Write only what the user asked to keep."
)
APPEND_DOC = (
    "Append text to an existing Markdown note of the vault (vault-relative path as search returns "
    "it), at its end or at the end of the section with the given heading (a new section when the "
    "note has none). Secrets are redacted first; paths outside the vault, through symlinks, into "
    "hidden folders, and documents are refused. Indexed at once; returns the run id that undoes "
    "it (`noteseek intake --undo RUN`)."
)
