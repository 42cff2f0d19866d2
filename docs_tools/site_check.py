"""Open the built site in headless Chromium with the network off and prove it works offline.

Run by ``nox -s docs_check`` after a strict build. The site is served on 127.0.0.1 under the path
of its ``site_url`` (``/agent-harness-course/`` by default), as a project's GitHub Pages serves
it, so an address that only works at a server's root fails here too. A missing page gets the
nearest ``404.html``, its language's. The check opens every page, in every language, and holds
it to the rules of ``docs_tools/site_rules.py``:

- every Mermaid diagram is drawn as an SVG whose smallest label renders at 12 px or more at
  1280 px wide, and has a button that opens it full size;
- no page is wider than the window at 1280 px and at 390 px (a phone), no table is wider than
  its column, and at 1280 px no code in a table is broken mid-word;
- each language's 404 page is served for a missing page, in that language, with its styles;
- ``sitemap.xml`` is well-formed and lists every page once, under ``site_url``;
- each language searches its own index: an English search finds no Vietnamese page, and the
  Vietnamese "hủy" and "huỷ" find the same pages.

Any request that would leave 127.0.0.1 is blocked and counted as a failure, and so is any failed
request, HTTP error, page error or console error.

Chromium is Debian's ``/usr/bin/chromium`` (or ``$CHROMIUM``), driven by the ``playwright``
package through ``executable_path``; ``playwright install`` is never needed.

Material draws each diagram into a *closed* shadow root, which a page script cannot read; an init
script makes shadow roots open in this browser only, so the check can see the SVG.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script, the repository root is not importable yet
    sys.path.insert(0, str(ROOT))

from playwright.sync_api import (  # noqa: E402
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Request,
    Response,
    Route,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError  # noqa: E402

from docs_tools.site_hooks import normalise_tones  # noqa: E402
from docs_tools.site_rules import (  # noqa: E402
    DESKTOP_WIDTH,
    MIN_LABEL_PX,
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

__all__ = [
    "MEASURE_LABELS",
    "MEASURE_WIDTH",
    "SEARCH_WORDS",
    "SiteReport",
    "check_site",
    "launch",
    "main",
    "measure_labels",
    "measure_width",
    "open_shadow_roots",
    "site_pages",
]

DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"
LANGUAGES = ("en", "vi")  # the first is the default, built at the site root
# A word each language's pages are known to contain, and search must find.
SEARCH_WORDS = {"en": "checkpoint", "vi": "kịch bản"}
# A word both languages show: each language's search must answer with its own pages only.
SHARED_WORD = "ToolRegistry"
# One Vietnamese word in its two tone-mark placements: both must find the same pages.
TONE_VARIANTS = ("hủy", "huỷ")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Belt and braces beside the request routing below: no host name but localhost resolves.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
)
TIMEOUT_MS = 20_000
SEARCH_ATTEMPTS = 5
WINDOW_HEIGHT = 900
_MERMAID_FENCE = re.compile(r"^\s*(```+|~~~+)\s*mermaid\b", re.MULTILINE)
_MERMAID_BLOCK = re.compile(r'<pre class="mermaid">')
# Material replaces every <pre class="mermaid"> by a <div class="mermaid"> whose shadow root
# holds the SVG; Mermaid's own error picture is an SVG too, so it is looked for explicitly.
_OPEN_SHADOW_ROOTS = """
const attachShadow = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) {
  return attachShadow.call(this, { ...init, mode: "open" });
};
"""
_RENDERED = """
(expected) => {
  const hosts = [...document.querySelectorAll("div.mermaid")];
  const drawn = hosts.filter((host) => host.shadowRoot && host.shadowRoot.querySelector("svg"));
  return document.querySelectorAll("pre.mermaid").length === 0 && drawn.length >= expected;
}
"""
_DIAGRAM_SUMMARY = """
() => [...document.querySelectorAll("div.mermaid")].map((host) => {
  const svg = host.shadowRoot && host.shadowRoot.querySelector("svg");
  return {
    svg: Boolean(svg),
    error: Boolean(svg && svg.getAttribute("aria-roledescription") === "error"),
    nodes: svg ? svg.querySelectorAll("g").length : 0,
  };
})
"""
# The smallest label of each SVG in `selector` (or in its shadow root), as drawn on screen: the
# computed font size of each piece of text times the scale from SVG units to screen pixels
# (the screen matrix of the element holding it, which includes the SVG's viewBox scaling).
# Labels are SVG <text>, or HTML inside a <foreignObject> (Mermaid's flowchart labels).
MEASURE_LABELS = """
(selector) => [...document.querySelectorAll(selector)].map((host, index) => {
  const svg = (host.shadowRoot || host).querySelector("svg");
  let smallest = { pixels: Infinity, text: "" };
  const scaleOf = (element) => {
    const matrix = element.getScreenCTM();
    return matrix ? Math.hypot(matrix.a, matrix.b) : 0;
  };
  const consider = (element, scale) => {
    const text = [...element.childNodes]
      .filter((node) => node.nodeType === Node.TEXT_NODE)
      .map((node) => node.textContent).join("").trim();
    const box = element.getBoundingClientRect();
    if (!text || box.width === 0 || box.height === 0) return;
    const pixels = parseFloat(getComputedStyle(element).fontSize) * scale;
    if (pixels < smallest.pixels) smallest = { pixels, text };
  };
  if (svg) {
    for (const text of svg.querySelectorAll("text, tspan")) consider(text, scaleOf(text));
    for (const foreign of svg.querySelectorAll("foreignObject")) {
      const scale = scaleOf(foreign);
      for (const element of foreign.querySelectorAll("*")) consider(element, scale);
    }
  }
  return { diagram: index + 1, pixels: smallest.pixels, text: smallest.text };
})
"""
# How wide the page is, which tables are wider than their box, and which code spans in a table
# wrap although they hold no space (a line box per fragment: more than one means a break).
MEASURE_WIDTH = """
() => {
  const tables = [...document.querySelectorAll(".md-typeset table")];
  // Material wraps a table in a box that scrolls sideways: the table must fit that box.
  const boxOf = (table) => table.closest(".md-typeset__scrollwrap") || table.parentElement;
  const wide = tables
    .filter((table) => table.getBoundingClientRect().width > boxOf(table).clientWidth + 1)
    .map((table) => (table.querySelector("th") || table).textContent.trim().slice(0, 60));
  // A probe citation may wrap at the seams docs/assets/site.js marks; nothing else may.
  const broken = [...document.querySelectorAll(".md-typeset table code:not(.probe)")]
    .filter((code) => !/\\s/.test(code.textContent.trim()))
    .filter((code) => code.getClientRects().length > 1)
    .map((code) => code.textContent.trim());
  return {
    viewport: window.innerWidth,
    document: document.documentElement.scrollWidth,
    wide_tables: wide,
    broken_code: broken,
  };
}
"""
_RESULTS_FOR = """
(word) => {
  const links = [...document.querySelectorAll("a.md-search-result__link")];
  return links.length > 0 && links.some(
    (link) => (new URL(link.href).searchParams.get("h") || "").split(" ").includes(word));
}
"""
_OPEN_FULL_SIZE = """
async () => {
  const button = document.querySelector(".diagram__open");
  if (!button) return "no button";
  button.click();
  for (let wait = 0; wait < 100; wait += 1) {
    if (document.querySelector("dialog.diagram-full[open] svg")) return "open";
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }
  return "no dialog";
}
"""


@dataclass(slots=True, kw_only=True)
class SiteReport:
    """What the browser saw: pages and diagrams checked, searches run, and every failure."""

    pages: int = 0
    diagram_pages: int = 0
    diagrams: int = 0
    searches: int = 0
    smallest_label: float = float("inf")
    failures: list[str] = field(default_factory=list)


def site_pages(site: Path, docs: Path = DOCS) -> dict[str, int]:
    """Return every built page, as a URL path, with the number of Mermaid diagrams on it.

    Pages are found from the built HTML; the Markdown sources are read too, so a page whose
    diagrams silently vanished from the build is reported (count -1) instead of skipped.
    """
    pages: dict[str, int] = {}
    for html in sorted(site.rglob("*.html")):
        count = len(_MERMAID_BLOCK.findall(html.read_text(encoding="utf-8")))
        pages[_url_of(html.relative_to(site))] = count
    for source in sorted(docs.rglob("*.md")):
        if _MERMAID_FENCE.search(source.read_text(encoding="utf-8")):
            for url in _built_urls(source.relative_to(docs), docs):
                if pages.get(url, 0) == 0:
                    pages[url] = -1
    return pages


def _url_of(relative_html: Path) -> str:
    if relative_html.name != "index.html":
        return "/" + relative_html.as_posix()  # such as 404.html
    return "/" + "".join(f"{part}/" for part in relative_html.parts[:-1])


def _built_urls(relative_md: Path, docs: Path = DOCS) -> Iterator[str]:
    """Yield the URLs a source page builds to: its own language, and where it is the fallback."""
    stem = relative_md.with_suffix("")
    language = stem.suffix.lstrip(".")
    if language in LANGUAGES:
        stem = stem.with_suffix("")
        languages: tuple[str, ...] = (language,)
    else:
        # An English page is also the fallback of every language that has no page of its own
        # (a placeholder translation, say, is built instead of it).
        languages = tuple(
            code
            for code in LANGUAGES
            if code == LANGUAGES[0] or not (docs / f"{stem}.{code}.md").is_file()
        )
    parts = stem.parts[:-1] if stem.name == "index" else stem.parts
    path = "".join(f"{part}/" for part in parts)
    for code in languages:
        yield f"/{path}" if code == LANGUAGES[0] else f"/{code}/{path}"


@contextmanager
def serve(site: Path, base_path: str = "/") -> Iterator[str]:
    """Serve ``site`` under ``base_path`` on 127.0.0.1 from a thread; yield the site's URL.

    A missing file gets the nearest ``404.html`` above it, with status 404, as a static host
    with a 404 page per folder does.
    """

    class SiteHandler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path: str) -> str:
            route = urlsplit(path).path
            if not route.startswith(base_path):
                return str(site / "no such file")
            return super().translate_path("/" + route.removeprefix(base_path))

        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            page = self._not_found_page() if code == 404 else None
            if page is None:
                super().send_error(code, message, explain)
                return
            body = page.read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _not_found_page(self) -> Path | None:
            folder = Path(self.translate_path(self.path))
            for parent in [folder, *folder.parents]:
                if parent == site.parent:
                    break
                if (parent / "404.html").is_file():
                    return parent / "404.html"
            return None

        def log_message(self, format: str, *args: object) -> None:
            """Keep the check's output to its findings."""

    class QuietServer(http.server.ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            """Ignore a browser closing a page mid-download; report anything else."""
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)  # type: ignore[arg-type]

    handler = functools.partial(SiteHandler, directory=str(site))
    server = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{base_path}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def launch(chromium: str) -> Iterator[Browser]:
    """Start headless Chromium with the network flags above; yield the browser."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, headless=True, args=list(CHROMIUM_FLAGS)
        )
        try:
            yield browser
        finally:
            browser.close()


def open_shadow_roots(context: BrowserContext) -> None:
    """Let the check read the SVGs Material draws into closed shadow roots."""
    context.add_init_script(_OPEN_SHADOW_ROOTS)


def measure_labels(page: Page, selector: str = "div.mermaid") -> list[DiagramLabel]:
    """Return the smallest label of every diagram matching ``selector`` on ``page``."""
    return [DiagramLabel(**found) for found in page.evaluate(MEASURE_LABELS, selector)]


def measure_width(page: Page) -> PageWidth:
    """Return how wide ``page`` came out, its tables too wide and its code broken mid-word."""
    found = page.evaluate(MEASURE_WIDTH)
    return PageWidth(
        viewport=found["viewport"],
        document=found["document"],
        wide_tables=tuple(found["wide_tables"]),
        broken_code=tuple(found["broken_code"]),
    )


def check_site(
    site: Path, chromium: str, site_url: str, screenshots: Path | None = None
) -> SiteReport:
    """Open every page and each language's search in Chromium; return what was seen."""
    report = SiteReport()
    pages = site_pages(site)
    base_path = urlsplit(site_url).path or "/"
    for url, count in pages.items():
        if count < 0:
            report.failures.append(f"{url}: the source has a mermaid block, the build has none")
    for code in LANGUAGES:
        if not any(_language_of(url) == code for url, count in pages.items() if count > 0):
            report.failures.append(f"no page with a diagram was built in language {code!r}")
    report.failures += _file_problems(site, site_url, pages)
    with serve(site, base_path) as base, launch(chromium) as browser:
        desktop = _context(browser, base, report, DESKTOP_WIDTH)
        phone = _context(browser, base, report, PHONE_WIDTH)
        for url, count in pages.items():
            if count >= 0 and url.endswith("/"):
                _check_page(desktop, base + url[1:], count, report, screenshots)
                _check_phone(phone, base + url[1:], report)
        for code in LANGUAGES:
            _check_not_found(desktop, base, code, report)
        _check_searches(desktop, base, report)
    return report


