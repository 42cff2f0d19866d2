"""Checkpoint 08 · Coding tools: replace this docstring with what the module is for.

``nox -s new_checkpoint`` wrote this placeholder. Keep one concern per module; keep public
names, signatures, docstrings, constants and exception classes outside the lab markers (the
learner is given them), and each lab's reference code between ``# BEGIN LAB N.M`` and
``# END LAB N.M`` (CONTRIBUTING.md).
"""

from __future__ import annotations

__all__ = ["placeholder"]


# --8<-- [start:placeholder]
def placeholder() -> str:
    """Return the checkpoint's slug: the placeholder of Lab 8.1, to replace with real code."""
    # BEGIN LAB 8.1
    return "coding_tools"
    # END LAB 8.1


# --8<-- [end:placeholder]
