"""Check that each lab's part of a lesson page states, in full, every message its tests pin.

A learner works from the page; a message a test matches exactly but the page cuts short ("…")
or leaves out sends them to the test file. So ``nox -s docs`` (through ``check_docs.py``) and
``course/tests/test_pinned_messages.py`` read each focused test file with ``ast`` and hold each
pinned text against the ``### Lab N.M — …`` section of ``## Build it`` on the English page.

What the scan reads as pinned text (the rules of CONTRIBUTING.md, "Tests"):

- ``raises_exactly(Error, "the whole message")``, ``raises_starting_with(Error, "the start")``
  and ``raises_ending_with(Error, "the end")`` from ``checkpoints/support.py``: the text
  given. It may be a str literal, a value of the test's ``pytest.mark.parametrize`` (or its
  class's), or an item of a literal list the test loops over with ``for``.
- ``pytest.raises(..., match=PATTERN)``: the literal text at the start of the pattern, after a
  leading ``^``, up to the first regex metacharacter (an escaped ``\\.`` is a literal ``.``; a
  character a quantifier applies to is dropped). Pinned messages should use the helpers, which
  also say what was expected when a test fails; a pattern is the fallback.
- A text computed by a call (``str(error)``, ``message_of(x)``) pins nothing: the test compares
  the code with itself. Any other expression (an f-string, a name the scan cannot trace to
  literals) is a problem of its own: write the text out, so that the page can state it.

Only calls written in a test function (``test_*``, also as a method of a ``Test*`` class) are
read; a shared helper that pins a message for several tests hides it, so pin in the test.

The lab of a test is its own ``@pytest.mark.lab("N.M")`` (or an alias such as ``lab_6_1 =
pytest.mark.lab("6.1")``), else its class's mark or ``pytestmark``, else the module's
``pytestmark``. A test with no lab (given code, an observe checkpoint) pins nothing a lab
section must state. On the page, the text must stand inside one inline code span of the lab's
section (``like this``, or ``RuntimeError("like this")``), where runs of whitespace count as one
space and ``\\|`` (a pipe in a table cell) as ``|``; the text, code, stays English on every page.

Only the standard library is used, like ``check_docs.py``.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script, the repository root is not importable yet
    sys.path.insert(0, str(ROOT))

from checkpoints.catalog import load_catalog  # noqa: E402

__all__ = [
    "PENDING",
    "Pin",
    "Scan",
    "checkpoint_problems",
    "code_spans",
    "lab_sections",
    "main",
    "page_problems",
    "pinned_message_problems",
    "regex_literal",
    "scan_tests",
]

# Checkpoints whose pages do not state their pinned messages yet, skipped by `nox -s docs`
# (course/tests/test_pinned_messages.py expects them to fail). Delete a number once its page
# states every message (none is pending now: issue 15 made 06 comply).
PENDING: frozenset[str] = frozenset()

# The helpers of checkpoints/support.py, and the part of the message each pins.
HELPERS: Mapping[str, str] = {
    "raises_exactly": "whole",
    "raises_starting_with": "start",
    "raises_ending_with": "end",
}
_PART_WORDING: Mapping[str, str] = {
    "whole": "message",
    "start": "start of a message",
    "end": "end of a message",
    "part": "part of a message",
}
_REGEX_META = frozenset(".^$*+?{}[]|()")
_QUANTIFIERS = frozenset("*+?{")
_LAB_HEADING = re.compile(r"^### Lab (?P<lab>\d+\.\d+)\b")
# An inline code span: a run of backticks, the code, the same run (Markdown's rule).
_CODE_SPAN = re.compile(r"(?<!`)(?P<ticks>`+)(?!`)(?P<code>.+?)(?<!`)(?P=ticks)(?!`)", re.DOTALL)
_BUILD_IT = re.compile(r"^## (?:Build it\b.*|.*\{[ \t]*#build-it\b.*\})$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Pin:
    """One text a lab test pins: the whole message, its start, its end or a part of it."""

    lab: str
    text: str
    part: str  # "whole", "start", "end" or "part"
    test: str  # "test_name" or "TestClass::test_name"
    line: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Scan:
    """What one test file pins, and the pins the scan could not read."""

    pins: tuple[Pin, ...]
    problems: tuple[str, ...]


# ---------------------------------------------------------------------------------------------
# Reading a test file
# ---------------------------------------------------------------------------------------------


def _dotted(node: ast.expr) -> str:
    """Return ``pytest.mark.lab`` for that attribute chain, ``""`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner else ""
    return ""


def _mark_lab(node: ast.expr, aliases: Mapping[str, str]) -> str | None:
    """Return the lab of a mark expression: ``pytest.mark.lab("6.1")``, an alias, or a list."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Call) and _dotted(node.func).endswith("mark.lab") and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    if isinstance(node, ast.List | ast.Tuple):
        return next((lab for item in node.elts if (lab := _mark_lab(item, aliases))), None)
    return None


def _pytestmark(body: Sequence[ast.stmt], aliases: Mapping[str, str]) -> str | None:
    for statement in body:
        if (
            isinstance(statement, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in statement.targets)
            and (lab := _mark_lab(statement.value, aliases))
        ):
            return lab
    return None


def _lab_aliases(module: ast.Module) -> dict[str, str]:
    """Return the module-level names bound to a lab mark: ``lab_6_1 = pytest.mark.lab("6.1")``."""
    aliases: dict[str, str] = {}
    for statement in module.body:
        if isinstance(statement, ast.Assign) and (lab := _mark_lab(statement.value, {})):
            aliases.update({t.id: lab for t in statement.targets if isinstance(t, ast.Name)})
    return aliases


Function = ast.FunctionDef | ast.AsyncFunctionDef
# A name bound to a list of expressions, one per case; None where the scan cannot tell.
Bindings = dict[str, list[ast.expr | None]]


def _rows(values: ast.expr, width: int) -> list[list[ast.expr | None]] | None:
    """Return the cases of a literal list of rows (tuples, ``pytest.param``s or single values)."""
    if not isinstance(values, ast.List | ast.Tuple):
        return None
    rows: list[list[ast.expr | None]] = []
    for row in values.elts:
        if isinstance(row, ast.Call) and _dotted(row.func).endswith("param"):
            items: list[ast.expr | None] = list(row.args)
        elif width == 1:
            items = [row]
        elif isinstance(row, ast.Tuple | ast.List):
            items = list(row.elts)
        else:
            items = [None] * width
        rows.append(items if len(items) == width else [None] * width)
    return rows


def _bind(
    bindings: Bindings, names: Sequence[str], rows: list[list[ast.expr | None]] | None
) -> None:
    for position, name in enumerate(names):
        cases = [None] if rows is None else [row[position] for row in rows]
        bindings.setdefault(name, []).extend(cases)


def _parametrized(decorators: Iterable[ast.expr]) -> Bindings:
    """Return the names that ``pytest.mark.parametrize`` decorators bind, with their cases."""
    bindings: Bindings = {}
    for decorator in decorators:
        if not (
            isinstance(decorator, ast.Call)
            and _dotted(decorator.func).endswith("mark.parametrize")
            and len(decorator.args) >= 2
        ):
            continue
        spec = decorator.args[0]
        if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
            names = [name.strip() for name in spec.value.split(",") if name.strip()]
        elif isinstance(spec, ast.List | ast.Tuple):
            names = [
                e.value
                for e in spec.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
        else:
            continue
        _bind(bindings, names, _rows(decorator.args[1], len(names)))
    return bindings


def _looped(function: Function) -> Bindings:
    """Return the names a ``for`` loop of the test binds from a literal list of cases."""
    local_lists = {
        target.id: statement.value
        for statement in ast.walk(function)
        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None
        for target in (
            statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        )
        if isinstance(target, ast.Name)
    }
    bindings: Bindings = {}
    for loop in ast.walk(function):
        if not isinstance(loop, ast.For | ast.AsyncFor):
            continue
        target = loop.target
        elements = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        names = [e.id if isinstance(e, ast.Name) else "" for e in elements]
        values = loop.iter
        if isinstance(values, ast.Name):
            values = local_lists.get(values.id, values)
        _bind(bindings, names, _rows(values, len(names)))
    return bindings


def _pinned_argument(call: ast.Call) -> tuple[ast.expr, str] | None:
    """Return the text argument of a pinning call and the part it pins, or "regex"."""
    name = _dotted(call.func).rpartition(".")[2]
    if name in HELPERS:
        text = call.args[1] if len(call.args) >= 2 else None
        text = text or next(
            (k.value for k in call.keywords if k.arg in {"message", "prefix"}), None
        )
        return None if text is None else (text, HELPERS[name])
    if name == "raises" and _dotted(call.func) in {"pytest.raises", "raises"}:
        pattern = next((k.value for k in call.keywords if k.arg == "match"), None)
        return None if pattern is None else (pattern, "regex")
    return None


def _texts(node: ast.expr | None, bindings: Bindings) -> list[str] | None:
    """Return the literal texts ``node`` may hold; [] for a computed one; None if unreadable."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Call | ast.Attribute | ast.Subscript):
        return []  # computed by code: the test compares the code with itself
    if isinstance(node, ast.Name) and node.id in bindings:
        texts: list[str] = []
        for case in bindings[node.id]:
            found = _texts(case, {})
            if found is None:
                return None
            texts.extend(found)
        return texts
    return None


def regex_literal(pattern: str) -> tuple[str, str]:
    """Return the literal text a ``match`` pattern starts with, and the part of the message.

    After a leading ``^``, characters are taken up to the first regex metacharacter; ``\\.``
    and other escaped punctuation are the character itself; a character that a quantifier
    applies to is dropped. The part is "whole" for ``^literal$``, "start" for ``^literal…``,
    "end" for ``literal$`` and "part" otherwise.
    """
    anchored = pattern.startswith("^")
    index = 1 if anchored else 0
    text: list[str] = []
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern) and not pattern[index + 1].isalnum():
            text.append(pattern[index + 1])
            index += 2
            continue
        if char == "$" and index == len(pattern) - 1:
            return "".join(text), "whole" if anchored else "end"
        if char == "\\" or char in _REGEX_META:
            if char in _QUANTIFIERS and text:
                text.pop()
            break
        text.append(char)
        index += 1
    return "".join(text), "start" if anchored else "part"


def _is_test(node: ast.stmt) -> bool:
    return isinstance(node, Function) and node.name.startswith("test")


def _decorated_lab(decorators: Iterable[ast.expr], aliases: Mapping[str, str]) -> str | None:
    return next((lab for mark in decorators if (lab := _mark_lab(mark, aliases))), None)


def _tests(
    module: ast.Module, aliases: Mapping[str, str]
) -> Iterator[tuple[str, str | None, Function, Bindings]]:
    """Yield each test function with its name, lab and parametrized names."""
    module_lab = _pytestmark(module.body, aliases)
    for node in module.body:
        if isinstance(node, Function) and _is_test(node):
            lab = _decorated_lab(node.decorator_list, aliases) or module_lab
            yield node.name, lab, node, _parametrized(node.decorator_list)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            class_lab = (
                _decorated_lab(node.decorator_list, aliases)
                or _pytestmark(node.body, aliases)
                or module_lab
            )
            for item in node.body:
                if isinstance(item, Function) and _is_test(item):
                    lab = _decorated_lab(item.decorator_list, aliases) or class_lab
                    bindings = _parametrized([*node.decorator_list, *item.decorator_list])
                    yield f"{node.name}::{item.name}", lab, item, bindings


def scan_tests(source: str, filename: str = "<test file>") -> Scan:
    """Return the texts the lab tests of a test module pin, and the pins it cannot read."""
    module = ast.parse(source, filename)
    aliases = _lab_aliases(module)
    pins: list[Pin] = []
    problems: list[str] = []
    for test, lab, function, parametrized in _tests(module, aliases):
        if lab is None:
            continue  # given code or an observe checkpoint: no lab section states it
        bindings = {**_looped(function), **parametrized}
        calls = [node for node in ast.walk(function) if isinstance(node, ast.Call)]
        for call in sorted(calls, key=lambda call: (call.lineno, call.col_offset)):
            found = _pinned_argument(call)
            if found is None:
                continue
            node, kind = found
            texts = _texts(node, bindings)
            if texts is None:
                problems.append(
                    f"{filename}:{node.lineno}: {test} (Lab {lab}) pins a message the check "
                    f"cannot read ({ast.unparse(node)}); write the text out as a str literal, a "
                    "parametrize value or an item of a literal list the test loops over"
                )
                continue
            for given in texts:
                text, part = regex_literal(given) if kind == "regex" else (given, kind)
                if not text.strip():
                    problems.append(
                        f"{filename}:{node.lineno}: {test} (Lab {lab}) matches a pattern with "
                        "no literal text at its start; pin the message with raises_exactly, "
                        "raises_starting_with or raises_ending_with"
                    )
                    continue
                pins.append(Pin(lab=lab, text=text, part=part, test=test, line=node.lineno))
    return Scan(pins=tuple(pins), problems=tuple(problems))


# ---------------------------------------------------------------------------------------------
# Reading a page, and holding the pins against it
# ---------------------------------------------------------------------------------------------


def lab_sections(page: str) -> dict[str, str]:
    """Return the text of each ``### Lab N.M — …`` section under ``## Build it``, by lab."""
    sections: dict[str, list[str]] = {}
    in_build_it = False
    current: list[str] | None = None
    for line in page.splitlines():
        if line.startswith("## "):
            in_build_it = bool(_BUILD_IT.match(line.rstrip()))
            current = None
        elif in_build_it and line.startswith("### "):
            heading = _LAB_HEADING.match(line)
            current = sections.setdefault(heading["lab"], []) if heading else None
        elif current is not None:
            current.append(line)
    return {lab: "\n".join(lines) for lab, lines in sections.items()}


def _plain(text: str) -> str:
    """Whitespace runs as one space, a table cell's ``\\|`` as ``|``."""
    return " ".join(text.replace("\\|", "|").split())


def code_spans(section: str) -> list[str]:
    """Return the inline code spans of a section, ``like this``, each as plain text."""
    return [_plain(span["code"]) for span in _CODE_SPAN.finditer(section)]


def page_problems(test_file: Path, page: Path, root: Path = ROOT) -> list[str]:
    """Return each pinned text of ``test_file`` that the lab sections of ``page`` do not state."""
    shown_test = _display(test_file, root)
    shown_page = _display(page, root)
    scan = scan_tests(test_file.read_text(encoding="utf-8"), shown_test)
    sections = {
        lab: code_spans(text) for lab, text in lab_sections(page.read_text("utf-8")).items()
    }
    problems = list(scan.problems)
    reported: set[tuple[str, str]] = set()  # each missing text, or section (""), once
    for pin in scan.pins:
        section = sections.get(pin.lab)
        key = (pin.lab, "" if section is None else pin.text)
        if key in reported:
            continue
        reported.add(key)
        if section is None:
            problems.append(
                f"{shown_page}: Lab {pin.lab}: no '### Lab {pin.lab} — …' section under "
                f"'## Build it' states the messages its tests pin ({shown_test}::{pin.test}, "
                f"line {pin.line})"
            )
        elif not any(_plain(pin.text) in span for span in section):
            what = _PART_WORDING[pin.part]
            problems.append(
                f"{shown_page}: Lab {pin.lab}: the {what} {pin.text!r}, pinned by "
                f"{shown_test}::{pin.test} (line {pin.line}), is not stated in full in the "
                "lab's section (as inline code)"
            )
    return problems


def _display(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def checkpoint_problems(number: str, root: Path = ROOT) -> list[str]:
    """Return the problems of checkpoint ``number``'s focused tests against its English page."""
    (checkpoint,) = (c for c in load_catalog(root / "checkpoints") if c.number == number)
    return page_problems(checkpoint.test_file, root / "docs" / checkpoint.page, root)


def pinned_message_problems(root: Path = ROOT, *, pending: Iterable[str] = PENDING) -> list[str]:
    """Return the problems of every checkpoint but the ``pending`` ones."""
    skipped = set(pending)
    return [
        problem
        for checkpoint in load_catalog(root / "checkpoints")
        if checkpoint.number not in skipped
        for problem in page_problems(checkpoint.test_file, root / "docs" / checkpoint.page, root)
    ]


def main() -> int:
    """Print every problem found; return 1 if there is any."""
    problems = pinned_message_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"pinned_messages: {len(problems)} problems (pending: {', '.join(sorted(PENDING))})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