def _file_problems(site: Path, site_url: str, pages: dict[str, int]) -> list[str]:
    """What the built files must hold: the sitemap, the search indexes, the 404 pages."""
    base_path = urlsplit(site_url).path or "/"
    sitemap = site / "sitemap.xml"
    listed = {url[1:] for url in pages if url.endswith("/")}
    problems = (
        sitemap_problems(sitemap.read_text(encoding="utf-8"), site_url, listed)
        if sitemap.is_file()
        else ["sitemap.xml is missing"]
    )
    problems += search_index_problems(site, LANGUAGES)
    for code in LANGUAGES:
        relative = "404.html" if code == LANGUAGES[0] else f"{code}/404.html"
        page = site / relative
        if not page.is_file():
            problems.append(f"{relative} is missing: language {code!r} has no 404 page")
            continue
        html = page.read_text(encoding="utf-8")
        problems += not_found_problems(html, code, base_path, relative)
    return problems


def _context(browser: Browser, base: str, report: SiteReport, width: int) -> BrowserContext:
    context = browser.new_context(
        service_workers="block", viewport={"width": width, "height": WINDOW_HEIGHT}
    )
    open_shadow_roots(context)
    _block_everything_but(context, base, report)
    return context


def _language_of(url: str, base_path: str = "/") -> str:
    first = url.removeprefix(base_path).strip("/").split("/")[0]
    return first if first in LANGUAGES[1:] else LANGUAGES[0]


