"""Retrieval-quality evaluation of an index against judged queries (`noteseek eval`).

`evaluate` is the library call; `render_table` and `write_report` format its `EvalReport`. The
metrics need the `eval` extra (`pip install 'noteseek[eval]'`), imported only when scoring. The
names re-exported here are those of `evaluate.__all__` and `report.__all__`.
"""

from __future__ import annotations

from . import evaluate as _evaluate
from . import report as _report
from .evaluate import *  # noqa: F403
from .report import *  # noqa: F403

__all__ = [*_evaluate.__all__, *_report.__all__]
