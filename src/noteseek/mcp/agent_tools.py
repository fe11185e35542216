"""The MCP tools beyond search, get_note and status: `links` and `related` (read-only, always
listed) and, only with `noteseek mcp --allow-writes`, `save_note` and `append_to_note`.

Without --allow-writes the write tools are never registered: a client does not list them, and a
call by name is refused by the SDK as an unknown tool. Their replies say where the text went and
the run id that undoes it.

The mcp extra's modules (pydantic, mcp.types) are imported when the server builds its tools,
not when this module is imported.
"""

# No `from __future__ import annotations`: the SDK evaluates the tool signatures.
import shlex
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeVar

from ..core.budget import estimate_tokens, truncate_at_word
from ..intake import agent_writes
from ..intake.errors import IntakeError
from .descriptions import APPEND_DOC, LINKS_DOC, RELATED_DOC, SAVE_NOTE_DOC
from .format import format_hits

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from .. import Hit, Index, LazyIndex, NoteLinks
    from ..intake.agent_writes import AppendResult, SavedNote
    from ..intake.domains import VaultModel

__all__ = ["AgentActions", "add_graph_tools", "add_write_tools", "format_links"]

LINKS_TOKENS = 2000
MODEL_SECONDS = 600  # how long save_note scores against one domain model before a new one
RELATED_TOKENS = 1500
_T = TypeVar("_T")
Call = Callable[[str, Callable[[], Any]], Any]


class AgentActions:
    """What the agent tools do, over the server's reading index (under its lock) and, for the
    writes, its writing index (under a lock of their own)."""

    def __init__(
        self,
        index: "LazyIndex",
        writer: "LazyIndex",
        *,
        lock: threading.Lock,
        vault: str | None,
        allow_writes: bool,
    ) -> None:
        self._index = index
        self._writer = writer
        self._lock = lock
        self._write_lock = threading.Lock()
        self._vault = vault
        self.allow_writes = allow_writes
        self._model: tuple[float, VaultModel] | None = None

    def generation(self) -> str:
        """The index generation a reply cursor is made against (`Index.generation`)."""
        with self._lock:
            return self._index.get().generation()

    def links(self, path: str) -> "NoteLinks":
        """A note's backlinks and outlinks (`Index.links`)."""
        with self._lock:
            return self._index.get().links(path)

    def related(self, path: str, *, limit: int) -> "list[Hit]":
        """The notes most like a note (`Index.related`)."""
        with self._lock:
            return self._index.get().related(path, limit=limit)

    def _writes(self) -> "tuple[Index, str]":
        """The writing Index and the vault, or why writes are refused."""
        if not self.allow_writes:
            raise IntakeError(
                "writing is off for this server: start it with 'noteseek mcp --allow-writes'"
            )
        index = self._writer.get()
        vault = self._vault or index.vault_root
        if vault is None:
            raise IntakeError("the index has no vault yet: run 'noteseek index VAULT' first")
        return index, vault

    def undo_line(self, run_id: str) -> str:
        """The command that undoes a write, with this server's vault (as `noteseek intake`
        prints it: pasted into a shell, it runs)."""
        vault = self._vault or self._writer.get().vault_root or "VAULT"
        return (
            f"Undo: noteseek intake --undo {run_id} --vault {shlex.quote(str(vault))} "
            f"(run id {run_id})."
        )

    def save_note(self, title: str, text: str, *, tags: list[str]) -> "SavedNote":
        """Scrub, write, file and index a new note through intake (`intake.save_note`)."""
        with self._write_lock:
            index, vault = self._writes()
            # The domain model takes seconds on a large vault: built once, again after a while.
            if self._model is None or time.monotonic() - self._model[0] > MODEL_SECONDS:
                self._model = (time.monotonic(), agent_writes.vault_model(vault, index=index))
            return agent_writes.save_note(
                title, text, tags=tags, vault=vault, index=index, model=self._model[1]
            )

    def append_to_note(self, path: str, text: str, *, heading: str | None) -> "AppendResult":
        """Append scrubbed text to a note and index it (`intake.append_to_note`)."""
        with self._write_lock:
            index, vault = self._writes()
            return agent_writes.append_to_note(
                path, text, heading=heading, vault=vault, index=index
            )

    def warm_writes(self) -> None:
        """In a background thread: load the reading index's vectors and model (the search after
        a write then answers at once), open the writing index, load the model that embeds a
        saved note and build the domain model (unless a save_note built it first), so the first
        save_note does not wait for them (best effort: a failure shows on that call)."""

        def warm() -> None:
            try:
                with self._lock:
                    self._index.get().warm_up()
                with self._write_lock:
                    index, vault = self._writes()
                    index.warm_up()
                    # A save embeds the new note with the full model (tokenizer and all), which
                    # the query encoder warm_up loads does not bring in: ~0.3 s more otherwise.
                    index.embed(["warm up"])
                    if self._model is None:  # a save_note that came first has built it
                        model = agent_writes.vault_model(vault, index=index)
                        self._model = (time.monotonic(), model)
            except Exception:  # the tool call reports it; a warm-up must not kill the server
                return

        threading.Thread(target=warm, name="noteseek-warm-writes", daemon=True).start()

    def close(self) -> None:
        """Close the writing index if a write opened it."""
        with self._write_lock:
            self._writer.close()


class Service(Protocol):
    """What the tools read of the MCP server's service (`server.VaultService`, which registers
    them and so is not imported here): its actions."""

    @property
    def agent(self) -> AgentActions: ...


