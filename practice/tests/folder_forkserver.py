"""A process that imports pytest and its plugins once, then forks one child per folder run.

Started by ``scaffold_runs.FolderRunner`` with this directory as its only ``PYTHONPATH`` entry.
Each line on stdin is a JSON request: ``cwd``, ``args`` (pytest's), ``path`` (entries put first
on ``sys.path``), ``env`` (the whole environment), ``output`` (a file for stdout and stderr)
and ``limit`` (seconds). The server forks; the child runs ``pytest.main(args)`` there and exits
with its code; the server answers with one JSON line, ``{"returncode": N}``: ``-9`` for a child
it killed because it ran past its limit (not an alarm in the child: pytest-timeout uses SIGALRM
there, for each test).

Why: a pytest subprocess spends about a second importing pytest, hypothesis and the plugins
before it collects a test, and the practice proofs start about forty of them. A forked child
starts with those modules already imported, and with nothing else: this server never imports
``harness``, ``practice`` or ``checkpoints``, so a child imports the folder's own copies, as a
fresh interpreter would.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

# A test file for the warm-up run: it imports what the folders' tests import from outside.
WARM_UP_TEST = """import asyncio

import hypothesis.strategies


def test_warm_up() -> None:
    pass
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """One run: pytest's arguments, and the process it runs in."""

    cwd: str
    args: tuple[str, ...]
    path: tuple[str, ...]  # put first on sys.path, as PYTHONPATH would
    env: dict[str, str]
    output: str  # a file for the child's stdout and stderr
    limit: float  # seconds the run may take before it is killed

    @classmethod
    def from_json(cls, line: str) -> Request:
        fields = json.loads(line)
        return cls(
            cwd=str(fields["cwd"]),
            args=tuple(str(arg) for arg in fields["args"]),
            path=tuple(str(entry) for entry in fields["path"]),
            env={str(name): str(value) for name, value in fields["env"].items()},
            output=str(fields["output"]),
            limit=float(fields["limit"]),
        )


def warm_up() -> None:
    """Run pytest once on a trivial test, so that it imports itself and every plugin.

    A plain ``import`` would not do: pytest rewrites the asserts of its plugins' modules as it
    imports them, and warns (an error in the folders) about one imported before it could.
    """
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "test_warm_up.py").write_text(WARM_UP_TEST, encoding="utf-8")
        saved = os.dup(1), os.dup(2)
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)  # fd 1 is the answer pipe: nothing but answers goes there
        os.dup2(quiet, 2)
        try:
            code = pytest.main(["-q", "-p", "no:cacheprovider", "--import-mode=importlib", folder])
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for spare in (*saved, quiet):  # or every child would inherit a copy of the pipe
                os.close(spare)
    if code != 0:
        raise SystemExit(f"folder_forkserver: the warm-up run failed with exit code {code}")


def run_in_child(request: Request) -> NoReturn:
    """Make this forked child what a new interpreter started for ``request`` would be, and run."""
    try:
        os.chdir(request.cwd)
        os.environ.clear()
        os.environ.update(request.env)
        sys.path[:0] = request.path
        sys.dont_write_bytecode = True  # as PYTHONDONTWRITEBYTECODE: nothing written in folders
        output = os.open(request.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # fd 0 is the request pipe
        os.dup2(output, 1)
        os.dup2(output, 2)
        code = int(pytest.main(list(request.args)))
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException as error:  # anything at all: the server must still get an exit code
        print(f"folder_forkserver: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        code = 70
    os._exit(code)  # not sys.exit: the child must not run the server's cleanup


def wait_or_kill(pid: int, limit: float) -> int:
    """Wait for the child ``pid`` up to ``limit`` seconds, kill it then; return its exit code."""
    with os.fdopen(os.pidfd_open(pid)) as exited:  # readable once the child has ended
        ready, _, _ = select.select([exited], [], [], limit)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def serve() -> None:
    """Answer each request line with the exit code of a forked pytest run."""
    warm_up()
    for line in sys.stdin:
        request = Request.from_json(line)
        pid = os.fork()
        if pid == 0:
            run_in_child(request)
        code = wait_or_kill(pid, request.limit)
        sys.stdout.write(json.dumps({"returncode": code}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
