"""Find the lab regions of a reference module and refuse any marker that breaks the rules.

A region is the code between ``# BEGIN LAB N.M`` and ``# END LAB N.M``, each alone on its line
(CONTRIBUTING.md). Markers are read as comment *tokens*, so text inside a string never counts,
and every region is checked against the syntax tree: it must be either the end of one
function's body (after the docstring) or a run of whole private definitions at module or class
level. Anything else is refused with a ``LabMarkerError`` whose message starts ``file:line:``.
"""

from __future__ import annotations

__all__ = [
    "LabMarkerError",
    "LabRegion",
    "RegionKind",
    "find_regions",
    "snippet_marker_lines",
]

import ast
import io
import re
import tokenize
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Literal

# Anything that looks like a lab marker is one: a typo must be refused, not silently kept.
_LOOKS_LIKE_MARKER = re.compile(r"^#\s*(begin|end)[\s_-]*lab\b", re.IGNORECASE)
_MARKER = re.compile(r"^# (?P<edge>BEGIN|END) LAB (?P<lab>\d+\.\d+)$")
_SNIPPET_MARKER = re.compile(r"^#\s*--8<--\s*\[(start|end):[^\]]*\]\s*$")

RegionKind = Literal["function", "definitions"]


class LabMarkerError(ValueError):
    """Raised when lab markers are malformed, unpaired, nested, unknown or badly placed."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line


@dataclass(frozen=True, slots=True, kw_only=True)
class LabRegion:
    """One marked region of a module, as the practice scaffold replaces it."""

    lab: str  # "6.2"
    begin: int  # line of the BEGIN marker, 1-based
    end: int  # line of the END marker; the region is begin..end inclusive
    indent: str  # the markers' indentation, which is also the code's
    kind: RegionKind  # "function": the end of a body; "definitions": whole private helpers
    owner: str  # qualified name of the function or class it sits in; "" at module level
    keeps_generator: bool  # every yield of the function is in the region: the stub must yield
    empties_block: bool  # the region is a whole class body: the stub needs a statement
    removes: tuple[str, ...]  # the names a "definitions" region defines, which the stub drops


@dataclass(frozen=True, slots=True, kw_only=True)
class _Marker:
    edge: Literal["BEGIN", "END"]
    lab: str
    line: int
    column: int


def find_regions(source: str, path: str, labs: Collection[str]) -> tuple[LabRegion, ...]:
    """Return the lab regions of ``source`` in order; ``labs`` are the ids allowed in it."""
    markers = _read_markers(source, path)
    pairs = _pair_markers(markers, path, labs)
    if not pairs:
        return ()
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise LabMarkerError(path, exc.lineno or 1, f"not valid Python: {exc.msg}") from exc
    parents = _parent_blocks(tree)
    qualnames = _qualified_names(tree)
    return tuple(
        _place_region(begin, end, path=path, parents=parents, qualnames=qualnames)
        for begin, end in pairs
    )


def snippet_marker_lines(source: str, path: str) -> frozenset[int]:
    """Return the lines that hold only a docs snippet-section comment (``# --8<-- [start:x]``)."""
    return frozenset(
        token.start[0]
        for token in _comment_tokens(source, path)
        if _SNIPPET_MARKER.match(token.string) and token.line.strip() == token.string
    )


def _comment_tokens(source: str, path: str) -> Iterator[tokenize.TokenInfo]:
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                yield token
    except (tokenize.TokenError, SyntaxError) as exc:
        line = exc.lineno if isinstance(exc, SyntaxError) else exc.args[1][0]
        raise LabMarkerError(path, line or 1, f"cannot be tokenized: {exc}") from exc


def _read_markers(source: str, path: str) -> list[_Marker]:
    markers = []
    for token in _comment_tokens(source, path):
        if not _LOOKS_LIKE_MARKER.match(token.string):
            continue
        line, column = token.start
        match = _MARKER.match(token.string.rstrip())
        if match is None:
            raise LabMarkerError(
                path, line, f"malformed lab marker {token.string!r}: write '# BEGIN LAB 6.2'"
            )
        if token.line.strip() != token.string.strip():
            raise LabMarkerError(path, line, "a lab marker must be alone on its line")
        edge: Literal["BEGIN", "END"] = "BEGIN" if match["edge"] == "BEGIN" else "END"
        markers.append(_Marker(edge=edge, lab=match["lab"], line=line, column=column))
    return markers


def _pair_markers(
    markers: list[_Marker], path: str, labs: Collection[str]
) -> list[tuple[_Marker, _Marker]]:
    known = ", ".join(sorted(labs)) or "none"
    pairs = []
    open_marker: _Marker | None = None
    for marker in markers:
        if marker.lab not in labs:
            raise LabMarkerError(
                path, marker.line, f"unknown lab {marker.lab}: this module's labs are {known}"
            )
        if marker.edge == "BEGIN":
            if open_marker is not None:
                raise LabMarkerError(
                    path,
                    marker.line,
                    f"BEGIN LAB {marker.lab} inside the region of LAB {open_marker.lab} "
                    f"opened at line {open_marker.line}: regions do not nest",
                )
            open_marker = marker
            continue
        if open_marker is None:
            raise LabMarkerError(path, marker.line, f"END LAB {marker.lab} without a BEGIN")
        if open_marker.lab != marker.lab:
            raise LabMarkerError(
                path,
                marker.line,
                f"END LAB {marker.lab} closes BEGIN LAB {open_marker.lab} "
                f"of line {open_marker.line}",
            )
        if open_marker.column != marker.column:
            raise LabMarkerError(
                path, marker.line, f"END LAB {marker.lab} is not indented like its BEGIN"
            )
        pairs.append((open_marker, marker))
        open_marker = None
    if open_marker is not None:
        raise LabMarkerError(path, open_marker.line, f"BEGIN LAB {open_marker.lab} has no END")
    return pairs


# The block a statement belongs to: the node that holds it and the list it sits in.
_Block = tuple[ast.AST, list[ast.stmt]]


def _parent_blocks(tree: ast.Module) -> dict[ast.stmt, _Block]:
    parents: dict[ast.stmt, _Block] = {}
    for node in ast.walk(tree):
        for _field, value in ast.iter_fields(node):
            if type(value) is list and value and isinstance(value[0], ast.stmt):
                for statement in value:
                    parents[statement] = (node, value)
    return parents


def _qualified_names(tree: ast.Module) -> dict[ast.AST, str]:
    names: dict[ast.AST, str] = {tree: ""}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if type(child) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                name = f"{prefix}{child.name}"  # type: ignore[attr-defined]
                names[child] = name
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return names


def _first_line(statement: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(decorator.lineno for decorator in decorators)])


