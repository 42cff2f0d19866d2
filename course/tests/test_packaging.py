"""course/src is the package `harness`: in the editable install, in a wheel, and typed."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import harness

ROOT = Path(__file__).resolve().parents[2]


def test_editable_install_imports_harness_from_course_src() -> None:
    assert Path(harness.__file__).resolve().parent == ROOT / "course" / "src"


def test_every_reference_module_imports_as_harness_submodule_from_course_src() -> None:
    modules = sorted(p.stem for p in (ROOT / "course" / "src").glob("*.py") if p.stem != "__init__")
    files = [Path(str(importlib.import_module(f"harness.{name}").__file__)) for name in modules]
    assert files == [ROOT / "course" / "src" / f"{name}.py" for name in modules]


@pytest.mark.timeout(120)
def test_wheel_maps_course_src_to_harness_and_ships_py_typed(tmp_path: Path) -> None:
    # Build from a copy, in a child process, so the build never writes into the working tree.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "course" / "src", source / "course" / "src")
    build = "from setuptools import build_meta; print(build_meta.build_wheel('dist'))"
    done = subprocess.run(
        [sys.executable, "-c", build], cwd=source, capture_output=True, text=True, check=True
    )
    wheel_name = done.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(source / "dist" / wheel_name) as wheel:
        names = set(wheel.namelist())
    assert {"harness/__init__.py", "harness/py.typed"} <= names
    assert not any(name.startswith("course/") for name in names)
