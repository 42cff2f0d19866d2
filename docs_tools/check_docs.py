"""Check that the site cannot drift from the code and the manifests it describes.

Five rules, run by ``nox -s docs`` before the build and by ``course/tests/test_docs.py``:

1. Snippets. Every fenced code block on a page is either a shell command (``bash``, ``sh``,
   ``shell``, ``console``), a program's output (``text``), a ``mermaid`` diagram, or consists
   only of snippet includes such as
   ``--8<-- "course/src/tool.py:define_tool"``. Every include names a file under the repository
   and a section in it, marked by ``# --8<-- [start:name]`` and ``# --8<-- [end:name]``, and the
   section is not empty. (A data file with no comment syntax, such as a JSON-lines fixture, may
   be included whole.) So a page never pastes code, and a renamed or emptied section fails the
   build instead of silently vanishing.
2. Translations. A translated page ``page.vi.md`` has the ``##`` sections of its English page, in
   order, each with the English anchor (``## Kết quả { #outcome }``), so links and the lesson
   skeleton hold in both languages.
3. Navigation. The "Checkpoints" part of the ``mkdocs.yml`` nav lists every checkpoint of
   ``checkpoints/catalog.py`` in order, as ``NN title: checkpoints/NN_slug.md``; every lesson page
   belongs to a checkpoint; every nav title has a translation for each extra language; and each
   language's home page links every checkpoint.
4. Derived lists (``authoring/checks.py``). README's checkpoint map and roadmap sentence, the
   nav and the forward references on the pages are what ``python checkpoints/catalog.py
   --write`` writes; every file a manifest names exists; and the promises pages make about
   later checkpoints are recorded and reviewed (``docs_tools/promises.py``).
5. Pinned messages (``docs_tools/pinned_messages.py``). Every message a lab's tests pin is
   stated in full on that lab's section of the English page.

Only the standard library is used (mkdocs.yml is read line by line, not with a YAML parser), so
the check runs anywhere the tests run.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script, the repository root is not importable yet
    sys.path.insert(0, str(ROOT))

from authoring.checks import derived_problems, promises_to_review  # noqa: E402
from authoring.derived import WRITE_COMMAND  # noqa: E402
from checkpoints.catalog import Checkpoint, load_catalog  # noqa: E402
from docs_tools.pinned_messages import pinned_message_problems  # noqa: E402
from docs_tools.translations import translation_check  # noqa: E402

__all__ = [
    "LITERAL_LANGUAGES",
    "Fence",
    "all_problems",
    "find_fences",
    "main",
    "navigation_problems",
    "read_nav",
    "read_nav_translations",
    "snippet_problems",
    "translation_problems",
]

DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"
# Fenced blocks that may hold literal text, because none of it is code from the repository:
# shell commands, a program's output, and diagrams that are the page's own.
LITERAL_LANGUAGES = frozenset({"bash", "sh", "shell", "console", "text", "mermaid"})
CHECKPOINTS_SECTION = "Checkpoints"
EXTRA_LANGUAGES = ("vi",)
# Files that can carry section markers in comments, so a page shows them only through a section.
CODE_SUFFIXES = frozenset({".py", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".sh"})

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*)$")
_INCLUDE = re.compile(
    r"""^[ \t]*-{1,}8<-{1,}[ \t]+(?P<quote>["'])(?P<target>.+)(?P=quote)[ \t]*$"""
)
_SECTION_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
_MARKER = re.compile(r"-{1,}8<-{1,}[ \t]*\[(?P<kind>start|end):(?P<name>[A-Za-z0-9_-]+)\]")
_NAV_ENTRY = re.compile(r"^(?P<indent>[ ]*)- (?P<title>[^:]+?):[ \t]*(?P<path>\S+)?[ \t]*$")
_H2 = re.compile(r"^## (?P<title>.+?)(?:[ \t]*\{[ \t]*#(?P<id>[\w-]+)[^}]*\})?[ \t]*$")
_MAPPING_ENTRY = re.compile(r"^(?P<indent>[ ]*)(?P<key>[^:#][^:]*?):[ \t]*(?P<value>.*?)[ \t]*$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fence:
    """One fenced code block of a Markdown page."""

    line: int  # 1-based line of the opening fence
    language: str  # "" when the fence names none
    body: tuple[str, ...]


def find_fences(text: str) -> list[Fence]:
    """Return every fenced code block of ``text``, indented ones (in tabs, admonitions) too."""
    fences: list[Fence] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = index + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        fences.append(
            Fence(
                line=index + 1,
                language=_language_of(opening["info"]),
                body=tuple(lines[index + 1 : end]),
            )
        )
        index = end + 1
    return fences


def _language_of(info: str) -> str:
    """Read the language from an info string: ``python title="x"`` or ``{.python .annotate}``."""
    words = info.strip().lstrip("{").split()
    return words[0].lstrip(".").lower() if words else ""


def snippet_problems(page: Path, root: Path = ROOT) -> list[str]:
    """Return what is wrong with the code blocks and snippet includes of ``page``."""
    text = page.read_text(encoding="utf-8")
    where = _display(page, root)
    problems: list[str] = []
    for fence in find_fences(text):
        if fence.language in LITERAL_LANGUAGES:
            continue
        pasted = [line for line in fence.body if line.strip() and not _INCLUDE.match(line)]
        if pasted or not any(line.strip() for line in fence.body):
            kind = f"a ```{fence.language} block" if fence.language else "a code block"
            problems.append(
                f"{where}:{fence.line}: {kind} must only include snippet sections "
                f'(--8<-- "course/src/module.py:section"), not paste code; '
                "shell commands go in ```bash blocks, output in ```text"
            )
    for number, line in enumerate(text.splitlines(), start=1):
        include = _INCLUDE.match(line)
        if include is not None:
            problems.extend(
                f"{where}:{number}: {problem}"
                for problem in _include_problems(include["target"], root)
            )
    return problems


def _include_problems(target: str, root: Path) -> Iterator[str]:
    file_name, separator, section = target.rpartition(":")
    if not separator:
        # A whole file: only data, such as a recorded fixture, which has no comment syntax for
        # section markers; code is always shown through a named section.
        file_name, section = target, ""
    elif not _SECTION_NAME.match(section) or section.isdigit():
        yield f"include {target!r}: name a section ('file.py:section'), not lines"
        return
    path = (root / file_name).resolve()
    if not path.is_relative_to(root.resolve()) or not path.is_file():
        yield f"include {target!r}: no file {file_name!r} in the repository"
        return
    text = path.read_text(encoding="utf-8")
    if not section:
        if path.suffix in CODE_SUFFIXES:
            yield f"include {target!r} must name a section: '{file_name}:section_name'"
        elif not text.strip():
            yield f"include {target!r}: the file is empty"
        return
    lines = _section_lines(text, section)
    if lines is None:
        yield (
            f"include {target!r}: {file_name} has no section {section!r} "
            f"(# --8<-- [start:{section}] ... # --8<-- [end:{section}])"
        )
    elif not any(line.strip() for line in lines):
        yield f"include {target!r}: section {section!r} of {file_name} is empty"


def _section_lines(text: str, section: str) -> list[str] | None:
    """Return the lines of a named section, markers of other sections left out; None if absent."""
    inside = False
    started = ended = False
    lines: list[str] = []
    for line in text.splitlines():
        marker = _MARKER.search(line)
        if marker is None:
            if inside:
                lines.append(line)
            continue
        if marker["name"] != section:
            continue
        if marker["kind"] == "start":
            inside = started = True
        else:
            inside = False
            ended = True
    return lines if started and ended else None


def translation_problems(page: Path, root: Path = ROOT) -> list[str]:
    """Return how a translated page's ``##`` sections differ from its English page's."""
    english = page.with_name(_english_name(page))
    if english == page or not english.is_file():
        return []
    theirs = _section_anchors(english.read_text(encoding="utf-8"))
    ours = _section_anchors(page.read_text(encoding="utf-8"))
    if ours == theirs:
        return []
    return [
        f"{_display(page, root)}: its ## sections must carry the anchors of "
        f"{_display(english, root)}, in order, like '## … {{ #{theirs[0] if theirs else 'id'} }}'"
        f"\n  expected {theirs}\n  found    {ours}"
    ]


def _section_anchors(text: str) -> list[str]:
    """Return the anchor of each ``##`` heading outside code blocks, as Python-Markdown would."""
    fenced = {
        line
        for fence in find_fences(text)
        for line in range(fence.line, fence.line + len(fence.body) + 2)
    }
    anchors = []
    for number, line in enumerate(text.splitlines(), start=1):
        heading = _H2.match(line)
        if heading is not None and number not in fenced:
            anchors.append(heading["id"] or _slugify(heading["title"]))
    return anchors


def _slugify(title: str) -> str:
    """Make an anchor the way Python-Markdown's ``toc`` extension does by default."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_title).strip().lower())


def read_nav(config: Path = CONFIG) -> list[tuple[int, str, str | None]]:
    """Return the ``nav`` entries of mkdocs.yml as (indent, title, page or None for a section)."""
    entries: list[tuple[int, str, str | None]] = []
    for line in _top_level_block(config.read_text(encoding="utf-8"), "nav"):
        entry = _NAV_ENTRY.match(line)
        if entry is not None:
            entries.append((len(entry["indent"]), entry["title"].strip(), entry["path"]))
    return entries


def read_nav_translations(config: Path = CONFIG) -> dict[str, dict[str, str]]:
    """Return each language's ``nav_translations`` from mkdocs.yml, keyed by locale."""
    translations: dict[str, dict[str, str]] = {}
    locale = ""
    block_indent: int | None = None
    for line in config.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if stripped.startswith(("- locale:", "locale:")):
            locale = stripped.split(":", 1)[1].strip()
            block_indent = None
        elif stripped == "nav_translations:":
            block_indent = indent
            translations.setdefault(locale, {})
        elif block_indent is not None and stripped and not stripped.startswith("#"):
            entry = _MAPPING_ENTRY.match(line)
            if indent <= block_indent or entry is None:
                block_indent = None
            else:
                translations[locale][entry["key"].strip()] = entry["value"]
    return translations


def _top_level_block(text: str, key: str) -> Iterator[str]:
    """Yield the lines under a top-level ``key:`` of a YAML file, up to the next top-level key."""
    inside = False
    for line in text.splitlines():
        if line and not line[0].isspace() and not line.startswith(("#", "-")):
            inside = line.split(":", 1)[0] == key
            continue
        if inside:
            yield line


def navigation_problems(
    catalog: Iterable[Checkpoint], config: Path = CONFIG, docs: Path = DOCS
) -> list[str]:
    """Return how the nav, the translations and the home pages disagree with the catalog."""
    checkpoints = tuple(catalog)
    nav = read_nav(config)
    problems: list[str] = []

    section = [i for i, (_, title, page) in enumerate(nav) if title == CHECKPOINTS_SECTION]
    if len(section) != 1 or nav[section[0]][2] is not None:
        return [f"mkdocs.yml: nav needs one section '{CHECKPOINTS_SECTION}:' holding the lessons"]
    start = section[0]
    depth = nav[start][0]
    listed: list[tuple[str, str | None]] = []
    for indent, title, page in nav[start + 1 :]:
        if indent <= depth:
            break
        listed.append((title, page))
    expected = [(f"{c.number} {c.title}", c.page) for c in checkpoints]
    if listed != expected:
        problems.append(
            "mkdocs.yml: the 'Checkpoints' nav must list the manifests in order, as\n"
            + "".join(f"      - {title}: {page}\n" for title, page in expected)
            + "  but lists\n"
            + "".join(f"      - {title}: {page}\n" for title, page in listed)
            + f"  run `{WRITE_COMMAND}` (nox -s catalog) to write it"
        )

    pages = {c.page for c in checkpoints}
    for lesson in sorted((docs / "checkpoints").glob("*.md")):
        english = _english_name(lesson)
        if f"checkpoints/{english}" not in pages:
            problems.append(
                f"docs/checkpoints/{lesson.name}: no checkpoint manifest has this page "
                "(checkpoints/NN_slug/checkpoint.toml)"
            )

    translations = read_nav_translations(config)
    titles = [title for _, title, _ in nav]
    for locale in EXTRA_LANGUAGES:
        known = translations.get(locale, {})
        missing = [title for title in titles if title not in known]
        stale = [title for title in known if title not in titles]
        if missing:
            problems.append(
                f"mkdocs.yml: nav_translations of {locale!r} lack {missing} (write each as "
                f"'{missing[0]}: <title in {locale!r}>' under that language's nav_translations)"
            )
        if stale:
            problems.append(f"mkdocs.yml: nav_translations of {locale!r} name no nav title {stale}")

    for home in ["index.md", *(f"index.{locale}.md" for locale in EXTRA_LANGUAGES)]:
        if not (docs / home).is_file():
            continue
        text = (docs / home).read_text(encoding="utf-8")
        unlinked = [c.page for c in checkpoints if f"]({c.page})" not in text]
        if unlinked:
            problems.append(f"docs/{home}: the checkpoint map does not link {unlinked}")
    return problems


def _english_name(page: Path) -> str:
    """Return the English page a translation belongs to: ``06_x.vi.md`` -> ``06_x.md``."""
    stem, _, suffix = page.name.rpartition(".md")[0].rpartition(".")
    return f"{stem}.md" if stem and suffix in EXTRA_LANGUAGES else page.name


def _display(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def all_problems(root: Path = ROOT) -> list[str]:
    """Return every problem of every page under docs/ and of the navigation."""
    problems: list[str] = []
    for page in sorted((root / "docs").rglob("*.md")):
        problems.extend(snippet_problems(page, root))
        problems.extend(translation_problems(page, root))
    problems.extend(derived_problems(root))  # rule 4: authoring/checks.py
    problems.extend(navigation_problems(load_catalog(), root / "mkdocs.yml", root / "docs"))
    problems.extend(translation_check(root))  # glossary (fatal); prints stale translations
    problems.extend(pinned_message_problems(root))  # rule 5: docs_tools/pinned_messages.py
    return problems


def main() -> int:
    """Print every problem found; return 1 if there is any."""
    problems = all_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    for promise in promises_to_review(ROOT):
        print(f"to review (the page is a draft): {promise}")
    pages = len(list(DOCS.rglob("*.md")))
    print(f"check_docs: {pages} pages checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