def _last_line(statement: ast.stmt) -> int:
    return statement.end_lineno or statement.lineno


def _place_region(
    begin: _Marker,
    end: _Marker,
    *,
    path: str,
    parents: dict[ast.stmt, _Block],
    qualnames: dict[ast.AST, str],
) -> LabRegion:
    lab = begin.lab
    inside = [s for s in parents if begin.line < _first_line(s) and _last_line(s) < end.line]
    nested = {id(node) for s in inside for node in ast.walk(s) if node is not s}
    top = sorted((s for s in inside if id(s) not in nested), key=_first_line)
    if not top:
        raise LabMarkerError(path, begin.line, f"the region of LAB {lab} holds no statement")
    owner, block = parents[top[0]]
    if any(parents[s][1] is not block for s in top):
        raise LabMarkerError(
            path, begin.line, f"the region of LAB {lab} spans several blocks of code"
        )
    ancestors = _ancestors(owner, parents)
    for statement in parents:
        crosses = _first_line(statement) <= end.line and begin.line <= _last_line(statement)
        if crosses and statement not in inside and statement not in ancestors:
            raise LabMarkerError(
                path,
                _first_line(statement),
                f"the statement at line {_first_line(statement)} crosses the region of "
                f"LAB {lab} (lines {begin.line}-{end.line})",
            )
    if any(s.col_offset != begin.column for s in top):
        raise LabMarkerError(
            path, begin.line, f"the markers of LAB {lab} are not indented like the code inside"
        )
    indent = " " * begin.column
    if type(owner) in (ast.FunctionDef, ast.AsyncFunctionDef) and block is owner.body:  # type: ignore[attr-defined]
        _check_function_tail(lab, begin.line, path, block, top)
        return LabRegion(
            lab=lab,
            begin=begin.line,
            end=end.line,
            indent=indent,
            kind="function",
            owner=qualnames[owner],
            keeps_generator=_yields_only_inside(owner, begin.line, end.line),
            empties_block=False,
            removes=(),
        )
    if (type(owner) is ast.Module or type(owner) is ast.ClassDef) and block is owner.body:
        removes = tuple(name for s in top for name in _private_names(lab, path, s))
        return LabRegion(
            lab=lab,
            begin=begin.line,
            end=end.line,
            indent=indent,
            kind="definitions",
            owner=qualnames[owner],
            keeps_generator=False,
            empties_block=type(owner) is ast.ClassDef and len(top) == len(block),
            removes=removes,
        )
    raise LabMarkerError(
        path,
        begin.line,
        f"the region of LAB {lab} must be the end of a function body or whole definitions "
        f"at module or class level, not inside a {type(owner).__name__.lower()} block",
    )


