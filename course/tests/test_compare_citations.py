"""A page's claim about a framework names the probe that checks it, and that probe exists.

The probes in compare/ run only in ``nox -s compare`` (they need the frameworks); this test runs
in ``nox -s tests`` without them: it reads the probe files as text, so a citation cannot dangle
and a probe cannot lose the page sentence it backs.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from docs_tools.promises import DRAFT_NOTICE

ROOT = Path(__file__).resolve().parents[2]
COMPARE = ROOT / "compare"
PAGES = sorted((ROOT / "docs" / "checkpoints").glob("*.md"))
CITATION = re.compile(r"compare/((?:[\w-]+/)*test_\w+\.py)::(test_\w+)")
COMPARE_HEADING = "## Compare with real frameworks"


def probes_in(path: Path) -> set[str]:
    """The names of the test functions defined at the top level of one probe file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        node.name
        for node in tree.body
        if isinstance(node, functions) and node.name.startswith("test_")
    }


def dangling_citations(text: str, compare: Path) -> list[str]:
    """Each citation in ``text`` whose file or test function does not exist, with the reason."""
    problems: list[str] = []
    probes: dict[str, set[str] | None] = {}  # each file parsed once: a page cites it often
    for match in CITATION.finditer(text):
        file, name = match.groups()
        if file not in probes:
            path = compare / file
            probes[file] = probes_in(path) if path.is_file() else None
        found = probes[file]
        if found is None:
            problems.append(f"compare/{file}::{name}: no such probe file")
        elif name not in found:
            problems.append(f"compare/{file}::{name}: no test function {name} in compare/{file}")
    return problems


def compare_section(text: str) -> str:
    """The "Compare with real frameworks" section of a page (its Performance part included)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(COMPARE_HEADING)), None)
    if start is None:
        return ""
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
        len(lines),
    )
    return "\n".join(lines[start:end])


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_probe_a_page_cites_exists(page: Path) -> None:
    problems = dangling_citations(page.read_text(encoding="utf-8"), COMPARE)
    assert not problems, f"{page.relative_to(ROOT)} cites probes that do not exist:\n" + "\n".join(
        problems
    )


# The English page states the facts; a translation mirrors its cells (and may cite the same
# probes, which the dangling check above then covers), but is not required to.
ENGLISH_PAGES = [page for page in PAGES if not page.name.endswith(".vi.md")]


@pytest.mark.parametrize("page", ENGLISH_PAGES, ids=lambda page: page.name)
def test_every_comparison_section_cites_a_probe(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    section = compare_section(text)
    if not section:
        pytest.skip(f"{page.name} has no comparison section")
    if DRAFT_NOTICE in text and not CITATION.search(section):
        # A draft may say its comparison is not written yet; it may not claim anything unprobed,
        # which review of the draft checks. Once it cites a probe, its comparison is written and
        # checked like any other. The box comes off only once this test passes.
        pytest.skip(f"{page.name} is a draft whose comparison is not written yet")
    assert CITATION.search(section), (
        f"{page.relative_to(ROOT)}: its comparison section cites no probe; back each claim with "
        "a test in compare/ and cite it as (probe: `compare/test_NN_....py::test_...`)"
    )


# What a framework row may name as its evidence besides a citation: the probe cited just above
# it, or the released file it was read in.
OTHER_EVIDENCE = ("same probe", "read in")


def uncited_framework_rows(section: str) -> list[str]:
    """The rows of the section's `| framework | … |` tables that name no evidence.

    The course's own row (`this course`) states what the checkpoint does, which its tests
    check; the "### Performance" part is measured by `nox -s bench`, whatever its headers.
    """
    rows: list[str] = []
    in_framework_table = False
    for line in section.partition("\n### Performance")[0].splitlines():
        if not line.startswith("|"):
            in_framework_table = False
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0] == "framework":
            in_framework_table = True
            continue
        if not in_framework_table or set(cells[0]) <= {"-", " ", ":"}:
            continue
        if cells[0] == "this course":
            continue
        if not CITATION.search(line) and not any(word in line for word in OTHER_EVIDENCE):
            rows.append(line)
    return rows


@pytest.mark.parametrize("page", ENGLISH_PAGES, ids=lambda page: page.name)
def test_every_framework_row_names_its_evidence(page: Path) -> None:
    rows = uncited_framework_rows(compare_section(page.read_text(encoding="utf-8")))
    assert not rows, (
        f"{page.relative_to(ROOT)}: rows of a comparison table that cite no probe and name no "
        "source they were read in:\n" + "\n".join(row[:120] for row in rows)
    )


def test_a_framework_row_without_evidence_is_named() -> None:
    section = (
        "## Compare with real frameworks\n"
        "| framework | Timeouts |\n| --- | --- |\n"
        "| this course | per tool |\n"
        "| Pi SDK | none (probe: `compare/test_07_x.py::test_none`) |\n"
        "| MCP | none (same probe) |\n"
        "| Agents | raises (read in `agents/tool.py`) |\n"
        "| LangChain | none at all |\n"
        "\n| path | µs |\n| --- | --- |\n| baseline | 13.4 |\n"
        "\n### Performance\n\n| framework | µs |\n| --- | --- |\n| Pi SDK | 12.0 |\n"
    )
    assert uncited_framework_rows(section) == ["| LangChain | none at all |"]


def test_every_probe_backs_a_claim_on_a_page() -> None:
    cited = {match.groups() for page in PAGES for match in CITATION.finditer(page.read_text())}
    probes = {
        (path.relative_to(COMPARE).as_posix(), name)
        for path in sorted(COMPARE.rglob("test_*.py"))
        if "node_modules" not in path.parts
        for name in probes_in(path)
    }
    assert probes, "compare/ holds no probe"
    uncited = sorted(f"compare/{file}::{name}" for file, name in probes - cited)
    assert not uncited, "probes that no page cites (cite each next to its claim):\n" + "\n".join(
        uncited
    )


def test_a_dangling_citation_is_named_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "test_99_x.py").write_text("def test_real() -> None:\n    pass\n")
    text = (
        "(probe: `compare/test_99_x.py::test_real`) "
        "(probe: `compare/test_99_x.py::test_renamed`) "
        "(probe: `compare/test_98_gone.py::test_real`)"
    )
    assert dangling_citations(text, tmp_path) == [
        "compare/test_99_x.py::test_renamed: no test function test_renamed in compare/test_99_x.py",
        "compare/test_98_gone.py::test_real: no such probe file",
    ]


def test_a_comparison_section_ends_at_the_next_section() -> None:
    page = (
        "## Mechanism\nx `compare/test_01_a.py::test_b`\n"
        "## Compare with real frameworks\ny\n## Next\n"
    )
    assert compare_section(page) == "## Compare with real frameworks\ny"
    assert not CITATION.search(compare_section(page))
