"""Which ``harness`` modules a focused test file can reach through its imports, read statically.

A practice folder gives the learner every earlier checkpoint's module byte for byte; only the
modules it turns into skeletons differ from the reference. An earlier checkpoint's test file
whose imports, followed from module to module, never reach such a module runs exactly the code
the course's own run passes, so the practice-folder proofs run in a folder only the earlier test
files that can reach one of its skeletons (``test_course_scaffolds``).

The scan reads every ``import`` statement of a file, at any depth (a function's own import
counts too). The proofs check it against what a real run imported: every ``harness`` module a
checkpoint's round-trip run loaded must be in the reach of that checkpoint's test file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

PACKAGE = "harness"
INIT = "__init__.py"


def harness_modules_imported(source: str) -> set[str]:
    """Return the files (``tool.py``, ``__init__.py``) of the harness modules ``source`` imports.

    ``import harness.tool``, ``from harness.tool import X``, ``from harness import tool`` and,
    inside the package, ``from .tool import X`` all name ``tool.py``; any of them also runs the
    package's ``__init__.py``. A name that is not a module (``from harness import X``) yields a
    file that does not exist, which the caller drops.
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        dotted: list[str] = []
        if isinstance(node, ast.Import):
            dotted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: only the harness package itself uses them
                base = f"{PACKAGE}.{base}" if base else PACKAGE
            dotted = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for name in dotted:
            parts = name.split(".")
            if parts[0] != PACKAGE:
                continue
            found.add(INIT)
            if len(parts) > 1:
                found.add(f"{parts[1]}.py")
    return found


def harness_reach(starts: Iterable[Path], src: Path) -> frozenset[str]:
    """Return the harness modules in ``src`` that the files ``starts`` reach by imports.

    ``src`` is a folder holding the package (``course/src``); the result names files in it.
    """
    reached: set[str] = set()
    waiting = [path.read_text(encoding="utf-8") for path in starts]
    while waiting:
        for module in harness_modules_imported(waiting.pop()):
            if module not in reached and (src / module).is_file():
                reached.add(module)
                waiting.append((src / module).read_text(encoding="utf-8"))
    return frozenset(reached)
