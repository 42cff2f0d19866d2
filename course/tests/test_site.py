"""The site checks catch what a reader would meet: each rule fails on a small broken example.

``docs_tools/site_check.py`` (``nox -s docs_check``) measures the built site in Chromium and
judges it with ``docs_tools/site_rules.py``; the hooks of ``docs_tools/site_hooks.py`` build
the search indexes and 404 pages. The rules and hooks are tested here without a browser. The
measurements need Chromium and the ``playwright`` package: ``nox -s docs_check`` runs them, and
elsewhere they are skipped, saying what is missing.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docs_tools.site_hooks import normalise_tones, split_search_index, with_language_base
from docs_tools.site_rules import (
    DESKTOP_WIDTH,
    PHONE_WIDTH,
    DiagramLabel,
    PageWidth,
    configured_site_url,
    label_problems,
    not_found_problems,
    search_index_problems,
    sitemap_problems,
    width_problems,
)

ROOT = Path(__file__).resolve().parents[2]
SITE_URL = "https://example.github.io/course/"
LANGUAGES = ("en", "vi")

# --- Vietnamese tone marks -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [("hủy", "huỷ"), ("hòa", "hoà"), ("khỏe", "khoẻ"), ("thúy", "thuý"), ("HỦY", "HUỶ")],
)
def test_tone_marks_in_the_old_placement_move_to_the_second_vowel(old: str, new: str) -> None:
    assert normalise_tones(old) == new
    assert normalise_tones(new) == new


def test_tone_marks_of_other_rhymes_and_decomposed_text_are_read_alike() -> None:
    assert normalise_tones("hoàng múa quý") == "hoàng múa quý"
    assert normalise_tones(unicodedata.normalize("NFD", "hủy")) == "huỷ"


VIETNAMESE = st.text(alphabet="hkqtuyoaeàáảãạòóỏõọùúủũụỳýỷỹỵèéẻẽẹ ", max_size=30)


@given(VIETNAMESE)
def test_normalising_tone_marks_is_idempotent(text: str) -> None:
    assert normalise_tones(normalise_tones(text)) == normalise_tones(text)


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_normalising_tone_marks_leaves_ascii_text_alone(text: str) -> None:
    assert normalise_tones(text) == text


# --- The hooks: search index per language, search base --------------------------------------


def merged_index() -> dict[str, Any]:
    """A merged index as mkdocs-static-i18n leaves it: both languages at the root."""

    def entry(location: str, text: str) -> dict[str, str]:
        return {"location": location, "title": "t", "text": text}

    return {
        "config": {"lang": ["en", "vi"], "separator": "[\\s\\-]+"},
        "docs": [
            entry("", "home"),
            entry("checkpoints/06_tool_contract/", "ToolRegistry"),
            entry("vi/", "trang chủ"),
            entry("vi/checkpoints/06_tool_contract/#trace", "hủy ToolRegistry"),
        ],
    }


def test_a_merged_search_index_splits_into_one_index_per_language() -> None:
    split = split_search_index(merged_index(), LANGUAGES)

    assert [e["location"] for e in split["en"]["docs"]] == ["", "checkpoints/06_tool_contract/"]
    assert [e["location"] for e in split["vi"]["docs"]] == [
        "",
        "checkpoints/06_tool_contract/#trace",
    ]
    assert split["en"]["config"]["lang"] == ["en"]
    assert split["vi"]["config"]["lang"] == ["vi"]
    assert split["vi"]["docs"][1]["text"] == "huỷ ToolRegistry"


def test_a_page_of_another_language_searches_from_that_language_root() -> None:
    html = '<script id="__config" type="application/json">{"base": "../..", "x": 1}</script>'

    rebased = with_language_base(html, "vi")

    assert '"base": "../../vi/"' in rebased
    assert '"x": 1' in rebased


# --- The files: search indexes, sitemap, 404 pages ------------------------------------------


def write_indexes(site: Path, indexes: dict[str, dict[str, Any]]) -> None:
    for code, index in indexes.items():
        folder = site if code == "en" else site / code
        (folder / "search").mkdir(parents=True, exist_ok=True)
        (folder / "search" / "search_index.json").write_text(json.dumps(index), encoding="utf-8")


def test_split_search_indexes_pass(tmp_path: Path) -> None:
    write_indexes(tmp_path, split_search_index(merged_index(), LANGUAGES))

    assert search_index_problems(tmp_path, LANGUAGES) == []


def test_one_index_for_both_languages_fails(tmp_path: Path) -> None:
    write_indexes(tmp_path, {"en": merged_index()})

    problems = search_index_problems(tmp_path, LANGUAGES)

    assert "search/search_index.json: indexes for ['en', 'vi'], not ['en']" in problems
    assert any("a page of another language" in p for p in problems)
    assert any("vi/search/search_index.json: missing" in p for p in problems)


def test_an_index_with_old_tone_placement_fails(tmp_path: Path) -> None:
    split = split_search_index(merged_index(), LANGUAGES)
    split["vi"]["docs"][1]["text"] = "hủy"
    write_indexes(tmp_path, split)

    assert search_index_problems(tmp_path, LANGUAGES) == [
        "vi/search/search_index.json: 'checkpoints/06_tool_contract/#trace' has tone marks in "
        "the old placement"
    ]


def sitemap(*locs: str) -> str:
    urls = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'


PAGES = {"", "setup/", "vi/", "vi/setup/"}


def test_a_sitemap_listing_every_page_once_passes() -> None:
    locs = [SITE_URL + page for page in sorted(PAGES)]

    assert sitemap_problems(sitemap(*locs), SITE_URL, PAGES) == []


def test_a_sitemap_built_without_site_url_fails() -> None:
    problems = sitemap_problems(sitemap("None./", "Nonesetup/"), SITE_URL, PAGES)

    assert "sitemap.xml: <loc>None./</loc> is not an absolute http(s) address" in problems
    assert f"sitemap.xml: the page {SITE_URL}vi/setup/ is missing" in problems


def test_a_sitemap_with_a_duplicate_a_stranger_or_bad_xml_fails() -> None:
    locs = [SITE_URL + page for page in sorted(PAGES)]
    problems = sitemap_problems(
        sitemap(*locs, SITE_URL, "https://elsewhere.example/"), SITE_URL, PAGES
    )

    assert f"sitemap.xml: {SITE_URL} is listed more than once" in problems
    assert any("not under site_url" in p for p in problems)
    assert sitemap_problems("<urlset>", SITE_URL, PAGES)[0].startswith("sitemap.xml is not well")


NOT_FOUND = """<!doctype html><html lang="{lang}"><head>
<link rel="stylesheet" href="{css}"><script src="/course/assets/bundle.js"></script>
</head><body></body></html>"""


def test_a_404_page_in_its_language_with_assets_under_the_site_path_passes() -> None:
    html = NOT_FOUND.format(lang="vi", css="/course/assets/main.css")

    assert not_found_problems(html, "vi", "/course/", "vi/404.html") == []


def test_a_404_page_in_the_wrong_language_or_with_root_or_relative_assets_fails() -> None:
    wrong_language = NOT_FOUND.format(lang="vi", css="/course/assets/main.css")
    from_root = NOT_FOUND.format(lang="en", css="/assets/main.css")
    relative = NOT_FOUND.format(lang="en", css="assets/main.css")

    assert not_found_problems(wrong_language, "en", "/course/", "404.html") == [
        '404.html: <html> has lang="vi", expected lang="en"'
    ]
    assert not_found_problems(from_root, "en", "/course/", "404.html") == [
        "404.html: /assets/main.css does not start with the site's path /course/"
    ]
    assert len(not_found_problems(relative, "en", "/course/", "404.html")) == 1


def test_site_url_comes_from_the_environment_else_from_mkdocs_yml() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")

    default = configured_site_url(config, {})

    assert default.startswith("https://")
    assert default.endswith("/")
    assert configured_site_url(config, {"SITE_URL": SITE_URL}) == SITE_URL
    with pytest.raises(ValueError, match="site_url"):
        configured_site_url("site_name: x\n", {})


# --- The judgements of what the browser measured ---------------------------------------------


def test_a_diagram_label_below_12_px_fails_naming_page_and_diagram() -> None:
    labels = [
        DiagramLabel(diagram=1, pixels=12.6, text="ok"),
        DiagramLabel(diagram=2, pixels=4.4, text="yes"),
    ]

    problems = label_problems("/checkpoints/06_tool_contract/", labels)

    assert len(problems) == 1
    assert problems[0].startswith("/checkpoints/06_tool_contract/: diagram 2: 'yes' renders at 4.4")


def test_a_page_wider_than_its_window_fails_and_broken_code_only_on_a_desktop() -> None:
    phone = PageWidth(viewport=PHONE_WIDTH, document=600, broken_code=("object_schema",))
    desktop = PageWidth(
        viewport=DESKTOP_WIDTH, document=DESKTOP_WIDTH, wide_tables=("",), broken_code=("x_y",)
    )

    assert width_problems("/p/", phone) == [
        "/p/: at 390 px the page is 600 px wide (it scrolls sideways)"
    ]
    assert width_problems("/p/", desktop) == [
        "/p/: at 1280 px the table headed '' is wider than the column",
        "/p/: at 1280 px the code 'x_y' breaks mid-word",
    ]


# --- The measurements, in Chromium -----------------------------------------------------------


def chromium_path() -> str | None:
    return os.environ.get("CHROMIUM") or shutil.which("chromium")


@pytest.fixture(scope="module")
def site_check() -> ModuleType:
    pytest.importorskip("playwright", reason="needs the playwright package (nox -s docs_check)")
    if chromium_path() is None:
        pytest.skip("needs Chromium on PATH or $CHROMIUM (Debian: apt-get install chromium)")
    return importlib.import_module("docs_tools.site_check")


@pytest.fixture(scope="module")
def browser(site_check: ModuleType) -> Iterator[Any]:
    with site_check.launch(chromium_path()) as launched:
        yield launched


def open_page(browser: Any, width: int, html: str) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.set_content(html)
    return page


TINY_DIAGRAM = """<div class="mermaid"><svg viewBox="0 0 2000 400" width="500" height="100">
<text x="10" y="50" font-size="16">yes</text></svg></div>
<div class="mermaid"><svg viewBox="0 0 500 100" width="500" height="100">
<foreignObject x="0" y="0" width="400" height="40"><div style="font-size: 16px">
<span>readable</span></div></foreignObject></svg></div>"""


def test_measured_labels_of_a_shrunken_diagram_fail(site_check: ModuleType, browser: Any) -> None:
    page = open_page(browser, DESKTOP_WIDTH, TINY_DIAGRAM)

    labels = site_check.measure_labels(page)

    assert [(d.diagram, d.text, round(d.pixels, 1)) for d in labels] == [
        (1, "yes", 4.0),
        (2, "readable", 16.0),
    ]
    assert len(label_problems("/fixture/", labels)) == 1


WIDE_PAGE = """<div class="md-typeset" style="width: 300px">
<div class="md-typeset__scrollwrap" style="overflow-x: auto"><table><tr><th>wide</th></tr>
<tr><td><code>a_long_identifier_that_cannot_fit_in_this_box_at_all</code></td></tr></table>
</div>
<table><tr><th>narrow</th></tr><tr><td style="width: 60px; overflow-wrap: anywhere">
<code>object_schema</code></td></tr></table></div>
<div style="width: 600px">a block wider than a phone</div>"""


def test_measured_widths_of_a_too_wide_page_fail(site_check: ModuleType, browser: Any) -> None:
    desktop = site_check.measure_width(open_page(browser, DESKTOP_WIDTH, WIDE_PAGE))
    phone = site_check.measure_width(open_page(browser, PHONE_WIDTH, WIDE_PAGE))

    assert desktop.wide_tables == ("wide",)
    assert desktop.broken_code == ("object_schema",)
    assert phone.document > PHONE_WIDTH
    assert len(width_problems("/fixture/", desktop)) == 2


WORDS = ["hủy", "huỷ", "hòa", "khỏe", "thúy", "múa", "hoàng", "quý", "HỦY", "ToolRegistry"]


def test_the_search_box_normalises_tone_marks_as_the_index_does(
    site_check: ModuleType, browser: Any
) -> None:
    page = open_page(browser, DESKTOP_WIDTH, "<p>empty</p>")
    page.add_script_tag(content=(ROOT / "docs" / "assets" / "site.js").read_text(encoding="utf-8"))

    in_browser = page.evaluate("(words) => words.map(normaliseTones)", WORDS)

    assert in_browser == [normalise_tones(word) for word in WORDS]


def test_a_page_with_a_translation_of_its_own_is_not_that_language_s_fallback(
    tmp_path: Path,
) -> None:
    pytest.importorskip("playwright", reason="needs the playwright package (nox -s docs_check)")
    site_check = importlib.import_module("docs_tools.site_check")
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "07_loop.md").write_text("# 07\n", encoding="utf-8")
    (tmp_path / "checkpoints" / "08_tools.md").write_text("# 08\n", encoding="utf-8")
    (tmp_path / "checkpoints" / "07_loop.vi.md").write_text("# 07\n", encoding="utf-8")

    def urls(page: str) -> list[str]:
        return list(site_check._built_urls(Path("checkpoints") / page, tmp_path))

    # 07's Vietnamese page is built from 07_loop.vi.md (a placeholder, say), not from English.
    assert urls("07_loop.md") == ["/checkpoints/07_loop/"]
    assert urls("07_loop.vi.md") == ["/vi/checkpoints/07_loop/"]
    assert urls("08_tools.md") == ["/checkpoints/08_tools/", "/vi/checkpoints/08_tools/"]