def _ancestors(node: ast.AST, parents: dict[ast.stmt, _Block]) -> set[ast.AST]:
    chain: set[ast.AST] = set()
    while True:
        chain.add(node)
        if not isinstance(node, ast.stmt):
            # An except handler or match case: climb through the statement that holds it.
            holder = next((s for s in parents if node in ast.iter_child_nodes(s)), None)
            if holder is None:
                return chain
            node = holder
            continue
        node = parents[node][0]


def _check_function_tail(
    lab: str, line: int, path: str, body: list[ast.stmt], top: list[ast.stmt]
) -> None:
    if top[-1] is not body[-1]:
        raise LabMarkerError(
            path, line, f"the region of LAB {lab} must be the end of the function body"
        )
    first = body[0]
    has_docstring = (
        type(first) is ast.Expr
        and type(first.value) is ast.Constant
        and type(first.value.value) is str
    )
    if has_docstring and top[0] is first:
        raise LabMarkerError(
            path, line, f"the region of LAB {lab} must start after the function's docstring"
        )


def _private_names(lab: str, path: str, statement: ast.stmt) -> list[str]:
    names: list[str]
    if type(statement) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        names = [statement.name]  # type: ignore[attr-defined]
    elif type(statement) is ast.Assign and all(type(t) is ast.Name for t in statement.targets):
        names = [t.id for t in statement.targets]  # type: ignore[attr-defined]
    elif type(statement) is ast.AnnAssign and type(statement.target) is ast.Name:
        names = [statement.target.id]
    else:
        raise LabMarkerError(
            path,
            statement.lineno,
            f"a module- or class-level region of LAB {lab} holds only whole private "
            f"definitions (def, class, _name = ...), not a {type(statement).__name__} statement",
        )
    for name in names:
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            raise LabMarkerError(
                path,
                statement.lineno,
                f"{name!r} is public or special: keep it outside the region of LAB {lab} "
                "and mark the end of its body instead",
            )
    return names


def _yields_only_inside(function: ast.AST, begin: int, end: int) -> bool:
    yields = [
        node.lineno for node in _own_scope(function) if isinstance(node, ast.Yield | ast.YieldFrom)
    ]
    return bool(yields) and all(begin < line < end for line in yields)


def _own_scope(function: ast.AST) -> Iterator[ast.AST]:
    """Walk a function's body without entering nested functions, classes or lambdas."""
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        yield node
        if type(node) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            pending.extend(ast.iter_child_nodes(node))
