"""Hold the Vietnamese pages to the glossary, and say which translations are missing or stale.

Two rules, run by ``nox -s docs`` through ``check_docs.py`` and tested in
``course/tests/test_translations.py``:

1. Glossary (fatal). Every ``docs/**/*.vi.md`` follows ``docs_tools/glossary_vi.toml``: a word
   listed under ``avoid`` is reported with its page, line and the glossary term to write instead;
   a ``##`` heading whose anchor is a lesson section carries the glossary title; the tone mark of
   ``oa``, ``oe``, ``uy`` sits where the glossary says. Text between backticks, a program's
   output (a ``text`` block) and snippet includes are code, so they are never checked.
2. Freshness (printed, not fatal). A translation records the English text it translates as
   ``source_sha256: <16 hex digits>`` in its front matter: the start of the SHA-256 of the
   English page, line endings made ``\\n``. When the English page changes, the hash no longer
   matches and the translation is *outdated*; a page with no ``.vi.md`` is *missing*. Both are
   printed, and the site shows a notice on such a page (``docs_tools/translation_notice.py``).
   ``python docs_tools/translations.py stamp PAGE.vi.md`` records the current hash once the
   translation has caught up.

Only the standard library is used, so the check runs wherever the tests run.
"""

from __future__ import annotations

import bisect
import enum
import hashlib
import os
import re
import sys
import tempfile
import tomllib
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "GLOSSARY",
    "HASH_FIELD",
    "Glossary",
    "Status",
    "Term",
    "config_problems",
    "glossary_problems",
    "load_glossary",
    "recorded_hash",
    "source_hash",
    "stamp",
    "status_of",
    "status_reports",
    "translation_check",
    "up_to_date_translations",
]

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs_tools" / "glossary_vi.toml"
LOCALE = "vi"
HASH_FIELD = "source_sha256"
HASH_DIGITS = 16

