"""Run a practice folder's focused tests in a subprocess, the way the learner's nox session would.

The subprocess uses this interpreter (``sys.executable -m pytest``), so no environment is
built and nothing is downloaded. Its ``PYTHONPATH`` starts with a folder holding one link,
``harness`` -> the practice folder's ``course/src``: a path entry is searched before the
editable install's finder, so the learner's ``harness`` shadows the course's reference.
But a path entry only hides what it holds: a submodule missing from the folder would still be
found by that finder, so ``ScaffoldRun.harness_files`` records the file of every ``harness``
module the run imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from checkpoints.catalog import Checkpoint

PLUGIN_DIR = Path(__file__).resolve().parent
# Hypothesis keeps tables it builds once (the characters a codec encodes, the constants of each
# source file) in its storage folder, `.hypothesis` in the working directory; a fresh folder has
# none and rebuilt them in every run (seconds each). The runs share the course's folder instead.
HYPOTHESIS_STORAGE = PLUGIN_DIR.parents[1] / ".hypothesis"


@dataclass(frozen=True, slots=True, kw_only=True)
class TestOutcome:
    """One test's result in a scaffold run."""

    __test__ = False  # not a test class, whatever its name

    nodeid: str
    when: str
    outcome: str  # "passed", "failed" or "skipped"
    lab: str | None
    exception: str | None  # the exception's type name, when it raised
    message: str | None
    leaves: tuple[tuple[str, str], ...]  # (type name, message) of each exception in a group


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaffoldRun:
    """What one subprocess run of a practice folder's tests saw."""

    returncode: int
    outcomes: tuple[TestOutcome, ...]
    collect_errors: tuple[str, ...]
    harness_files: tuple[str, ...]  # the file of every harness module the run imported
    output: str

    def failed(self) -> list[TestOutcome]:
        """Return the outcomes that are not passes."""
        return [o for o in self.outcomes if o.outcome != "passed"]


def focused_test_paths(chosen: Sequence[Checkpoint]) -> list[str]:
    """Return the focused test files of ``chosen`` as paths relative to a practice folder."""
    return [f"checkpoints/{c.name}/{c.test_file.name}" for c in chosen]


def run_focused_tests(
    folder: Path, files: Sequence[str], work: Path, options: Sequence[str] = ()
) -> ScaffoldRun:
    """Run ``files`` (relative to ``folder``) with the folder's own harness; ``work`` is scratch.

    ``options`` are passed on to pytest, after the files.
    """
    work.mkdir(parents=True, exist_ok=True)
    link_dir = work / "pythonpath"
    if link_dir.exists():
        shutil.rmtree(link_dir)
    link_dir.mkdir()
    (link_dir / "harness").symlink_to(folder / "course" / "src", target_is_directory=True)
    outcomes_file = work / "outcomes.jsonl"
    outcomes_file.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(link_dir), str(PLUGIN_DIR)]),
        "PRACTICE_OUTCOMES": str(outcomes_file),
        "PYTHONDONTWRITEBYTECODE": "1",
        "HYPOTHESIS_STORAGE_DIRECTORY": str(HYPOTHESIS_STORAGE),
    }
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "lab_outcomes_plugin",
            "-p",
            "no:cacheprovider",
            "-q",
            "--tb=short",
            *files,
            *options,
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    records = [
        json.loads(line)
        for line in (
            outcomes_file.read_text(encoding="utf-8").splitlines() if outcomes_file.exists() else []
        )
    ]
    harness = [r["files"] for r in records if r["kind"] == "harness"]
    return ScaffoldRun(
        returncode=completed.returncode,
        outcomes=tuple(
            TestOutcome(
                nodeid=r["nodeid"],
                when=r["when"],
                outcome=r["outcome"],
                lab=r["lab"],
                exception=r["exception"],
                message=r["message"],
                leaves=tuple((kind, text) for kind, text in r["leaves"]),
            )
            for r in records
            if r["kind"] == "test"
        ),
        collect_errors=tuple(r["message"] for r in records if r["kind"] == "collect_error"),
        harness_files=tuple(harness[0]) if harness else (),
        output=completed.stdout + completed.stderr,
    )
