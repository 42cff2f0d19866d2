"""Shared fixtures of the probes, and the report `nox -s compare` ends with: one line per claim.

A probe is a test whose docstring's first line is the claim, as a lesson page states it. The
report lists every claim with HOLDS, DOES NOT HOLD or SKIPPED, so raising a pinned version names
exactly the sentences of the pages that must change.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

# The Agents SDK would otherwise try to export traces of each probe's run to OpenAI.
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"

PI_FOLDER = Path(__file__).resolve().parent / "pi"


@pytest.fixture(scope="session")
def pi() -> dict[str, Any]:
    """What compare/pi/probes.mjs observed in the pinned Pi SDK (skips without Node or packages)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Pi SDK claims need Node.js on PATH (apt-get install nodejs npm)")
    if not (PI_FOLDER / "node_modules" / "@earendil-works" / "pi-agent-core").is_dir():
        pytest.skip("Pi SDK packages are not installed: run `nox -s compare` (it runs `npm ci`)")
    completed = subprocess.run(
        [node, str(PI_FOLDER / "probes.mjs")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        pytest.fail(f"compare/pi/probes.mjs failed:\n{completed.stderr}")
    observations: dict[str, Any] = json.loads(completed.stdout)
    return observations


def claim_of(item: pytest.Item) -> str:
    """The first line of a probe's docstring: the claim as the page states it."""
    function = getattr(item, "function", None)
    doc = (getattr(function, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else item.name


def pytest_terminal_summary(terminalreporter: Any) -> None:
    outcomes = {"passed": "HOLDS", "failed": "DOES NOT HOLD", "skipped": "SKIPPED"}
    lines: list[str] = []
    counts = dict.fromkeys(outcomes.values(), 0)
    for outcome, word in outcomes.items():
        for report in terminalreporter.stats.get(outcome, []):
            if report.when != "call" and not (outcome != "passed" and report.when == "setup"):
                continue
            counts[word] += 1
            claim = getattr(report, "claim", report.nodeid)
            lines.append(f"{word:<13} {claim}  (compare/{report.nodeid})")
    if not lines:
        return
    terminalreporter.section("claims of the pages")
    for line in sorted(lines, key=lambda text: text.split("(")[-1]):
        terminalreporter.write_line(line)
    summary = ", ".join(f"{count} {word.lower()}" for word, count in counts.items())
    terminalreporter.write_line(f"claims: {summary}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    report.claim = claim_of(item)
    return report