_HASH_LINE = re.compile(rf"^{HASH_FIELD}:[ \t]*(?P<hash>[0-9a-f]+)[ \t]*$", re.MULTILINE)
_FRONT_MATTER = re.compile(r"\A---\n(?P<body>.*?\n)---\n", re.DOTALL)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_INCLUDE = re.compile(r"^[ \t]*-{1,}8<-{1,}[ \t]")
# A ``text`` block is a program's output, quoted as the program wrote it: English, like code.
_OUTPUT_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*text[ \t]*$")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1)[^\n]|\n(?![ \t]*\n))+?\1")
# Anchors ("{ #bounded-deterministic-output }") and link targets are English by design.
_ATTRIBUTES = re.compile(r"\{[ \t]*[#.][^}\n]*\}")
_LINK_TARGET = re.compile(r"\]\([^)\n]*\)")
_H2 = re.compile(r"^## (?P<title>.+?)[ \t]*\{[ \t]*#(?P<id>[\w-]+)[^}]*\}[ \t]*$")
# An open syllable ending in oa, oe or uy with the tone on its second vowel ("huỷ", "hoá"); after
# q, "u" belongs to the consonant ("quý"), so the tone is right where it is.
_MODERN_TONE = re.compile(r"(?<![qQ])([oO][áàảãạéèẻẽẹÁÀẢÃẠÉÈẺẼẸ]|[uU][ýỳỷỹỵÝỲỶỸỴ])(?!\w)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Term:
    """One glossary entry: the English term, the Vietnamese one, and the variants to avoid."""

    en: str
    vi: str
    keep: bool  # True iff the Vietnamese text writes the English word itself
    avoid: tuple[str, ...]
    note: str
    anchor: str  # the `##` anchor when the entry names a lesson section, else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Glossary:
    """The terms and lesson sections of ``glossary_vi.toml``."""

    terms: tuple[Term, ...]
    sections: tuple[Term, ...]
    classic_tone_marks: bool  # True: "hóa", "hủy"; False: any placement


class Status(enum.Enum):
    """How a translation stands against its English page."""

    UP_TO_DATE = "up to date"
    OUTDATED = "outdated"
    MISSING = "missing"


def load_glossary(path: Path = GLOSSARY) -> Glossary:
    """Read the glossary; raise ValueError naming the entry that lacks ``en`` or ``vi``."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return Glossary(
        terms=tuple(_term(entry, path) for entry in data.get("terms", [])),
        sections=tuple(_term(entry, path) for entry in data.get("sections", [])),
        classic_tone_marks=data.get("tone_marks") == "classic",
    )


def _term(entry: dict[str, object], path: Path) -> Term:
    en, vi, avoid = entry.get("en"), entry.get("vi"), entry.get("avoid", [])
    if not isinstance(en, str) or not isinstance(vi, str) or not en or not vi:
        raise ValueError(f"{path.name}: every entry needs 'en' and 'vi' strings, got {entry}")
    if not isinstance(avoid, list) or not all(isinstance(word, str) for word in avoid):
        raise ValueError(f"{path.name}: 'avoid' of {en!r} must be a list of strings")
    return Term(
        en=en,
        vi=vi,
        keep=entry.get("keep") is True,
        avoid=tuple(avoid),
        note=str(entry.get("note", "")),
        anchor=str(entry.get("anchor", "")),
    )


def _pattern(avoid: str) -> re.Pattern[str]:
    """Compile one ``avoid`` entry: a whole-word phrase, or a regular expression after "re:"."""
    if avoid.startswith("re:"):
        return re.compile(avoid.removeprefix("re:"), re.IGNORECASE)
    words = r"\s+".join(re.escape(word) for word in avoid.split())  # may wrap onto the next line
    return re.compile(rf"(?<!\w){words}(?!\w)", re.IGNORECASE)


def _prose(text: str) -> str:
    """Return ``text`` with what is not Vietnamese prose blanked out, line breaks kept.

    Comments in shell blocks and labels in diagrams are prose too, so fenced blocks are read;
    only snippet include lines, a program's output (a ``text`` block), inline code spans,
    anchors and link targets are left out.
    """
    lines = [
        "" if _INCLUDE.match(line) or _FENCE.match(line) or in_output else line
        for line, in_output in zip(text.splitlines(), _inside_output_blocks(text), strict=True)
    ]
    # A code span may continue on the next line of its paragraph, so blank them in the whole text.
    prose = "\n".join(lines)
    for code in (_INLINE_CODE, _ATTRIBUTES, _LINK_TARGET):
        prose = code.sub(lambda found: re.sub(r"[^\n]", " ", found[0]), prose)
    return prose


def _inside_output_blocks(text: str) -> Iterator[bool]:
    """Yield, for each line of ``text``, whether it lies inside a ``text`` block."""
    closing: str | None = None  # the fence that ends the output block we are in
    for line in text.splitlines():
        if closing is None:
            opening = _OUTPUT_FENCE.match(line)
            closing = opening["fence"] if opening else None
            yield False
        else:
            bare = line.strip()
            ends = set(bare) == {closing[0]} and len(bare) >= len(closing)
            closing = None if ends else closing
            yield not ends


def _classic(match: re.Match[str]) -> str:
    """Move the tone mark of "uỷ"/"oá" to the first vowel: "ủy"/"óa"."""
    first, second = match[1][0], match[1][1]
    decomposed = unicodedata.normalize("NFD", second)  # the vowel, then its tone mark
    return unicodedata.normalize("NFC", first + decomposed[1:]) + decomposed[0]


def glossary_problems(page: Path, glossary: Glossary, root: Path = ROOT) -> list[str]:
    """Return every place where a Vietnamese page departs from the glossary, in page order."""
    text = page.read_text(encoding="utf-8")
    found = sorted(
        [*_section_title_problems(text, glossary), *_wording_problems(text, glossary)],
        key=lambda problem: problem[0],
    )
    where = _display(page, root)
    return [f"{where}:{number}: {problem}" for number, problem in found]


def _section_title_problems(text: str, glossary: Glossary) -> Iterator[tuple[int, str]]:
    """Yield each ``##`` heading of a lesson section whose title is not the glossary's."""
    titles = {section.anchor: section for section in glossary.sections}
    for number, line in enumerate(text.splitlines(), start=1):
        heading = _H2.match(line)
        if heading is None or heading["id"] not in titles:
            continue
        section = titles[heading["id"]]
        if heading["title"] != section.vi:
            yield (
                number,
                (
                    f"section '{heading['title']}' must be titled '{section.vi}' "
                    f"(glossary: {section.en})"
                ),
            )


def _wording_problems(text: str, glossary: Glossary) -> Iterator[tuple[int, str]]:
    """Yield each avoided word, and each tone mark out of place, with its line number."""
    prose = _prose(text)
    starts = [0, *(index + 1 for index, char in enumerate(prose) if char == "\n")]
    for term in (*glossary.sections, *glossary.terms):
        for avoid in term.avoid:
            for found in _pattern(avoid).finditer(prose):
                said = " ".join(found[0].split())  # a phrase wrapped onto two lines
                yield (
                    bisect.bisect_right(starts, found.start()),
                    f"'{said}' -> write '{term.vi}' (glossary: {term.en})",
                )
    if glossary.classic_tone_marks:
        for found in _MODERN_TONE.finditer(prose):
            word = _word_around(prose, found.start())
            yield (
                bisect.bisect_right(starts, found.start()),
                f"'{word}' -> write '{word.replace(found[0], _classic(found))}' "
                "(glossary: tone mark on the first vowel of oa, oe, uy)",
            )


def _word_around(line: str, index: int) -> str:
    start, end = index, index
    while start > 0 and line[start - 1].isalpha():
        start -= 1
    while end < len(line) and line[end].isalpha():
        end += 1
    return line[start:end]


def source_hash(english: str) -> str:
    """Return the hash a translation records of the English text it translates."""
    normalized = english.replace("\r\n", "\n").encode("utf-8")
    return hashlib.sha256(normalized).hexdigest()[:HASH_DIGITS]


def recorded_hash(translation: str) -> str | None:
    """Return the ``source_sha256`` of a translation's front matter, or None if it has none."""
    front = _FRONT_MATTER.match(translation.replace("\r\n", "\n"))
    if front is None:
        return None
    found = _HASH_LINE.search(front["body"])
    return found["hash"] if found is not None else None


def translation_of(english: Path, locale: str = LOCALE) -> Path:
    """Return where the translation of an English page lives: ``06_x.md`` -> ``06_x.vi.md``."""
    return english.with_name(f"{english.stem}.{locale}.md")


def status_of(english: Path, locale: str = LOCALE) -> Status:
    """Say whether the translation of ``english`` is missing, outdated or up to date."""
    translation = translation_of(english, locale)
    if not translation.is_file():
        return Status.MISSING
    recorded = recorded_hash(translation.read_text(encoding="utf-8"))
    if recorded is None:  # a placeholder: nothing has been translated from the English yet
        return Status.MISSING
    if recorded != source_hash(english.read_text(encoding="utf-8")):
        return Status.OUTDATED
    return Status.UP_TO_DATE


def up_to_date_translations(root: Path = ROOT, locale: str = LOCALE) -> list[Path]:
    """Return the translations under ``root/docs`` that are up to date with their English page.

    A tool that edits an English page and its translation alike (a generated table row, a
    forward link) takes this list before it writes and stamps each of them after, so that its
    own edit does not make a finished translation look older than its page.
    """
    return [
        translation_of(english, locale)
        for english in english_pages(root / "docs")
        if status_of(english, locale) is Status.UP_TO_DATE
    ]


def english_pages(docs: Path) -> list[Path]:
    """Return every English page under ``docs``: the ``.md`` files with no language suffix."""
    return sorted(page for page in docs.rglob("*.md") if "." not in page.stem)


def status_reports(root: Path = ROOT, locale: str = LOCALE) -> list[str]:
    """Return one line per English page whose translation is missing or outdated."""
    reports = []
    for english in english_pages(root / "docs"):
        status = status_of(english, locale)
        if status is Status.MISSING:
            reports.append(f"{_display(english, root)}: no {locale} translation (the site says so)")
        elif status is Status.OUTDATED:
            reports.append(
                f"{_display(translation_of(english, locale), root)}: older than "
                f"{_display(english, root)} (the site says so); once it has caught up, run "
                f"python docs_tools/translations.py stamp {_display(translation_of(english), root)}"
            )
    return reports


def translation_check(root: Path = ROOT, glossary_path: Path = GLOSSARY) -> list[str]:
    """Print the missing and outdated translations; return the glossary problems (fatal)."""
    for report in status_reports(root):
        print(f"translation: {report}")
    glossary = load_glossary(glossary_path)
    return [
        *(
            problem
            for page in sorted((root / "docs").rglob(f"*.{LOCALE}.md"))
            for problem in glossary_problems(page, glossary, root)
        ),
        *config_problems(root / "mkdocs.yml", glossary),
    ]


def config_problems(config: Path, glossary: Glossary) -> list[str]:
    """Hold the Vietnamese values of ``mkdocs.yml`` (its non-ASCII lines) to the glossary.

    Only what follows the first colon is read: in ``04 Deterministic model: 04 Model tất định``
    the key is the English nav title.
    """
    if not config.is_file():
        return []
    lines = config.read_text(encoding="utf-8").splitlines()
    vietnamese = "\n".join("" if line.isascii() else line.partition(":")[2] for line in lines)
    return [
        f"{config.name}:{number}: {problem}"
        for number, problem in _wording_problems(vietnamese, glossary)
    ]


def stamp(translation: Path) -> str:
    """Record in ``translation`` the hash of its English page now; return the hash.

    The file is replaced in one step (written beside it, then renamed), never half-written.
    Raises ValueError if the page is not a translation or its English page does not exist.
    """
    suffix = f".{LOCALE}.md"
    if not translation.name.endswith(suffix):
        raise ValueError(f"{translation}: not a translation (its name must end in {suffix})")
    english = translation.with_name(translation.name.removesuffix(suffix) + ".md")
    if not english.is_file():
        raise ValueError(f"{translation}: no English page {english.name} beside it")
    digest = source_hash(english.read_text(encoding="utf-8"))
    text = translation.read_text(encoding="utf-8").replace("\r\n", "\n")
    field = f"{HASH_FIELD}: {digest}"
    front = _FRONT_MATTER.match(text)
    if front is None:
        text = f"---\n{field}\n---\n\n{text}"
    elif _HASH_LINE.search(front["body"]):
        body = _HASH_LINE.sub(field, front["body"])
        text = f"---\n{body}---\n{text[front.end() :]}"
    else:
        text = f"---\n{front['body']}{field}\n---\n{text[front.end() :]}"
    handle, temporary = tempfile.mkstemp(dir=translation.parent, suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    Path(temporary).replace(translation)
    return digest


def _display(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def main(argv: list[str]) -> int:
    """``stamp PAGE.vi.md ...`` records hashes; no argument prints the status of every page."""
    if argv[:1] == ["stamp"] and len(argv) > 1:
        try:
            for page in argv[1:]:
                print(f"{page}: {HASH_FIELD} {stamp(Path(page))}")
        except (ValueError, OSError) as error:
            print(f"translations: {error}", file=sys.stderr)
            return 2
        return 0
    if argv:
        print("usage: python docs_tools/translations.py [stamp PAGE.vi.md ...]", file=sys.stderr)
        return 2
    problems = translation_check()
    print(*problems, sep="\n", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
