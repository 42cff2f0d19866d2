"""A failing lab test shows the learner what was expected, in full.

Two parts: the helpers of ``checkpoints/support.py`` that pin a message (their failure names the
exception and the whole expected text, never a bare "DID NOT RAISE"), and pytest's settings, in
the course's pyproject.toml and in the one a practice folder gets, that never cut a diff short.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from checkpoints import conftest
from checkpoints.support import (
    PinnedMessage,
    raises_ending_with,
    raises_exactly,
    raises_starting_with,
)
from practice.scaffold import make_practice_folder

ROOT = Path(__file__).resolve().parents[2]
MESSAGE = "budget must be a positive int, got -1"


def refuse(message: str = MESSAGE) -> None:
    raise ValueError(message)


def test_the_exact_message_passes_and_the_exception_is_kept() -> None:
    with raises_exactly(ValueError, MESSAGE) as caught:
        refuse()
    assert str(caught.value) == MESSAGE


def test_a_start_or_an_end_of_the_message_passes() -> None:
    with raises_starting_with(ValueError, "budget must be"):
        refuse()
    with raises_ending_with(ValueError, "got -1"):
        refuse()


def test_nothing_raised_names_the_exception_and_the_whole_message() -> None:
    with pytest.raises(pytest.fail.Exception) as failure:  # noqa: SIM117 (the helper is tested)
        with raises_exactly(ValueError, MESSAGE):
            pass
    assert (
        str(failure.value)
        == f"DID NOT RAISE ValueError: expected ValueError with the message\n  {MESSAGE}"
    )


def test_another_message_shows_both_in_full_with_the_error_as_cause() -> None:
    with pytest.raises(AssertionError) as failure:  # noqa: SIM117
        with raises_exactly(ValueError, MESSAGE):
            refuse("budget must be a positive int, got -2")
    assert str(failure.value) == (
        "ValueError was raised with another message.\n"
        f"expected the message:\n  {MESSAGE}\n"
        "got the message:\n  budget must be a positive int, got -2"
    )
    assert type(failure.value.__cause__) is ValueError


@pytest.mark.parametrize(
    ("helper", "wording"),
    [
        (raises_starting_with, "a message starting with"),
        (raises_ending_with, "a message ending with"),
    ],
)
def test_a_start_or_end_that_does_not_fit_says_which_part_was_pinned(
    helper: Callable[[type[ValueError], str], PinnedMessage[ValueError]], wording: str
) -> None:
    with pytest.raises(AssertionError, match=f"expected {wording}:\n  nothing like it\n"):  # noqa: SIM117
        with helper(ValueError, "nothing like it"):
            refuse()


def test_an_exception_of_another_type_passes_through_untouched() -> None:
    # So a lab's stub (NotImplementedError) still reads as "not started" in the labs report.
    stub = NotImplementedError("Lab 9.1: write this")
    with pytest.raises(NotImplementedError) as failure:  # noqa: SIM117
        with raises_exactly(ValueError, MESSAGE):
            raise stub
    assert failure.value is stub


def test_a_stub_passes_through_a_pin_of_its_base_class_and_reads_as_not_started() -> None:
    # NotImplementedError is a RuntimeError, but a lab's stub is code not yet written, never
    # the refusal a test pins: it goes on as itself, for the labs report to find.
    stub = NotImplementedError("Lab 2.2: write end")
    with pytest.raises(NotImplementedError) as failure:  # noqa: SIM117
        with raises_exactly(RuntimeError, "cannot push to an ended stream"):
            raise stub
    assert failure.value is stub
    assert conftest.stub_in_chain(failure.value) == "2.2"
    with raises_exactly(NotImplementedError, "Lab 2.2: write end"):  # unless it is the pin
        raise stub


def test_the_value_is_only_there_once_the_block_raised() -> None:
    pinned = raises_exactly(ValueError, MESSAGE)
    with pytest.raises(AttributeError, match="the block has not raised"):
        _ = pinned.value


# ---------------------------------------------------------------------------------------------
# pytest's settings: run a tiny failing test file with them and read what a learner reads
# ---------------------------------------------------------------------------------------------

FAILING = """
from checkpoints.support import raises_exactly

EXPECTED = [f"line {n} of a long expected value that learners must read in full" for n in range(40)]


def test_a_long_value() -> None:
    assert ["the first line only"] == EXPECTED


def test_nothing_raised() -> None:
    with raises_exactly(ValueError, "budget must be a positive int, got -1"):
        pass
"""


def run_pytest(folder: Path, *options: str) -> str:
    (folder / "test_tiny.py").write_text(FAILING, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "BUILD_NUMBER", "PYTEST_ADDOPTS"}}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *options, "test_tiny.py"],
        cwd=folder,
        env={**env, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    return run.stdout


def assert_shows_everything(output: str) -> None:
    assert "line 39 of a long expected value that learners must read in full" in output
    assert "Use -v to get more diff" not in output
    assert "truncated" not in output
    # Under "E": the exception's name, then the whole message on its own line.
    expected = r"DID NOT RAISE ValueError: expected ValueError with the message\nE +budget must "
    assert re.search(expected + r"be a positive int, got -1\n", output)


@pytest.mark.timeout(120)  # a pytest run of its own, slower on a busy machine
def test_the_course_settings_show_every_expected_line(tmp_path: Path) -> None:
    # The course's own pyproject.toml, read from where the tiny file is: rootdir is the course.
    folder = tmp_path / "course"
    folder.mkdir()
    output = run_pytest(folder, "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT))
    assert_shows_everything(output)


@pytest.mark.timeout(120)  # a pytest run of its own, slower on a busy machine
def test_a_practice_folder_shows_every_expected_line(tmp_path: Path) -> None:
    practice = make_practice_folder(ROOT, "01", tmp_path / "practice")
    # As a learner runs it: `nox -s checkpoint` adds --tb=short, and the folder's own settings.
    output = run_pytest(practice, "--tb=short")
    assert_shows_everything(output)
