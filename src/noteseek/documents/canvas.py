"""Obsidian `.canvas` boards (JSON Canvas 1.0): text cards, file and link cards, group labels, edge labels.

A card belongs to every group whose rectangle holds its centre; the groups' labels, outermost
first, are its breadcrumb, and each group's cards become one unit in reading order (top to bottom,
then left to right). Cards outside every group form a unit of their own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .encoding import decode_text
from .errors import CorruptDocumentError, UnsupportedDocumentError
from .model import ExtractedDocument, ExtractionLimits, TextUnit

__all__ = ["extract_canvas"]


def _num(node: dict[str, Any], key: str) -> float:
    value = node.get(key, 0)
    return float(value) if isinstance(value, int | float) else 0.0


def _inside(node: dict[str, Any], group: dict[str, Any]) -> bool:
    cx = _num(node, "x") + _num(node, "width") / 2
    cy = _num(node, "y") + _num(node, "height") / 2
    gx, gy = _num(group, "x"), _num(group, "y")
    return gx <= cx <= gx + _num(group, "width") and gy <= cy <= gy + _num(group, "height")


def _card_text(node: dict[str, Any]) -> str:
    kind = node.get("type")
    if kind == "text":
        return str(node.get("text") or "").strip()
    if kind == "file":
        target = str(node.get("file") or "")
        return target + str(node.get("subpath") or "") if target else ""
    if kind == "link":
        return str(node.get("url") or "").strip()
    return ""


def extract_canvas(path: Path, limits: ExtractionLimits) -> ExtractedDocument:
    """One unit per group (and one for the ungrouped cards), breadcrumb = the group labels."""
    text, _ = decode_text(path.read_bytes())
    if text.strip() and not text.lstrip().startswith("{"):
        # Other programs use the suffix too (gnuplot's HTML canvas terminal writes `.canvas` files).
        raise UnsupportedDocumentError(
            "is not a JSON Canvas (Obsidian) file: it does not hold JSON"
        )
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise CorruptDocumentError(f"is not valid JSON Canvas ({exc})") from exc
    if not isinstance(data, dict):
        raise CorruptDocumentError("is not valid JSON Canvas (the top level is not an object)")
    nodes = [n for n in data.get("nodes") or [] if isinstance(n, dict)]
    edges = [e for e in data.get("edges") or [] if isinstance(e, dict)]
    groups = [n for n in nodes if n.get("type") == "group"]
    # Edge labels are read with the card they leave from.
    edge_labels: dict[str, list[str]] = {}
    for edge in edges:
        label = str(edge.get("label") or "").strip()
        if label:
            edge_labels.setdefault(str(edge.get("fromNode")), []).append(label)

    def breadcrumb(node: dict[str, Any]) -> tuple[str, ...]:
        holders = [g for g in groups if g is not node and _inside(node, g)]
        holders.sort(key=lambda g: -_num(g, "width") * _num(g, "height"))
        return tuple(str(g.get("label") or "").strip() or "Group" for g in holders)

    sections: dict[tuple[str, ...], list[str]] = {}
    order = sorted(nodes, key=lambda n: (_num(n, "y"), _num(n, "x")))
    for node in order:
        if node.get("type") == "group":
            crumb = (*breadcrumb(node), str(node.get("label") or "").strip() or "Group")
            label = str(node.get("label") or "").strip()
            sections.setdefault(crumb, [])
            if label:
                sections[crumb].insert(0, label)
            continue
        parts = [_card_text(node), *edge_labels.get(str(node.get("id")), [])]
        body = "\n".join(p for p in parts if p)
        if body:
            sections.setdefault(breadcrumb(node), []).append(body)
    units = tuple(TextUnit("\n\n".join(parts), crumb) for crumb, parts in sections.items() if parts)
    return ExtractedDocument(kind="canvas", engine="json", units=units)
