"""The commands of this practice folder (written by the course's `nox -s practice -- NN DIR`).

nox -s checkpoint -- NN    the focused tests of checkpoints 00 up to NN, against your course/src
                           (more arguments go to pytest: nox -s checkpoint -- 06 -x; --full
                           prints every failure in full, not the first of each lab)
nox -s progress            where each lab stands: not started, failing, blocked or passing
nox -s hint -- N.M         the hint of one lab

Unlike the course, where `checkpoint -- NN` runs NN's tests alone, here it also runs the
earlier checkpoints' tests: your code must keep every earlier contract green. The labs section
at the end of the run reports each lab; a lab whose stub still raises is "not started".
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from checkpoints.catalog import Checkpoint, load_catalog  # noqa: E402
from practice.commands import CommandError, checkpoints_through, hint_text  # noqa: E402

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["progress"]

PYPROJECT = nox.project.load_toml("pyproject.toml")


def install_practice(session: nox.Session) -> None:
    """Install the course's test tools and this folder's `harness`, editable."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "test"))
    session.install("-e", ".")


def focused_test_files(chosen: tuple[Checkpoint, ...]) -> list[str]:
    """Return the focused test files of ``chosen``, relative to this folder."""
    return [str(c.test_file.relative_to(ROOT)) for c in chosen]


def usage_error(session: nox.Session, error: CommandError) -> NoReturn:
    """Print a command's usage, then stop the session with the one-line problem."""
    # The usage goes out as it is; nox's abort line gets only the problem ("no lab 9.9").
    print(error.usage, file=sys.stderr)
    session.error(error.problem)


@nox.session(default=False)
def checkpoint(session: nox.Session) -> None:
    """Run the focused tests of 00 up to NN against your code: nox -s checkpoint -- 06."""
    try:
        chosen = checkpoints_through(load_catalog(), session.posargs[:1])
    except CommandError as exc:
        usage_error(session, exc)
    install_practice(session)
    session.log(f"checkpoints {chosen[0].number}-{chosen[-1].number}: {chosen[-1].title}")
    # A fresh folder fails every test of its labs: the failure summary shows the first of each
    # lab in full and the others one line each, above the labs section (--full or -v: all).
    # `python -m`, so that this folder, and its practice/ plugin, is on the import path.
    session.run(
        "python",
        "-m",
        "pytest",
        "-p",
        "practice.failure_summary",
        "--tb=short",
        *focused_test_files(chosen),
        *session.posargs[1:],
    )


@nox.session
def progress(session: nox.Session) -> None:
    """List every lab of this folder as not started, failing, blocked or passing."""
    install_practice(session)
    session.run(
        "pytest",
        "-q",
        "--no-header",
        "--tb=no",
        "-rN",
        *focused_test_files(load_catalog()),
        success_codes=[0, 1],  # failing tests are progress to report, not a broken command
    )


@nox.session(python=False, default=False)
def hint(session: nox.Session) -> None:
    """Print the hint of one lab: nox -s hint -- 6.2."""
    try:
        text = hint_text(load_catalog(), session.posargs)
    except CommandError as exc:
        usage_error(session, exc)
    print(text)
