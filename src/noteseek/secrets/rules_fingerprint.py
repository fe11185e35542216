"""The scrubber rules' fingerprint as a constant: what an index's pipeline fingerprint includes.

`scrubber.RULES_FINGERPRINT` computes it from the compiled rules, so reading it from there costs
the compilation of every rule (~30 ms), which a run that scrubs nothing (a no-op update, a
deletion) would pay for this one value. tests/test_scrubber.py fails when the two differ: a change
to the rules must change this value too, and with it every index's next update re-scrubs its notes.
"""

from __future__ import annotations

__all__ = ["RULES_FINGERPRINT"]

RULES_FINGERPRINT = "e121d83545b6a15b"
