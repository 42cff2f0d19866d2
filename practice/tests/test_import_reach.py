"""The import scan that decides which earlier tests a practice-folder proof runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from practice.tests.import_reach import harness_modules_imported, harness_reach


@pytest.mark.parametrize(
    ("source", "modules"),
    [
        ("from harness.tool import ToolSpec\n", {"__init__.py", "tool.py"}),
        ("import harness.messages as messages_module\n", {"__init__.py", "messages.py"}),
        ("from harness import protocol, tool\n", {"__init__.py", "protocol.py", "tool.py"}),
        ("from .abort import AbortSignal\n", {"__init__.py", "abort.py"}),
        (
            "def late() -> None:\n    from harness.agent_loop import run\n",
            {"__init__.py", "agent_loop.py"},
        ),
        ("import harnessing\nfrom checkpoints import support\nimport os.path\n", set()),
    ],
    ids=["from-module", "import-as", "from-package", "relative", "inside-a-function", "others"],
)
def test_every_kind_of_import_names_the_module_file(source: str, modules: set[str]) -> None:
    assert harness_modules_imported(source) == modules


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


def test_reach_follows_imports_from_module_to_module_and_stops_at_missing_files(
    tmp_path: Path,
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    write(
        src,
        {
            "__init__.py": '"""The package."""\n',
            "a.py": "from harness.b import B\n",
            "b.py": "from harness import c\nB = 1\n",
            "c.py": "from harness.a import B  # a cycle back to a\n",
            "lonely.py": "X = 1\n",
        },
    )
    test = tmp_path / "test_a.py"
    test.write_text("from harness.a import B\nfrom harness import Missing\n", encoding="utf-8")
    assert harness_reach([test], src) == {"__init__.py", "a.py", "b.py", "c.py"}


def test_a_test_that_imports_no_harness_module_reaches_nothing(tmp_path: Path) -> None:
    test = tmp_path / "test_plain.py"
    test.write_text("import json\n\n\ndef test_x() -> None:\n    pass\n", encoding="utf-8")
    assert harness_reach([test], tmp_path) == frozenset()
