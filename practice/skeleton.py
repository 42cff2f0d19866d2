"""Turn a reference module into the skeleton a learner fills in: every lab region becomes a stub.

A region at the end of a function body becomes a ``# TODO(Lab N.M): …`` comment and a
``raise NotImplementedError("Lab N.M: … — see docs/…")``, so the function keeps its
signature and docstring and fails loudly, naming its lab, until the learner writes it. A
region of private helpers at module or class level becomes a ``TODO`` comment alone.
Docs snippet-section comments are dropped too: they mean nothing outside the course.
"""

from __future__ import annotations

__all__ = [
    "Skeleton",
    "make_skeleton",
    "stub_message",
]

import ast
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

from practice.regions import LabMarkerError, LabRegion, find_regions, snippet_marker_lines

_WIDTH = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class Skeleton:
    """A module's skeleton and the regions it replaced."""

    text: str
    regions: tuple[LabRegion, ...]


def stub_message(lab: str, summary: str, page: str) -> str:
    """Return the message of a lab's stub: ``Lab 6.2: <summary> — see docs/<page>``."""
    return f"Lab {lab}: {summary.rstrip('.')} — see docs/{page}"


def make_skeleton(source: str, path: str, *, summaries: Mapping[str, str], page: str) -> Skeleton:
    """Return the skeleton of ``source``; ``summaries`` maps each allowed lab id to its summary."""
    regions = find_regions(source, path, summaries.keys())
    snippets = snippet_marker_lines(source, path)
    newline = "\r\n" if "\r\n" in source else "\n"
    starts = {region.begin: region for region in regions}
    lines = source.splitlines(keepends=True)
    kept: list[str | None] = []  # None marks where a snippet comment was dropped
    skip_through = 0
    for number, line in enumerate(lines, start=1):
        if number <= skip_through:
            continue
        if number in snippets:
            kept.append(None)
            continue
        region = starts.get(number)
        if region is None:
            kept.append(line)
            continue
        stub = _stub_lines(region, summaries[region.lab], page)
        kept.extend(f"{text}{newline}" for text in stub)
        skip_through = region.end
    text = "".join(_close_seams(kept))
    _check_skeleton(text, source, path, regions)
    return Skeleton(text=text, regions=regions)


def _close_seams(lines: list[str | None]) -> list[str]:
    """Drop the seams of removed comments, leaving at most two blank lines, none at the end.

    A blank line touching a comment line cannot sit inside a string literal, so only the
    blank lines around a seam are ever removed.
    """
    result: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line is not None:
            result.append(line)
            index += 1
            continue
        following = index
        while following < len(lines) and (lines[following] is None or _blank(lines[following])):
            following += 1
        before = 0
        while before < len(result) and _blank(result[len(result) - 1 - before]):
            before += 1
        after = [text for text in lines[index:following] if text is not None]
        if following == len(lines):  # nothing but blank lines after: the file ends here
            del result[len(result) - before :]
        else:
            result.extend(after[: max(0, 2 - before)])
        index = following
    return result


def _blank(line: str | None) -> bool:
    return line is not None and not line.strip()


def _stub_lines(region: LabRegion, summary: str, page: str) -> list[str]:
    indent = region.indent
    if region.kind == "definitions":
        todo = f"TODO(Lab {region.lab}): add here any private helpers you need for: {summary}"
        lines = _comment(todo, indent)
        return [*lines, f"{indent}pass"] if region.empties_block else lines
    message = stub_message(region.lab, summary, page)
    raise_line = f"{indent}raise NotImplementedError({_string_literal(message)})"
    if len(raise_line) > _WIDTH:
        raise_lines = [
            f"{indent}raise NotImplementedError(",
            *(f"{indent}    {part}" for part in _string_parts(message, _WIDTH - len(indent) - 4)),
            f"{indent})",
        ]
    else:
        raise_lines = [raise_line]
    lines = [*_comment(f"TODO(Lab {region.lab}): {summary}", indent), *raise_lines]
    if region.keeps_generator:
        # Without a yield the function would stop being a generator, and a caller iterating
        # it would fail with a TypeError instead of this lab's NotImplementedError.
        lines.append(f"{indent}yield  # unreachable; keeps this function a generator")
    return lines


def _comment(text: str, indent: str) -> list[str]:
    return textwrap.wrap(
        text,
        width=_WIDTH,
        initial_indent=f"{indent}# ",
        subsequent_indent=f"{indent}#   ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def _string_parts(text: str, width: int) -> list[str]:
    """Split ``text`` into string literals of at most ``width`` characters, read as one string.

    Adjacent literals concatenate, so the message stays exactly ``text``; each piece ends
    after a space, so the lines break between words (a word longer than a line is cut).
    """
    pieces = textwrap.wrap(
        text,
        width=width - 2,  # the two quotes
        drop_whitespace=False,
        break_long_words=True,
        break_on_hyphens=False,
    )
    if "".join(pieces) != text:  # textwrap changed a tab or a line break: keep one literal
        return [_string_literal(text)]
    return [_string_literal(piece) for piece in pieces]


def _string_literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _check_skeleton(text: str, source: str, path: str, regions: tuple[LabRegion, ...]) -> None:
    """Refuse a skeleton that does not parse or still uses a helper its regions removed."""
    try:
        ast.parse(text, filename=path)
    except SyntaxError as exc:  # a bug of the generator, or a region it should have refused
        raise LabMarkerError(
            path, exc.lineno or 1, f"the skeleton is not valid Python: {exc.msg}"
        ) from exc
    removed = {name for region in regions for name in region.removes}
    if not removed:
        return

    def kept(node: ast.AST) -> bool:
        line: int = getattr(node, "lineno", 0)
        return not any(region.begin < line < region.end for region in regions)

    defined: set[str] = set()
    used: dict[str, int] = {}
    for node in filter(kept, ast.walk(ast.parse(source, filename=path))):
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            defined.add(node.name)  # type: ignore[attr-defined]
        elif type(node) in (ast.Name, ast.Attribute):
            name: str = node.id if type(node) is ast.Name else node.attr  # type: ignore[attr-defined]
            if type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                used.setdefault(name, node.lineno)  # type: ignore[attr-defined]
            else:
                defined.add(name)
    for name in sorted(removed & used.keys() - defined, key=used.__getitem__):
        raise LabMarkerError(
            path,
            used[name],
            f"{name} is used outside the lab regions but defined only inside one: "
            "keep it outside the markers, or move its use into a region",
        )
