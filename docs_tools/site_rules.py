"""The rules ``docs_tools/site_check.py`` holds the built site to, as functions of what it saw.

The browser measures (diagram labels, widths, search results); these functions judge the
measurements, and read the files a browser does not need to judge (``sitemap.xml``, the search
indexes, the 404 pages). They use only the standard library, so ``course/tests`` proves each
rule on a small broken example without Chromium.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit
from xml.etree import ElementTree

from docs_tools.site_hooks import normalise_tones

__all__ = [
    "DESKTOP_WIDTH",
    "MIN_LABEL_PX",
    "PHONE_WIDTH",
    "DiagramLabel",
    "PageWidth",
    "configured_site_url",
    "label_problems",
    "not_found_problems",
    "search_index_problems",
    "sitemap_problems",
    "width_problems",
]

MIN_LABEL_PX = 12.0  # the smallest text a diagram may show at DESKTOP_WIDTH
DESKTOP_WIDTH = 1280
PHONE_WIDTH = 390
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
_SITE_URL_DEFAULT = re.compile(
    r'^site_url:\s*!ENV\s*\[\s*SITE_URL\s*,\s*"(?P<url>[^"]+)"\s*\]', re.M
)
_HTML_LANG = re.compile(r"<html\b[^>]*\blang=\"(?P<lang>[^\"]*)\"")
_ASSET = re.compile(r"<(?:link|script)\b[^>]*?\b(?:href|src)=\"(?P<url>[^\"]+)\"")


@dataclass(frozen=True, slots=True, kw_only=True)
class DiagramLabel:
    """The smallest text of one diagram as drawn on screen: font size times the SVG's scale."""

    diagram: int  # 1-based, in page order
    pixels: float
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PageWidth:
    """How wide a page came out in a window ``viewport`` pixels wide."""

    viewport: int
    document: int  # the page's scroll width: more than the viewport scrolls the whole page
    wide_tables: tuple[str, ...] = ()  # tables wider than their box, by their first header
    broken_code: tuple[str, ...] = ()  # code spans wrapped inside a word


def label_problems(page: str, labels: list[DiagramLabel], bound: float = MIN_LABEL_PX) -> list[str]:
    """Name every diagram of ``page`` whose smallest label renders below ``bound`` pixels."""
    return [
        f"{page}: diagram {label.diagram}: {label.text!r} renders at {label.pixels:.1f} px at "
        f"{DESKTOP_WIDTH} px wide, below {bound:g} px: split it, draw it top-down, or shorten "
        "its widest row"
        for label in labels
        if label.pixels < bound
    ]


def width_problems(page: str, width: PageWidth) -> list[str]:
    """The page must fit its window; at desktop width tables fit and code breaks at spaces."""
    problems: list[str] = []
    if width.document > width.viewport:
        problems.append(
            f"{page}: at {width.viewport} px the page is {width.document} px wide "
            "(it scrolls sideways)"
        )
    for header in width.wide_tables:
        problems.append(
            f"{page}: at {width.viewport} px the table headed {header!r} is wider than the column"
        )
    if width.viewport >= DESKTOP_WIDTH:
        for code in width.broken_code:
            problems.append(f"{page}: at {width.viewport} px the code {code!r} breaks mid-word")
    return problems


def configured_site_url(config_text: str, environ: Mapping[str, str] = os.environ) -> str:
    """Return the ``site_url`` MkDocs builds with: ``$SITE_URL``, else mkdocs.yml's default."""
    if environ.get("SITE_URL"):
        return environ["SITE_URL"]
    match = _SITE_URL_DEFAULT.search(config_text)
    if match is None:
        raise ValueError('mkdocs.yml needs site_url: !ENV [SITE_URL, "https://…/"]')
    return match["url"]


def sitemap_problems(xml_text: str, site_url: str, pages: set[str]) -> list[str]:
    """Check ``sitemap.xml``: well-formed, one absolute ``<loc>`` under ``site_url`` per page.

    ``pages`` holds every built page as a path from the site root, such as ``vi/setup/``.
    """
    try:
        root = ElementTree.fromstring(xml_text)
    except ElementTree.ParseError as exc:
        return [f"sitemap.xml is not well-formed XML: {exc}"]
    if root.tag != f"{SITEMAP_NS}urlset":
        return [f"sitemap.xml: the root element is {root.tag}, not a sitemap <urlset>"]
    problems: list[str] = []
    seen: list[str] = []
    for loc in root.iter(f"{SITEMAP_NS}loc"):
        url = (loc.text or "").strip()
        if urlsplit(url).scheme not in {"http", "https"} or not urlsplit(url).netloc:
            problems.append(f"sitemap.xml: <loc>{url}</loc> is not an absolute http(s) address")
        elif not url.startswith(site_url):
            problems.append(f"sitemap.xml: <loc>{url}</loc> is not under site_url {site_url}")
        else:
            seen.append(url.removeprefix(site_url))
    for path in sorted({p for p in seen if seen.count(p) > 1}):
        problems.append(f"sitemap.xml: {site_url}{path} is listed more than once")
    for path in sorted(pages - set(seen)):
        problems.append(f"sitemap.xml: the page {site_url}{path} is missing")
    for path in sorted(set(seen) - pages):
        problems.append(f"sitemap.xml: {site_url}{path} is not a page of the site")
    return problems


def not_found_problems(html: str, language: str, base_path: str, where: str) -> list[str]:
    """A 404 page is in its language and loads its styles and scripts from ``base_path``.

    A 404 page is served at any depth (``/course/vi/a/b/``), so only addresses built from the
    site's own path work: a relative one, or one absolute from the server root, break.
    """
    problems: list[str] = []
    found = _HTML_LANG.search(html)
    if found is None or found["lang"] != language:
        got = "no lang" if found is None else f'lang="{found["lang"]}"'
        problems.append(f'{where}: <html> has {got}, expected lang="{language}"')
    for match in _ASSET.finditer(html):
        url = match["url"]
        if not urlsplit(url).scheme and not url.startswith(base_path):
            problems.append(f"{where}: {url} does not start with the site's path {base_path}")
    return problems


def search_index_problems(site: Path, languages: tuple[str, ...]) -> list[str]:
    """Each language has its own search index, holding only its pages, tone marks normalised."""
    problems: list[str] = []
    for code in languages:
        relative = Path("search/search_index.json")
        if code != languages[0]:
            relative = Path(code) / relative
        path = site / relative
        if not path.is_file():
            problems.append(f"{relative}: missing: language {code!r} has no search index")
            continue
        index = json.loads(path.read_text(encoding="utf-8"))
        if index["config"].get("lang") != [code]:
            problems.append(
                f"{relative}: indexes for {index['config'].get('lang')}, not [{code!r}]"
            )
        if not index["docs"]:
            problems.append(f"{relative}: holds no page")
        for entry in index["docs"]:
            location = entry["location"]
            if location.split("/", 1)[0] in languages[1:]:
                problems.append(f"{relative}: holds {location!r}, a page of another language")
                break
        for entry in index["docs"]:
            if normalise_tones(entry["text"]) != entry["text"]:
                problems.append(
                    f"{relative}: {entry['location']!r} has tone marks in the old placement"
                )
                break
    return problems
