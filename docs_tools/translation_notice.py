"""A MkDocs hook: a Vietnamese page that is untranslated or older than its English page says so.

``mkdocs.yml`` loads this file under ``hooks:``. In the Vietnamese build, a page built from its
English source (no ``.vi.md`` yet) or from a translation whose ``source_sha256`` is not the hash of
the English page now (``docs_tools/translations.py``) gets a warning admonition under its title,
linking the English page. The English build is never changed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # loaded by MkDocs from its file, the repository is not importable
    sys.path.insert(0, str(ROOT))

from docs_tools.translations import LOCALE, Status, source_hash  # noqa: E402

__all__ = ["notice", "on_page_markdown"]

_TEXT = {
    Status.MISSING: (
        "Bản dịch này chưa có",
        "Trang này chưa được dịch sang tiếng Việt; nội dung dưới đây là bản tiếng Anh.",
    ),
    Status.OUTDATED: (
        "Bản dịch này cũ hơn bản tiếng Anh",
        "Trang tiếng Anh đã thay đổi sau lần dịch gần nhất; bản dịch có thể thiếu hoặc sai "
        "một vài chỗ.",
    ),
}


def notice(status: Status, english_url: str) -> str:
    """Return the Markdown admonition for a missing or outdated translation."""
    title, text = _TEXT[status]
    link = f'<a href="{english_url}" hreflang="en">bản tiếng Anh</a>'
    return f'!!! warning "{title}"\n\n    {text} Xem {link}.\n'


def _status(source: Path, meta: dict[str, Any]) -> Status:
    """Say how the page built from ``source`` stands in the Vietnamese build."""
    suffix = f".{LOCALE}.md"
    if not source.name.endswith(suffix):
        return Status.MISSING  # the i18n plugin fell back to the English page
    english = source.with_name(source.name.removesuffix(suffix) + ".md")
    if not english.is_file():
        return Status.UP_TO_DATE  # a page only the Vietnamese site has
    recorded = str(meta.get("source_sha256", ""))
    current = source_hash(english.read_text(encoding="utf-8"))
    return Status.UP_TO_DATE if recorded == current else Status.OUTDATED


def _english_url(page_url: str) -> str:
    """Return the English page relative to the Vietnamese one (``/vi/x/`` -> ``/x/``).

    mkdocs-static-i18n gives a Vietnamese page the URL ``vi/x/``; without the prefix (another
    i18n setup) the page still sits one level below the English site.
    """
    prefix = f"{LOCALE}/"
    if page_url.startswith(prefix):
        return "../" * page_url.count("/") + page_url.removeprefix(prefix)
    return "../" * (page_url.count("/") + 1) + page_url


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Insert the notice under the title of a Vietnamese page that needs one."""
    if config["theme"]["language"] != LOCALE:
        return markdown
    status = _status(Path(page.file.abs_src_path), dict(page.meta or {}))
    if status is Status.UP_TO_DATE:
        return markdown
    text = notice(status, _english_url(page.url))
    title, _, rest = markdown.partition("\n")
    if title.startswith("# "):
        return f"{title}\n\n{text}\n{rest}"
    return f"{text}\n{markdown}"