def format_links(links: "NoteLinks", *, max_tokens: int) -> str:
    """A note's backlinks and outlinks as text within about `max_tokens`: every outlink first
    (short), then as many backlinks with their lines as fit, then how many were left out."""
    unresolved = [o for o in links.outlinks if o.path is None]
    lines = [f"{links.note}: {len(links.backlinks)} backlinks, {len(links.outlinks)} outlinks "
             f"({len(unresolved)} unresolved)."]  # fmt: skip
    if links.outlinks:
        lines.append("\nOutlinks:")
        for o in links.outlinks:
            lines.append(f"- {o.target} → {o.path}" if o.path else f"- {o.target} → (unresolved)")
    tail: list[str] = []
    if links.backlinks:
        tail.append("\nBacklinks (path:line — the linking line):")
    used = sum(estimate_tokens(line) + 1 for line in lines) + 40
    shown = 0
    for b in links.backlinks:
        line = f"- {b.path}:{b.line} — {truncate_at_word(' '.join(b.text.split()), 200)}"
        cost = estimate_tokens(line) + 1
        if used + cost > max_tokens:
            break
        tail.append(line)
        used += cost
        shown += 1
    if shown < len(links.backlinks):
        tail.append(
            f"… and {len(links.backlinks) - shown} more backlinks (raise max_tokens to see them)."
        )
    text = "\n".join(lines + tail)
    if estimate_tokens(text) > max_tokens:  # very many outlinks: cut the whole reply
        text = truncate_at_word(text, max_tokens * 4) + "\n[cut: raise max_tokens]"
    return text


def add_tools(
    server: "MCPServer[Any]",
    tools: "Iterable[tuple[Callable[..., Any], str, str]]",
    *,
    writes: bool = False,
    structured: "Callable[[Callable[..., Any]], bool]" = lambda fn: False,
) -> None:
    """Register (function, description, title) tools with the annotations every noteseek tool
    shares: read-only and idempotent unless `writes`, never destructive, closed world."""
    from mcp.types import ToolAnnotations

    for fn, doc, title in tools:
        server.add_tool(
            fn,
            title=title,
            description=doc,
            annotations=ToolAnnotations(
                title=title,
                read_only_hint=not writes,
                destructive_hint=False,
                idempotent_hint=not writes,
                open_world_hint=False,
            ),
            structured_output=structured(fn),
        )


def add_graph_tools(server: "MCPServer[Any]", service: "Service", call: Call) -> None:
    """Register `links` and `related` (read-only)."""
    from pydantic import Field

    def links(
        path: Annotated[str, Field(description="Vault-relative path, as search returns it.")],
        max_tokens: Annotated[
            int, Field(ge=100, le=30_000, description="Reply budget (about 4 characters a token).")
        ] = LINKS_TOKENS,
    ) -> str:
        found = call("links", lambda: service.agent.links(path))
        return format_links(found, max_tokens=max_tokens)

    def related(
        path: Annotated[str, Field(description="Vault-relative path, as search returns it.")],
        limit: Annotated[int, Field(ge=1, le=50, description="Most notes to return.")] = 10,
        max_tokens: Annotated[
            int, Field(ge=100, le=20_000, description="Reply budget (about 4 characters a token).")
        ] = RELATED_TOKENS,
    ) -> str:
        hits = call("related", lambda: service.agent.related(path, limit=limit))
        return format_hits(f"notes like {path}", hits, mode="related", max_tokens=max_tokens)

    add_tools(
        server, ((links, LINKS_DOC, "Links of a note"), (related, RELATED_DOC, "Notes like a note"))
    )


def add_write_tools(server: "MCPServer[Any]", service: "Service", call: Call) -> None:
    """Register `save_note` and `append_to_note` when the server allows writes, else nothing:
    a client then neither lists them nor can call them."""
    if not service.agent.allow_writes:
        return
    from pydantic import Field

    def save_note(
        title: Annotated[str, Field(min_length=1, max_length=300, description="The note's title.")],
        text: Annotated[str, Field(min_length=1, description="The note's Markdown text.")],
        tags: Annotated[
            list[str] | None, Field(description="Tags for its frontmatter (without '#').")
        ] = None,
    ) -> str:
        saved = call("save_note", lambda: service.agent.save_note(title, text, tags=tags or []))
        where = {
            "route": f"filed into {saved.domain or 'the vault'}",
            "review": "queued for review",
            "set_aside": "set aside (kept, not searchable)",
        }.get(saved.decision, saved.decision)
        lines = [
            f"Saved {saved.path}: {where} ({saved.reason}).",
            "Indexed: search finds it now." if saved.searchable else "Not indexed (set aside).",
            service.agent.undo_line(saved.run_id),
        ]
        if saved.secrets_scrubbed:
            lines.insert(1, f"{saved.secrets_scrubbed} secret(s) redacted before writing.")
        return "\n".join(lines)

    def append_to_note(
        path: Annotated[str, Field(description="Vault-relative path of an existing note.")],
        text: Annotated[str, Field(min_length=1, description="Markdown text to append.")],
        heading: Annotated[
            str | None,
            Field(description="Append at the end of the section with this heading instead."),
        ] = None,
    ) -> str:
        done = call(
            "append_to_note", lambda: service.agent.append_to_note(path, text, heading=heading)
        )
        if done.heading is None:
            where = "at the end"
        elif done.created_heading:
            where = f"as a new section '{done.heading}' at the end"
        else:
            where = f"at the end of section '{done.heading}'"
        lines = [f"Appended to {done.path} {where}; indexed."]
        if done.secrets_scrubbed:
            lines.append(f"{done.secrets_scrubbed} secret(s) redacted before writing.")
        lines.append(service.agent.undo_line(done.run_id))
        return "\n".join(lines)

    add_tools(
        server,
        ((save_note, SAVE_NOTE_DOC, "Save a note"), (append_to_note, APPEND_DOC, "Append to a note")),
        writes=True,
    )
