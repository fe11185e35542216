"""Retrieval-quality evaluation of an index against judged queries (`noteseek eval`).

`evaluate` is the library call; `render_table` and `write_report` format its `EvalReport`. The
metrics need the `eval` extra (`pip install 'noteseek[eval]'`), imported only when scoring.
"""

from __future__ import annotations

from .evaluate import (
    METRICS,
    Comparison,
    EvalQuery,
    EvalReport,
    ModeResult,
    NoteMatcher,
    compare_modes,
    evaluate,
    load_qrels,
    load_queries,
    score_run,
    search_run,
)
from .report import render_table, write_report

__all__ = [
    "METRICS",
    "Comparison",
    "EvalQuery",
    "EvalReport",
    "ModeResult",
    "NoteMatcher",
    "compare_modes",
    "evaluate",
    "load_qrels",
    "load_queries",
    "render_table",
    "score_run",
    "search_run",
    "write_report",
]
