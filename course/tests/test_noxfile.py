"""The learner's command, `nox -s checkpoint -- NN`, picks one checkpoint or says why not."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from checkpoints.catalog import load_catalog
from practice.commands import CommandError, checkpoint_usage

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()


def load_noxfile() -> ModuleType:
    spec = importlib.util.spec_from_file_location("course_noxfile", ROOT / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NOXFILE = load_noxfile()


@pytest.mark.parametrize("argument", ["6", "06"])
def test_one_number_selects_exactly_that_checkpoint(argument: str) -> None:
    chosen = NOXFILE.chosen_checkpoints([argument], CATALOG)
    assert [c.name for c in chosen] == ["06_tool_contract"]


def test_all_selects_every_checkpoint_in_order() -> None:
    assert NOXFILE.chosen_checkpoints(["all"], CATALOG) == CATALOG


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ([], "expected one checkpoint number, such as 06, or all"),
        (["99"], "no checkpoint 99"),
        (["abc"], "no checkpoint abc"),
        (["01", "02"], "expected one checkpoint number, such as 06, or all; got 01 02"),
        (["all", "01"], "expected one checkpoint number, such as 06, or all; got all 01"),
    ],
)
def test_bad_arguments_name_the_problem(arguments: list[str], problem: str) -> None:
    with pytest.raises(CommandError) as caught:
        NOXFILE.chosen_checkpoints(arguments, CATALOG)
    assert caught.value.problem == problem
    assert caught.value.usage == NOXFILE.checkpoint_usage(CATALOG)


@pytest.mark.parametrize("argument", ["7", "07"])
def test_verify_checks_exactly_the_one_checkpoint_named(argument: str) -> None:
    assert NOXFILE.checkpoint_to_verify([argument], CATALOG).name == "07_agent_loop"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ([], "expected one checkpoint number, such as 06"),
        (["99"], "no checkpoint 99"),
        (["all"], "no checkpoint all"),
        (["06", "07"], "expected one checkpoint number, such as 06; got 06 07"),
    ],
)
def test_verify_names_the_problem_and_lists_the_checkpoints(
    arguments: list[str], problem: str
) -> None:
    with pytest.raises(CommandError) as caught:
        NOXFILE.checkpoint_to_verify(arguments, CATALOG)
    assert caught.value.problem == problem
    usage = caught.value.usage
    assert usage.startswith("usage: nox -s verify -- NN [pytest options]\n")
    assert all(f"  {c.number}  {c.title}" in usage for c in CATALOG)


@pytest.mark.parametrize(
    ("arguments", "names", "options"),
    [
        (["06"], ["06"], []),
        (["06", "--lab", "6.2", "-x"], ["06"], ["--lab", "6.2", "-x"]),
        (["-1"], [], ["-1"]),
        (["01", "02", "-x"], ["01", "02"], ["-x"]),
    ],
)
def test_pytest_options_follow_the_checkpoint(
    arguments: list[str], names: list[str], options: list[str]
) -> None:
    assert NOXFILE.split_options(arguments) == (names, options)


def test_usage_lists_every_checkpoint() -> None:
    usage = NOXFILE.checkpoint_usage(CATALOG)
    assert usage == checkpoint_usage(CATALOG, practice_folder=False)
    assert all(f"  {c.number}  {c.title}" in usage for c in CATALOG)


def run_nox(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nox", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        (["99"], "no checkpoint 99"),
        (["abc"], "no checkpoint abc"),
        ([], "expected one checkpoint number, such as 06, or all"),
    ],
)
def test_nox_checkpoint_with_bad_arguments_prints_usage_and_fails(
    arguments: list[str], problem: str
) -> None:
    done = run_nox("-s", "checkpoint", "--", *arguments)
    assert done.returncode != 0
    assert "usage: nox -s checkpoint -- NN" in done.stderr
    assert "06  Tool contract" in done.stderr
    assert "Tool contract." not in done.stderr  # the usage is printed as it is, no period added
    # nox's own last line carries only the problem, never the usage.
    assert re.search(
        rf"Session checkpoint aborted: {re.escape(problem)}( \(took [^)]*\))?\.$",
        done.stderr.rstrip().splitlines()[-1],
    )


@pytest.mark.timeout(60)
def test_nox_verify_with_a_bad_argument_prints_usage_and_names_the_problem() -> None:
    done = run_nox("-s", "verify", "--", "99")
    assert done.returncode != 0
    assert "usage: nox -s verify -- NN" in done.stderr
    assert "06  Tool contract" in done.stderr
    assert re.search(
        r"Session verify aborted: no checkpoint 99( \(took [^)]*\))?\.$",
        done.stderr.rstrip().splitlines()[-1],
    )


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("arguments", "problem"),
    [(["9.9"], "no lab 9.9"), ([], "expected one lab id, such as 6.2")],
)
def test_nox_hint_with_bad_arguments_lists_the_labs_and_names_the_problem(
    arguments: list[str], problem: str
) -> None:
    done = run_nox("-s", "hint", "--", *arguments)
    assert done.returncode != 0
    assert done.stderr.startswith("nox > Running session hint\nusage: nox -s hint -- N.M\n")
    last = done.stderr.rstrip().splitlines()[-1]
    assert re.fullmatch(
        rf"nox > Session hint aborted: {re.escape(problem)}( \(took [^)]*\))?\.", last
    )
    assert ".." not in last


class RecordingSession:
    """Just enough of a nox session to see what a session function asks pytest to run."""

    def __init__(self, posargs: list[str]) -> None:
        self.posargs = posargs
        self.runs: list[tuple[str, ...]] = []

    def install(self, *args: str) -> None:
        pass

    def run(self, *args: str, **options: object) -> None:
        self.runs.append(args)


@pytest.mark.parametrize(
    ("posargs", "expected"),
    [
        ([], ("compare",)),
        (["-k", "pi"], ("compare", "-k", "pi")),
        (["compare/test_06_tool_contract.py"], ("compare/test_06_tool_contract.py",)),
        (["compare/test_07_agent_loop.py", "-x"], ("compare/test_07_agent_loop.py", "-x")),
    ],
)
def test_nox_compare_runs_every_probe_or_only_the_file_named(
    posargs: list[str], expected: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(NOXFILE, "install_pi_packages", lambda session, folder: None)
    session = RecordingSession(posargs)
    NOXFILE.compare(session)
    assert session.runs == [("pytest", "-c", "compare/pytest.ini", *expected)]


def test_nox_tests_leaves_the_practice_folder_proofs_to_nox_proofs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(NOXFILE, "install_course", lambda session: None)
    tests, proofs = RecordingSession(["-x"]), RecordingSession([])
    NOXFILE.tests(tests)
    NOXFILE.proofs(proofs)
    workers = ("pytest", "-n", "auto", "--dist", "loadgroup")
    assert tests.runs == [(*workers, "-m", "not proof", "-x")]
    assert proofs.runs == [(*workers, "-m", "proof", "practice/tests")]
    scaffolds = (ROOT / "practice/tests/test_course_scaffolds.py").read_text(encoding="utf-8")
    assert "pytestmark = [pytest.mark.timeout(900), pytest.mark.proof]" in scaffolds
