"""Open the built site in headless Chromium with the network off and prove it works offline.

Run by ``nox -s docs_check`` after a strict build. It opens every page of the site, in every
language. On a page with Mermaid diagrams it checks that each one was drawn as an SVG; on each
language's home page it checks that search finds a known word on a page of that language. Any
request that would leave 127.0.0.1 is blocked and counted as a failure, and so is any failed
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

from playwright.sync_api import (
    BrowserContext,
    ConsoleMessage,
    Page,
    Request,
    Response,
    Route,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError

__all__ = ["SEARCH_WORDS", "SiteReport", "check_site", "main", "site_pages"]

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LANGUAGES = ("en", "vi")  # the first is the default, built at the site root
# A word each language's pages are known to contain, and search must find.
SEARCH_WORDS = {"en": "checkpoint", "vi": "kịch bản"}
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


@dataclass(slots=True, kw_only=True)
class SiteReport:
    """What the browser saw: pages and diagrams checked, searches run, and every failure."""

    pages: int = 0
    diagram_pages: int = 0
    diagrams: int = 0
    searches: int = 0
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
            for url in _built_urls(source.relative_to(docs)):
                if pages.get(url, 0) == 0:
                    pages[url] = -1
    return pages


def _url_of(relative_html: Path) -> str:
    if relative_html.name != "index.html":
        return "/" + relative_html.as_posix()  # such as 404.html
    return "/" + "".join(f"{part}/" for part in relative_html.parts[:-1])


def _built_urls(relative_md: Path) -> Iterator[str]:
    """Yield the URLs a source page builds to: every language, translated or falling back."""
    stem = relative_md.with_suffix("")
    language = stem.suffix.lstrip(".")
    if language in LANGUAGES:
        stem = stem.with_suffix("")
        languages: tuple[str, ...] = (language,)
    else:
        languages = LANGUAGES  # an English page is also the fallback of every other language
    parts = stem.parts[:-1] if stem.name == "index" else stem.parts
    path = "".join(f"{part}/" for part in parts)
    for code in languages:
        yield f"/{path}" if code == LANGUAGES[0] else f"/{code}/{path}"


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 from a thread; yield the base URL."""

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Keep the check's output to its findings."""

    class QuietServer(http.server.ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            """Ignore a browser closing a page mid-download; report anything else."""
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)  # type: ignore[arg-type]

    handler = functools.partial(QuietHandler, directory=str(site))
    server = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def check_site(site: Path, chromium: str, screenshots: Path | None = None) -> SiteReport:
    """Open every page and each language's search in Chromium; return what was seen."""
    report = SiteReport()
    pages = site_pages(site)
    for url, count in pages.items():
        if count < 0:
            report.failures.append(f"{url}: the source has a mermaid block, the build has none")
    for code in LANGUAGES:
        if not any(_language_of(url) == code for url, count in pages.items() if count > 0):
            report.failures.append(f"no page with a diagram was built in language {code!r}")
    with serve(site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, headless=True, args=list(CHROMIUM_FLAGS)
        )
        try:
            context = browser.new_context(service_workers="block")
            context.add_init_script(_OPEN_SHADOW_ROOTS)
            _block_everything_but(context, base, report)
            for url, count in pages.items():
                if count >= 0:
                    _check_page(context, base + url, count, report, screenshots)
            for code in LANGUAGES:
                home = "/" if code == LANGUAGES[0] else f"/{code}/"
                _check_search(context, base + home, SEARCH_WORDS[code], report)
        finally:
            browser.close()
    return report


def _language_of(url: str) -> str:
    first = url.strip("/").split("/")[0]
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


def _watch(page: Page, report: SiteReport, url: str) -> None:
    """Record every failed request, HTTP error, page error and console error of ``page``."""
    where = urlsplit(url).path
    origin = urlsplit(url).netloc

    def on_failed(request: Request) -> None:
        if urlsplit(request.url).netloc == origin:  # others were blocked and counted already
            report.failures.append(f"{where}: request failed: {request.url} ({request.failure})")

    def on_response(response: Response) -> None:
        if response.status >= 400:
            report.failures.append(f"{where}: HTTP {response.status} for {response.url}")

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
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
    """Load one page until the network is quiet; then every diagram must be an SVG."""
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
    if expected:
        diagrams = page.evaluate(_DIAGRAM_SUMMARY)
        drawn = [d for d in diagrams if d["svg"] and not d["error"] and d["nodes"] > 0]
        if len(drawn) != expected:
            report.failures.append(f"{path}: {len(drawn)} of {expected} diagrams rendered as SVG")
        report.diagram_pages += 1
        report.diagrams += len(drawn)
    if screenshots is not None and expected:
        screenshots.mkdir(parents=True, exist_ok=True)
        name = path.strip("/").replace("/", "_") or "home"
        page.screenshot(path=screenshots / f"{name}.png", full_page=True)
    page.close()


def _check_search(context: BrowserContext, url: str, word: str, report: SiteReport) -> None:
    page = context.new_page()
    _watch(page, report, url)
    path = urlsplit(url).path
    page.goto(url, wait_until="load")
    query = page.locator("input.md-search__input")
    results = page.locator(".md-search-result__item")
    # Material drops a query typed before its search worker has loaded the index, so type the
    # word again until results appear or the time is up.
    for _ in range(SEARCH_ATTEMPTS):
        try:
            query.click(timeout=TIMEOUT_MS // SEARCH_ATTEMPTS)
            query.fill("")
            query.press_sequentially(word, delay=20)
            results.first.wait_for(timeout=TIMEOUT_MS // SEARCH_ATTEMPTS)
        except PlaywrightError:
            continue
        # One index serves every language, so a hit must be a page of this language.
        links = page.locator("a.md-search-result__link").evaluate_all(
            "links => links.map((link) => new URL(link.href).pathname)"
        )
        if any(_language_of(link) == _language_of(path) for link in links):
            report.searches += 1
        else:
            report.failures.append(f"{path}: search for {word!r} found no page here: {links}")
        break
    else:
        report.failures.append(f"{path}: search for {word!r} found nothing")
    page.close()


def main(argv: list[str] | None = None) -> int:
    """Check the site built in the given folder; return the exit status."""
    parser = argparse.ArgumentParser(description="Check the built site offline in Chromium.")
    parser.add_argument("site", type=Path, help="the folder `mkdocs build` wrote")
    parser.add_argument(
        "--chromium",
        default=os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium",
        help="the Chromium executable (default: $CHROMIUM, then chromium on PATH)",
    )
    parser.add_argument("--screenshots", type=Path, help="save a PNG of each diagram page here")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site}: no index.html; build the site first")
    if not Path(args.chromium).is_file():
        parser.error(f"{args.chromium}: no Chromium there (apt-get install chromium)")
    report = check_site(args.site, args.chromium, args.screenshots)
    for failure in report.failures:
        print(f"FAIL {failure}")
    print(
        f"docs_check: {report.pages} pages loaded, {report.diagrams} diagrams on "
        f"{report.diagram_pages} pages rendered as SVG, "
        f"{report.searches} of {len(LANGUAGES)} searches found results, "
        f"{len(report.failures)} failures"
    )
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