def _block_everything_but(context: BrowserContext, base: str, report: SiteReport) -> None:
    """Let requests to the local server through; abort and record every other one."""
    origin = urlsplit(base).netloc

    def route(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).netloc == origin:
            route.continue_()
        else:
            report.failures.append(f"blocked a request that leaves the site: {url}")
            route.abort("blockedbyclient")

    context.route("**/*", route)


def _watch(page: Page, report: SiteReport, url: str, missing: bool = False) -> None:
    """Record every failed request, HTTP error, page error and console error of ``page``.

    ``missing``: the page itself is expected to answer 404 (a 404 page), not its assets.
    """
    where = urlsplit(url).path
    origin = urlsplit(url).netloc

    def on_failed(request: Request) -> None:
        if urlsplit(request.url).netloc == origin:  # others were blocked and counted already
            report.failures.append(f"{where}: request failed: {request.url} ({request.failure})")

    def on_response(response: Response) -> None:
        if response.status >= 400 and not (missing and response.url == url):
            report.failures.append(f"{where}: HTTP {response.status} for {response.url}")

    def on_console(message: ConsoleMessage) -> None:
        # The 404 page's own status is logged as a console error too.
        if message.type == "error" and not (missing and message.location["url"] == url):
            report.failures.append(f"{where}: console error: {message.text}")

    def on_page_error(error: PlaywrightError) -> None:
        report.failures.append(f"{where}: page error: {error}")

    page.on("requestfailed", on_failed)
    page.on("response", on_response)
    page.on("console", on_console)
    page.on("pageerror", on_page_error)


