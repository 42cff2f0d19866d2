"""The Vietnamese edition: pages follow the glossary, and a stale translation says so.

``docs_tools/translations.py`` is the check (run by ``nox -s docs`` through ``check_docs.py``);
``docs_tools/translation_notice.py`` is the MkDocs hook that shows the notice on the site.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from docs_tools import check_docs
from docs_tools.translation_notice import on_page_markdown
from docs_tools.translations import (
    GLOSSARY,
    Status,
    _pattern,
    config_problems,
    glossary_problems,
    load_glossary,
    main,
    recorded_hash,
    source_hash,
    stamp,
    status_of,
    translation_check,
)

ROOT = Path(__file__).resolve().parents[2]
VIETNAMESE_PAGES = sorted((ROOT / "docs").rglob("*.vi.md"))
ENGLISH = "# 01 · Python protocols\n\n## Outcome\n\nRecords first.\n"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """Return a docs folder holding one English page, ``checkpoints/01_protocol.md``."""
    folder = tmp_path / "docs" / "checkpoints"
    folder.mkdir(parents=True)
    (folder / "01_protocol.md").write_text(ENGLISH, encoding="utf-8")
    return tmp_path / "docs"


def write_translation(docs: Path, body: str, *, source: str | None = None) -> Path:
    """Write ``01_protocol.vi.md``, recording the hash of ``source`` (default: the English page)."""
    digest = source_hash(ENGLISH if source is None else source)
    page = docs / "checkpoints" / "01_protocol.vi.md"
    page.write_text(f"---\nsource_sha256: {digest}\n---\n\n{body}", encoding="utf-8")
    return page


def problems_of(page: Path) -> list[str]:
    return glossary_problems(page, load_glossary(), page.parents[2])


@pytest.mark.parametrize(
    "page", VIETNAMESE_PAGES, ids=[str(p.relative_to(ROOT)) for p in VIETNAMESE_PAGES]
)
def test_every_vietnamese_page_follows_the_glossary(page: Path) -> None:
    assert glossary_problems(page, load_glossary()) == []


def test_the_glossary_never_avoids_its_own_terms() -> None:
    glossary = load_glossary()
    terms = [term.vi for term in (*glossary.terms, *glossary.sections)]
    clashes = [
        (avoid, vi)
        for term in (*glossary.terms, *glossary.sections)
        for avoid in term.avoid
        for vi in terms
        if _pattern(avoid).search(vi)
    ]
    assert clashes == []


def test_an_avoided_word_is_reported_with_page_line_and_the_glossary_term(docs: Path) -> None:
    page = write_translation(docs, "# 01\n\nKiểm tra trước mọi tác động.\n")

    assert problems_of(page) == [
        "docs/checkpoints/01_protocol.vi.md:7: 'tác động' -> write 'tác dụng phụ' "
        "(glossary: side effect)"
    ]


def test_a_phrase_wrapped_onto_the_next_line_is_still_found(docs: Path) -> None:
    page = write_translation(docs, "Lớp này giữ cho một kết quả. Có test giữ điều\nnày.\n")

    assert [problem.split(": ", 1)[1] for problem in problems_of(page)] == [
        "'giữ điều này' -> write 'kiểm chứng' (glossary: pin, prove (what a test does))"
    ]


def test_code_anchors_link_targets_and_includes_are_not_checked(docs: Path) -> None:
    body = (
        "## Kết quả đạt được { #bounded-deterministic-output }\n\n"
        "Gọi `serialize_output` và `output`, rồi đọc [trang](tool-output.md#output).\n\n"
        '```python\n--8<-- "course/src/tool_output.py:serialize"\n```\n'
    )
    page = write_translation(docs, body)

    assert problems_of(page) == []


def test_a_shell_comment_and_a_diagram_label_are_prose(docs: Path) -> None:
    body = "```bash\nnox -s checkpoint -- 01   # các test trọng tâm\n```\n"
    page = write_translation(docs, body)

    assert [problem.split(": ", 1)[1] for problem in problems_of(page)] == [
        "'test trọng tâm' -> write 'test tập trung' (glossary: focused test)"
    ]


def test_a_programs_output_in_a_text_block_is_not_checked(docs: Path) -> None:
    body = (
        "```text\n[... 10 lines left out; the whole output is in output-1.txt]\n```\n\n"
        "````text\n```\nthe output goes on\n````\n\n"
        "Sau khối đó, output lại là văn xuôi.\n"
    )
    page = write_translation(docs, body)

    assert problems_of(page) == [
        "docs/checkpoints/01_protocol.vi.md:14: 'output' -> write 'đầu ra' "
        "(glossary: output (what a tool returns))"
    ]


def test_a_lesson_section_titled_otherwise_is_reported(docs: Path) -> None:
    page = write_translation(docs, "## Kiến thức cần có { #prerequisites }\n")

    assert problems_of(page)[0] == (
        "docs/checkpoints/01_protocol.vi.md:5: section 'Kiến thức cần có' must be titled "
        "'Điều kiện tiên quyết' (glossary: Prerequisites)"
    )


def test_a_list_of_sections_names_them_as_the_glossary_does(docs: Path) -> None:
    page = write_translation(docs, "1. **Đọc** các mục *Outcome* và *Cơ chế*.\n")

    assert [problem.split(": ", 1)[1] for problem in problems_of(page)] == [
        "'*Outcome*' -> write 'Kết quả đạt được' (glossary: Outcome)"
    ]


def test_a_tone_mark_on_the_second_vowel_is_reported_with_the_classic_spelling(
    docs: Path,
) -> None:
    page = write_translation(docs, "Khoá học: huỷ rồi chuẩn hoá.\nQuý khách hoàn tất, thủy.\n")

    assert [problem.split(": ", 1)[1].split(" (")[0] for problem in problems_of(page)] == [
        "'Khoá' -> write 'Khóa'",
        "'huỷ' -> write 'hủy'",
        "'hoá' -> write 'hóa'",
    ]


def test_the_vietnamese_titles_of_mkdocs_yml_follow_the_glossary(tmp_path: Path) -> None:
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "# output, cycles: English comments are not checked\n"
        "nav_translations:\n"
        "  06 Tool contract: 06 Hợp đồng tool\n",
        encoding="utf-8",
    )

    assert config_problems(config, load_glossary()) == [
        "mkdocs.yml:3: 'Hợp đồng' -> write 'quy ước' (glossary: contract)"
    ]
    assert config_problems(ROOT / "mkdocs.yml", load_glossary()) == []


def test_a_glossary_entry_without_a_vietnamese_term_is_refused(tmp_path: Path) -> None:
    glossary = tmp_path / "glossary.toml"
    glossary.write_text('terms = [{ en = "tool" }]\n', encoding="utf-8")

    with pytest.raises(ValueError, match=r"every entry needs 'en' and 'vi'.*'tool'"):
        load_glossary(glossary)


def test_a_glossary_violation_fails_the_docs_check(
    docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(ROOT / "mkdocs.yml", docs.parent / "mkdocs.yml")
    write_translation(docs, "Tool không ai biết.\n")
    # The other rules read the repository's checkpoints, which this small site does not have.
    monkeypatch.setattr(check_docs, "pinned_message_problems", lambda root: [])
    monkeypatch.setattr(check_docs, "derived_problems", lambda root: [])

    problems = check_docs.all_problems(docs.parent)

    assert "docs/checkpoints/01_protocol.vi.md:5: 'không ai biết' -> write" in "\n".join(problems)


def test_a_missing_translation_is_printed_not_fatal(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert translation_check(docs.parent) == []
    assert capsys.readouterr().out == (
        "translation: docs/checkpoints/01_protocol.md: no vi translation (the site says so)\n"
    )


def test_a_translation_older_than_its_english_page_is_printed_not_fatal(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_translation(docs, "# 01\n", source="# the English page before its last edit\n")

    assert translation_check(docs.parent) == []
    assert capsys.readouterr().out.startswith(
        "translation: docs/checkpoints/01_protocol.vi.md: older than "
        "docs/checkpoints/01_protocol.md (the site says so)"
    )


def test_an_up_to_date_translation_is_not_reported(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_translation(docs, "# 01\n")

    assert translation_check(docs.parent) == []
    assert capsys.readouterr().out == ""


def test_a_translation_that_records_no_hash_is_a_placeholder_not_yet_translated(
    docs: Path,
) -> None:
    (docs / "checkpoints" / "01_protocol.vi.md").write_text("# 01\n", encoding="utf-8")

    assert status_of(docs / "checkpoints" / "01_protocol.md") is Status.MISSING


def test_editing_the_english_page_makes_the_translation_outdated_until_stamped(
    docs: Path,
) -> None:
    english = docs / "checkpoints" / "01_protocol.md"
    translation = write_translation(docs, "---\n")
    english.write_text(ENGLISH + "\nA new paragraph.\n", encoding="utf-8")
    assert status_of(english) is Status.OUTDATED

    digest = stamp(translation)

    assert status_of(english) is Status.UP_TO_DATE
    text = translation.read_text(encoding="utf-8")
    assert recorded_hash(text) == digest
    assert text.endswith("\n\n---\n"), "the body, a rule included, is kept as it was"


def test_stamp_adds_the_field_to_a_page_without_front_matter(docs: Path) -> None:
    translation = docs / "checkpoints" / "01_protocol.vi.md"
    translation.write_text("# 01\n", encoding="utf-8")

    stamp(translation)

    assert translation.read_text(encoding="utf-8") == (
        f"---\nsource_sha256: {source_hash(ENGLISH)}\n---\n\n# 01\n"
    )


def test_stamp_refuses_a_page_that_is_not_a_translation(docs: Path) -> None:
    with pytest.raises(ValueError, match=r"not a translation \(its name must end in \.vi\.md\)"):
        stamp(docs / "checkpoints" / "01_protocol.md")


def test_the_stamp_command_names_the_page_and_its_hash(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    translation = write_translation(docs, "# 01\n", source="an older English page")

    assert main(["stamp", str(translation)]) == 0

    assert capsys.readouterr().out == f"{translation}: source_sha256 {source_hash(ENGLISH)}\n"
    assert status_of(docs / "checkpoints" / "01_protocol.md") is Status.UP_TO_DATE


def test_the_stamp_command_refuses_a_page_with_no_english_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    orphan = tmp_path / "orphan.vi.md"
    orphan.write_text("# x\n", encoding="utf-8")

    assert main(["stamp", str(orphan)]) == 2

    assert capsys.readouterr().err == (
        f"translations: {orphan}: no English page orphan.md beside it\n"
    )
    assert orphan.read_text(encoding="utf-8") == "# x\n", "nothing was written"


def build(page_file: Path, url: str, meta: dict[str, str], language: str = "vi") -> str:
    """Run the hook as MkDocs would for one page, and return the Markdown it gives back."""
    page = SimpleNamespace(file=SimpleNamespace(abs_src_path=str(page_file)), url=url, meta=meta)
    config = {"theme": {"language": language}}
    return on_page_markdown("# Title\n\nBody.\n", page=page, config=config, files=None)


def test_the_vietnamese_site_says_when_a_page_has_no_translation(docs: Path) -> None:
    markdown = build(docs / "checkpoints" / "01_protocol.md", "vi/checkpoints/01_protocol/", {})

    assert markdown.startswith('# Title\n\n!!! warning "Bản dịch này chưa có"\n')
    assert '<a href="../../../checkpoints/01_protocol/" hreflang="en">' in markdown


def test_the_vietnamese_site_says_when_a_translation_is_older(docs: Path) -> None:
    page = write_translation(docs, "# 01\n", source="an older English page")
    meta = {"source_sha256": source_hash("an older English page")}

    markdown = build(page, "vi/checkpoints/01_protocol/", meta)

    assert '!!! warning "Bản dịch này cũ hơn bản tiếng Anh"' in markdown


def test_an_up_to_date_translation_and_the_english_site_carry_no_notice(docs: Path) -> None:
    page = write_translation(docs, "# 01\n")
    meta = {"source_sha256": source_hash(ENGLISH)}
    english = docs / "checkpoints" / "01_protocol.md"

    assert build(page, "vi/checkpoints/01_protocol/", meta) == "# Title\n\nBody.\n"
    assert build(english, "checkpoints/01_protocol/", {}, "en") == "# Title\n\nBody.\n"


def test_the_home_page_notice_links_the_english_home_page(tmp_path: Path) -> None:
    (tmp_path / "index.md").write_text("# Home\n", encoding="utf-8")

    markdown = build(tmp_path / "index.md", "vi/", {})

    assert '<a href="../" hreflang="en">' in markdown


def test_mkdocs_loads_the_notice_hook() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")

    hooks = re.search(r"^hooks:\n((?:  .*\n)+)", config, re.MULTILINE)
    assert hooks is not None, "mkdocs.yml has no hooks: list"
    assert "  - docs_tools/translation_notice.py\n" in hooks[1]
    assert GLOSSARY.is_file()
