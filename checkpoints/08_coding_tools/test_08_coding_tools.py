"""Checkpoint 08 · Coding tools: the focused tests.

``nox -s new_checkpoint`` wrote this placeholder: one lab test, which passes against the
reference and fails on the lab's stub in a practice folder. Replace it with the checkpoint's
tests, each test of lab code tagged with its lab (CONTRIBUTING.md, Tests).
"""

from __future__ import annotations

import pytest

from harness.coding_tools import placeholder


@pytest.mark.lab("8.1")
def test_placeholder_returns_the_checkpoint_slug() -> None:
    assert placeholder() == "coding_tools"
