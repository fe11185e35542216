"""Bringing an index up to date with a vault, in phases: plan, delete, prepare, embed, finish."""