def _check_page(
    context: BrowserContext,
    url: str,
    expected: int,
    report: SiteReport,
    screenshots: Path | None,
) -> None:
    """Load one page at desktop width: diagrams drawn, labels readable, nothing too wide."""
    page = context.new_page()
    _watch(page, report, url)
    path = urlsplit(url).path
    report.pages += 1
    try:
        page.goto(url, wait_until="networkidle", timeout=TIMEOUT_MS)
        if expected:
            page.wait_for_function(_RENDERED, arg=expected, timeout=TIMEOUT_MS)
    except PlaywrightError as exc:
        report.failures.append(f"{path}: not loaded and drawn: {exc.message.splitlines()[0]}")
    report.failures += width_problems(path, measure_width(page))
    if expected:
        diagrams = page.evaluate(_DIAGRAM_SUMMARY)
        drawn = [d for d in diagrams if d["svg"] and not d["error"] and d["nodes"] > 0]
        if len(drawn) != expected:
            report.failures.append(f"{path}: {len(drawn)} of {expected} diagrams rendered as SVG")
        report.diagram_pages += 1
        report.diagrams += len(drawn)
        labels = measure_labels(page)
        report.smallest_label = min([report.smallest_label, *(d.pixels for d in labels)])
        report.failures += label_problems(path, labels)
        _check_full_size(page, path, expected, report)
    if screenshots is not None and expected:
        screenshots.mkdir(parents=True, exist_ok=True)
        name = path.strip("/").replace("/", "_") or "home"
        page.screenshot(path=screenshots / f"{name}.png", full_page=True)
    page.close()


