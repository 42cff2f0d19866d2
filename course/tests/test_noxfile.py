"""The learner's command, `nox -s checkpoint -- NN`, picks one checkpoint or says why not."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from checkpoints.catalog import load_catalog

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
    chosen = NOXFILE.select_checkpoints([argument], CATALOG)
    assert [c.name for c in chosen] == ["06_tool_contract"]


def test_all_selects_every_checkpoint_in_order() -> None:
    assert NOXFILE.select_checkpoints(["all"], CATALOG) == CATALOG


@pytest.mark.parametrize("arguments", [[], ["99"], ["abc"], ["01", "02"], ["-1"], ["all", "01"]])
def test_bad_arguments_select_nothing(arguments: list[str]) -> None:
    assert NOXFILE.select_checkpoints(arguments, CATALOG) == ()


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
    assert all(f"  {c.number}  {c.title}" in usage for c in CATALOG)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("arguments", [["99"], ["abc"], []])
def test_nox_checkpoint_with_bad_arguments_prints_usage_and_fails(arguments: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nox", "-s", "checkpoint", "--", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "usage: nox -s checkpoint -- NN" in done.stderr
    assert "06  Tool contract" in done.stderr
    assert "Tool contract." not in done.stderr  # the usage is printed as it is, no period added
