"""Copy lesson pages into a practice folder, with their listings filled in from the given code.

A page's listings are snippet includes (``--8<-- "course/src/tool.py:define_tool"``), which only
the site build fills in; read raw, they say nothing. The practice folder gets each page with
every include replaced by the lines it names, except a listing that overlaps a lab region of a
module the folder gives as a skeleton: that listing is the lab's answer, so a note stands in its
place. Everything else (prose, diagrams, test listings, fixtures) is copied as it is.
"""

from __future__ import annotations

__all__ = ["LEFT_OUT", "render_page"]

import re
import textwrap
from collections.abc import Callable, Mapping, Sequence

from practice.regions import LabRegion

# An include alone on its line, as pymdownx.snippets reads it: `--8<-- "path"` or "path:section".
_INCLUDE = re.compile(
    r"""^(?P<indent>[ \t]*)-{1,}8<-{1,}[ \t]+(?P<q>["'])(?P<target>.+)(?P=q)\s*$"""
)
_SECTION_MARKER = re.compile(r"-{1,}8<-{1,}[ \t]*\[(?P<kind>start|end):(?P<name>[A-Za-z0-9_-]+)\]")

_LAB_MARKER = re.compile(r"^[ \t]*# (BEGIN|END) LAB \d+\.\d+[ \t]*$")

# The first words of the note that stands in for a lab's answer; tests look for them.
LEFT_OUT = "Left out of this practice folder:"

NOTE = (
    "# " + LEFT_OUT + " this listing ({where}) is the answer to Lab {lab}.\n"
    "# Write it yourself; when the lab passes, compare with the course's {path}."
)

HEADER = (
    "> This copy of the lesson page belongs to the practice folder: its listings show the code "
    "this folder gives you, and a listing that is a lab's answer is left out. Links to other "
    "pages lead into the course repository's `docs/` folder and its site.\n"
)


def render_page(
    page: str,
    read: Callable[[str], str],
    stubbed_regions: Mapping[str, Sequence[LabRegion]],
) -> str:
    """Return ``page`` with its snippet includes resolved.

    ``read`` returns a course file's text by its repository path; ``stubbed_regions`` maps the
    path of each module the folder gives as a skeleton to its lab regions.
    """
    lines = page.splitlines(keepends=True)
    out: list[str] = []
    for index, line in enumerate(lines):
        include = _INCLUDE.match(line)
        if include is None:
            out.append(line)
            if index == 0 and line.startswith("# "):
                out.extend(["\n", HEADER])
            continue
        path, _, section = include["target"].partition(":")
        text = _section(read(path), section, path)
        lab = _answer_in(read(path), section, path, stubbed_regions.get(path, ()))
        if lab is not None:
            where = f"{path}, section {section}" if section else path
            text = NOTE.format(where=where, lab=lab, path=path) + "\n"
        out.extend(textwrap.indent(text, include["indent"], lambda _: True))
    return "".join(out)


def _section(source: str, section: str, path: str) -> str:
    """Return the lines of ``section`` of ``source`` (the whole file when ``section`` is empty)."""
    if not section:
        kept = [line for line in source.splitlines(keepends=True) if not _is_marker(line)]
        return "".join(kept)
    start, end = _section_bounds(source, section, path)
    body = source.splitlines(keepends=True)[start:end]
    return textwrap.dedent("".join(line for line in body if not _is_marker(line)))


def _section_bounds(source: str, section: str, path: str) -> tuple[int, int]:
    """Return the 0-based line span inside the markers of ``section``: [start, end)."""
    start = end = None
    for number, line in enumerate(source.splitlines()):
        marker = _SECTION_MARKER.search(line)
        if marker is None or marker["name"] != section:
            continue
        if marker["kind"] == "start":
            start = number + 1
        else:
            end = number
    if start is None or end is None or end < start:
        raise ValueError(f"{path}: no snippet section {section!r}")
    return start, end


def _is_marker(line: str) -> bool:
    """Snippet markers, and lab markers: in a practice folder a lab is a place, not a region."""
    return _SECTION_MARKER.search(line) is not None or _LAB_MARKER.match(line) is not None


def _answer_in(source: str, section: str, path: str, regions: Sequence[LabRegion]) -> str | None:
    """Return the lab whose region the listing overlaps, or None when it shows given code only."""
    if not regions:
        return None
    if section:
        start, end = _section_bounds(source, section, path)
        first, last = start + 1, end  # 1-based lines of the listing
    else:
        first, last = 1, len(source.splitlines())
    for region in regions:
        if region.begin <= last and first <= region.end:
            return region.lab
    return None
