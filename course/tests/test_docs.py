"""The site cannot drift: pages include real code, the nav follows the manifests, Mermaid is intact.

The browser check of the built site (diagrams drawn offline, search) is ``nox -s docs_check``;
these tests are the fast part that ``nox -s tests`` runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checkpoints.catalog import load_catalog
from docs_tools.check_docs import (
    find_fences,
    navigation_problems,
    read_nav,
    read_nav_translations,
    snippet_problems,
    translation_problems,
)
from docs_tools.vendor_mermaid import VERSION, check_vendored

ROOT = Path(__file__).resolve().parents[2]

PAGES = sorted((ROOT / "docs").rglob("*.md"))
SOURCE = """\
def greet(name: str) -> str:
    # --8<-- [start:greet]
    return f"hello {name}"
    # --8<-- [end:greet]


# --8<-- [start:empty]

# --8<-- [end:empty]
"""


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_shows_code_only_through_existing_snippet_sections(page: Path) -> None:
    assert snippet_problems(page) == []


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_translated_page_keeps_the_sections_and_anchors_of_its_english_page(page: Path) -> None:
    assert translation_problems(page) == []


def test_nav_translations_and_home_pages_follow_the_manifests() -> None:
    assert navigation_problems(load_catalog()) == []


def test_vendored_mermaid_matches_its_pinned_hashes() -> None:
    check_vendored()


def test_site_config_loads_no_font_or_script_from_the_network() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "\n  font: false\n" in config
    scripts = config.split("\nextra_javascript:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert scripts == ["  - assets/vendor/mermaid/mermaid.min.js"], f"mermaid {VERSION} only"
    assert "extra_css:" not in config


# The checker itself: each rule catches what it is for, in a page written to a temporary repo.


def write_repo(tmp_path: Path, page: str) -> Path:
    (tmp_path / "course" / "src").mkdir(parents=True)
    (tmp_path / "course" / "src" / "greet.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "docs").mkdir()
    path = tmp_path / "docs" / "page.md"
    path.write_text(page, encoding="utf-8")
    return path


def test_included_section_passes(tmp_path: Path) -> None:
    page = write_repo(tmp_path, '```python\n--8<-- "course/src/greet.py:greet"\n```\n')
    assert snippet_problems(page, tmp_path) == []


def test_included_section_inside_a_tab_passes(tmp_path: Path) -> None:
    include = '--8<-- "course/src/greet.py:greet"'
    text = f'=== "code"\n\n    ```py title="greet.py"\n    {include}\n    ```\n'
    page = write_repo(tmp_path, text)
    assert snippet_problems(page, tmp_path) == []


def test_shell_commands_and_diagrams_may_be_literal(tmp_path: Path) -> None:
    text = "```bash\nnox -s checkpoint -- 06\n```\n\n```mermaid\nflowchart LR\n  a --> b\n```\n"
    page = write_repo(tmp_path, text)
    assert snippet_problems(page, tmp_path) == []


def test_pasted_python_is_refused(tmp_path: Path) -> None:
    page = write_repo(tmp_path, "Text.\n\n```python\nprint('pasted')\n```\n")
    (problem,) = snippet_problems(page, tmp_path)
    assert problem.startswith("docs/page.md:3: a ```python block must only include snippet")


def test_python_pasted_beside_an_include_is_refused(tmp_path: Path) -> None:
    text = '```python\n--8<-- "course/src/greet.py:greet"\nprint("extra")\n```\n'
    page = write_repo(tmp_path, text)
    (problem,) = snippet_problems(page, tmp_path)
    assert "must only include snippet sections" in problem


def test_block_without_a_language_must_include_too(tmp_path: Path) -> None:
    page = write_repo(tmp_path, "```\nx = 1\n```\n")
    (problem,) = snippet_problems(page, tmp_path)
    assert problem.startswith("docs/page.md:1: a code block must only include")


def test_missing_section_is_refused(tmp_path: Path) -> None:
    page = write_repo(tmp_path, '```python\n--8<-- "course/src/greet.py:farewell"\n```\n')
    (problem,) = snippet_problems(page, tmp_path)
    assert problem.startswith(
        "docs/page.md:2: include 'course/src/greet.py:farewell': "
        "course/src/greet.py has no section 'farewell'"
    )


def test_empty_section_is_refused(tmp_path: Path) -> None:
    page = write_repo(tmp_path, '```python\n--8<-- "course/src/greet.py:empty"\n```\n')
    assert snippet_problems(page, tmp_path) == [
        "docs/page.md:2: include 'course/src/greet.py:empty': "
        "section 'empty' of course/src/greet.py is empty"
    ]


def test_missing_file_is_refused(tmp_path: Path) -> None:
    page = write_repo(tmp_path, '```python\n--8<-- "course/src/gone.py:greet"\n```\n')
    assert snippet_problems(page, tmp_path) == [
        "docs/page.md:2: include 'course/src/gone.py:greet': "
        "no file 'course/src/gone.py' in the repository"
    ]


def test_data_file_may_be_included_whole(tmp_path: Path) -> None:
    page = write_repo(tmp_path, '```json\n--8<-- "course/src/records.jsonl"\n```\n')
    (tmp_path / "course" / "src" / "records.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    assert snippet_problems(page, tmp_path) == []


@pytest.mark.parametrize(
    "target", ["course/src/greet.py", "course/src/greet.py:2:3", "../outside.py:greet"]
)
def test_include_without_a_named_section_inside_the_repo_is_refused(
    tmp_path: Path, target: str
) -> None:
    page = write_repo(tmp_path, f'```python\n--8<-- "{target}"\n```\n')
    (problem,) = snippet_problems(page, tmp_path)
    assert problem.startswith(f"docs/page.md:2: include {target!r}")


def test_fences_are_found_with_their_language_and_body() -> None:
    text = "```{.python .annotate}\na\n```\n\n    ~~~~bash\n    b\n    ~~~~\n"
    fences = find_fences(text)
    assert [(f.line, f.language, f.body) for f in fences] == [
        (1, "python", ("a",)),
        (5, "bash", ("    b",)),
    ]


def test_nav_is_read_with_sections_and_pages() -> None:
    nav = read_nav()
    assert (2, "Home", "index.md") in nav
    assert (2, "Checkpoints", None) in nav
    assert (6, "06 Tool contract", "checkpoints/06_tool_contract.md") in nav
    assert read_nav_translations()["vi"]["Home"] == "Trang chủ"


def test_nav_out_of_step_with_the_manifests_is_reported(tmp_path: Path) -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    catalog = load_catalog()
    last = catalog[-1]
    wrong = tmp_path / "mkdocs.yml"
    renamed = f"- {last.number} Renamed:"
    wrong.write_text(config.replace(f"- {last.number} {last.title}:", renamed), encoding="utf-8")
    problems = navigation_problems(catalog, wrong)
    assert problems[0].startswith("mkdocs.yml: the 'Checkpoints' nav must list the manifests")
    assert problems[1:] == [
        f"mkdocs.yml: nav_translations of 'vi' lack ['{last.number} Renamed'] (write each as "
        f"'{last.number} Renamed: <title in 'vi'>' under that language's nav_translations)",
        f"mkdocs.yml: nav_translations of 'vi' name no nav title ['{last.number} {last.title}']",
    ]


def test_translation_missing_a_section_is_reported(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text("# P\n\n## Outcome\n\n## Next step\n", encoding="utf-8")
    translated = tmp_path / "page.vi.md"
    translated.write_text(
        "# P\n\n## Kết quả { #outcome }\n\n```bash\n## not a heading\n```\n", encoding="utf-8"
    )
    assert translation_problems(translated, tmp_path) == [
        "page.vi.md: its ## sections must carry the anchors of page.md, in order, "
        "like '## … { #outcome }'\n  expected ['outcome', 'next-step']\n  found    ['outcome']"
    ]
    translated.write_text(
        "# P\n\n## Kết quả { #outcome }\n\n## Tiếp theo { #next-step }\n", encoding="utf-8"
    )
    assert translation_problems(translated, tmp_path) == []
