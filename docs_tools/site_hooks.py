"""MkDocs hooks (``hooks:`` in mkdocs.yml): what Material and mkdocs-static-i18n do not offer.

1. One search index per language. mkdocs-static-i18n merges every language into the root
   ``search/search_index.json``, so an English search returned Vietnamese pages. After the last
   build the merged index is split: the root keeps the default language, and each other
   language gets ``<code>/search/search_index.json`` with locations relative to its own root.
   Material fetches the index from the ``base`` of the page's ``__config``, so the pages of a
   language point ``base`` at that language's root.
2. Vietnamese tone marks in one placement. The same word is spelt "hủy" (old placement, mark on
   the u) or "huỷ" (new placement, mark on the y), and a search for one did not find the other.
   The index stores every word in the new placement; ``docs/assets/site.js`` rewrites the query
   the same way (``normalise_tones`` here and ``normaliseTones`` there must agree).
3. A 404 page per language. Each language's build writes ``404.html`` at the site root, so the
   last one (Vietnamese) won. The default language keeps ``404.html``; every other language's
   goes to ``<code>/404.html``.

MkDocs is not imported, so the tests can import these functions where only pytest is installed.
"""

from __future__ import annotations

import json
import posixpath
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "DEFAULT_LANGUAGE",
    "normalise_tones",
    "on_post_build",
    "on_post_page",
    "on_post_template",
    "split_search_index",
    "with_language_base",
]

DEFAULT_LANGUAGE = "en"  # theme.language in mkdocs.yml: built at the site root
INDEX = Path("search") / "search_index.json"
# The five tone marks, as combining characters: grave, acute, tilde, hook above, dot below.
_TONE = "\u0300\u0301\u0303\u0309\u0323"
# In the rhymes oa, oe and uy with no final consonant, the old placement puts the mark on the
# first vowel (hòa, khỏe, hủy) and the new one on the second (hoà, khoẻ, huỷ). With a final
# consonant both put it on the second (hoàng), so moving a mark off o or u never changes a word.
_OLD_PLACEMENT = re.compile(
    f"(?P<glide>[oO])(?P<tone>[{_TONE}])(?P<vowel>[aAeE])|"
    f"(?P<u>[uU])(?P<u_tone>[{_TONE}])(?P<y>[yY])"
)
_CONFIG = re.compile(r'(<script id="__config" type="application/json">)(?P<json>.*?)(</script>)')

EventT = TypeVar("EventT", bound=Callable[..., Any])


def normalise_tones(text: str) -> str:
    """Return ``text`` in NFC with every tone mark of oa, oe and uy on the second vowel."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", _OLD_PLACEMENT.sub(_second_vowel, decomposed))


def _second_vowel(match: re.Match[str]) -> str:
    if match["glide"]:
        return match["glide"] + match["vowel"] + match["tone"]
    return match["u"] + match["y"] + match["u_tone"]


def split_search_index(index: dict[str, Any], languages: tuple[str, ...]) -> dict[str, Any]:
    """Split a merged Material search index into one index per language, words normalised.

    ``languages[0]`` is the default language, whose pages sit at the root; every other
    language's locations start with ``<code>/``, and lose that prefix in its own index.
    """
    split: dict[str, Any] = {}
    for code in languages:
        prefix = "" if code == languages[0] else f"{code}/"
        entries = [
            {
                **entry,
                "location": entry["location"].removeprefix(prefix),
                "title": normalise_tones(entry["title"]),
                "text": normalise_tones(entry["text"]),
            }
            for entry in index["docs"]
            if _language_of(entry["location"], languages) == code
        ]
        split[code] = {**index, "config": {**index["config"], "lang": [code]}, "docs": entries}
    return split


def _language_of(location: str, languages: tuple[str, ...]) -> str:
    first = location.split("/", 1)[0] if "/" in location else ""
    return first if first in languages[1:] else languages[0]


def with_language_base(html: str, language: str) -> str:
    """Point the ``base`` of Material's ``__config`` at ``language``'s root, for its search."""

    def rebase(match: re.Match[str]) -> str:
        config = json.loads(match["json"])
        # A folder's URL ends in "/", or Material would resolve the index beside it, not in it.
        config["base"] = posixpath.normpath(posixpath.join(config["base"], language)) + "/"
        return match.group(1) + json.dumps(config) + match.group(3)

    return _CONFIG.sub(rebase, html, count=1)


def _runs_last(event: EventT) -> EventT:
    """What ``mkdocs.plugins.event_priority(-200)`` does: run after mkdocs-static-i18n (-100)."""
    vars(event)["mkdocs_priority"] = -200
    return event


def _language(config: Any) -> str:
    # mkdocs-static-i18n sets theme.language to the language being built.
    return str(config.theme["language"])


def on_post_page(output: str, page: Any, config: Any) -> str:
    """A page of an extra language searches that language's own index."""
    language = _language(config)
    return output if language == DEFAULT_LANGUAGE else with_language_base(output, language)


def on_post_template(output_content: str, template_name: str, config: Any) -> str:
    """Write an extra language's 404 page into its own folder, keeping the root's."""
    language = _language(config)
    if template_name != "404.html" or language == DEFAULT_LANGUAGE:
        return output_content
    target = Path(config.site_dir) / language / "404.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(with_language_base(output_content, language), encoding="utf-8")
    return ""  # MkDocs writes nothing for an empty template: the root 404.html stays


@_runs_last
def on_post_build(config: Any) -> None:
    """Split the merged search index into one index per built language."""
    site = Path(config.site_dir)
    merged = site / INDEX
    if not merged.is_file():
        return
    languages = _built_languages(config)
    split = split_search_index(json.loads(merged.read_text(encoding="utf-8")), languages)
    for code, index in split.items():
        # Each language build runs this hook; a language absent from the index is left alone.
        if code != languages[0] and not index["docs"]:
            continue
        target = site / INDEX if code == languages[0] else site / code / INDEX
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")


def _built_languages(config: Any) -> tuple[str, ...]:
    """The default language first, then the others mkdocs-static-i18n builds."""
    i18n = config.plugins.get("i18n")
    codes = [] if i18n is None else [lang.locale for lang in i18n.config.languages if lang.build]
    return (DEFAULT_LANGUAGE, *(code for code in codes if code != DEFAULT_LANGUAGE))
