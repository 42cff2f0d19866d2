"""Make the repository root importable, so the tests can import ``practice`` and ``checkpoints``,
give them one warm ``folder_runner`` for the session, and keep each checkpoint's practice-folder
proofs on one pytest-xdist worker.

pytest runs with ``--import-mode=importlib``, which does not put the root on ``sys.path``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from practice.tests.scaffold_runs import FolderRunner

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def folder_runner() -> Iterator[FolderRunner]:
    """Run practice folders' tests, each run forked from one warm pytest (see scaffold_runs)."""
    with FolderRunner() as runner:
        yield runner


# A proof's id names its checkpoint: test_course_scaffolds.py::test_...[06_tool_contract].
_PROOF = re.compile(r"practice/tests/test_course_scaffolds\.py::\w+\[(?P<checkpoint>[^\]]+)\]")


def work_unit_of(nodeid: str) -> str:
    """Return the unit of work a test goes in: its checkpoint for a proof, else itself alone."""
    proof = _PROOF.fullmatch(nodeid)
    return f"practice-{proof['checkpoint']}" if proof else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """Under ``--dist loadgroup``, send all proofs of one checkpoint to one worker.

    The first proof of a checkpoint makes its folder and runs it; the others read what it saw.
    pytest-xdist's own grouping (the ``xdist_group`` mark) writes the group into each test's
    id, which pytest 9 ignores: the proofs of a checkpoint went to both workers, and each made
    and ran the folder again. The unit of work is found from the id here instead.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    # pytest-xdist ships no type information: its scheduler is Any to mypy.
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class OneWorkerPerCheckpoint(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return work_unit_of(nodeid)

    return OneWorkerPerCheckpoint(config, log)