def _check_full_size(page: Page, path: str, expected: int, report: SiteReport) -> None:
    """Every diagram has a full-size button; the first opens a dialog, labels at full size."""
    buttons = page.locator(".diagram__open").count()
    if buttons != expected:
        report.failures.append(f"{path}: {buttons} full-size buttons for {expected} diagrams")
        return
    opened = page.evaluate(_OPEN_FULL_SIZE)
    if opened != "open":
        report.failures.append(f"{path}: the full-size button opened nothing ({opened})")
        return
    for label in measure_labels(page, "dialog.diagram-full[open] .diagram-full__body"):
        if label.pixels < MIN_LABEL_PX:
            report.failures.append(
                f"{path}: full size, diagram 1 still draws {label.text!r} at {label.pixels:.1f} px"
            )


def _check_phone(context: BrowserContext, url: str, report: SiteReport) -> None:
    """At phone width the page must not scroll sideways, nor any table in it."""
    page = context.new_page()
    _watch(page, report, url)
    try:
        page.goto(url, wait_until="networkidle", timeout=TIMEOUT_MS)
    except PlaywrightError as exc:
        report.failures.append(f"{url}: not loaded: {exc.message.splitlines()[0]}")
    report.failures += width_problems(urlsplit(url).path, measure_width(page))
    page.close()


def _check_not_found(context: BrowserContext, base: str, code: str, report: SiteReport) -> None:
    """A missing page of a language gets that language's 404 page, styled."""
    folder = "" if code == LANGUAGES[0] else f"{code}/"
    url = f"{base}{folder}no-such-page/"
    page = context.new_page()
    _watch(page, report, url, missing=True)
    response = page.goto(url, wait_until="networkidle", timeout=TIMEOUT_MS)
    where = urlsplit(url).path
    if response is None or response.status != 404:
        report.failures.append(f"{where}: expected HTTP 404 with the 404 page")
    lang = page.evaluate("() => document.documentElement.lang")
    if lang != code:
        report.failures.append(f'{where}: the 404 page has lang="{lang}", expected "{code}"')
    styled = page.evaluate(
        "() => getComputedStyle(document.querySelector('.md-header') || document.body).position"
    )
    if styled != "sticky":
        report.failures.append(f"{where}: the 404 page is not styled (its CSS did not load)")
    page.close()


