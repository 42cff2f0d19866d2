"""Run a practice folder's focused tests in a fresh pytest, the way the learner's nox session would.

Each run is a child process forked from one warm server (``folder_forkserver``), which imported
pytest, its plugins and hypothesis once: a run pays for its own collection and tests, not for a
second of imports (about forty runs make the practice proofs). The server never imports
``harness``, so each child imports the folder's own, as a new interpreter would. Its ``sys.path``
starts with a folder holding one link, ``harness`` -> the practice folder's ``course/src``: a
path entry is searched before the editable install's finder, so the learner's ``harness``
shadows the course's reference. But a path entry only hides what it holds: a submodule missing
from the folder would still be found by that finder, so ``ScaffoldRun.harness_files`` records
the file of every ``harness`` module the run imported.
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


class FolderRunner:
    """Run pytest in practice folders, one run at a time, each in a child of a warm server.

    A context manager: the server starts on entry and ends on exit. A run that takes longer
    than ``limit`` seconds is killed (its exit code is -9): a hang fails, if late.
    """

    def __init__(self, limit: float = 600.0) -> None:
        self._limit = limit
        self._server: subprocess.Popen[str] | None = None

    def __enter__(self) -> FolderRunner:
        self._server = subprocess.Popen(
            [sys.executable, str(PLUGIN_DIR / "folder_forkserver.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**_run_environment(), "PYTHONPATH": str(PLUGIN_DIR)},
        )
        return self

    def __exit__(self, *exc_info: object) -> None:
        server, self._server = self._server, None
        if server is not None:
            assert server.stdin is not None
            server.stdin.close()  # the server ends at the end of its input
            server.wait(timeout=60)
            assert server.stdout is not None
            server.stdout.close()

    def run(
        self, folder: Path, files: Sequence[str], work: Path, options: Sequence[str] = ()
    ) -> ScaffoldRun:
        """Run ``files`` (relative to ``folder``) with its own harness; ``work`` is scratch.

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
        output_file = work / "output.txt"
        returncode = self._pytest(
            {
                "cwd": str(folder),
                "args": [
                    *("-p", "lab_outcomes_plugin", "-p", "no:cacheprovider", "-q", "--tb=short"),
                    *files,
                    *options,
                ],
                "path": [str(link_dir), str(PLUGIN_DIR)],
                "env": {**_run_environment(), "PRACTICE_OUTCOMES": str(outcomes_file)},
                "output": str(output_file),
                "limit": self._limit,
            }
        )
        return _read_run(returncode, outcomes_file, output_file.read_text(errors="replace"))

    def _pytest(self, request: dict[str, object]) -> int:
        """Send one request and return the exit code of the child that ran it."""
        server = self._server
        if server is None or server.stdin is None or server.stdout is None:
            raise RuntimeError("FolderRunner.run needs `with FolderRunner() as runner:`")
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        answer = server.stdout.readline()
        if not answer:
            raise RuntimeError(f"folder_forkserver ended (exit code {server.wait()}): see stderr")
        return int(json.loads(answer)["returncode"])


def _run_environment() -> dict[str, str]:
    """Return the environment of a folder run: this one, with hypothesis's storage shared."""
    return {**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(HYPOTHESIS_STORAGE)}


def _read_run(returncode: int, outcomes_file: Path, output: str) -> ScaffoldRun:
    """Return what a run saw: its exit code, output and the plugin's JSON lines."""
    records = [
        json.loads(line)
        for line in (
            outcomes_file.read_text(encoding="utf-8").splitlines() if outcomes_file.exists() else []
        )
    ]
    harness = [r["files"] for r in records if r["kind"] == "harness"]
    return ScaffoldRun(
        returncode=returncode,
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
        output=output,
    )