def _check_searches(context: BrowserContext, base: str, report: SiteReport) -> None:
    """Each language finds its own pages, and only those; Vietnamese tone marks either way."""
    base_path = urlsplit(base).path
    homes = {code: base if code == LANGUAGES[0] else f"{base}{code}/" for code in LANGUAGES}
    searches = [(code, SEARCH_WORDS[code]) for code in LANGUAGES]
    searches += [(code, SHARED_WORD) for code in LANGUAGES]
    searches += [("vi", word) for word in TONE_VARIANTS]
    found: dict[tuple[str, str], list[str]] = {}
    for code, word in searches:
        where = f"{urlsplit(homes[code]).path} search {word!r}"
        links = _search(context, homes[code], word, report)
        if not links:
            report.failures.append(f"{where}: found nothing")
            continue
        foreign = [link for link in links if _language_of(link, base_path) != code]
        if foreign:
            report.failures.append(f"{where}: found pages of another language: {foreign}")
            continue
        report.searches += 1
        found[code, word] = links
    variants = [sorted(found.get(("vi", word), [])) for word in TONE_VARIANTS]
    if variants[0] != variants[1]:
        report.failures.append(
            f"the tone-mark variants {TONE_VARIANTS} found different pages: {variants}"
        )


def _search(context: BrowserContext, url: str, word: str, report: SiteReport) -> list[str]:
    """Type ``word`` into the search box of ``url``; return the result links' paths."""
    page = context.new_page()
    _watch(page, report, url)
    page.goto(url, wait_until="load")
    query = page.locator("input.md-search__input")
    results = page.locator(".md-search-result__item")
    links: list[str] = []
    # Material drops a query typed before its search worker has loaded the index, so type the
    # word again until results appear or the time is up.
    for _ in range(SEARCH_ATTEMPTS):
        try:
            query.click(timeout=TIMEOUT_MS // SEARCH_ATTEMPTS)
            query.fill("")
            query.press_sequentially(word, delay=20)
            # A letter off the keyboard layout (such as "ỷ") is inserted with no keyup, and
            # Material reads the query on keyup: End sends one, as a reader's next key would.
            query.press("End")
            results.first.wait_for(timeout=TIMEOUT_MS // SEARCH_ATTEMPTS)
            # Results come as the word is typed: wait for those of the whole word, which
            # carry it (normalised, lower case) in each link's highlight parameter.
            page.wait_for_function(
                _RESULTS_FOR,
                arg=normalise_tones(word.rsplit(maxsplit=1)[-1].lower()),
                timeout=TIMEOUT_MS // SEARCH_ATTEMPTS,
            )
        except PlaywrightError:
            continue
        links = page.locator("a.md-search-result__link").evaluate_all(
            "links => links.map((link) => new URL(link.href).pathname)"
        )
        break
    page.close()
    return links


def main(argv: list[str] | None = None) -> int:
    """Check the site built in the given folder; return the exit status."""
    parser = argparse.ArgumentParser(description="Check the built site offline in Chromium.")
    parser.add_argument("site", type=Path, help="the folder `mkdocs build` wrote")
    parser.add_argument(
        "--chromium",
        default=os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium",
        help="the Chromium executable (default: $CHROMIUM, then chromium on PATH)",
    )
    parser.add_argument(
        "--site-url",
        help="the site_url the site was built with (default: $SITE_URL, else mkdocs.yml's)",
    )
    parser.add_argument("--screenshots", type=Path, help="save a PNG of each diagram page here")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site}: no index.html; build the site first")
    if not Path(args.chromium).is_file():
        parser.error(f"{args.chromium}: no Chromium there (apt-get install chromium)")
    site_url = args.site_url or configured_site_url(CONFIG.read_text(encoding="utf-8"))
    report = check_site(args.site, args.chromium, site_url, args.screenshots)
    for failure in report.failures:
        print(f"FAIL {failure}")
    searches = 2 * len(LANGUAGES) + len(TONE_VARIANTS)
    print(
        f"docs_check: {report.pages} pages loaded at {DESKTOP_WIDTH} and {PHONE_WIDTH} px, "
        f"{report.diagrams} diagrams on {report.diagram_pages} pages rendered as SVG "
        f"(smallest label {report.smallest_label:.1f} px at {DESKTOP_WIDTH} px, bound "
        f"{MIN_LABEL_PX:g}), {report.searches} of {searches} searches right, "
        f"{len(report.failures)} failures"
    )
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
